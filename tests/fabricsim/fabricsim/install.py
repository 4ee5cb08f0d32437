"""`fabricsim install`: shims in /usr/local/sbin, systemd units, SYSFS_PATH for every unit.

Idempotent: files are only rewritten when their content differs.  --root lets tests
install into a scratch tree.
"""
import os
import subprocess
import sys

from .main import TOOLS

UNIT_BOOT = """[Unit]
Description=fabricsim: simulated NICs back to firmware defaults, sysfs tree rebuilt
Documentation=file://{pkg}/README.md
DefaultDependencies=no
RequiresMountsFor=/run /var/lib
After=local-fs.target
Before=sysinit.target network-pre.target shutdown.target
Wants=network-pre.target
Conflicts=shutdown.target

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart={python} {pkg}/bin/fabricsim boot

[Install]
WantedBy=sysinit.target
"""
UNIT_WATCH = """[Unit]
Description=fabricsim: sysfs writes validated like the kernel (FUSE view, or inotify fallback)
Documentation=file://{pkg}/README.md
DefaultDependencies=no
Requires=fabricsim.service
After=fabricsim.service
Before=network-pre.target shutdown.target
Conflicts=shutdown.target

[Service]
Type=notify
ExecStart={python} {pkg}/bin/fabricsim watch
ExecStopPost=-{python} {pkg}/bin/fabricsim watch --cleanup
Restart=always
RestartSec=1

[Install]
WantedBy=sysinit.target
"""
SYSTEM_CONF = "[Manager]\nDefaultEnvironment=SYSFS_PATH={run}/sys\n"
PROFILE_D = "# fabricsim: libibverbs-style sysfs override for interactive shells\nexport SYSFS_PATH={run}/sys\n"


def _put(path, text, changes):
    try:
        with open(path) as handle:
            if handle.read() == text:
                return
    except (IOError, OSError):
        pass
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as handle:
        handle.write(text)
    changes.append(path)


def _link(target, link, changes):
    if os.path.islink(link) and os.readlink(link) == target:
        return
    os.makedirs(os.path.dirname(link), exist_ok=True)
    if os.path.lexists(link):
        os.unlink(link)
    os.symlink(target, link)
    changes.append(link)


def shim_dir(root="/"):
    return os.path.join(root, "usr/local/sbin")


def install(root="/", run="/run/fabricsim", systemctl=True):
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    entry = os.path.join(pkg, "bin", "fabricsim")
    os.chmod(entry, 0o755)
    python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    changes = []
    sbin = shim_dir(root)
    for tool in TOOLS + ["fabricsim"]:
        _link(entry, os.path.join(sbin, tool), changes)
    unit_dir = os.path.join(root, "etc/systemd/system")
    _put(os.path.join(unit_dir, "fabricsim.service"), UNIT_BOOT.format(pkg=pkg, python=python), changes)
    _put(os.path.join(unit_dir, "fabricsim-sysfsd.service"), UNIT_WATCH.format(pkg=pkg, python=python), changes)
    for unit in ("fabricsim.service", "fabricsim-sysfsd.service"):
        _link("../" + unit, os.path.join(unit_dir, "sysinit.target.wants", unit), changes)
    _put(os.path.join(root, "etc/systemd/system.conf.d/fabricsim.conf"), SYSTEM_CONF.format(run=run), changes)
    _put(os.path.join(root, "etc/profile.d/fabricsim.sh"), PROFILE_D.format(run=run), changes)
    if changes and systemctl and root == "/" and os.path.isdir("/run/systemd/system"):
        subprocess.call(["systemctl", "daemon-reexec"])   # re-reads system.conf.d (DefaultEnvironment)
    return changes
