"""Controller CPU per host by kind of work, from a `py-spy record --subprocesses --format raw` profile.

    py-spy record --subprocesses --rate 250 --format raw -o PROFILE -- ansible-playbook -i INVENTORY PLAY
    python3 lab/scale/profile_breakdown.py PROFILE --hosts 16 [--rate 250]

py-spy samples every thread of the run's Python processes (the main process and each forked
worker; the ssh clients are not Python and are not sampled). A sample whose innermost frame
waits (select, poll, a pipe read, a lock, sleep) is idle and left out: what is left is CPU.
Each CPU sample goes to the first bucket (in the order of BUCKETS) with a marker in the stack of
its own process (a worker's frames from the fork on), so a sample of Jinja inside an argument-spec
check inside the drift check's action is an argument-spec check. Prints milliseconds of controller CPU per host (samples / rate / hosts) per bucket;
the profiler slows the run, so read the shares, and take absolute figures from the bench.
"""
import argparse
import collections
import re

IDLE_LEAVES = ("EpollSelector.select", "_PollLikeSelector.select", "PollSelector.select", "select.select",
               "Connection._recv ", "Connection._poll", "named_mutex", "time.sleep", "wait (multiprocessing",
               "Condition.wait", "Lock.acquire", "SimpleQueue.get", "Queue.get", "Event.wait", "_wait_for_tstate_lock",
               "Thread.join", "connection.wait", "Popen._wait", "_try_wait")

# (bucket, markers): markers are substrings of a frame "function (file)"; in this order of
# precedence when a stack holds several
BUCKETS = (
    ("argument-spec checks", ("ArgumentSpecValidator", "checked_variables", "role_options", "_spec_error")),
    ("rendering templates", ("lookup/role_template.py", "renderer.<locals>.render")),
    ("templating the areas' variables", ("getter.<locals>.get",)),
    ("building the spec", ("area_spec", "plugin_utils/_role_specs.py", "module_utils/areas/",
                           "_specs_of_groups")),
    ("module payload (AnsiballZ)", ("_configure_module", "modify_module")),
    ("connection", ("connection/ssh.py", "_low_level_execute_command", "_execute_module", "plugins/shell/")),
    ("templating the task (args, vars, loops, conditionals)",
     ("TemplateEngine", "Templar.", "_get_loop_items", "post_validate", "Conditional")),
    ("result processing", ("_process_pending_results", "send_callback", "results_thread_main", "TaskResult",
                           "_clean_res", "send_task_result", "callback/", "drift_report")),
    ("host variables", ("VariableManager.get_vars", "get_vars (ansible/vars", "combine_vars")),
    ("forking workers", ("WorkerProcess.start", "Popen._launch", "ForkProcess")),
    ("strategy", ("strategy/",)),
    ("start-up (imports, inventory, playbook)", ("_find_and_load", "InventoryManager", "load_playbook",
                                                 "Playbook.load", "cli/")),
)


def frame_key(frame):
    return re.sub(r":\d+\)", ")", frame)


def classify(frames):
    """The first bucket (in BUCKETS' order) with a marker in any frame of the process's own stack."""
    for bucket, markers in BUCKETS:
        if any(marker in frame for frame in frames for marker in markers):
            return bucket
    return "other"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n", maxsplit=1)[0])
    parser.add_argument("profile")
    parser.add_argument("--hosts", type=int, required=True)
    parser.add_argument("--rate", type=float, default=250.0, help="py-spy's --rate of the profile")
    parser.add_argument("--top", type=int, default=0, help="also print the N busiest innermost frames")
    args = parser.parse_args()
    buckets, leaves = collections.Counter(), collections.Counter()
    where = collections.Counter()
    idle = total = 0
    with open(args.profile) as handle:
        for line in handle:
            stack, _sep, count = line.rstrip("\n").rpartition(" ")
            if not stack:
                continue
            count = int(count)
            frames = [frame_key(f) for f in stack.split(";")]
            total += count
            if any(mark in frames[-1] for mark in IDLE_LEAVES):
                idle += count
                continue
            starts = [i for i, f in enumerate(frames) if f.startswith("process ")]
            where["worker" if len(starts) > 1 else "main process"] += count
            buckets[classify(frames[starts[-1] + 1:] if starts else frames)] += count
            leaves[frames[-1]] += count
    busy = total - idle
    per_host = 1000.0 / args.rate / args.hosts
    print("%d samples, %d waiting (left out), %d CPU: %.0f ms per host at %g Hz over %d hosts"
          % (total, idle, busy, busy * per_host, args.rate, args.hosts))
    for name, count in where.most_common():
        print("  %-58s %7.1f ms/host %5.1f%%" % (name, count * per_host, 100.0 * count / busy))
    print("by kind of work:")
    for name, count in buckets.most_common():
        print("  %-58s %7.1f ms/host %5.1f%%" % (name, count * per_host, 100.0 * count / busy))
    for frame, count in leaves.most_common(args.top):
        print("  %6d %s" % (count, frame))


if __name__ == "__main__":
    main()
