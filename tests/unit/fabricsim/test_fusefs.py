"""fabricsim-sysfsd in FUSE mode: the simulated sysfs refuses invalid writes like the kernel.

The daemon (`fabricsim watch --mode fuse`) runs as a subprocess and mounts its FUSE view on
the test's run dir.  Needs root, /dev/fuse and mount(2); skipped with the reason otherwise.
A watchdog kills the server (which aborts the FUSE connection, so nothing blocks on it) and
every teardown lazily unmounts, so a broken server fails the tests instead of hanging them.
"""
import errno
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from conftest import SIM_ROOT

IF = "enp24s0np0"
ECN = "class/net/%s/ecn/" % IF
WATCHDOG_S = 60


def _fuse_unavailable():
    if os.geteuid() != 0:
        return "needs root (mount(2) of a FUSE filesystem)"
    try:
        os.close(os.open("/dev/fuse", os.O_RDWR))
    except OSError as exc:
        return "/dev/fuse cannot be opened: %s" % os.strerror(exc.errno)
    return None


class Daemon(object):
    def __init__(self, sim):
        self.sim = sim
        self.proc = None
        self.err = None

    @property
    def mountpoint(self):
        return os.path.join(os.path.realpath(self.sim.run_dir), "sys")

    def mounted(self):
        from fabricsim import fusefs
        return fusefs.fuse_mounts(self.mountpoint) > 0

    def start(self):
        self.err = open(os.path.join(self.sim.run_dir, "..", "sysfsd.err"), "w+")
        mode = os.path.join(self.sim.run_dir, "sysfsd.mode")
        if os.path.exists(mode):
            os.unlink(mode)                 # written again once the new server is up
        self.proc = subprocess.Popen([sys.executable, os.path.join(SIM_ROOT, "bin", "fabricsim"), "watch",
                                      "--mode", "fuse"], stdout=subprocess.DEVNULL, stderr=self.err,
                                     env={k: v for k, v in os.environ.items() if k != "NOTIFY_SOCKET"})
        deadline = time.time() + 15
        while time.time() < deadline:
            if self.proc.poll() is not None:
                self.err.seek(0)
                return self.err.read().strip() or "exited %d" % self.proc.returncode
            if self.mounted() and os.path.exists(mode) and open(mode).read().strip() == "fuse":
                return None
            time.sleep(0.05)
        self.stop()
        pytest.fail("fabricsim watch --mode fuse did not come up within 15 s")

    def stop(self, sig=signal.SIGTERM):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)

    def cleanup(self):
        self.stop(signal.SIGKILL)
        while self.mounted():
            subprocess.call(["umount", "-l", self.mountpoint], timeout=10)
        if self.err:
            self.err.close()


@pytest.fixture
def fuse_sim(sim):
    reason = _fuse_unavailable()
    if reason:
        pytest.skip(reason)
    sim.init("hgx-h100-roce")
    daemon = Daemon(sim)
    watchdog = threading.Timer(WATCHDOG_S, daemon.cleanup)
    watchdog.daemon = True
    try:
        failed = daemon.start()
        if failed:
            pytest.skip("FUSE mount unavailable on this host: %s" % failed)
        watchdog.start()
        sim.daemon = daemon
        yield sim
    finally:
        watchdog.cancel()
        daemon.cleanup()


def _path(sim, rel):
    return os.path.join(sim.sys, rel)


def test_view_is_a_fuse_mount_and_reads_static_attributes(fuse_sim):
    sim = fuse_sim
    assert os.path.ismount(sim.sys) and not os.path.islink(sim.sys)
    assert sim.sysfs("class/infiniband/mlx5_0/ports/1/state") == "4: ACTIVE\n"
    assert sim.sysfs("bus/pci/devices/0000:18:00.0/current_link_speed") == "32.0 GT/s PCIe\n"
    st = os.stat(_path(sim, "class/infiniband/mlx5_0/fw_ver"))
    assert st.st_size == 4096 and st.st_mode & 0o777 == 0o444          # like a sysfs attribute
    assert os.stat(_path(sim, ECN + "roce_np/enable/3")).st_mode & 0o777 == 0o644


def test_symlinks_and_listdir(fuse_sim):
    sim = fuse_sim
    dev = _path(sim, "class/infiniband/mlx5_0/device")
    function = "devices/pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:00.0/0000:18:00.0"
    assert os.path.islink(dev) and os.readlink(dev) == "../../../" + function
    assert os.path.realpath(dev) == os.path.join(os.path.realpath(sim.sys), function)
    assert os.path.realpath(_path(sim, "bus/pci/devices/0000:18:00.0")) == os.path.realpath(dev)
    assert os.listdir(os.path.join(dev, "net")) == [IF]
    assert sorted(os.listdir(_path(sim, ECN + "roce_np/enable"))) == [str(p) for p in range(8)]
    assert {"bus", "class", "module"} <= set(os.listdir(sim.sys))
    assert "mlx5_7" in os.listdir(_path(sim, "class/infiniband"))


def test_valid_write_changes_the_next_read_and_is_logged(fuse_sim):
    sim = fuse_sim
    sim.write_sysfs(ECN + "roce_np/enable/3", "1\n")
    assert sim.sysfs(ECN + "roce_np/enable/3") == "1\n"
    sim.write_sysfs(ECN + "roce_np/cnp_dscp", " 26 \n")                    # stored as parsed
    assert sim.sysfs(ECN + "roce_np/cnp_dscp") == "26\n"
    sim.write_sysfs("class/infiniband/mlx5_0/tc/1/traffic_class", "106")
    assert sim.sysfs("class/infiniband/mlx5_0/tc/1/traffic_class") == "106\n"
    recs = [(r["path"], r["value"], r.get("errno")) for r in sim.log(writes=True)]
    assert recs == [("/sys/" + ECN + "roce_np/enable/3", "1", None),
                    ("/sys/" + ECN + "roce_np/cnp_dscp", "26", None),
                    ("/sys/class/infiniband/mlx5_0/tc/1/traffic_class", "106", None)]
    with open(os.path.join(sim.run_dir, "sys.backing", ECN, "roce_np/enable/3")) as handle:
        assert handle.read() == "1\n"                                     # stored in the backing tree


@pytest.mark.parametrize("rel,value", [
    ("roce_np/enable/3", "7"),
    ("roce_np/enable/3", "abc"),
    ("roce_rp/enable/0", "-1"),
    ("roce_np/cnp_dscp", "300"),
    ("roce_np/cnp_dscp", "64"),
    ("roce_np/cnp_802p_prio", "8"),
    ("roce_rp/rpg_gd", "16"),
])
def test_invalid_write_fails_with_einval_and_keeps_the_value(fuse_sim, rel, value):
    sim = fuse_sim
    before = sim.sysfs(ECN + rel)
    with pytest.raises(OSError) as info:
        sim.write_sysfs(ECN + rel, value + "\n")                          # fails at close(): Python buffers
    assert info.value.errno == errno.EINVAL
    fd = os.open(_path(sim, ECN + rel), os.O_WRONLY)
    try:
        with pytest.raises(OSError) as info:
            os.write(fd, value.encode())                                  # the write(2) itself fails
        assert info.value.errno == errno.EINVAL
    finally:
        os.close(fd)
    assert sim.sysfs(ECN + rel) == before
    recs = sim.log(writes=True)
    assert [(r["path"], r["value"], r["errno"], r["rc"]) for r in recs] == \
        [("/sys/" + ECN + rel, value, 22, -22)] * 2                       # one record per writer


def test_shell_echo_of_an_invalid_value_fails(fuse_sim):
    sim = fuse_sim
    proc = subprocess.run(["bash", "-c", "echo 2 > %s" % _path(sim, ECN + "roce_rp/enable/5")],
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=20, check=False)
    assert proc.returncode != 0 and "Invalid argument" in proc.stderr
    assert sim.sysfs(ECN + "roce_rp/enable/5") == "0\n"


def test_read_only_attributes_and_the_tree_cannot_be_changed(fuse_sim):
    sim = fuse_sim
    fw = "class/infiniband/mlx5_0/fw_ver"
    before = sim.sysfs(fw)
    with pytest.raises(PermissionError):
        sim.write_sysfs(fw, "1.2.3\n")
    with pytest.raises(PermissionError):
        sim.write_sysfs("class/infiniband/mlx5_0/newattr", "1\n")
    with pytest.raises(OSError) as info:
        os.mkdir(_path(sim, "class/net/x"))
    assert info.value.errno == errno.EPERM
    with pytest.raises(OSError) as info:
        os.unlink(_path(sim, fw))
    assert info.value.errno == errno.EPERM
    assert sim.sysfs(fw) == before
    assert sim.log(writes=True) == []


def test_o_trunc_and_truncate_leave_the_value(fuse_sim):
    sim = fuse_sim
    sim.write_sysfs(ECN + "roce_np/enable/3", "1")
    open(_path(sim, ECN + "roce_np/enable/3"), "w").close()
    os.truncate(_path(sim, ECN + "roce_np/enable/3"), 0)
    assert sim.sysfs(ECN + "roce_np/enable/3") == "1\n"


def test_rebuilt_tree_is_seen_at_once_and_drain_answers(fuse_sim, capsys):
    sim = fuse_sim
    from fabricsim import watch
    sim.write_sysfs(ECN + "roce_np/enable/3", "1")
    assert sim.sysfs(ECN + "roce_np/enable/3") == "1\n"
    assert sim.cli("reset") == 0
    assert sim.sysfs(ECN + "roce_np/enable/3") == "0\n"
    assert sim.cli("init", "--profile", "small-roce") == 0
    assert sorted(os.listdir(_path(sim, "class/net"))) == ["ens1f0np0", "ens1f1np1"]
    sim.write_sysfs("class/net/ens1f0np0/ecn/roce_np/enable/3", "1")      # writable set follows the profile
    assert watch.drain(timeout=5) is True
    assert watch.current_mode() == "fuse"
    capsys.readouterr()
    assert sim.cli("log", "--writes") == 0
    assert len(capsys.readouterr().out.splitlines()) == 2


def test_stop_unmounts_and_restores_the_plain_view(fuse_sim):
    sim = fuse_sim
    sim.write_sysfs(ECN + "roce_np/enable/3", "1")
    sim.daemon.stop()
    assert sim.daemon.proc.returncode == 0
    assert not sim.daemon.mounted()
    assert os.path.islink(sim.sys) and os.readlink(sim.sys) == "sys.backing"
    assert sim.sysfs(ECN + "roce_np/enable/3") == "1\n"                  # the tree survives


def test_restart_after_a_crash_replaces_the_dead_mount(fuse_sim):
    sim = fuse_sim
    sim.daemon.stop(signal.SIGKILL)
    with pytest.raises(OSError) as info:
        os.listdir(sim.sys)
    assert info.value.errno == errno.ENOTCONN                             # what a crash leaves
    assert sim.daemon.start() is None
    assert sim.sysfs(ECN + "roce_np/cnp_dscp") == "48\n"
    from fabricsim import fusefs
    assert fusefs.fuse_mounts(sim.daemon.mountpoint) == 1


# ---- mode choice (no FUSE needed) -------------------------------------------------------
def test_falls_back_to_inotify_when_fuse_is_unavailable(sim, monkeypatch, capsys):
    from fabricsim import fusefs, watch
    sim.init("hgx-h100-roce")

    def refuse(self):
        raise fusefs.Unavailable("cannot open /dev/fuse: No such file or directory")

    served = []
    monkeypatch.setattr(fusefs.Server, "mount", refuse)
    monkeypatch.setattr(watch.Watcher, "serve", lambda self, notify=True: served.append(True))
    watch.run_forever()
    assert served == [True]
    assert open(os.path.join(sim.run_dir, "sysfsd.mode")).read() == "inotify\n"
    err = capsys.readouterr().err
    assert "falling back to the inotify watcher" in err and "inotify mode" in err
    assert os.path.islink(sim.sys)
    with pytest.raises(fusefs.Unavailable):
        watch.run_forever(mode="fuse")


def test_tree_of_an_older_fabricsim_moves_to_the_backing_dir(sim):
    from fabricsim import sysfs
    sim.init("hgx-h100-roce")
    sim.write_sysfs(ECN + "roce_np/enable/3", "1\n")
    backing = os.path.join(sim.run_dir, "sys.backing")
    os.unlink(sim.sys)
    os.rename(backing, sim.sys)                                           # the old layout: a plain dir
    sysfs.ensure_view()
    assert os.path.islink(sim.sys) and sim.sysfs(ECN + "roce_np/enable/3") == "1\n"
