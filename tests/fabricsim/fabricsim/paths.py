"""Where fabricsim keeps its state.

Persistent (survives a container restart, like NVRAM/profile): $FABRICSIM_STATE_DIR
(default /var/lib/fabricsim).  Volatile (lost on restart, like NIC QoS registers):
$FABRICSIM_RUN_DIR (default /run/fabricsim); the simulated sysfs is $FABRICSIM_RUN_DIR/sys.
"""
import os

PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
PROFILES_DIR = os.path.join(PACKAGE_DIR, "profiles")


def state_dir():
    return os.environ.get("FABRICSIM_STATE_DIR") or "/var/lib/fabricsim"


def run_dir():
    return os.environ.get("FABRICSIM_RUN_DIR") or "/run/fabricsim"


def sys_root():
    return os.path.join(run_dir(), "sys")


def state_file(name):
    return os.path.join(state_dir(), name)


def run_file(name):
    return os.path.join(run_dir(), name)
