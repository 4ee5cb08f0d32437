# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The files and systemd units the collection installs on a node, on the resource engine.

One object: ``{files: {path: ...}, units: {name: ...}}``. ``read`` is the only I/O seam: a
stat and a read of each file, and for all units together one ``systemctl is-enabled`` and
one ``systemctl is-active`` call. ``plan`` is the pure compare; a converged node gets the
reads only. Files are written with ``_fileio.write_atomic`` (a temporary file in the same
directory, mode and owner set on its descriptor, fsync, then ``rename``; no symlink
followed), so a reader never sees half a file and a failed write leaves the previous file.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import grp
import hashlib
import os
import pwd
import re
import stat

from ansible_collections.rdma.fabric.plugins.module_utils.common import _fileio
from ansible_collections.rdma.fabric.plugins.module_utils.common._common import ToolError, run_tool
from ansible_collections.rdma.fabric.plugins.module_utils.resources._qos_validate import ValidationError
from ansible_collections.rdma.fabric.plugins.module_utils.resources._resource import Resource

UNIT_RE = re.compile(r"[A-Za-z0-9:_.\\@-]+\.(service|timer|socket|path|target|mount)")
UNIT_DIRS = ("/etc/systemd/system", "/run/systemd/system", "/usr/lib/systemd/system", "/lib/systemd/system")
DIFF_MAX = 65536
READ_MAX = 64 * 1024 * 1024


def checksum(data):
    return hashlib.sha256(data).hexdigest()


def _mode(field, value):
    if isinstance(value, bool):
        raise ValidationError("%s=%r: expected an octal mode such as '0644'" % (field, value))
    if isinstance(value, int):
        digits = str(value)
        if value >= 8 and all(c in "01234567" for c in digits):
            # 644 is the number 644 = 0o1204 (a setgid/sticky file no one may write), not rw-r--r--;
            # YAML's unquoted 0644 is 420 (0o644): an unquoted number is ambiguous either way
            raise ValidationError("%s=%r: an unquoted number is ambiguous as a file mode (read as octal it is 0%s, "
                                  "as the number it is mode %04o): quote the mode you mean, '0%s' or '%04o'"
                                  % (field, value, digits.lstrip("0"), value, digits.lstrip("0"), value))
        number = value
    else:
        text = str(value).strip()
        if not re.fullmatch(r"0?[0-7]{3,4}", text):
            raise ValidationError("%s=%r: expected an octal mode such as '0644'" % (field, value))
        number = int(text, 8)
    if number < 0 or number > 0o7777:
        raise ValidationError("%s=%r: not a file mode" % (field, value))
    return number


def _path(field, value):
    if not isinstance(value, str) or not value.startswith("/"):
        raise ValidationError("%s=%r: expected an absolute path" % (field, value))
    if "\0" in value or "\n" in value or os.path.normpath(value) != value or value == "/":
        raise ValidationError("%s=%r: not a normalised file path (no '..', '//', trailing '/' or line breaks)"
                              % (field, value))
    return value


def normalize(config):
    """``{files: [...], units: [...]}`` -> want ``{files: {path: spec}, units: {name: spec}}``."""
    config = config or {}
    files, units = {}, {}
    for index, entry in enumerate(config.get("files") or []):
        field = "files[%d]" % index
        path = _path(field + ".path", entry.get("path"))
        if path in files:
            raise ValidationError("%s.path=%s: given twice" % (field, path))
        state = entry.get("state") or "present"
        spec = {"state": state}
        if state == "present":
            content = entry.get("content")
            if not isinstance(content, str):
                raise ValidationError("%s.content: required (a string) for a present file, got %r"
                                      % (field, type(content).__name__))
            spec["content"] = content
            spec["checksum"] = checksum(content.encode("utf-8"))
            spec["mode"] = _mode(field + ".mode", entry.get("mode") or "0644")
            for key in ("owner", "group"):
                name = entry.get(key) or "root"
                if not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.-]*", name):
                    raise ValidationError("%s.%s=%r: not a user or group name" % (field, key, name))
                spec[key] = name
        files[path] = spec
    for index, entry in enumerate(config.get("units") or []):
        field = "units[%d]" % index
        name = entry.get("name")
        if not isinstance(name, str) or not UNIT_RE.fullmatch(name):
            raise ValidationError("%s.name=%r: expected a systemd unit name such as foo.service" % (field, name))
        if name in units:
            raise ValidationError("%s.name=%s: given twice" % (field, name))
        units[name] = {"enabled": entry.get("enabled"), "active": entry.get("active")}
    return {"files": files, "units": units}


def _owner_names(st):
    try:
        owner = pwd.getpwuid(st.st_uid).pw_name
    except KeyError:
        owner = str(st.st_uid)
    try:
        group = grp.getgrgid(st.st_gid).gr_name
    except KeyError:
        group = str(st.st_gid)
    return owner, group


def read_file(path, with_content=False):
    """The state of one path: ``{state: absent}`` or present with checksum, mode, owner."""
    try:
        st = os.lstat(path)
    except OSError as exc:
        if exc.errno in (2, 20):     # ENOENT, ENOTDIR
            return {"state": "absent", "dir": os.path.isdir(os.path.dirname(path))}
        raise ToolError("stat %s failed: %s" % (path, os.strerror(exc.errno)))
    if not stat.S_ISREG(st.st_mode):
        raise ToolError("%s exists but is not a regular file (%s): refusing to replace it"
                        % (path, "a directory" if stat.S_ISDIR(st.st_mode) else "a link or special file"))
    try:
        data = _fileio.read_regular(path, READ_MAX)
    except (IOError, OSError) as exc:
        raise ToolError("reading %s failed: %s" % (path, exc))
    owner, group = _owner_names(st)
    state = {"state": "present", "checksum": checksum(data), "mode": stat.S_IMODE(st.st_mode),
             "owner": owner, "group": group, "dir": True}
    if with_content and len(data) <= DIFF_MAX:
        try:
            state["content"] = data.decode("utf-8")
        except UnicodeDecodeError:
            pass
    return state


def systemd_running():
    """systemd is PID 1 (what sd_booted() checks)."""
    return os.path.isdir("/run/systemd/system")


def read_units(module, names):
    """``{name: {enabled: bool|None, active: bool|None, unit_state: str}}`` in two calls."""
    if not names:
        return {}
    if not systemd_running():
        return dict((name, {"enabled": None, "active": None, "unit_state": "no systemd"}) for name in names)
    systemctl = module.get_bin_path("systemctl", required=False)
    if not systemctl:
        raise ToolError("systemctl was not found although systemd runs")
    result = {}
    _rc, out, err = run_tool(module, [systemctl, "is-enabled"] + list(names), check_rc=False)
    lines = (out or "").splitlines()
    if len(lines) != len(names):
        # systemctl prints nothing on stdout for a unit it cannot find on some releases
        lines = []
        for name in names:
            _rc1, one, _err1 = run_tool(module, [systemctl, "is-enabled", name], check_rc=False)
            lines.append((one or "").strip() or "not-found")
    for name, word in zip(names, lines):
        word = word.strip()
        result[name] = {"unit_state": word, "enabled": word in ("enabled", "enabled-runtime", "static",
                                                                "alias", "indirect", "generated")}
    _rc, out, err = run_tool(module, [systemctl, "is-active"] + list(names), check_rc=False)
    lines = (out or "").splitlines()
    for index, name in enumerate(names):
        word = lines[index].strip() if index < len(lines) else "unknown"
        result[name]["active"] = word in ("active", "activating", "reloading")
    return result


def is_unit_file(path):
    """A unit file or a drop-in of one (``DIR/NAME.service`` or ``DIR/NAME.service.d/X.conf``):
    systemd reads either only after a ``daemon-reload``."""
    for directory in UNIT_DIRS:
        if not path.startswith(directory + "/"):
            continue
        rest = path[len(directory) + 1:].split("/")
        if len(rest) == 1:
            return bool(UNIT_RE.fullmatch(rest[0]))
        if len(rest) == 2 and rest[0].endswith(".d") and rest[1].endswith(".conf"):
            return bool(UNIT_RE.fullmatch(rest[0][:-2]))
    return False


def plan(want, have):
    """Pure: commands as tuples ``(verb, target)``, in the order they must run."""
    commands = []
    reload_needed = False
    made = set()
    for path in sorted(want["files"]):
        spec, cur = want["files"][path], have["files"][path]
        if spec["state"] == "absent":
            if cur["state"] == "present":
                commands.append(("remove", path))
                reload_needed = reload_needed or bool(is_unit_file(path))
            continue
        if cur["state"] == "absent" or cur["checksum"] != spec["checksum"]:
            if cur["state"] == "absent" and not cur.get("dir") and os.path.dirname(path) not in made:
                made.add(os.path.dirname(path))
                commands.append(("mkdir", os.path.dirname(path)))
            commands.append(("write", path))
            reload_needed = reload_needed or bool(is_unit_file(path))
            continue
        if cur["mode"] != spec["mode"]:
            commands.append(("chmod", path))
        if (cur["owner"], cur["group"]) != (spec["owner"], spec["group"]):
            commands.append(("chown", path))
    if want["units"] and not systemd_running():
        return commands
    if reload_needed and want["units"]:
        commands.append(("daemon-reload", ""))
    for name in sorted(want["units"]):
        spec, cur = want["units"][name], have["units"][name]
        if spec["enabled"] is not None and spec["enabled"] != cur["enabled"]:
            commands.append(("enable" if spec["enabled"] else "disable", name))
        if spec["active"] is not None and spec["active"] != cur["active"]:
            commands.append(("start" if spec["active"] else "stop", name))
    return commands


def predict(want, have):
    after = {"files": dict(have["files"]), "units": dict(have["units"])}
    for path, spec in want["files"].items():
        if spec["state"] == "absent":
            after["files"][path] = {"state": "absent", "dir": have["files"][path].get("dir")}
        else:
            after["files"][path] = {"state": "present", "checksum": spec["checksum"], "mode": spec["mode"],
                                    "owner": spec["owner"], "group": spec["group"], "dir": True}
            if "content" in have["files"][path] or have["files"][path]["state"] == "absent":
                after["files"][path]["content"] = spec["content"]
    if systemd_running():
        for name, spec in want["units"].items():
            entry = dict(have["units"][name])
            for key in ("enabled", "active"):
                if spec[key] is not None:
                    entry[key] = spec[key]
            after["units"][name] = entry
    return after


def _ids(path, owner, group):
    try:
        return pwd.getpwnam(owner).pw_uid, grp.getgrnam(group).gr_gid
    except KeyError as exc:
        raise ToolError("%s: no such user or group %s" % (path, exc))


def write_atomic(path, data, mode, owner, group):
    """Write ``data`` to ``path`` through ``_fileio.write_atomic`` (a temporary file in the
    same directory, mode and owner set on its descriptor, fsync, rename: no symlink followed)."""
    uid, gid = _ids(path, owner, group)
    try:
        _fileio.write_atomic(path, data, mode, uid, gid)
    except OSError as exc:
        raise ToolError("%s" % exc)


def set_attributes(path, mode=None, owner=None, group=None):
    """chmod or chown the regular file ``path`` through a descriptor opened without following
    a symlink (a path swapped for a link is refused, never its target changed)."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise ToolError("%s %s failed: %s" % ("chmod" if mode is not None else "chown", path,
                                              "a symlink: refused" if exc.errno == 40 else os.strerror(exc.errno)))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ToolError("%s is not a regular file: refused" % path)
        if mode is not None:
            os.fchmod(fd, mode)
        else:
            os.fchown(fd, *_ids(path, owner, group))
    except OSError as exc:
        raise ToolError("changing %s failed: %s" % (path, os.strerror(exc.errno) if exc.errno else exc))
    finally:
        os.close(fd)


class NodeFilesResource(Resource):
    name = "node_files"
    multi = False

    def __init__(self, module, with_content=False):
        super(NodeFilesResource, self).__init__(module)
        self.with_content = with_content

    def normalize(self, entry, field):
        return normalize(entry)

    def read(self, key, want):
        content = bool(self.module._diff) or self.with_content
        files = dict((path, read_file(path, content)) for path in want["files"])
        if want["units"] and not systemd_running():
            self.module.warn("systemd does not run on this node: %s installed but not enabled; start them at "
                             "boot another way" % ", ".join(sorted(want["units"])))
        return {"files": files, "units": read_units(self.module, sorted(want["units"]))}

    def export(self, key, have):
        files = {}
        for path, entry in have["files"].items():
            entry = dict((k, v) for k, v in entry.items() if k != "dir")
            if "mode" in entry:
                entry["mode"] = "%04o" % entry["mode"]
            files[path] = entry
        return {"files": files, "units": dict((n, dict(u)) for n, u in have["units"].items())}

    def plan(self, key, want, have, state):
        self.want = want
        if have is None:
            raise ValidationError("node_files has no rendered state")
        return plan(want, have)

    def predict(self, key, want, have, state):
        return predict(want, have)

    def apply(self, key, command):
        verb, target = command
        if verb == "mkdir":
            try:
                os.makedirs(target, 0o755, exist_ok=True)
            except OSError as exc:
                raise ToolError("mkdir %s failed: %s" % (target, os.strerror(exc.errno)))
            return
        if verb in ("write", "chmod", "chown"):
            spec = self.want["files"][target]
            if verb == "write":
                write_atomic(target, spec["content"].encode("utf-8"), spec["mode"], spec["owner"], spec["group"])
            elif verb == "chmod":
                set_attributes(target, mode=spec["mode"])
            else:
                set_attributes(target, owner=spec["owner"], group=spec["group"])
            return
        if verb == "remove":
            try:
                os.unlink(target)
            except OSError as exc:
                raise ToolError("removing %s failed: %s" % (target, os.strerror(exc.errno)))
            return
        systemctl = self.module.get_bin_path("systemctl", required=False) or "systemctl"
        argv = [systemctl, verb] + ([target] if target else [])
        run_tool(self.module, argv)

    def render(self, command):
        verb, target = command
        if verb == "write":
            spec = self.want["files"][target]
            return "write %s (mode %04o, %s:%s)" % (target, spec["mode"], spec["owner"], spec["group"])
        if verb == "chmod":
            return "chmod %04o %s" % (self.want["files"][target]["mode"], target)
        if verb == "chown":
            spec = self.want["files"][target]
            return "chown %s:%s %s" % (spec["owner"], spec["group"], target)
        if verb == "mkdir":
            return "mkdir -p %s" % target
        if verb == "remove":
            return "rm %s" % target
        return ("systemctl %s %s" % (verb, target)).strip()
