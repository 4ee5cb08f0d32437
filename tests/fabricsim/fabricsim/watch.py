"""fabricsim-sysfsd: makes writes to the simulated sysfs behave like sysfs writes.

Two modes, chosen at start (`fabricsim watch --mode auto|fuse|inotify`, default auto):

- fuse (when /dev/fuse opens and mount(2) of a FUSE filesystem works, i.e. the container
  has the device and CAP_SYS_ADMIN): fusefs.Server mounts a view of the tree at
  $FABRICSIM_RUN_DIR/sys; an invalid write fails for the writer with the kernel's errno
  (EINVAL) and the value stays, every write is logged as it happens;
- inotify (the fallback): the view is a symlink to the plain-file tree and the Watcher
  below watches the writable attributes: it logs every write, and an invalid value is put
  back to the previous one and logged with the errno the kernel returns (EINVAL).  The
  writer itself still sees success (see README, limits).

The mode in use is logged (journal) and kept in $FABRICSIM_RUN_DIR/sysfsd.mode.  In both
modes the daemon answers drain requests (run_dir/watchctl), so `fabricsim log` is exact.

Readiness (issue #26): the daemon writes its pid file (watch.pid) first and sets up what it
serves afterwards (the FUSE mount, run_dir/watchctl and its watch).  Only once all of that is
in place does it write run_dir/watch.ready ("PID STARTTIME MODE", by rename, so it is whole or
absent), just before READY=1 to systemd.  A client (`fabricsim reset`, `init`, `log`: drain)
that finds a daemon started waits for that marker, bounded (FABRICSIM_READY_TIMEOUT, default
60 s), and fails naming the node and the marker; `fabricsim watch --wait-ready` waits for it
even before the daemon has started (lab/scale/node-init, lab/scale.sh up).  The pid and the
process's start time together name the process, so the markers a container restart leaves in
/run never pass for the new daemon's.
"""
import ctypes
import ctypes.util
import os
import signal
import socket
import struct
import sys
import time

from . import health_faults, log, paths, state, sysfs

IN_OPEN = 0x00000020
IN_CLOSE_NOWRITE = 0x00000010
IN_CLOSE_WRITE = 0x00000008
IN_CREATE = 0x00000100
IN_MOVED_TO = 0x00000080
IN_IGNORED = 0x00008000
IN_NONBLOCK = 0o4000
IN_CLOEXEC = 0o2000000
EVENT = struct.Struct("iIII")
CONTROL = "watchctl"     # run_dir/watchctl: sentinel requests + acks live here
PIDFILE = "watch.pid"    # run_dir/watch.pid: "PID STARTTIME", written first: the daemon started
READY = "watch.ready"    # run_dir/watch.ready: "PID STARTTIME MODE", written last: it serves
READY_TIMEOUT = 60.0     # s a client waits for a started daemon (FABRICSIM_READY_TIMEOUT)


class NotReady(Exception):
    """The daemon did not get ready within the timeout."""


class Inotify(object):
    def __init__(self):
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        self.libc = libc
        self.fd = libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")

    def add(self, path, mask):
        wd = self.libc.inotify_add_watch(self.fd, path.encode(), mask)
        if wd < 0:
            raise OSError(ctypes.get_errno(), "inotify_add_watch %s" % path)
        return wd

    def read(self):
        try:
            data = os.read(self.fd, 65536)
        except BlockingIOError:
            return []
        out, pos = [], 0
        while pos < len(data):
            wd, mask, _cookie, length = EVENT.unpack_from(data, pos)
            pos += EVENT.size
            name = data[pos:pos + length].rstrip(b"\0").decode()
            pos += length
            out.append((wd, mask, name))
        return out

    def close(self):
        os.close(self.fd)


class Watcher(object):
    """Usable in unit tests: Watcher().start(); ...writes...; w.process()."""

    def __init__(self):
        self.ino = None
        self.dirs = {}        # wd -> directory
        self.known = {}       # path -> last accepted value
        self.generation = None

    def _generation(self):
        return sysfs.read_text(paths.run_file("generation")) or None

    def start(self):
        if self.ino:
            self.ino.close()
        self.ino = Inotify()
        self.dirs, self.known = {}, {}
        os.makedirs(paths.run_file(CONTROL), exist_ok=True)
        wd = self.ino.add(paths.run_file(CONTROL), IN_CLOSE_WRITE | IN_CREATE)
        self.dirs[wd] = paths.run_file(CONTROL)
        try:
            profile = state.load_profile()
        except state.NoProfile:
            return self
        for path in sysfs.writable_attributes(paths.sys_backing(), profile):
            if not os.path.exists(path):
                continue
            d = os.path.dirname(path)
            if d not in self.dirs.values():
                # OPEN/CLOSE_NOWRITE too: inotify merges identical consecutive events, and
                # interleaving them keeps back-to-back writes of one file from merging
                self.dirs[self.ino.add(d, IN_CLOSE_WRITE | IN_OPEN | IN_CLOSE_NOWRITE)] = d
            self.known[path] = sysfs.read_text(path)
        self.generation = self._generation()
        return self

    def process(self, timeout=0.0):
        """Handle pending events (waiting up to timeout seconds for the first). Returns records."""
        deadline = time.time() + timeout
        done = []
        while True:
            events = self.ino.read()
            if not events:
                if time.time() >= deadline:
                    return done
                time.sleep(0.01)
                continue
            for wd, mask, name in events:
                d = self.dirs.get(wd)
                if d is None or not name or mask & IN_IGNORED or not mask & (IN_CLOSE_WRITE | IN_CREATE):
                    continue
                done.extend(self._handle(os.path.join(d, name)))
            deadline = 0

    def _handle(self, path):
        if os.path.dirname(path) == paths.run_file(CONTROL):
            if os.path.basename(path).startswith("req-"):
                if self._generation() != self.generation:   # tree rebuilt: re-arm before acking
                    self.start()
                ack = os.path.join(os.path.dirname(path), "ack-" + os.path.basename(path)[4:])
                with open(ack, "w") as handle:
                    handle.write("ok\n")
                try:
                    os.unlink(path)
                except OSError:
                    pass
            return []
        if path not in self.known:
            return []
        text = sysfs.read_text(path)
        ok, err, value = sysfs.validate(path, text)
        rel = "/sys/" + os.path.relpath(path, paths.sys_backing())
        if ok:
            self.known[path] = value
            if text != value:        # the kernel stores the parsed number
                self._rewrite(path, value)
            return [log.append("sysfs", "write", path=rel, value=text.strip())]
        self._rewrite(path, self.known[path])
        return [log.append("sysfs", "write", path=rel, value=text.strip(), err=err, rc=-err)]

    def _rewrite(self, path, value):
        # rename over the attribute: our own fix-ups raise IN_MOVED_TO, not IN_CLOSE_WRITE
        tmp = os.path.join(os.path.dirname(path), ".fabricsim-revert")
        with open(tmp, "w") as handle:
            handle.write(value + "\n")
        os.rename(tmp, path)

    def serve(self, notify=True):
        self.start()            # watchctl and its watch exist: requests from now on are seen
        mark_ready("inotify")
        if notify:
            sd_notify("READY=1")
        while True:
            self.process(timeout=1.0)
            health_faults.tick(throttle=0.25)
            if self._generation() != self.generation:   # tree rebuilt (reset/init): new watches
                self.start()


def sd_notify(message):
    addr = os.environ.get("NOTIFY_SOCKET")
    if not addr:
        return
    if addr.startswith("@"):
        addr = "\0" + addr[1:]
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    try:
        sock.connect(addr)
        sock.sendall(message.encode())
    finally:
        sock.close()


def _start_time(pid):
    """The process's start time (clock ticks after boot, /proc/PID/stat field 22), else None."""
    try:
        with open("/proc/%d/stat" % pid) as handle:
            return handle.read().rsplit(")", 1)[1].split()[19]
    except (IOError, OSError, IndexError, ValueError):
        return None


def _process_named(words):
    """pid when the words ("PID [STARTTIME] ...") name a running process, else None."""
    try:
        pid = int(words[0])
        os.kill(pid, 0)
    except (IndexError, ValueError, OSError):
        return None
    if len(words) > 1 and words[1] != _start_time(pid):
        return None             # that pid is another process now (a marker of a previous boot)
    return pid


def _read_words(name):
    try:
        with open(paths.run_file(name)) as handle:
            return handle.read().split()
    except (IOError, OSError):
        return []


def _write_marker(name, text):
    """Whole or absent: written beside, then renamed into place."""
    target = paths.run_file(name)
    tmp = "%s.%d.tmp" % (target, os.getpid())
    with open(tmp, "w") as handle:
        handle.write(text)
    os.rename(tmp, target)


def _me():
    return "%d %s" % (os.getpid(), _start_time(os.getpid()))


def mark_started():
    """The daemon's first step: a ready marker left by an earlier daemon goes, then the pid."""
    os.makedirs(paths.run_dir(), exist_ok=True)
    unmark_ready(any_daemon=True)
    _write_marker(PIDFILE, _me() + "\n")


def mark_ready(mode):
    """The daemon's last step before it serves: watchctl exists and its requests are seen."""
    if not os.path.isdir(paths.run_file(CONTROL)):
        raise RuntimeError("ready without %s" % paths.run_file(CONTROL))
    _write_marker(READY, "%s %s\n" % (_me(), mode))


def unmark_ready(any_daemon=False):
    """No longer ready (the daemon stops; any_daemon: a new one starts)."""
    words = _read_words(READY)
    if words and (any_daemon or words[0] == str(os.getpid())):
        try:
            os.unlink(paths.run_file(READY))
        except OSError:
            pass


def watcher_alive():
    """A daemon has started (its pid file names a running process); it may not be ready yet."""
    return _process_named(_read_words(PIDFILE)) is not None


def ready():
    """The running daemon's pid when it is ready (serves, answers drain requests), else None."""
    words = _read_words(READY)
    pid = _process_named(words)
    if pid is None or _read_words(PIDFILE)[:2] != words[:2] or not os.path.isdir(paths.run_file(CONTROL)):
        return None
    return pid


def ready_timeout():
    try:
        return float(os.environ.get("FABRICSIM_READY_TIMEOUT") or READY_TIMEOUT)
    except ValueError:
        return READY_TIMEOUT


def wait_ready(timeout=None, started_only=False):
    """Wait until the daemon is ready: True.  started_only: False at once when no daemon has
    started (nothing to wait for); else wait for one to start too.  NotReady after timeout s."""
    timeout = ready_timeout() if timeout is None else timeout
    deadline = time.time() + timeout
    while True:
        if ready():
            return True
        started = watcher_alive()
        if started_only and not started:
            return False
        if time.time() >= deadline:
            words = _read_words(PIDFILE)
            who = ("started, pid %s" % words[0]) if started and words else "not started"
            raise NotReady("%s: the sysfs daemon (fabricsim watch; %s) was not ready within %g s: "
                           "waited for %s (written once it serves %s)"
                           % (socket.gethostname(), who, timeout, paths.run_file(READY),
                              paths.run_file(CONTROL)))
        time.sleep(0.02)


def drain(timeout=None, ready_timeout=None):
    """Make sure the running watcher has handled every write made before this call.  A daemon
    that has started but is not ready yet is waited for (NotReady after ready_timeout s).
    True: drained; None: no daemon runs (nothing to drain); False: the daemon did not answer
    within ``timeout`` s ($FABRICSIM_DRAIN_TIMEOUT, default 30: a loaded machine is slow)."""
    if timeout is None:
        timeout = float(os.environ.get("FABRICSIM_DRAIN_TIMEOUT") or 30)
    if not wait_ready(ready_timeout, started_only=True):
        return None
    token = "%d-%f" % (os.getpid(), time.time())
    ctl = paths.run_file(CONTROL)
    ack = os.path.join(ctl, "ack-" + token)
    with open(os.path.join(ctl, "req-" + token), "w") as handle:
        handle.write("drain\n")
    deadline = time.time() + timeout
    while time.time() < deadline:
        if os.path.exists(ack):
            os.unlink(ack)
            return True
        time.sleep(0.01)
    return False


MODE_FILE = "sysfsd.mode"


def _say(text):
    sys.stderr.write("fabricsim-sysfsd: %s\n" % text)
    sys.stderr.flush()


def _set_mode(mode):
    with open(paths.run_file(MODE_FILE), "w") as handle:
        handle.write(mode + "\n")


def current_mode():
    """'fuse' or 'inotify' while the daemon runs, else None."""
    return sysfs.read_text(paths.run_file(MODE_FILE)) or None if watcher_alive() else None


def _answer_control(ino):
    """FUSE mode: writes are handled synchronously, so a drain request is answered at once."""
    ctl = paths.run_file(CONTROL)
    for dummy, dummy, name in ino.read():
        if not name.startswith("req-"):
            continue
        try:
            os.unlink(os.path.join(ctl, name))
        except OSError:
            continue                # already answered (IN_CREATE and IN_CLOSE_WRITE both come)
        with open(os.path.join(ctl, "ack-" + name[4:]), "w") as handle:
            handle.write("ok\n")


def serve_fuse(notify=True):
    """Mount the FUSE view and serve it until SIGTERM/SIGINT; Unavailable if FUSE cannot work."""
    from . import fusefs
    server = fusefs.Server().mount()

    def stop(signum, frame):
        server.stopping = True

    old = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    ino = None
    try:
        os.makedirs(paths.run_file(CONTROL), exist_ok=True)
        ino = Inotify()
        ino.add(paths.run_file(CONTROL), IN_CLOSE_WRITE | IN_CREATE)
        if not server.serve(until=lambda: server.initialised, timeout=10):
            _say("no FUSE INIT from the kernel within 10 s; serving anyway")
        _set_mode("fuse")
        _say("FUSE mode: %s is a FUSE view of %s; invalid writes fail with the kernel's errno"
             % (server.mountpoint, server.backing))
        mark_ready("fuse")
        if notify:
            sd_notify("READY=1")
        server.serve(extra_fds=[ino.fd], on_fd=lambda fd: _answer_control(ino), on_idle=lambda: health_faults.tick(throttle=0.25))
    finally:
        unmark_ready()
        if ino:
            ino.close()
        server.close()
        for sig, handler in old.items():
            signal.signal(sig, handler)
        _say("FUSE view unmounted")


def cleanup():
    """After the daemon stopped (ExecStopPost): no FUSE mount left, the plain view back."""
    from . import fusefs
    if fusefs.umount(os.path.join(os.path.realpath(paths.run_dir()), "sys")):
        _say("stale FUSE mount of %s removed" % paths.sys_root())
    with state.locked():
        sysfs.ensure_view()


def run_forever(mode="auto"):
    """fabricsim-sysfsd: FUSE when it works (unless mode says otherwise), else inotify."""
    from . import fusefs
    mark_started()              # started, not ready: clients wait for mark_ready (watch.ready)
    from . import links
    links.start_follower()      # GID files follow the rail links' addresses (links on only)
    if mode != "inotify":
        try:
            serve_fuse()
            return
        except fusefs.Unavailable as exc:
            if mode == "fuse":
                raise
            _say("FUSE unavailable (%s): falling back to the inotify watcher" % exc)
    _set_mode("inotify")
    _say("inotify mode: %s is plain files; an invalid write succeeds for the writer and is "
         "reverted and logged afterwards" % paths.sys_root())
    Watcher().serve()
