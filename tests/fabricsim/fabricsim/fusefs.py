"""The simulated sysfs as a FUSE filesystem, so that writes fail like sysfs writes.

fabricsim-sysfsd mounts this at $FABRICSIM_RUN_DIR/sys (SYSFS_PATH) as a pass-through view
of the tree fabricsim builds in sys.backing.  It speaks the FUSE kernel protocol directly on
/dev/fuse (no libfuse; mount(2) through ctypes), single-threaded, one request at a time:

- read-only attributes are mode 0444 and opening one for writing fails with EACCES, as
  kernfs does for an attribute without a store method;
- a write to a writable attribute (sysfs.writable_attributes) is validated by
  sysfs.validate: refused -> the writer's write(2) fails with that errno (EINVAL) and the
  value stays; accepted -> the normalised value is stored.  Both are logged as the inotify
  watcher logs them (tool sysfs, path /sys/..., value, errno when refused);
- every file is opened FOPEN_DIRECT_IO and entry/attr timeouts are 0, so a read is always
  fresh and a tree rebuilt by reset/init/fault is seen at once; regular files report
  st_size 4096 like sysfs attributes; O_TRUNC (a size-0 setattr) is accepted and ignored;
- creating, removing or renaming entries fails (EACCES for create, EPERM otherwise).
"""
import ctypes
import ctypes.util
import errno
import os
import select
import stat
import struct
import sys
import time

from . import log, paths, state, sysfs

# opcodes (include/uapi/linux/fuse.h)
LOOKUP, FORGET, GETATTR, SETATTR, READLINK, SYMLINK = 1, 2, 3, 4, 5, 6
MKNOD, MKDIR, UNLINK, RMDIR, RENAME, LINK, OPEN, READ, WRITE = 8, 9, 10, 11, 12, 13, 14, 15, 16
STATFS, RELEASE = 17, 18
FSYNC, SETXATTR, GETXATTR, LISTXATTR, REMOVEXATTR, FLUSH, INIT = 20, 21, 22, 23, 24, 25, 26
OPENDIR, READDIR, RELEASEDIR, FSYNCDIR, ACCESS, CREATE, INTERRUPT, DESTROY = 27, 28, 29, 30, 34, 35, 36, 38
BATCH_FORGET, RENAME2 = 42, 45

KERNEL_MAJOR, KERNEL_MINOR = 7, 31
MAX_WRITE = 65536
READ_SIZE = MAX_WRITE + 8192            # >= FUSE_MIN_READ_BUFFER and header + write_in + max_write
FOPEN_DIRECT_IO = 1
FATTR_SIZE = 1 << 3
ROOT_ID = 1
HIDDEN_PREFIX = ".fabricsim-"           # temporary files of fabricsim's own atomic writes

IN_HEADER = struct.Struct("<IIQQIIII")   # len opcode unique nodeid uid gid pid padding
OUT_HEADER = struct.Struct("<IiQ")       # len error unique
ATTR = struct.Struct("<QQQQQQIIIIIIIIII")  # ino size blocks a/m/ctime a/m/ctimensec mode nlink uid gid rdev blksize flags
ENTRY_OUT = struct.Struct("<QQQQII")     # nodeid generation entry_valid attr_valid (+nsec x2), then ATTR
ATTR_OUT = struct.Struct("<QII")         # attr_valid attr_valid_nsec dummy, then ATTR
INIT_IN = struct.Struct("<IIII")         # major minor max_readahead flags
INIT_OUT = struct.Struct("<IIIIHHIIHHI28x")  # 64 bytes (7.23+)
OPEN_IN = struct.Struct("<II")
OPEN_OUT = struct.Struct("<QII")
READ_IN = struct.Struct("<QQII")         # fh offset size read_flags (lock_owner, flags follow)
WRITE_IN = struct.Struct("<QQIIQII")     # fh offset size write_flags lock_owner flags padding
WRITE_OUT = struct.Struct("<II")
RELEASE_IN = struct.Struct("<QII")
DIRENT = struct.Struct("<QQII")          # ino off namelen type, then the name, padded to 8
STATFS_OUT = struct.Struct("<QQQQQIIII24x")
ACCESS_IN = struct.Struct("<II")
GETXATTR_IN = struct.Struct("<II")
GETXATTR_OUT = struct.Struct("<II")
SETATTR_IN = struct.Struct("<II")        # valid padding (the rest is ignored)

MS_NOSUID, MS_NODEV, MS_NOEXEC = 2, 4, 8
O_ACCMODE = 3
MNT_DETACH = 2


class Unavailable(Exception):
    """FUSE cannot be used here (no /dev/fuse, mount refused): run the inotify watcher."""


def _libc():
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
    libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
    return libc


def fuse_mounts(mountpoint):
    """FUSE mounts at mountpoint in this mount namespace (normally 0 or 1)."""
    out = 0
    try:
        with open("/proc/self/mountinfo") as handle:
            for line in handle:
                fields = line.split()
                sep = fields.index("-")
                point = fields[4].encode().decode("unicode_escape")
                if point == mountpoint and fields[sep + 1].startswith("fuse"):
                    out += 1
    except (IOError, OSError, ValueError):
        pass
    return out


def umount(mountpoint):
    """Lazily unmount every FUSE mount at mountpoint; True when something was unmounted."""
    libc = _libc()
    done = False
    for dummy in range(fuse_mounts(mountpoint)):
        if libc.umount2(mountpoint.encode(), MNT_DETACH) != 0:
            break
        done = True
    return done


class Server(object):
    """One FUSE connection: Server(backing, mountpoint).mount(); serve(); close()."""

    def __init__(self, backing=None, mountpoint=None, log_stream=None):
        self.backing = backing or paths.sys_backing()
        self.mountpoint = os.path.join(os.path.realpath(os.path.dirname(mountpoint or paths.sys_root())),
                                       os.path.basename(mountpoint or paths.sys_root()))
        self.fd = None
        self.ids = {"": ROOT_ID}           # relative path -> nodeid (stable for the mount's life)
        self.nodes = {ROOT_ID: ""}
        self.next_id = ROOT_ID + 1
        self.files = {}                    # fh -> [relative path, data of its last refused write]
        self.dirs = {}                     # fh -> [(name, ino, type)]
        self.next_fh = 1
        self.initialised = False
        self.stopping = False
        self._writable = (None, frozenset())
        self.log_stream = log_stream if log_stream is not None else sys.stderr

    # ---- mount / unmount ------------------------------------------------------
    def mount(self):
        """Open /dev/fuse and mount the view; Unavailable when either fails (view left usable)."""
        try:
            self.fd = os.open("/dev/fuse", os.O_RDWR | os.O_CLOEXEC | os.O_NONBLOCK)
        except OSError as exc:
            raise Unavailable("cannot open /dev/fuse: %s" % os.strerror(exc.errno))
        libc = _libc()
        view = self.mountpoint
        # Under the state lock: nobody rebuilds the tree (and re-creates the symlink) meanwhile.
        # No lock holder can be waiting on this mount: it does not exist yet.
        with state.locked():
            umount(view)                   # a mount left by a server that died
            os.makedirs(self.backing, exist_ok=True)
            if os.path.islink(view) or os.path.isfile(view):
                os.unlink(view)
            elif os.path.isdir(view):
                if os.listdir(view):       # the tree of an older fabricsim: keep what it holds
                    sysfs.ensure_view()
                    os.unlink(view)
            os.makedirs(view, exist_ok=True)
            data = "fd=%d,rootmode=40000,user_id=0,group_id=0,allow_other" % self.fd
            if libc.mount(b"fabricsim", view.encode(), b"fuse", MS_NOSUID | MS_NODEV | MS_NOEXEC, data.encode()) != 0:
                err = ctypes.get_errno()
                os.close(self.fd)
                self.fd = None
                os.rmdir(view)
                sysfs.ensure_view()
                raise Unavailable("mount(fuse) on %s refused: %s" % (view, os.strerror(err)))
        return self

    def close(self):
        """Unmount (lazily), drop the connection, and put the plain view (symlink) back."""
        if self.fd is None:
            return
        umount(self.mountpoint)
        os.close(self.fd)                  # aborts anything still in flight
        self.fd = None
        with state.locked():
            try:
                if os.path.isdir(self.mountpoint) and not os.path.islink(self.mountpoint) \
                        and not os.path.ismount(self.mountpoint):
                    os.rmdir(self.mountpoint)
            except OSError:
                pass
            sysfs.ensure_view()

    # ---- request loop -----------------------------------------------------------
    def serve(self, until=None, timeout=None, on_idle=None, extra_fds=(), on_fd=None):
        """Answer requests until stopped (self.stopping, the mount going away, DESTROY), or
        until until() is true, or timeout seconds pass.  on_fd(fd) handles extra_fds."""
        deadline = None if timeout is None else time.time() + timeout
        fds = [self.fd] + list(extra_fds)
        while not self.stopping and self.fd is not None:
            if until is not None and until():
                return True
            wait = 0.5 if deadline is None else max(0.0, min(0.5, deadline - time.time()))
            if deadline is not None and time.time() >= deadline:
                return False
            try:
                ready, dummy, dummy = select.select(fds, [], [], wait)
            except InterruptedError:
                continue
            for fd in ready:
                if fd != self.fd:
                    on_fd(fd)
                    continue
                try:
                    request = os.read(self.fd, READ_SIZE)
                except (BlockingIOError, InterruptedError):
                    continue
                except OSError as exc:
                    if exc.errno == errno.ENOENT:      # request interrupted before we read it
                        continue
                    if exc.errno == errno.ENODEV:      # unmounted
                        self.stopping = True
                        break
                    raise
                self.handle(request)
            if on_idle is not None:
                on_idle()
        return False

    def handle(self, request):
        length, opcode, unique, nodeid, dummy, dummy, dummy, dummy = IN_HEADER.unpack_from(request)
        body = request[IN_HEADER.size:length]
        if opcode in (FORGET, BATCH_FORGET, INTERRUPT):
            return                          # no reply; nodeids stay valid (path-based)
        try:
            reply = self.dispatch(opcode, nodeid, body)
        except OSError as exc:
            reply = -(exc.errno or errno.EIO)
        except Exception as exc:            # a bug must not hang the writer: answer EIO
            self._say("fabricsim-sysfsd: opcode %d failed: %r" % (opcode, exc))
            reply = -errno.EIO
        if isinstance(reply, int):
            self._reply(unique, reply, b"")
        else:
            self._reply(unique, 0, reply)
        if opcode == DESTROY:
            self.stopping = True

    def _reply(self, unique, error, data):
        try:
            os.write(self.fd, OUT_HEADER.pack(OUT_HEADER.size + len(data), error, unique) + data)
        except OSError as exc:
            if exc.errno not in (errno.ENOENT, errno.ENODEV):   # interrupted / gone
                raise

    def _say(self, text):
        if self.log_stream:
            self.log_stream.write(text + "\n")
            self.log_stream.flush()

    def dispatch(self, opcode, nodeid, body):
        if opcode == INIT:
            major, minor, readahead, dummy = INIT_IN.unpack_from(body)
            if major != KERNEL_MAJOR:
                return -errno.EPROTO
            self.initialised = True
            return INIT_OUT.pack(KERNEL_MAJOR, min(minor, KERNEL_MINOR), readahead, 0, 0, 0, MAX_WRITE, 0, 0, 0, 0)
        if opcode == DESTROY:
            return b""
        rel = self.nodes.get(nodeid)
        if rel is None:
            return -errno.ESTALE
        if opcode == LOOKUP:
            name = body.split(b"\0", 1)[0].decode("utf-8", "surrogateescape")
            if name in ("", ".", "..") or "/" in name or name.startswith(HIDDEN_PREFIX):
                return -errno.ENOENT
            child = name if not rel else rel + "/" + name
            st = os.lstat(self._real(child))
            ident = self.ids.get(child)
            if ident is None:
                ident = self.ids[child] = self.next_id
                self.nodes[ident] = child
                self.next_id += 1
            return ENTRY_OUT.pack(ident, 0, 0, 0, 0, 0) + self._attr(ident, child, st)
        if opcode in (GETATTR, SETATTR):
            # SETATTR: truncation (open O_TRUNC), times, mode: accepted and ignored, like sysfs
            return ATTR_OUT.pack(0, 0, 0) + self._attr(nodeid, rel, self._lstat(rel))
        if opcode == READLINK:
            return os.fsencode(os.readlink(self._real(rel)))
        if opcode == OPEN:
            flags, dummy = OPEN_IN.unpack_from(body)
            st = os.lstat(self._real(rel))
            if stat.S_ISDIR(st.st_mode):
                return -errno.EISDIR
            if flags & O_ACCMODE != os.O_RDONLY and rel not in self.writable():
                return -errno.EACCES        # kernfs: no store method (mode 0444)
            return OPEN_OUT.pack(self._new_fh(self.files, [rel, None]), FOPEN_DIRECT_IO, 0)
        if opcode == READ:
            fh, offset, size, dummy = READ_IN.unpack_from(body)
            path = self.files.get(fh, [rel])[0]
            with open(self._real(path), "rb") as handle:
                handle.seek(offset)
                return handle.read(size)
        if opcode == WRITE:
            fh, offset, size, dummy, dummy, dummy, dummy = WRITE_IN.unpack_from(body)
            data = body[WRITE_IN.size:WRITE_IN.size + size]
            return self.write(self.files.setdefault(fh, [rel, None]), data)
        if opcode in (FLUSH, FSYNC, FSYNCDIR):
            return b""
        if opcode == RELEASE:
            self.files.pop(RELEASE_IN.unpack_from(body)[0], None)
            return b""
        if opcode == OPENDIR:
            return OPEN_OUT.pack(self._new_fh(self.dirs, self._listing(nodeid, rel)), 0, 0)
        if opcode == READDIR:
            fh, offset, size, dummy = READ_IN.unpack_from(body)
            entries = self.dirs.get(fh)
            if entries is None:
                entries = self._listing(nodeid, rel)
            out = b""
            for index in range(offset, len(entries)):
                name, ino, dtype = entries[index]
                raw = DIRENT.pack(ino, index + 1, len(name), dtype) + name
                raw += b"\0" * (-len(raw) % 8)
                if len(out) + len(raw) > size:
                    break
                out += raw
            return out
        if opcode == RELEASEDIR:
            self.dirs.pop(RELEASE_IN.unpack_from(body)[0], None)
            return b""
        if opcode == STATFS:
            return STATFS_OUT.pack(0, 0, 0, 0, 0, 4096, 255, 4096, 0)
        if opcode == ACCESS:
            mask, dummy = ACCESS_IN.unpack_from(body)
            st = self._lstat(rel)
            if mask & os.X_OK and not stat.S_ISDIR(st.st_mode):
                return -errno.EACCES
            return b""                      # root: read/write granted (kernfs refuses at open)
        if opcode == GETXATTR:
            return -errno.ENODATA
        if opcode == LISTXATTR:
            size, dummy = GETXATTR_IN.unpack_from(body)
            return GETXATTR_OUT.pack(0, 0) if size == 0 else b""
        if opcode == CREATE:
            return -errno.EACCES            # a kernfs directory has no create
        if opcode in (MKNOD, MKDIR, UNLINK, RMDIR, RENAME, RENAME2, LINK, SYMLINK, SETXATTR, REMOVEXATTR):
            return -errno.EPERM
        return -errno.ENOSYS

    # ---- the sysfs part -------------------------------------------------------------
    def writable(self):
        """Relative paths of the writable attributes, recomputed when the tree is rebuilt."""
        key = (sysfs.read_text(paths.run_file("generation")), _mtime(paths.state_file("profile.json")))
        if self._writable[0] != key:
            try:
                profile = state.load_profile()
            except state.NoProfile:
                attrs = frozenset()
            else:
                attrs = frozenset(os.path.relpath(p, self.backing)
                                  for p in sysfs.writable_attributes(self.backing, profile))
            self._writable = (key, attrs)
        return self._writable[1]

    def write(self, handle, data):
        """One write(2) = one store: validate, then store or refuse; log it either way.

        A refused write retried with the same data on the same open file is logged once:
        Python's close() flushes its buffer again after a failed flush, and the inotify
        watcher counted one write per open-write-close."""
        rel = handle[0]
        path = self._real(rel)
        if not os.path.isfile(path):
            return -errno.ENOENT
        text = data.decode("utf-8", "replace")
        ok, err, value = sysfs.validate(path, text)
        if not ok:
            if handle[1] != data:
                log.append("sysfs", "write", path="/sys/" + rel, value=text.strip(), err=err, rc=-err)
            handle[1] = data
            return -err
        handle[1] = None
        tmp = os.path.join(os.path.dirname(path), HIDDEN_PREFIX + "store")
        with open(tmp, "w") as handle:
            handle.write(value + "\n")
        os.rename(tmp, path)                # readers of the backing file never see it empty
        log.append("sysfs", "write", path="/sys/" + rel, value=text.strip())
        return WRITE_OUT.pack(len(data), 0)

    # ---- helpers ------------------------------------------------------------------------
    def _real(self, rel):
        return os.path.join(self.backing, rel) if rel else self.backing

    def _lstat(self, rel):
        try:
            return os.lstat(self._real(rel))
        except FileNotFoundError:
            if rel:
                raise
            return os.stat_result((stat.S_IFDIR | 0o755, 0, 0, 2, 0, 0, 0, 0, 0, 0))   # mid-rebuild

    def _attr(self, ident, rel, st):
        mode = st.st_mode
        if stat.S_ISDIR(mode):
            mode, size, nlink = stat.S_IFDIR | 0o755, 0, 2
        elif stat.S_ISLNK(mode):
            mode, size, nlink = stat.S_IFLNK | 0o777, st.st_size, 1
        else:
            mode = stat.S_IFREG | (0o644 if rel in self.writable() else 0o444)
            size, nlink = 4096, 1
        secs = int(st.st_mtime)
        nsec = int((st.st_mtime - secs) * 1e9) % 1000000000
        return ATTR.pack(ident, size, (size + 511) // 512, secs, secs, secs, nsec, nsec, nsec,
                         mode, nlink, 0, 0, 0, 4096, 0)

    def _new_fh(self, table, value):
        fh = self.next_fh
        self.next_fh += 1
        table[fh] = value
        return fh

    def _listing(self, nodeid, rel):
        entries = [(b".", nodeid, 4), (b"..", ROOT_ID, 4)]
        try:
            names = sorted(os.listdir(self._real(rel)))
        except FileNotFoundError:
            if rel:
                raise
            names = []
        for name in names:
            if name.startswith(HIDDEN_PREFIX):
                continue
            child = name if not rel else rel + "/" + name
            try:
                mode = os.lstat(self._real(child)).st_mode
            except OSError:
                continue
            entries.append((os.fsencode(name), self.ids.get(child, 0xFFFFFFFF), stat.S_IFMT(mode) >> 12))
        return entries


def _mtime(path):
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return 0
