"""rdma.fabric.linear runs plays as ansible.builtin.linear does, without its busy waits."""
import os
import re
import subprocess
import sys

import pytest
import yaml

from ansible.errors import AnsibleError

from ansible_collections.rdma.fabric.plugins.plugin_utils import _core_compat as K
from ansible_collections.rdma.fabric.plugins.strategy import linear as L

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))

# ansible-playbook in this interpreter, with the strategy module's time.sleep counted: the
# builtin strategy sleeps 0.1 ms per pass while every fork is busy, and internal_poll_interval
# per poll while it waits for results. Prints the count when the run ends.
RUN = r"""
import os, sys, time
if os.environ.get("FAKE_CORE_VERSION"):
    import ansible.release
    ansible.release.__version__ = os.environ["FAKE_CORE_VERSION"]
import ansible.plugins.strategy as S
calls = [0]
class CountingTime(object):
    def __getattr__(self, name):
        return getattr(time, name)
    def sleep(self, seconds):
        calls[0] += 1
        time.sleep(seconds)
S.time = CountingTime()
from ansible.cli.playbook import main
try:
    main(["ansible-playbook"] + sys.argv[1:])
finally:
    sys.stdout.write("STRATEGY-SLEEPS %d\n" % calls[0])
    sys.stdout.flush()
"""

PLAY = """---
- name: Six hosts, two forks
  hosts: all
  gather_facts: false
  tasks:
    - name: Keep the workers busy
      ansible.builtin.command: sleep 0.6
      changed_when: false
    - name: One host only
      ansible.builtin.debug:
        msg: "{{ inventory_hostname }}"
      when: inventory_hostname == 'h3'
    - name: One failure, ignored
      ansible.builtin.command: "false"
      when: inventory_hostname == 'h5'
      ignore_errors: true
      changed_when: false
"""


def _run(tmp_path, strategy, **extra_env):
    inventory = tmp_path / "inventory"
    inventory.write_text("".join("h%d ansible_connection=local ansible_python_interpreter=%s\n" % (i, sys.executable)
                                 for i in range(1, 7)))
    play = tmp_path / "play.yml"
    play.write_text(PLAY)
    config = tmp_path / "ansible.cfg"
    config.write_text("[defaults]\n")
    env = dict(os.environ, ANSIBLE_STRATEGY=strategy, ANSIBLE_FORKS="2", ANSIBLE_NOCOLOR="1",
               ANSIBLE_DEPRECATION_WARNINGS="false", ANSIBLE_HOME=str(tmp_path / "home"),
               ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".cache", "collections"),
               ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp"), ANSIBLE_CONFIG=str(config), **extra_env)
    proc = subprocess.run([sys.executable, "-c", RUN, "-i", str(inventory), str(play)], env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    sleeps = re.search(r"^STRATEGY-SLEEPS (\d+)$", proc.stdout, re.M)
    assert sleeps, proc.stdout + proc.stderr
    recap = sorted(line.split() for line in proc.stdout.splitlines() if re.match(r"h\d+ +: ok=", line))
    results = sorted(re.findall(r"^(ok|changed|skipping|fatal): \[(h\d)\]", proc.stdout, re.M))
    return proc.returncode, recap, results, int(sleeps.group(1)), proc.stdout + proc.stderr


def test_same_run_as_builtin_linear_without_its_busy_waits(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    rc, recap, results, sleeps, out = _run(tmp_path / "a", "rdma.fabric.linear")
    b_rc, b_recap, b_results, b_sleeps, b_out = _run(tmp_path / "b", "ansible.builtin.linear")
    assert rc == b_rc == 0, out + b_out
    assert len(recap) == 6 and recap == b_recap
    assert results == b_results
    assert ["h5", ":", "ok=2", "changed=0", "unreachable=0", "failed=0", "skipped=1", "rescued=0",
            "ignored=1"] in recap
    # six hosts of 0.6 s on two forks: the builtin polls thousands of times; this one waits
    assert b_sleeps > 200, b_out
    assert sleeps < 20, out


@pytest.mark.parametrize("version", ["2.15.13", "2.20.0", "2.20.0.dev0", "3.0.1"])
def test_it_refuses_to_start_outside_the_tested_versions(tmp_path, version):
    rc, recap, results, sleeps, out = _run(tmp_path, "rdma.fabric.linear", FAKE_CORE_VERSION=version)
    assert rc != 0 and not results and not recap, out
    message = re.search(r"rdma\.fabric\.linear: .*", out.replace("\n", " "))
    assert message, out
    assert "ansible-core 2.16 to 2.19 (>=2.16.0,<2.20)" in message.group(0), out
    assert "found ansible-core %s" % version in message.group(0), out
    assert "ansible.builtin.linear" in message.group(0), out


@pytest.mark.parametrize("version, supported", [
    ("2.15.13", False), ("2.16.0", True), ("2.16.19", True), ("2.17.14", True), ("2.18.19", True),
    ("2.19.14", True), ("2.19.99", True), ("2.20.0", False), ("2.20.0.dev0", False), ("2.20.0rc1", False),
])
def test_the_version_check(version, supported):
    assert K.strategy_core_supported(version) is supported
    if supported:
        K.check_strategy_core(version)
    else:
        with pytest.raises(AnsibleError, match=r"2\.16 to 2\.19 .*found ansible-core %s\." % re.escape(version)):
            K.check_strategy_core(version)


def test_the_running_core_is_checked_before_the_strategy_starts(monkeypatch):
    monkeypatch.setattr(K, "CORE_VERSION", "2.20.1")
    with pytest.raises(AnsibleError, match="found ansible-core 2.20.1"):
        L.StrategyModule(None)


def test_the_range_is_what_the_collection_claims():
    with open(os.path.join(REPO, "meta", "runtime.yml")) as handle:
        claimed = yaml.safe_load(handle)["requires_ansible"]
    (low_major, low_minor), (high_major, high_minor) = K.STRATEGY_CORE_RANGE
    assert claimed == ">=%d.%d.0,<%d.%d" % (low_major, low_minor, high_major, high_minor + 1)
    with open(os.path.join(REPO, "lab", "core-matrix.sh")) as handle:
        lowest = re.search(r"^CORE_LOWEST=(\d+)\.(\d+)\.\d+$", handle.read(), re.M)
    assert lowest and (int(lowest.group(1)), int(lowest.group(2))) == (low_major, low_minor)
    with open(os.path.join(REPO, "requirements.txt")) as handle:
        pinned = re.search(r"^ansible-core==(\d+)\.(\d+)\.\d+$", handle.read(), re.M)
    assert pinned and (int(pinned.group(1)), int(pinned.group(2))) == (high_major, high_minor)
    assert K.strategy_core_supported()   # the ansible-core running these tests is one CI tests on


class _Worker(object):
    def __init__(self, alive, sentinel):
        self.alive, self.sentinel = alive, sentinel

    def is_alive(self):
        return self.alive


@pytest.mark.parametrize("workers, sentinels, full", [
    ([], [], False),
    ([None, None], [], False),
    ([_Worker(True, 7), None], [7], False),
    ([_Worker(True, 7), _Worker(False, 8)], [7], False),
    ([_Worker(True, 7), _Worker(True, 9)], [7, 9], True),
])
def test_busy_sentinels(workers, sentinels, full):
    assert K.busy_sentinels(workers) == (sentinels, full)


def test_results_deque_wakes_the_waiter():
    read_fd, write_fd = os.pipe()
    os.set_blocking(read_fd, False)
    os.set_blocking(write_fd, False)
    try:
        results = K.WakingDeque(["kept"], write_fd)
        assert list(results) == ["kept"]
        with pytest.raises(BlockingIOError):
            os.read(read_fd, 1)
        results.append("result")
        assert list(results) == ["kept", "result"] and results.popleft() == "kept"
        assert os.read(read_fd, 16) == b"r"
        # a full pipe (wake-ups pending) never blocks or fails the results thread
        while True:
            try:
                os.write(write_fd, b"x" * 65536)
            except BlockingIOError:
                break
        results.append("more")
        assert list(results) == ["result", "more"]
    finally:
        os.close(read_fd)
        os.close(write_fd)


def _play_strategies():
    found = []
    for name in ("drift_check.yml", "health.yml"):
        with open(os.path.join(REPO, "playbooks", name)) as handle:
            found += [play["strategy"] for play in yaml.safe_load(handle) if "strategy" in play]
    return found


def test_report_plays_follow_the_configured_strategy_unless_free():
    strategies = _play_strategies()
    assert len(strategies) == 3 and len(set(strategies)) == 1
    match = re.fullmatch(r"\{\{ lookup\('ansible\.builtin\.config', 'DEFAULT_STRATEGY'\) \| "
                         r"regex_replace\('(.+)', 'linear'\) \}\}", strategies[0])
    assert match, strategies[0]
    pattern = match.group(1)
    for configured, used in [("linear", "linear"), ("ansible.builtin.linear", "ansible.builtin.linear"),
                             ("rdma.fabric.linear", "rdma.fabric.linear"), ("debug", "debug"),
                             ("mitogen_linear", "mitogen_linear"), ("free", "linear"),
                             ("ansible.builtin.free", "linear"), ("host_pinned", "linear"),
                             ("ansible.builtin.host_pinned", "linear"), ("mitogen_free", "linear"),
                             ("mitogen_host_pinned", "linear"), ("freely", "freely")]:
        assert re.sub(pattern, "linear", configured) == used, configured
