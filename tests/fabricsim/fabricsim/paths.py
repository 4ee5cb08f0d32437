"""Where fabricsim keeps its state.

Persistent (survives a container restart, like NVRAM/profile): $FABRICSIM_STATE_DIR
(default /var/lib/fabricsim).  Volatile (lost on restart, like NIC QoS registers):
$FABRICSIM_RUN_DIR (default /run/fabricsim).

The simulated sysfs tree is built in $FABRICSIM_RUN_DIR/sys.backing (plain files, what
fabricsim itself reads and writes).  $FABRICSIM_RUN_DIR/sys is what the modules read
(SYSFS_PATH): the FUSE view fabricsim-sysfsd mounts there, where writes fail like sysfs
writes, or, when FUSE is unavailable, a symlink to sys.backing.
"""
import os

PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
PROFILES_DIR = os.path.join(PACKAGE_DIR, "profiles")


def state_dir():
    return os.environ.get("FABRICSIM_STATE_DIR") or "/var/lib/fabricsim"


def run_dir():
    return os.environ.get("FABRICSIM_RUN_DIR") or "/run/fabricsim"


def sys_root():
    """The sysfs the modules see (SYSFS_PATH): the FUSE mount point, or a symlink to the tree."""
    return os.path.join(run_dir(), "sys")


def sys_backing():
    """Where the tree really is; fabricsim reads and writes it here, never through the view."""
    return os.path.join(run_dir(), "sys.backing")


def state_file(name):
    return os.path.join(state_dir(), name)


def run_file(name):
    return os.path.join(run_dir(), name)
