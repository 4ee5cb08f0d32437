"""Where the controller's CPU goes in one ansible-playbook run, per host: cProfile in the main
process and in every forked worker (CPU time, time.process_time), merged and split by kind of work.

    python3 lab/scale/profile_run.py --hosts 16 --out DIR -- -i .cache/scale/inventory-ssh playbooks/drift_check.yml
    python3 lab/scale/profile_run.py --hosts 16 --report DIR          # the breakdown of a profiled run again

Run with the project's Python (the one ansible-playbook runs under; lab/scale.sh profile sets it
up). The arguments after ``--`` are ansible-playbook's. Each worker writes its profile when its
task ends (``worker-PID.prof``), the main process when the run ends (``main.prof``). The split is by
inclusive CPU time of the functions that do each kind of work, so a sample counts in the
innermost kind listed first in KINDS (an argument-spec check inside the drift check's action is
an argument-spec check, not the action). cProfile slows Python about twofold: read the
milliseconds as shares, the bench's figures (cgroup CPU, no profiler) as the cost. The ssh
clients are not Python: their CPU is in the bench's figures, not here.
"""
import argparse
import cProfile
import glob
import os
import pstats
import sys
import time

# the functions whose inclusive CPU time makes each kind of work: (file suffix, function name)
F = {
    "get": ("plugin_utils/_role_specs.py", "get"),                       # templating a variable
    "checked": ("plugin_utils/_role_specs.py", "checked_variables"),     # argument-spec checks
    "render": ("lookup/role_template.py", "run"),                         # rendering role templates
    "specs": ("action/drift_check.py", "_specs_of_groups"),              # building the areas' specs
    "payload": ("plugins/action/__init__.py", "_configure_module"),       # AnsiballZ
    "connection": ("plugins/action/__init__.py", "_low_level_execute_command"),
    "execute": ("executor/task_executor.py", "_execute"),
    "executor": ("executor/task_executor.py", "run"),
    "wait": ("plugin_utils/_core_compat.py", "_wait_on_pending_results"),
    "wait_core": ("plugins/strategy/__init__.py", "_wait_on_pending_results"),
    "process": ("plugins/strategy/__init__.py", "_process_pending_results"),
    "get_vars": ("vars/manager.py", "get_vars"),
    "fork": ("executor/process/worker.py", "start"),
    "tqm": ("executor/task_queue_manager.py", "run"),
}


def profile(out, argv):
    os.makedirs(out, exist_ok=True)
    from ansible.executor.process import worker

    real_run = worker.WorkerProcess._run    # pylint: disable=protected-access

    def profiled_run(self):
        prof = cProfile.Profile(time.process_time)
        prof.enable()
        try:
            return real_run(self)
        finally:
            prof.disable()
            prof.dump_stats(os.path.join(out, "worker-%d.prof" % os.getpid()))

    worker.WorkerProcess._run = profiled_run   # pylint: disable=protected-access
    from ansible.cli.playbook import main as playbook_main
    sys.argv = ["ansible-playbook"] + argv
    prof = cProfile.Profile(time.process_time)
    prof.enable()
    code = 0
    try:
        playbook_main()
    except SystemExit as exc:
        code = exc.code or 0
    finally:
        prof.disable()
        prof.dump_stats(os.path.join(out, "main.prof"))
    return code


def _key(stats, name):
    suffix, function = F[name]
    return [k for k in stats.stats if k[2] == function and k[0].endswith(suffix)]


def _inc(stats, name):
    """Inclusive CPU time of a function (every definition that matches; cProfile counts a recursive
    call once in the inclusive time)."""
    return sum(stats.stats[k][3] for k in _key(stats, name)) if stats else 0.0


def _inc_from(stats, name, caller):
    """Inclusive CPU time of ``name`` when ``caller`` called it."""
    callers = set(_key(stats, caller))
    return sum(ct for k in _key(stats, name) for c, (_cc, _nc, _tt, ct) in stats.stats[k][4].items()
               if c in callers) if stats else 0.0


def breakdown(worker, main):
    """[(kind, CPU seconds)] of the run: each kind its own time, nested kinds taken out."""
    w_total = worker.total_tt if worker else 0.0
    m_total = main.total_tt if main else 0.0
    get, checked, render = _inc(worker, "get"), _inc(worker, "checked"), _inc(worker, "render")
    specs, payload, connection = _inc(worker, "specs"), _inc(worker, "payload"), _inc(worker, "connection")
    execute, executor = _inc(worker, "execute"), _inc(worker, "executor")
    waits = max(_inc(main, "wait"), _inc(main, "wait_core"))
    get_vars, fork, tqm = _inc(main, "get_vars"), _inc(main, "fork"), _inc(main, "tqm")
    checked_own = checked - _inc_from(worker, "get", "checked")
    return [
        ("templating the areas' variables", get),
        ("argument-spec checks", checked_own),
        ("rendering templates (role_template)", render),
        ("building the spec (the rest of the action's specs)", max(specs - get - checked_own - render, 0.0)),
        ("module payload (AnsiballZ: once per run and module)", payload),
        ("connection (ssh exchange, the node's run)", connection),
        ("the task's action and executor, the rest", max(execute - specs - payload - connection, 0.0)),
        ("templating the task (args, conditionals, loops)", max(executor - execute, 0.0)),
        ("worker start, result send", max(w_total - executor, 0.0)),
        ("result processing (main thread)", waits),
        ("host variables (main)", get_vars),
        ("forking workers (main)", fork),
        ("the strategy's own work (main)", max(tqm - waits - get_vars - fork, 0.0)),
        ("start-up: imports, inventory, playbook, end (main)", max(m_total - tqm, 0.0)),
    ]


def report(out, hosts):
    workers = sorted(glob.glob(os.path.join(out, "worker-*.prof")))
    main_file = os.path.join(out, "main.prof")
    worker = pstats.Stats(*workers) if workers else None
    main = pstats.Stats(main_file) if os.path.exists(main_file) else None
    w_total, m_total = (worker.total_tt if worker else 0.0), (main.total_tt if main else 0.0)
    print("%d workers: %.2f CPU-s; main process (main thread): %.2f CPU-s; %d hosts; profiled (cProfile)"
          % (len(workers), w_total, m_total, hosts))
    grand = (w_total + m_total) or 1.0
    for kind, seconds in breakdown(worker, main):
        print("  %-56s %7.1f ms/host %5.1f%%" % (kind, 1000.0 * seconds / hosts, 100.0 * seconds / grand))
    print("  %-56s %7.1f ms/host" % ("total", 1000.0 * grand / hosts))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n", maxsplit=1)[0])
    parser.add_argument("--hosts", type=int, required=True, help="the run's host count (the per-host divisor)")
    parser.add_argument("--out", help="directory for the profiles (a profiled run)")
    parser.add_argument("--report", help="a directory of profiles: print its breakdown only")
    parser.add_argument("playbook_args", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    if args.report:
        report(args.report, args.hosts)
        return 0
    if not args.out:
        parser.error("--out DIR (a profiled run) or --report DIR")
    argv = args.playbook_args[1:] if args.playbook_args[:1] == ["--"] else args.playbook_args
    code = profile(args.out, argv)
    report(args.out, args.hosts)
    return code


if __name__ == "__main__":
    sys.exit(main())
