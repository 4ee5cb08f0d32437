"""Side-by-side benchmark: a command against a one-task ping play on the same hosts.

    python3 lab/bench_ratio.py --pairs 5 --name "site.yml re-run" -- ansible-playbook -i INV playbooks/site.yml
    python3 lab/bench_ratio.py --pairs 5 --name "drift check" --ok-rc 0,2 -- ansible-playbook ... drift_check.yml

Runs the ping play (A) and the command (B) alternately, A B A B ..., so that both see the
same machine load, and prints each pair, the median of each and the ratio of the medians,
in wall time and in controller CPU time (user + system of ansible-playbook and every process
it started and waited for: workers, podman/ssh clients; not the CPU the nodes themselves
spend), which a loaded machine disturbs far less than wall time.
The machines here are noisy: never quote one run. The ping play targets the hosts of
--hosts (default all) of --inventory, with the inventory's own connection settings.
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

PING_PLAY = """---
- name: One-task ping play (the benchmark's baseline)
  hosts: "{{ bench_hosts | default('all') }}"
  gather_facts: false
  tasks:
    - name: Ping
      ansible.builtin.ping:
"""


def _children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(argv, ok_rc):
    """(wall seconds, controller CPU seconds) of one run."""
    cpu0, start = _children_cpu(), time.monotonic()
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=False)
    elapsed, cpu = time.monotonic() - start, _children_cpu() - cpu0
    if proc.returncode not in ok_rc:
        sys.stderr.write(proc.stdout[-4000:])
        raise SystemExit("bench: %s exited %d" % (" ".join(argv), proc.returncode))
    return elapsed, cpu


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--inventory", required=True)
    parser.add_argument("--hosts", default="all")
    parser.add_argument("--name", default="command")
    parser.add_argument("--ok-rc", default="0")
    parser.add_argument("--json", help="append the figures as one JSON line to this file")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    ok_rc = set(int(x) for x in args.ok_rc.split(","))
    with tempfile.NamedTemporaryFile("w", suffix=".yml", delete=False) as handle:
        handle.write(PING_PLAY)
        ping_play = handle.name
    ping = ["ansible-playbook", "-i", args.inventory, ping_play, "-e", "bench_hosts=%s" % args.hosts]
    a, b, ca, cb = [], [], [], []
    try:
        timed(ping, {0})           # warm-up: caches, first container exec
        for pair in range(args.pairs):
            for runs, cpus, argv, rcs in ((a, ca, ping, {0}), (b, cb, command, ok_rc)):
                wall, cpu = timed(argv, rcs)
                runs.append(wall)
                cpus.append(cpu)
            print("pair %d: ping %.2f s (cpu %.2f s), %s %.2f s (cpu %.2f s)"
                  % (pair + 1, a[-1], ca[-1], args.name, b[-1], cb[-1]), flush=True)
    finally:
        os.unlink(ping_play)
    ma, mb = statistics.median(a), statistics.median(b)
    mca, mcb = statistics.median(ca), statistics.median(cb)
    print("%s: median %.2f s; ping: median %.2f s; ratio %.2fx (%d alternating pairs)"
          % (args.name, mb, ma, mb / ma, args.pairs))
    print("%s: controller CPU median %.2f s; ping: %.2f s; ratio %.2fx"
          % (args.name, mcb, mca, mcb / mca))
    if args.json:
        with open(args.json, "a") as out:
            out.write(json.dumps({"name": args.name, "pairs": args.pairs, "ping_s": a, "run_s": b,
                                  "ping_median_s": ma, "run_median_s": mb, "ratio": mb / ma,
                                  "ping_cpu_s": ca, "run_cpu_s": cb, "cpu_ratio": mcb / mca}) + "\n")


if __name__ == "__main__":
    main()
