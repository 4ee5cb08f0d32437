#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: nccl_test
short_description: Run an nccl-tests benchmark (all_reduce_perf) on a node or, through a launcher, a group
version_added: 0.1.0
author: rdma.fabric contributors (@rdma-fabric)
extends_documentation_fragment: [rdma.fabric.attributes]
description:
  - Runs O(binary) (nccl-tests' C(all_reduce_perf) by default) on this node, or across a pair or a group
    through O(launcher) (for example C(mpirun)), under coreutils C(timeout), and returns its bus bandwidth.
  - The NCCL settings are the node's - NCCL reads C(/etc/nccl.conf) itself on every node; the C(NCCL_*)
    lines of O(env_file) are also put in the environment of the process (so that a launcher that exports
    the environment, such as C(srun) or C(mpirun -x), hands them to every rank).
  - When the binary or the launcher is missing, or the node has no NVIDIA GPU, the result is
    C(skipped=true) with the C(reason), never a pass. A run that fails is C(ok=false) with the tool's error.
options:
  state:
    description:
      - V(run) runs the test; V(parsed) parses O(running_config) (nccl-tests' output) instead.
    type: str
    choices: [run, parsed]
    default: run
  binary:
    description:
      - The nccl-tests program, a name looked up in C(PATH), or an absolute path.
      - A name not in C(PATH) is looked up in C(/opt/nccl-tests/build) and C(/usr/local/nccl-tests/build) too, but
        such a binary runs (as the module's user, often root) only when it and every directory from it up to C(/)
        are owned by root or the running user and not writable by group or others; otherwise the module fails
        naming the path and why (whoever could write there would run code as this user).
    type: str
    default: all_reduce_perf
  launcher:
    description:
      - Argument vector put before the binary, for example C([mpirun, -np, "4", -H, "a:2,b:2", --tag-output]).
        Its first word must be found on the node. None runs the binary alone on this node (single node).
    type: list
    elements: str
  args:
    description:
      - Arguments of the binary. Default C(-b 8 -e 8G -f 2 -g G) with G the node's GPU count without a
        launcher, C(-g 1) with one (the launcher starts one rank per GPU).
    type: list
    elements: str
  env_file:
    description:
      - File of C(NAME=value) lines (what the C(nccl_env) role writes) whose C(NCCL_*) values are set in the
        process environment. A missing default file is no error (nothing to add); a missing given file is.
    type: path
    default: /etc/nccl.conf
  timeout:
    description: Hard bound in seconds for the whole run (coreutils C(timeout --kill-after=5)).
    type: int
    default: 600
  running_config:
    description: nccl-tests output to parse with O(state=parsed).
    type: str
attributes:
  check_mode:
    description: Parsing runs in check mode; the test does not.
    support: partial
    details: V(parsed) runs the same; V(run) would send traffic, so it returns C(skipped) with a reason.
  diff_mode:
    description: A collective test changes nothing on the nodes; there is no diff.
    support: none
  action_group:
    membership:
      - rdma.fabric.fabric_test
  platform:
    description: Linux hosts with NVIDIA GPUs and nccl-tests.
notes:
  - Never C(changed). C(avg_busbw_gbps) and C(max_busbw_gbps) are in GB/s (gigabytes per second), the unit
    nccl-tests prints its C(busbw) column and C(Avg bus bandwidth) in.
requirements:
  - nccl-tests, NCCL and the CUDA runtime; a launcher (MPI, Slurm) for more than one node.
"""

EXAMPLES = r"""
- name: NCCL all-reduce on this node's GPUs
  rdma.fabric.nccl_test:
  register: nccl

- name: NCCL all-reduce across a pair, 2 GPUs each
  rdma.fabric.nccl_test:
    launcher: [mpirun, --allow-run-as-root, -np, "4", -H, "nodeA:2,nodeB:2", --tag-output]
    timeout: 900
  run_once: true
  register: nccl_pair

- name: Figures from a saved output
  rdma.fabric.nccl_test:
    state: parsed
    running_config: "{{ lookup('ansible.builtin.file', 'all_reduce.txt') }}"
"""

RETURN = r"""
dropped_keys:
  description:
    - Keys of the node's result the controller acts on (C(ansible_facts), C(add_host), C(add_group), C(ansible_stats))
      that this module never returns, dropped on the controller (the node may be compromised); a warning says so.
  returned: when the node's result held any
  type: list
  elements: str
ok:
  description: The run finished with rc 0, printed result rows, no wrong results (C(#wrong) 0) and
    C(Out of bounds values) 0.
  returned: always
  type: bool
skipped:
  description: The test could not run here (no binary, no launcher, no GPU, check mode); C(reason) says why.
  returned: always
  type: bool
reason:
  description: Why the test was skipped; null otherwise.
  returned: always
  type: str
avg_busbw_gbps:
  description: nccl-tests' C(Avg bus bandwidth) in GB/s.
  returned: always
  type: float
max_busbw_gbps:
  description: The largest C(busbw) of the rows (out-of-place and in-place) in GB/s.
  returned: always
  type: float
out_of_bounds:
  description: nccl-tests' C(Out of bounds values) count.
  returned: always
  type: int
rows:
  description: The result rows as the nccl-tests parser gives them (C(size), C(count), C(type), C(redop),
    C(root), C(oop) and C(ip) with C(time), C(algbw), C(busbw), C(wrong)).
  returned: always
  type: list
  elements: dict
command:
  description: The argument vector run (with the timeout wrapper).
  returned: always
  type: list
  elements: str
rc:
  description: Exit code (124 or 137 when the timeout ended it); null when nothing ran.
  returned: always
  type: int
error:
  description: The tool's error lines joined with C(; ), or the timeout; null when ok.
  returned: always
  type: str
env:
  description: The C(NCCL_*) variables taken from O(env_file).
  returned: always
  type: dict
output:
  description: The last 8000 characters of the output; when some was dropped, a first line says how much.
  returned: always
  type: str
output_dropped_bytes:
  description:
    - Bytes of the output dropped from its front. The output (stdout and stderr of every rank) is read keeping only
      its last 4 MiB, where nccl-tests prints its table and summary, so heavy C(NCCL_DEBUG) output or a rank that
      floods it cannot exhaust the node's memory.
  returned: always
  type: int
parsed:
  description: The whole parse (O(state=parsed) and V(run)).
  returned: always
  type: dict
"""

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.rdma.fabric.plugins.module_utils.common import _fileio
from ansible_collections.rdma.fabric.plugins.module_utils.nccl import _nccl
from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _nccl_tests
from ansible_collections.rdma.fabric.plugins.module_utils.acceptance import _perftest_run as run
from ansible_collections.rdma.fabric.plugins.module_utils.common._common import C_LOCALE

DEFAULT_ENV_FILE = "/etc/nccl.conf"
OPT_DIRS = ["/opt/nccl-tests/build", "/usr/local/nccl-tests/build"]
OUTPUT_LIMIT = 4 * 1024 * 1024


def untrusted(path, uid=None):
    """Why running ``path`` would hand this user to someone else, or None: the file (followed through
    symlinks) and every directory from it up to ``/``, on the path as given and as resolved, must be
    owned by root or ``uid`` (default: this user) and not writable by group or others."""
    uid = os.geteuid() if uid is None else uid
    seen = set()
    for start in (os.path.abspath(path), os.path.realpath(path)):
        current = start
        while True:
            if current not in seen:
                seen.add(current)
                try:
                    info = os.stat(current) if current == start else os.lstat(current)
                except OSError as exc:
                    return "%s: %s" % (current, os.strerror(exc.errno) if exc.errno else exc)
                if info.st_uid not in (0, uid):
                    return "%s is owned by uid %d, not by root or this user (uid %d)" % (current, info.st_uid, uid)
                if info.st_mode & 0o022:
                    return "%s is writable by %s (mode %04o)" % (
                        current, "group and others" if info.st_mode & 0o022 == 0o022 else
                        "group" if info.st_mode & 0o020 else "others", info.st_mode & 0o7777)
            parent = os.path.dirname(current)
            if parent == current:
                break
            current = parent
    return None


def find_binary(module, binary, opt_dirs=None):
    """``(path, refusal)``: an absolute ``binary`` as given; a name from ``PATH``; else from ``opt_dirs`` only
    when :func:`untrusted` finds nothing (else ``refusal`` names the path and why). (None, None): not found."""
    if os.path.isabs(binary):
        return binary, None
    path = module.get_bin_path(binary, required=False)
    if path:
        return path, None
    for directory in OPT_DIRS if opt_dirs is None else opt_dirs:
        candidate = os.path.join(directory, binary)
        if not os.path.isfile(candidate):
            continue
        why = untrusted(candidate)
        if why:
            return None, ("binary=%s: found only as %s, which is not run: %s (put it in PATH, give its absolute "
                          "path, or fix the owner and mode)" % (binary, candidate, why))
        return candidate, None
    return None, None


def argument_spec():
    return dict(
        state=dict(type="str", choices=["run", "parsed"], default="run"),
        binary=dict(type="str", default="all_reduce_perf"),
        launcher=dict(type="list", elements="str"),
        args=dict(type="list", elements="str"),
        env_file=dict(type="path", default=DEFAULT_ENV_FILE),
        timeout=dict(type="int", default=600),
        running_config=dict(type="str"),
    )


def empty(command=None, **extra):
    result = {"ok": False, "skipped": False, "reason": None, "avg_busbw_gbps": None, "max_busbw_gbps": None,
              "out_of_bounds": None, "rows": [], "command": command or [], "rc": None, "error": None, "env": {},
              "output": "", "output_dropped_bytes": 0, "parsed": None}
    result.update(extra)
    return result


def judge(parsed, rc, text, timeout_argv=None):
    """ok, error and the figures from a parse (None when the text did not parse)."""
    rows = (parsed or {}).get("rows") or []
    busbws = [side.get("busbw") for row in rows for side in (row.get("oop") or {}, row.get("ip") or {})
              if isinstance(side.get("busbw"), (int, float))]
    wrong = sum(side.get("wrong") for row in rows for side in (row.get("oop") or {}, row.get("ip") or {})
                if isinstance(side.get("wrong"), int))
    oob = (parsed or {}).get("out_of_bounds")
    problems = []
    if rc in (124, 137) and timeout_argv:
        problems.append("timed out after %s s (%s)" % (timeout_argv[2], " ".join(timeout_argv[:3])))
    problems += list((parsed or {}).get("errors") or [])
    if rc not in (0, None) and not problems:
        problems += [line.strip() for line in (text or "").splitlines() if line.strip()][-3:]
    if rc == 0 and not rows:
        problems.append("no result row in the output")
    if wrong:
        problems.append("%d wrong results (#wrong column)" % wrong)
    if oob:
        problems.append("Out of bounds values: %s" % oob)
    ok = rc in (0, None) and bool(rows) and not wrong and not oob and not (parsed or {}).get("errors")
    if rc not in (0, None) and not problems:
        problems.append("exited with rc=%s" % rc)
    return {"ok": ok, "error": None if ok else "; ".join(problems) or None,
            "avg_busbw_gbps": (parsed or {}).get("avg_busbw"),
            "max_busbw_gbps": max(busbws) if busbws else None,
            "out_of_bounds": oob, "rows": rows}


def read_env(module, path):
    """The NCCL_* values of ``path`` (nccl.conf syntax, as NCCL reads it)."""
    try:
        text = _fileio.read_text(path, 1024 * 1024, what="env_file")
    except (IOError, OSError) as exc:
        if path == DEFAULT_ENV_FILE and getattr(exc, "errno", None) == 2:
            return {}
        module.fail_json(msg="env_file=%s: %s" % (path, exc))
    return dict((k, v) for k, v in _nccl.parse_conf(text).items() if k.startswith("NCCL_"))


def gpu_count(module):
    smi = module.get_bin_path("nvidia-smi", required=False)
    if smi:
        rc, out, dummy = module.run_command([smi, "-L"], environ_update=C_LOCALE)
        if rc == 0:
            return len([line for line in out.splitlines() if line.startswith("GPU ")])
    return run._proc_gpus()


def main():
    module = AnsibleModule(argument_spec=argument_spec(), supports_check_mode=True,
                           required_if=[("state", "parsed", ["running_config"])])
    params = module.params
    if not 1 <= params["timeout"] <= 86400:
        module.fail_json(msg="timeout=%s: expected seconds 1-86400" % params["timeout"])
    binary = params["binary"]
    if not binary or binary.startswith("-") or any(c.isspace() for c in binary) or \
            ("/" in binary and not os.path.isabs(binary)):
        module.fail_json(msg="binary=%r: expected a program name or an absolute path" % (binary,))
    try:
        run.check_extra_args(params["launcher"], "launcher")
        run.check_extra_args(params["args"], "args")
    except run.RunError as exc:
        module.fail_json(msg=str(exc))
    if params["launcher"] is not None and not params["launcher"]:
        module.fail_json(msg="launcher=[]: give the launcher's argument vector, or leave launcher out for one node")

    if params["state"] == "parsed":
        try:
            parsed = _nccl_tests.parse(params["running_config"])
        except ValueError as exc:
            module.fail_json(msg="running_config: %s" % exc)
        result = empty(parsed=parsed)
        result.update(judge(parsed, None, params["running_config"]))
        module.exit_json(changed=False, **result)

    if module.check_mode:
        module.exit_json(changed=False, **empty(skipped=True, reason="check mode: the test would send traffic"))

    env = read_env(module, params["env_file"])
    path, refusal = find_binary(module, binary)
    if refusal:
        module.fail_json(msg=refusal, **empty(env=env, reason=refusal))
    if not path or not os.access(path, os.X_OK):
        module.exit_json(changed=False, **empty(skipped=True, env=env,
                                                reason="%s not found (nccl-tests is not installed)" % binary))
    launcher = list(params["launcher"] or [])
    if launcher:
        found = launcher[0] if os.path.isabs(launcher[0]) else module.get_bin_path(launcher[0], required=False)
        if not found:
            module.exit_json(changed=False, **empty(skipped=True, env=env,
                                                    reason="launcher %s not found" % launcher[0]))
        launcher[0] = found
    gpus = gpu_count(module)
    if not gpus:
        module.exit_json(changed=False, **empty(skipped=True, env=env, reason="no NVIDIA GPU on this host"))
    args = params["args"]
    if args is None:
        args = ["-b", "8", "-e", "8G", "-f", "2", "-g", "1" if launcher else str(gpus)]
    timeout_tool = module.get_bin_path("timeout", required=False)
    command = launcher + [path] + list(args)
    wrapper = [timeout_tool, "--kill-after=%d" % run.KILL_AFTER, str(params["timeout"])] if timeout_tool else None
    argv = (wrapper or []) + command
    environ = dict(os.environ)
    environ.update(C_LOCALE)
    environ.update(env)
    rc, out, dropped = run.run_bounded(argv, environ, params["timeout"] + run.KILL_AFTER + 5, OUTPUT_LIMIT)
    text = run.tail_text(out, dropped)
    parsed = None
    try:
        parsed = _nccl_tests.parse(text)
    except ValueError as exc:
        parsed = {"rows": [], "errors": [line.strip() for line in text.splitlines() if line.strip()][-3:] or [str(exc)],
                  "avg_busbw": None, "out_of_bounds": None}
    result = empty(command=argv, rc=rc, env=env, output=run.output_with_note(text, dropped, OUTPUT_LIMIT, 8000),
                   output_dropped_bytes=dropped, parsed=parsed)
    result.update(judge(parsed, rc, text, wrapper))
    module.exit_json(changed=False, **result)


if __name__ == "__main__":
    main()
