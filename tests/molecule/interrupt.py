"""Interrupt a run at a moment read from a node, for the Molecule interruption tests (issue 26).

    interrupt.py run --node NODE --when WHEN --action ACTION [--timeout S] -- COMMAND...

starts COMMAND (an ansible-playbook run) in a session of its own, polls NODE every 20 ms
until WHEN holds, then does ACTION, waits for COMMAND to end and prints one JSON object:
``{"triggered", "trigger_s", "writes_at_trigger", "rc", "ended_before_trigger", "elapsed_s",
"output"}``. The node is read through the container's root file system on this machine
(``podman mount``; ``podman exec`` where that is not readable), so polling starts no process
in the node.

WHEN:
  write[:TOOL]          the first write fabricsim logs after COMMAND started (of TOOL only)
  file:PATH             PATH exists on the node (on its own file system: not under /run or /tmp,
                        tmpfs mounts the controller does not see)
ACTION:
  kill-controller       SIGKILL to COMMAND's whole process group (ansible-playbook, its
                        workers, their podman exec clients: the controller machine dies),
                        then wait until no process started through ``podman exec`` runs in
                        the node any more (a module already running there finishes, as it
                        would with SSH after the controller died)
  kill-node             ``podman kill NODE`` (power lost); COMMAND goes on with the others
  none                  only record the moment

    interrupt.py wait-quiet NODE [--timeout S]    wait for the node's exec'ed processes to end

The run fails (rc 2) when WHEN never held before COMMAND ended or the timeout passed: the
moment the test is about did not happen, so the test would prove nothing.
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time

LOG = "/var/lib/fabricsim/log.jsonl"


def podman(*args, check=True):
    proc = subprocess.run(["podman"] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, check=False)
    if check and proc.returncode != 0:
        raise RuntimeError("podman %s: %s" % (" ".join(args), proc.stderr.strip()))
    return proc


class Node:
    """Read files of a running node container from this machine."""

    def __init__(self, name):
        self.name = name
        self.root = None

    def _root(self):
        if self.root is None:
            proc = podman("mount", self.name, check=False)
            root = proc.stdout.strip()
            self.root = root if proc.returncode == 0 and os.path.isdir(root) else ""
        return self.root

    def read(self, path):
        """The file's text, or None when it does not exist (or the node is down)."""
        root = self._root()
        if root:
            try:
                with open(os.path.join(root, path.lstrip("/")), encoding="utf-8", errors="replace") as handle:
                    return handle.read()
            except FileNotFoundError:
                return None
            except OSError:
                pass
        proc = podman("exec", self.name, "cat", path, check=False)
        return proc.stdout if proc.returncode == 0 else None

    def exists(self, path):
        root = self._root()
        if root and os.path.isdir(root):
            return os.path.lexists(os.path.join(root, path.lstrip("/")))
        return podman("exec", self.name, "test", "-e", path, check=False).returncode == 0

    def writes(self, tool=None):
        out = []
        for line in (self.read(LOG) or "").splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if rec.get("kind") == "write" and (tool is None or rec.get("tool") == tool):
                out.append(rec)
        return out

    def exec_processes(self):
        """Processes started through podman exec (parent outside the node's PID namespace:
        ppid 0), other than PID 1 and this probe's own."""
        proc = podman("exec", self.name, "ps", "-eo", "pid=,ppid=,args=", check=False)
        if proc.returncode != 0:
            return None
        rows = []
        for line in proc.stdout.splitlines():
            parts = line.split(None, 2)
            if len(parts) >= 2 and parts[1] == "0" and parts[0] != "1" and not parts[2:3] == ["ps -eo pid=,ppid=,args="]:
                rows.append(line.strip())
        return rows


def wait_quiet(node, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        rows = node.exec_processes()
        if rows == [] or rows is None:      # None: the node is down, nothing runs in it
            return True
        time.sleep(0.2)
    return False


def cmd_run(args):
    node = Node(args.node)
    kind, _sep, what = args.when.partition(":")
    if kind not in ("write", "file") or (kind == "file" and (not what.startswith("/") or what.split("/")[1] in ("run", "tmp"))):
        raise SystemExit("--when %s: write[:TOOL] or file:PATH (absolute, not under /run or /tmp)" % args.when)
    tool = what or None
    before = len(node.writes(tool)) if kind == "write" else 0
    start = time.time()
    proc = subprocess.Popen(args.command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            universal_newlines=True, start_new_session=True)
    result = {"triggered": False, "trigger_s": None, "writes_at_trigger": None, "action": args.action}
    deadline = start + args.timeout
    # the run's output, drained by a thread while this one polls the node
    chunks = []
    reader = threading.Thread(target=lambda: chunks.append(proc.stdout.read()))
    reader.start()
    while time.time() < deadline:
        if proc.poll() is not None:
            break
        if kind == "write":
            seen = node.writes(tool)
            hit = len(seen) > before
        else:
            hit = node.exists(what)
        if hit:
            result.update(triggered=True, trigger_s=round(time.time() - start, 2))
            if kind == "write":
                result["writes_at_trigger"] = len(seen) - before
                result["first_write"] = seen[before]
            if args.action == "kill-controller":
                os.killpg(proc.pid, signal.SIGKILL)
            elif args.action == "kill-node":
                podman("kill", args.node, check=False)
            break
        time.sleep(0.02)
    ended_first = not result["triggered"]
    try:
        rc = proc.wait(timeout=max(1, deadline - time.time()))
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        rc = proc.wait()
        result["timed_out"] = True
    reader.join()
    if result["triggered"] and args.action == "kill-controller":
        result["node_quiet"] = wait_quiet(node, max(10, deadline - time.time()))
    result.update(rc=rc, ended_before_trigger=ended_first, elapsed_s=round(time.time() - start, 2),
                  output="".join(chunks)[-6000:])
    print(json.dumps(result))
    return 0 if result["triggered"] and not result.get("timed_out") else 2


def cmd_wait_quiet(args):
    ok = wait_quiet(Node(args.node), args.timeout)
    print(json.dumps({"quiet": ok}))
    return 0 if ok else 1


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd")
    r = sub.add_parser("run")
    r.add_argument("--node", required=True)
    r.add_argument("--when", required=True)
    r.add_argument("--action", choices=["kill-controller", "kill-node", "none"], required=True)
    r.add_argument("--timeout", type=float, default=300)
    r.add_argument("command", nargs=argparse.REMAINDER)
    w = sub.add_parser("wait-quiet")
    w.add_argument("node")
    w.add_argument("--timeout", type=float, default=60)
    args = parser.parse_args(argv)
    if args.cmd == "run":
        if args.command[:1] == ["--"]:
            args.command = args.command[1:]
        return cmd_run(args)
    if args.cmd == "wait-quiet":
        return cmd_wait_quiet(args)
    parser.print_help()
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
