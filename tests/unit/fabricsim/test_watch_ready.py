"""The sysfs daemon's readiness handshake (issue #26: node-reset raced the daemon's start).

`fabricsim watch` writes its pid file first and only then sets up what it serves (the FUSE
mount or the inotify watches, and run_dir/watchctl, where drain requests go). A client
(`fabricsim reset`, `init`, `log`) that saw the pid alive used to write its drain request
into a watchctl that did not exist yet: `req-...: No such file or directory`. Here the
daemon (inotify mode, in a thread of this process) is held between its pid file and the rest
of its start, so the client's request comes before the daemon is ready every time.
"""
import os
import threading
import time

import pytest


class Stop(BaseException):
    """Ends the daemon thread's serve loop (raised from its periodic tick)."""


@pytest.fixture
def held_daemon(sim, monkeypatch):
    """A real `fabricsim watch --mode inotify` start, held after its pid file is written."""
    from fabricsim import links, watch
    sim.init("hgx-h100-roce")
    go, stop, errors = threading.Event(), threading.Event(), []

    def slow_start():                       # the daemon's start, slowed down (a loaded machine)
        assert go.wait(30), "the test never let the daemon go on"

    def tick(throttle=0.0):
        if stop.is_set():
            raise Stop()

    monkeypatch.setattr(links, "start_follower", slow_start)
    monkeypatch.setattr(watch.health_faults, "tick", tick)
    monkeypatch.setattr(watch, "sd_notify", lambda message: None)

    def run():
        try:
            watch.run_forever(mode="inotify")
        except Stop:
            pass
        except Exception as exc:            # reported by the test, not lost in the thread
            errors.append(exc)

    thread = threading.Thread(target=run, name="fabricsim-sysfsd-test", daemon=True)
    thread.start()
    pidfile = os.path.join(sim.run_dir, "watch.pid")
    deadline = time.time() + 10
    while not os.path.exists(pidfile) and time.time() < deadline:
        time.sleep(0.01)
    assert os.path.exists(pidfile), "the daemon did not write its pid file"
    sim.go, sim.errors = go, errors
    try:
        yield sim
    finally:
        go.set()
        stop.set()
        thread.join(10)
        assert not thread.is_alive(), "the daemon thread did not stop"


def test_drain_before_the_daemon_is_ready_waits_for_it(held_daemon):
    """The race of issue #26, made certain: the request comes while the daemon is starting."""
    from fabricsim import watch
    sim = held_daemon
    assert not os.path.isdir(os.path.join(sim.run_dir, watch.CONTROL))     # not ready yet
    timer = threading.Timer(0.5, sim.go.set)    # the daemon goes on while the client waits
    timer.start()
    try:
        assert watch.drain(timeout=10) is True
    finally:
        timer.cancel()
    assert not sim.errors


def test_reset_during_the_daemon_start_succeeds(held_daemon):
    """`fabricsim reset` (what lab/scale/node-reset runs) while the daemon starts: rc 0."""
    sim = held_daemon
    timer = threading.Timer(0.5, sim.go.set)
    timer.start()
    try:
        assert sim.cli("reset") == 0
    finally:
        timer.cancel()
    assert not sim.errors


def test_a_daemon_that_never_gets_ready_is_a_clear_error(held_daemon, monkeypatch, capsys):
    """Bounded: the client gives up after the timeout and says which node waited for what."""
    monkeypatch.setenv("FABRICSIM_READY_TIMEOUT", "0.5")
    sim = held_daemon
    start = time.time()
    assert sim.cli("reset") == 1
    assert time.time() - start < 20             # the 0.5 s asked for, not the 60 s default
    err = capsys.readouterr().err
    import socket
    assert socket.gethostname() in err
    assert "watch.ready" in err and "not ready" in err


def test_no_daemon_at_all_is_not_waited_for(sim):
    """Unit tests and nodes without the daemon: nothing to drain, no wait."""
    from fabricsim import watch
    sim.init("hgx-h100-roce")
    start = time.time()
    assert watch.drain() is None
    assert time.time() - start < 1
    assert sim.cli("reset") == 0


def test_stale_markers_of_a_previous_boot_are_not_ready(sim):
    """A container restart may keep /run, and the new pid namespace hands out the same small
    pids again: the old markers name a live pid, but not the process that wrote them."""
    from fabricsim import watch
    sim.init("hgx-h100-roce")
    os.makedirs(os.path.join(sim.run_dir, watch.CONTROL), exist_ok=True)
    stale = "%d 1" % os.getpid()           # this pid, started at another time
    with open(os.path.join(sim.run_dir, "watch.pid"), "w") as handle:
        handle.write(stale + "\n")
    with open(os.path.join(sim.run_dir, "watch.ready"), "w") as handle:
        handle.write(stale + " fuse\n")
    assert not watch.watcher_alive() and watch.ready() is None
    assert watch.drain() is None
    assert sim.cli("watch", "--wait-ready", "--timeout", "0.2") == 1


def test_wait_ready_waits_for_a_starting_daemon(held_daemon):
    """`fabricsim watch --wait-ready` (lab/scale/node-init, lab/scale.sh up): until ready."""
    from fabricsim import watch
    sim = held_daemon
    assert sim.cli("watch", "--wait-ready", "--timeout", "0.3") == 1   # held: not ready
    timer = threading.Timer(0.3, sim.go.set)
    timer.start()
    try:
        assert sim.cli("watch", "--wait-ready", "--timeout", "10") == 0
    finally:
        timer.cancel()
    with open(os.path.join(sim.run_dir, "watch.ready")) as handle:
        pid, dummy, mode = handle.read().split()
    assert (pid, mode) == (str(os.getpid()), "inotify")
    assert os.path.isdir(os.path.join(sim.run_dir, watch.CONTROL))


def test_a_drain_the_daemon_never_answers_fails_loudly(sim, monkeypatch, capsys):
    """A ready daemon that does not answer within the drain timeout (a loaded machine): reset and
    log fail naming it, instead of reading a call log that misses writes (it was silent)."""
    from fabricsim import watch
    sim.init("hgx-h100-roce")
    monkeypatch.setenv("FABRICSIM_DRAIN_TIMEOUT", "0.3")
    monkeypatch.setattr(watch, "wait_ready", lambda *a, **k: True)    # a daemon that never acks
    os.makedirs(os.path.join(sim.run_dir, watch.CONTROL), exist_ok=True)
    assert watch.drain() is False
    capsys.readouterr()
    assert sim.cli("log") == 1 and sim.cli("reset") == 1
    err = capsys.readouterr().err
    assert "call log would miss" in err and "reset's writes" in err
