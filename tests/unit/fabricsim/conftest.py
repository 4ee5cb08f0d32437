"""fabricsim unit tests: each test gets its own state/run dirs (env overrides)."""
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SIM_ROOT = os.path.abspath(os.path.join(HERE, "..", "..", "fabricsim"))
UNIT = os.path.abspath(os.path.join(HERE, ".."))
for path in (SIM_ROOT, UNIT):
    if path not in sys.path:
        sys.path.insert(0, path)


class Sim(object):
    def __init__(self, tmp):
        self.state_dir = os.path.join(tmp, "state")
        self.run_dir = os.path.join(tmp, "run")
        self.sys = os.path.join(self.run_dir, "sys")

    def cli(self, *args):
        from fabricsim import cli
        return cli.main(list(args))

    def init(self, name):
        assert self.cli("init", "--profile", name) == 0
        return self

    def run(self, tool, *args):
        from fabricsim import main
        return main.run_tool(tool, list(args))

    def out(self, tool, *args):
        out, err, rc = self.run(tool, *args)
        assert rc == 0, (out, err)
        return out

    def qos(self, netdev):
        from fabricsim import state
        return state.nic_state()["qos"][netdev]

    def edit(self, fn):
        """Mutate the volatile NIC state directly (to set up a sample's state)."""
        from fabricsim import state
        nic = state.nic_state()
        fn(nic)
        state.save_nic_state(nic)

    def edit_profile(self, fn, reset=True):
        from fabricsim import state
        data = state.profile_data()
        fn(data)
        state.save_profile_data(data)
        with state.locked():
            state.rebuild(reset=reset)

    def sysfs(self, rel):
        with open(os.path.join(self.sys, rel)) as handle:
            return handle.read()

    def write_sysfs(self, rel, value):
        with open(os.path.join(self.sys, rel), "w") as handle:
            handle.write(value)

    def log(self, writes=False):
        from fabricsim import log
        return log.records(writes_only=writes)


@pytest.fixture
def sim(tmp_path, monkeypatch):
    monkeypatch.setenv("FABRICSIM_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("FABRICSIM_RUN_DIR", str(tmp_path / "run"))
    monkeypatch.setenv("FABRICSIM_SHIM_DIR", str(tmp_path / "sbin"))
    monkeypatch.setenv("COLUMNS", "80")
    return Sim(str(tmp_path))
