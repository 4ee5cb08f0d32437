"""Fleet-scale benchmark on the scale lab (lab/scale.sh): `make bench-scale`, never a test.

    python3 lab/bench_scale.py --nodes 16,64,200 --transport ssh --pairs 3 --csv .cache/bench-scale.csv
    python3 lab/bench_scale.py --nodes 64 --cases ping,drift,drift:forks=5,drift:strategy=free ...

For each N: `lab/scale.sh up N`, a first converge of the fresh nodes (measured: the case
"first (fresh nodes)"), their simulated reboot (node-reboot: booted with the kernel
arguments), then --pairs rounds of the cases, in order, alternating (every round runs every
case once, so all see the same machine load). With --no-up on a lab started with more nodes,
the runs use its first N (a copy of its inventory). Cases:

    ping    a one-task ping play (the baseline; the ratios are to its median)
    facts   the same play with fact gathering on (what gather_facts: false saves per host)
    burn    a one-task play whose node side only burns CPU (burn=SECONDS, default 1.6: about
            the drift check's node CPU per host here): what the simulation alone costs the
            controller. The nodes share its cores, and ansible's strategy loop costs CPU for as
            long as a task runs on the nodes, so a long node side raises every figure; this case
            has the node side without any controller work of the collection's
    drift   playbooks/drift_check.yml (all areas)
    rerun   playbooks/site.yml on converged nodes
    first   playbooks/site.yml after node-reset on every node (firmware defaults, no role files);
            node-reboot after it, unmeasured, so the cases after it see a converged fleet
    fabric  playbooks/fabric_test.yml on the converged nodes (pair rounds per rail; its per-round wall
            time is the run's wall time over the plan's rounds, printed with the plan). Start the lab
            with SCALE_NODE_MEMORY=256m: an 8-rail node runs 8 to 16 perftest processes at once,
            past the default 96m (a run in which a node process was killed for memory is left out)

A case may carry settings, NAME:key=value[+key=value]: forks=N, pipelining=true|false,
strategy=linear|free|mitogen_linear|mitogen_free (the mitogen ones need
ANSIBLE_STRATEGY_PLUGINS pointing at ansible_mitogen/plugins/strategy), poll=SECONDS (the
strategy's internal_poll_interval: an ansible.cfg of that run), cfg=PATH (ANSIBLE_CONFIG, relative
to the top directory, e.g. examples/ansible.cfg): the environment of that run only; play=PATH runs
that playbook instead of the case's (an experiment's variant); burn=SECONDS (the burn case);
collections=PATH (ANSIBLE_COLLECTIONS_PATH: another checkout of the collection as rdma.fabric, e.g. a
clone of the commit before a change, under PATH/ansible_collections/rdma/fabric: before and after
side by side in the same rounds; its own playbooks run unless play= is given); env=NAME=VALUE (one
more environment variable of that run, e.g. env=RDMA_FABRIC_MMAP_THRESHOLD=0). A run that fails
is reported and left out of the medians; the bench goes on.

Per run: wall time; controller CPU (user+sys) of the whole ansible-playbook process tree,
ssh ControlPersist masters included: each run is started in its own cpuacct and memory
cgroup (v1, cgroupfs) and its ssh masters (a fresh ControlPath dir per run) are ended
after it, so nothing a run starts escapes its figures; RUSAGE_CHILDREN of the same run beside
it (the bench is a child subreaper, so the reparented masters are reaped here too); the
controller's peak memory (the memory cgroup's max_usage_in_bytes: every process of the run,
plus the page cache it created) and the largest single process (ru_maxrss); the CPU the
simulated nodes used meanwhile (the cpuacct of their common cgroup parent): on this machine
they share the controller's cores, on a real fleet they do not.

Prints a table of medians (CPU s per host, ratio to ping's CPU s per host, wall s, ratio to
ping's wall) per N, then the side-by-side summary of every N of the run (ping, drift check,
re-run, first converge, fabric test: controller CPU per host, x ping, runs; the drift check's
peak memory against ping's; the load averages of the runs), and writes every run to --csv.
The profile that says where a run's controller CPU goes: docs/scale.md, "Where the
controller's time goes" (py-spy and lab/scale/profile_breakdown.py).
"""
import argparse
import csv
import ctypes
import os
import platform
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CG = "/sys/fs/cgroup"
NODES_CGROUP = "rdma_fabric_scale"           # lab/scale.sh --cgroup-parent
BENCH_CGROUP = "rdma_fabric_bench"
PR_SET_CHILD_SUBREAPER = 36

PING_PLAY = """---
- name: One-task ping play (the benchmark's baseline)
  hosts: all
  gather_facts: %s
  tasks:
    - name: Ping
      ansible.builtin.ping:
"""
SETTINGS = {"forks": "ANSIBLE_FORKS", "pipelining": "ANSIBLE_PIPELINING",
            "strategy": "ANSIBLE_STRATEGY", "poll": "internal_poll_interval", "cfg": "ANSIBLE_CONFIG",
            "play": "play", "burn": "burn", "collections": "ANSIBLE_COLLECTIONS_PATH", "env": "env"}
BURN_PLAY = """---
- name: One task that only burns node CPU (the simulation's share of the figures)
  hosts: all
  gather_facts: false
  tasks:
    - name: Burn {{ bench_burn_s }} s of CPU on the node
      ansible.builtin.command:
        argv: [python3, -c, "import time, sys\\nt = time.process_time()\\nwhile time.process_time() - t < float(sys.argv[1]):\\n    pass", "{{ bench_burn_s }}"]
      changed_when: false
"""
BASES = ("ping", "facts", "burn", "drift", "rerun", "first", "fabric")


def parse_case(text):
    name, _sep, rest = text.partition(":")
    if name not in BASES:
        raise SystemExit("bench: case %r: expected one of %s" % (text, ", ".join(BASES)))
    env, play, burn = {}, None, "1.6"
    for item in filter(None, rest.split("+")):
        key, sep, value = item.partition("=")
        if not sep or key not in SETTINGS or not value:
            raise SystemExit("bench: case %r: setting %r: expected one of %s as key=value"
                             % (text, item, ", ".join(SETTINGS)))
        if key == "poll":
            try:
                float(value)
            except ValueError:
                raise SystemExit("bench: case %r: poll=%r: expected seconds" % (text, value))
            env["ANSIBLE_CONFIG"] = "[defaults]\ninternal_poll_interval = %s\n" % value
        elif key == "cfg":
            env["ANSIBLE_CONFIG"] = os.path.join(TOP, value)
        elif key == "collections":
            env["ANSIBLE_COLLECTIONS_PATH"] = os.path.join(TOP, value)
        elif key == "play":
            play = os.path.join(TOP, value)
        elif key == "env":
            variable, sep, setting = value.partition("=")
            if not sep or not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", variable):
                raise SystemExit("bench: case %r: env=%r: expected env=NAME=VALUE" % (text, value))
            env[variable] = setting
        elif key == "burn":
            try:
                float(value)
            except ValueError:
                raise SystemExit("bench: case %r: burn=%r: expected seconds" % (text, value))
            burn = value
        else:
            env[SETTINGS[key]] = value
    return {"label": text, "base": name, "env": env, "play": play, "burn": burn}


def read_int(path):
    with open(path) as handle:
        return int(handle.read().split()[0])


def cgroup_cpu_ns(name):
    path = os.path.join(CG, "cpuacct", name)
    return read_int(path + "/cpuacct.usage_user"), read_int(path + "/cpuacct.usage_sys")


class RunCgroup(object):
    """A fresh cpuacct + memory cgroup (v1) for one run and everything it starts."""

    def __init__(self, tag):
        self.paths = [os.path.join(CG, ctl, BENCH_CGROUP, tag) for ctl in ("cpuacct", "memory")]
        for path in self.paths:
            os.makedirs(path, exist_ok=True)

    def enter(self):            # in the child, before exec
        for path in self.paths:
            with open(path + "/cgroup.procs", "w") as handle:
                handle.write(str(os.getpid()))

    def pids(self):
        with open(self.paths[0] + "/cgroup.procs") as handle:
            return [int(x) for x in handle.read().split()]

    def end_leftovers(self):
        """The run's ssh ControlPersist masters (and anything else it left): ended, reaped."""
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for pid in self.pids():
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass
            deadline = time.monotonic() + 5
            while self.pids() and time.monotonic() < deadline:
                reap()
                time.sleep(0.05)
            if not self.pids():
                break
        reap()

    def figures(self):
        cpu = os.path.join(self.paths[0])
        mem = self.paths[1]
        return {"cpu_user_s": read_int(cpu + "/cpuacct.usage_user") / 1e9,
                "cpu_sys_s": read_int(cpu + "/cpuacct.usage_sys") / 1e9,
                "peak_mib": read_int(mem + "/memory.max_usage_in_bytes") / 2 ** 20}

    def remove(self):
        for path in self.paths:
            try:
                os.rmdir(path)
            except OSError:
                pass


def reap():
    while True:
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def reset_peak(name):
    with open(os.path.join(CG, "memory", name, "memory.max_usage_in_bytes"), "w") as handle:
        handle.write("0")


def nodes_cpu_s():
    user, system = cgroup_cpu_ns(NODES_CGROUP)
    return (user + system) / 1e9


def nodes_oom_kills(root=os.path.join(CG, "memory", NODES_CGROUP)):
    """Processes the kernel killed for memory in the simulated nodes so far: the sum of each node's
    memory cgroup ``oom_kill`` counter (memory.oom_control, cgroup v1). A node at its memory limit
    (lab/scale.sh SCALE_NODE_MEMORY) loses a process: fabricsim's sysfs daemon, a perftest job; the
    run's figures are then those of a broken node, not of the collection."""
    total = 0
    try:
        names = os.listdir(root)
    except OSError:
        return 0
    for name in names:
        try:
            with open(os.path.join(root, name, "memory.oom_control")) as handle:
                for line in handle:
                    key, dummy, value = line.partition(" ")
                    if key == "oom_kill":
                        total += int(value)
        except (IOError, OSError, ValueError):
            continue
    return total


def podman_each(nodes, argv):
    """argv in every node (podman exec, 4 at a time): lab preparation, not measured."""
    names = ["scale-%04d" % i for i in range(1, nodes + 1)]
    failures = []
    lock = threading.Lock()

    def worker():
        while True:
            with lock:
                if not names:
                    return
                name = names.pop()
            proc = subprocess.run(["podman", "exec", name] + argv, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, text=True, check=False)
            if proc.returncode:
                with lock:
                    failures.append("%s: %s" % (name, proc.stderr.strip()[-300:]))

    threads = [threading.Thread(target=worker) for _index in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise SystemExit("bench: %s failed on %d nodes: %s" % (" ".join(argv), len(failures), failures[0]))


class CsvRows(list):
    """The runs so far; each one appended to the CSV file as soon as it is measured."""

    def __init__(self, path):
        super(CsvRows, self).__init__()
        self.path = path
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)

    def append(self, row):
        super(CsvRows, self).append(row)
        new = not os.path.exists(self.path) or os.path.getsize(self.path) == 0
        with open(self.path, "a", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(row))
            if new:
                writer.writeheader()
            writer.writerow(row)


class Bench(object):
    def __init__(self, args, tmp):
        self.args, self.tmp, self.count = args, tmp, 0
        self.ping_play = os.path.join(tmp, "ping.yml")
        self.facts_play = os.path.join(tmp, "facts.yml")
        self.burn_play = os.path.join(tmp, "burn.yml")
        for path, text in ((self.ping_play, PING_PLAY % "false"), (self.facts_play, PING_PLAY % "true"),
                           (self.burn_play, BURN_PLAY)):
            with open(path, "w") as handle:
                handle.write(text)
        self.inventory = os.path.join(TOP, ".cache", "scale", "inventory-" + args.transport)

    def inventory_for(self, nodes):
        """The lab's inventory, or, when the lab is larger than ``nodes`` (--no-up on a lab started
        with more), a copy holding its first ``nodes`` nodes (their names, as lab/scale.sh numbers them)."""
        import yaml
        sources = [os.path.join(self.inventory, name) for name in ("hosts.yml", "addresses.yml")]
        with open(sources[0]) as handle:
            text = handle.read()
        if len(set(re.findall(r"scale-\d{4}", text))) <= nodes:
            return self.inventory
        target = os.path.join(self.tmp, "inventory-%s-%d" % (self.args.transport, nodes))
        if not os.path.isdir(target):
            shutil.copytree(self.inventory, target, symlinks=False)
            wanted = set("scale-%04d" % i for i in range(1, nodes + 1))

            def keep(tree):
                if isinstance(tree, dict):
                    return dict((k, keep(v)) for k, v in tree.items()
                                if not (isinstance(k, str) and k.startswith("scale-") and k not in wanted))
                return tree
            for source in sources:
                with open(source) as handle:
                    data = yaml.safe_load(handle)
                path = os.path.join(target, os.path.basename(source))
                os.remove(path)
                with open(path, "w") as handle:
                    yaml.safe_dump(keep(data), handle, sort_keys=False)
        return target

    def argv(self, case):
        base = case["base"]
        play = case.get("play") or {"ping": self.ping_play, "facts": self.facts_play, "burn": self.burn_play,
                                    "drift": "playbooks/drift_check.yml", "rerun": "playbooks/site.yml",
                                    "first": "playbooks/site.yml", "fabric": "playbooks/fabric_test.yml"}[base]
        other = case["env"].get("ANSIBLE_COLLECTIONS_PATH")
        if other and not case.get("play") and play.startswith("playbooks/"):
            # another checkout's own playbook: its plays go with its plugins
            play = os.path.join(other, "ansible_collections", "rdma", "fabric", play)
        argv = ["ansible-playbook", "-i", self.inventory_for(case["nodes"]), play]
        if base == "burn":
            argv += ["-e", "bench_burn_s=%s" % case.get("burn", "1.6")]
        if base == "drift":
            argv += ["-e", "drift_report_dir=%s" % os.path.join(self.tmp, "drift-report")]
        if base == "fabric":
            argv += ["-e", "fabric_test_report_dir=%s" % os.path.join(self.tmp, "fabric-report")]
        return argv

    def run(self, nodes, case, rnd):
        if case["base"] == "first":
            podman_each(nodes, ["node-reset"])
        self.count += 1
        tag = "run-%d-%d" % (os.getpid(), self.count)
        group = RunCgroup(tag)
        env = dict(os.environ)
        env["ANSIBLE_SSH_CONTROL_PATH_DIR"] = os.path.join(self.tmp, "cp", tag)
        env.update(case["env"])
        if env.get("ANSIBLE_CONFIG", "").startswith("[defaults]"):
            cfg = os.path.join(self.tmp, tag + ".cfg")
            with open(cfg, "w") as handle:
                handle.write(env["ANSIBLE_CONFIG"])
            env["ANSIBLE_CONFIG"] = cfg
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        nodes_before = nodes_cpu_s()
        kills_before = nodes_oom_kills()
        start = time.monotonic()
        proc = subprocess.run(self.argv(dict(case, nodes=nodes)), cwd=TOP, env=env, preexec_fn=group.enter,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=False)
        wall = time.monotonic() - start
        group.end_leftovers()
        nodes_used = nodes_cpu_s() - nodes_before
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        figures = group.figures()
        group.remove()
        ok_rc = (0, 2) if case["base"] in ("drift", "fabric") else (0,)   # 2: drift found (fresh nodes), a node failed
        failed = proc.returncode not in ok_rc
        kills = nodes_oom_kills() - kills_before
        if failed:
            sys.stderr.write(proc.stdout[-3000:])
            sys.stderr.write("\nbench: %s (N=%d) exited %d: left out of the medians\n"
                             % (case["label"], nodes, proc.returncode))
        if kills > 0:
            failed = True
            sys.stderr.write("bench: %s (N=%d): the kernel killed %d process(es) of the simulated nodes for memory "
                             "(their limit, lab/scale.sh SCALE_NODE_MEMORY; the fabric case's 8-rail perftest jobs "
                             "need 256m): left out of the medians\n" % (case["label"], nodes, kills))
        cpu = figures["cpu_user_s"] + figures["cpu_sys_s"]
        rounds = fabric_rounds(proc.stdout) if case["base"] == "fabric" else 0
        row = {"nodes": nodes, "transport": self.args.transport, "case": case["label"], "round": rnd,
               "rc": proc.returncode, "failed": failed, "wall_s": round(wall, 3), "ctl_cpu_s": round(cpu, 3),
               "ctl_cpu_s_per_host": round(cpu / nodes, 4),
               "ctl_user_s": round(figures["cpu_user_s"], 3), "ctl_sys_s": round(figures["cpu_sys_s"], 3),
               "rusage_cpu_s": round(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, 3),
               "ctl_peak_mib": round(figures["peak_mib"], 1),
               "max_process_rss_mib": round(after.ru_maxrss / 1024.0, 1),
               "nodes_cpu_s": round(nodes_used, 3), "nodes_cpu_s_per_host": round(nodes_used / nodes, 4),
               "load1": os.getloadavg()[0], "rounds": rounds,
               "ctl_cpu_s_per_host_round": round(cpu / nodes / rounds, 4) if rounds else 0.0,
               "nodes_oom_kills": kills}
        print("N=%-4d %-28s round %s: wall %7.1f s, controller %7.1f s CPU (%.3f s/host), peak %6.0f MiB, "
              "nodes %6.1f s CPU" % (nodes, case["label"], rnd, wall, cpu, cpu / nodes, figures["peak_mib"], nodes_used),
              flush=True)
        if case["base"] == "first":
            # booted with the kernel arguments it wrote, as after the bench's own first converge: the
            # cases after it see a converged fleet, not one owing a reboot (not measured)
            podman_each(nodes, ["node-reboot"])
        return row


def fabric_rounds(output):
    """The fabric test's rounds in a run's output: its pair rounds and isolation rounds, as the
    role's loop labels name them ("round 2 of 4", "isolation round 1 of 1")."""
    pair = [int(m) for m in re.findall(r"\(item=round \d+ of (\d+)\)", output)]
    isolation = [int(m) for m in re.findall(r"\(item=isolation round \d+ of (\d+)\)", output)]
    return (max(pair) if pair else 0) + (max(isolation) if isolation else 0)


def median_rows(rows, nodes, label):
    runs = [r for r in rows if r["nodes"] == nodes and r["case"] == label and not r["failed"]]
    if not runs:
        return dict((key, 0.0) for key in ("wall_s", "ctl_cpu_s_per_host", "ctl_peak_mib",
                                           "nodes_cpu_s_per_host")), 0
    keys = ["wall_s", "ctl_cpu_s_per_host", "ctl_peak_mib", "nodes_cpu_s_per_host"]
    if all(r.get("rounds") for r in runs):
        keys += ["rounds", "ctl_cpu_s_per_host_round"]
    return dict((key, statistics.median(float(r[key]) for r in runs)) for key in keys), len(runs)


def table(rows, transport):
    out = ["", "scale bench, %s transport, on %s (%d cores, load avg %s); medians" % (
        transport, platform.node(), os.cpu_count(), " ".join("%.1f" % x for x in os.getloadavg())),
        "%-5s %-28s %4s %9s %13s %7s %9s %9s %14s" % (
            "N", "case", "runs", "wall_s", "ctl_cpu/host", "x ping", "wall/ping", "peak_MiB",
            "nodes_cpu/host")]
    for nodes in sorted(set(r["nodes"] for r in rows)):
        ping, _runs = median_rows(rows, nodes, "ping")
        labels = []
        for r in rows:
            if r["nodes"] == nodes and r["case"] not in labels:
                labels.append(r["case"])
        for label in labels:
            med, runs = median_rows(rows, nodes, label)
            ratio = med["ctl_cpu_s_per_host"] / ping["ctl_cpu_s_per_host"] if ping["ctl_cpu_s_per_host"] else 0
            wall_ratio = med["wall_s"] / ping["wall_s"] if ping["wall_s"] else 0
            out.append("%-5d %-28s %4d %9.1f %13.3f %6.2fx %8.2fx %9.0f %14.3f" % (
                nodes, label, runs, med["wall_s"], med["ctl_cpu_s_per_host"], ratio, wall_ratio,
                med["ctl_peak_mib"], med["nodes_cpu_s_per_host"]))
    return "\n".join(out)


# the table: (column, the cases it reads, in order of preference)
SUMMARY = (("drift check", ("drift",)), ("re-run", ("rerun",)),
           ("first converge", ("first", "first (fresh nodes)")), ("fabric test", ("fabric",)))


def summary(rows):
    """One line per N: ping's controller CPU per host, and each other case's with its ratio to it
    (medians of the rounds, the runs counted), the peak memory of the drift check against ping's,
    and the load averages the runs saw (1-minute, least and most)."""
    sizes = sorted(set(r["nodes"] for r in rows))
    columns = [(title, [c for c in cases if any(r["case"] == c for r in rows)]) for title, cases in SUMMARY]
    columns = [(title, found[0]) for title, found in columns if found]
    out = ["", "controller CPU per host, side by side, medians of the rounds (x ping); peak memory of the "
           "drift check (x ping's)",
           "| N | ping | " + " | ".join(title for title, _case in columns) + " | peak MiB drift / ping | load |",
           "|---|---|" + "---|" * len(columns) + "---|---|"]
    for nodes in sizes:
        ping, ping_runs = median_rows(rows, nodes, "ping")
        cells = ["%d" % nodes, "%.3f s (%d)" % (ping["ctl_cpu_s_per_host"], ping_runs) if ping_runs else "-"]
        for _title, case in columns:
            med, runs = median_rows(rows, nodes, case)
            if not runs:
                cells.append("-")
            elif ping_runs and ping["ctl_cpu_s_per_host"]:
                cells.append("%.3f s (%.2fx, %d)" % (med["ctl_cpu_s_per_host"],
                                                     med["ctl_cpu_s_per_host"] / ping["ctl_cpu_s_per_host"], runs))
                if med.get("rounds"):   # the fabric test: per round as well
                    cells[-1] += "; %.0f rounds: %.3f s per round (%.2fx)" % (
                        med["rounds"], med["ctl_cpu_s_per_host_round"],
                        med["ctl_cpu_s_per_host_round"] / ping["ctl_cpu_s_per_host"])
            else:
                cells.append("%.3f s (%d)" % (med["ctl_cpu_s_per_host"], runs))
        drift, drift_runs = median_rows(rows, nodes, "drift")
        peak = "-"
        if drift_runs and ping_runs and ping["ctl_peak_mib"]:
            peak = "%.0f / %.0f (%.2fx)" % (drift["ctl_peak_mib"], ping["ctl_peak_mib"],
                                            drift["ctl_peak_mib"] / ping["ctl_peak_mib"])
        cells.append(peak)
        loads = [r["load1"] for r in rows if r["nodes"] == nodes and r.get("load1") is not None]
        cells.append("%.1f-%.1f" % (min(loads), max(loads)) if loads else "-")
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n", maxsplit=1)[0])
    parser.add_argument("--nodes", default="16,64,200", help="comma-separated fleet sizes")
    parser.add_argument("--transport", choices=("ssh", "podman"), default="ssh")
    parser.add_argument("--pairs", type=int, default=3, help="rounds of the cases per N")
    parser.add_argument("--cases", default="ping,drift,rerun,first")
    parser.add_argument("--no-up", action="store_true", help="use the running scale lab as it is")
    parser.add_argument("--no-converge", action="store_true",
                        help="skip the first converge after `up` (the nodes stay fresh: the drift check "
                             "then reports every node drifted; for fleet sizes a converge would take too long)")
    parser.add_argument("--csv", default=os.path.join(TOP, ".cache", "bench-scale.csv"))
    args = parser.parse_args()
    try:
        sizes = [int(x) for x in args.nodes.split(",")]
    except ValueError:
        raise SystemExit("bench: --nodes=%r: expected comma-separated node counts" % args.nodes)
    cases = [parse_case(x) for x in args.cases.split(",")]
    if not os.path.isdir(os.path.join(CG, "cpuacct")):
        raise SystemExit("bench: needs cgroup v1 cpuacct and memory controllers under %s" % CG)
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    tmp = tempfile.mkdtemp(prefix="bench-scale.")
    bench = Bench(args, tmp)
    rows = CsvRows(args.csv)
    signal.signal(signal.SIGTERM, lambda *_args: sys.exit("bench: terminated"))
    try:
        for nodes in sizes:
            if not args.no_up:
                subprocess.run([os.path.join(TOP, "lab", "scale.sh"), "up", str(nodes)], check=True)
                reset_peak(NODES_CGROUP)
            if not args.no_up and not args.no_converge:
                podman_each(nodes, ["node-reset"])
                first = bench.run(nodes, {"label": "first (fresh nodes)", "base": "rerun", "env": {}}, 0)
                rows.append(first)
                podman_each(nodes, ["node-reboot"])
            for rnd in range(1, args.pairs + 1):
                for case in cases:
                    rows.append(bench.run(nodes, case, rnd))
            mem = os.path.join(CG, "memory", NODES_CGROUP)
            print("N=%d: the %d nodes' memory: %.0f MiB now, %.0f MiB peak (cgroup %s, page cache included)"
                  % (nodes, nodes, read_int(mem + "/memory.usage_in_bytes") / 2 ** 20,
                     read_int(mem + "/memory.max_usage_in_bytes") / 2 ** 20, NODES_CGROUP), flush=True)
            print(table([r for r in rows if r["nodes"] == nodes], args.transport), flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if len(sizes) > 1:
        print(table(rows, args.transport))
    print(summary(rows))
    print("\nevery run: %s" % args.csv)


if __name__ == "__main__":
    main()
