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
        self.start()
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


def watcher_alive():
    pidfile = paths.run_file("watch.pid")
    try:
        with open(pidfile) as handle:
            pid = int(handle.read().strip())
        os.kill(pid, 0)
        return True
    except (IOError, OSError, ValueError):
        return False


def drain(timeout=3.0):
    """Make sure the running watcher has handled every write made before this call."""
    if not watcher_alive():
        return False
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
        if notify:
            sd_notify("READY=1")
        server.serve(extra_fds=[ino.fd], on_fd=lambda fd: _answer_control(ino), on_idle=lambda: health_faults.tick(throttle=0.25))
    finally:
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
    os.makedirs(paths.run_dir(), exist_ok=True)
    with open(paths.run_file("watch.pid"), "w") as handle:
        handle.write("%d\n" % os.getpid())
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
