"""The controller's instructions in one ansible-playbook run (valgrind's callgrind): a count that
does not move with the machine's load, for changes too small for the bench's CPU seconds to
resolve on shared cores.

    python3 lab/scale/instructions.py --out DIR -- -i .cache/scale/inventory-ssh playbooks/drift_check.yml ...
    python3 lab/scale/instructions.py --report DIR      # the figures of a counted run again

Run with the project's Python (the one ansible-playbook runs under). The main process is counted
whole; each forked worker from its fork on (``--zero-before=PyOS_AfterFork_Child``: a forked
child otherwise starts with its parent's count). The ssh clients are other programs, not followed.
Callgrind counts user-space instructions only (no kernel time, no cache misses): read the figures
as the Python work of the run, the bench's CPU seconds as its cost. A run is about 15 times
slower than without (a minute at N=16); two runs of the same playbook on the same nodes agree to
0.1%. Needs valgrind (Debian: apt-get install valgrind).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys


def count(out, main=None):
    """{"main": instructions, "workers": [instructions, ...]} of the callgrind files in ``out``;
    ``main`` is the main process's pid (the one valgrind started: its instructions.json records it),
    else the process with the most instructions (pids wrap around: the lowest is not always the main)."""
    totals = {}
    for name in os.listdir(out):
        if not name.startswith("callgrind."):
            continue
        with open(os.path.join(out, name)) as handle:
            for line in handle:
                if line.startswith(("summary:", "totals:")):
                    totals[int(name.split(".")[1])] = int(line.split()[1])
                    break
    if not totals:
        raise SystemExit("instructions: no callgrind output in %s" % out)
    if main is None:
        main = max(totals, key=totals.get)
    if main not in totals:
        raise SystemExit("instructions: no callgrind output of the main process (pid %s) in %s" % (main, out))
    return {"main": totals.pop(main), "main_pid": main, "workers": [totals[pid] for pid in sorted(totals)]}


def report(figures):
    workers = figures["workers"]
    total = figures["main"] + sum(workers)
    return ("main %.3f G, %d workers %.3f G (%.1f M each), total %.3f G instructions"
            % (figures["main"] / 1e9, len(workers), sum(workers) / 1e9,
               sum(workers) / 1e6 / max(len(workers), 1), total / 1e9))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--out", help="directory for the callgrind files (emptied first)")
    parser.add_argument("--report", help="print the figures of a counted run")
    parser.add_argument("playbook_args", nargs="*", help="ansible-playbook's arguments, after --")
    args = parser.parse_args()
    if args.report:
        try:
            with open(os.path.join(args.report, "instructions.json")) as handle:
                main_pid = json.load(handle).get("main_pid")
        except (OSError, ValueError):
            main_pid = None
        print(report(count(args.report, main_pid)))
        return 0
    if not args.out or not args.playbook_args:
        parser.error("expected --out DIR -- ANSIBLE-PLAYBOOK-ARGS, or --report DIR")
    valgrind = shutil.which("valgrind")
    if not valgrind:
        raise SystemExit("instructions: valgrind is not installed (Debian: apt-get install valgrind)")
    playbook = shutil.which("ansible-playbook", path=os.path.dirname(sys.executable)) or shutil.which("ansible-playbook")
    if os.path.isdir(args.out):
        shutil.rmtree(args.out)
    os.makedirs(args.out)
    argv = [valgrind, "--tool=callgrind", "--callgrind-out-file=%s/callgrind.%%p" % args.out,
            "--zero-before=PyOS_AfterFork_Child", "--dump-instr=no", "-q", sys.executable, playbook] + args.playbook_args
    with open(os.path.join(args.out, "run.log"), "w") as log:
        # valgrind runs the program in its own process: this pid is the run's main process
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
        rc = proc.wait()
    figures = count(args.out, proc.pid)
    figures.update(rc=rc, argv=args.playbook_args)
    with open(os.path.join(args.out, "instructions.json"), "w") as handle:
        json.dump(figures, handle)
    print("rc=%d %s" % (rc, report(figures)))
    return rc


if __name__ == "__main__":
    sys.exit(main())
