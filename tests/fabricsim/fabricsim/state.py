"""Persistent state (profile, faults, lldpad config, log) and volatile NIC state (under /run).

Volatile NIC state is one JSON document, run_dir/nic.json, read-modify-written under an
flock so concurrent shim calls do not lose updates.  Missing run_dir => rebuilt from the
persistent profile (a freshly booted node: firmware defaults).
"""
import contextlib
import copy
import fcntl
import json
import os

from . import paths
from .profile import Profile

DEFAULT_ETS = {"prio_tc": [1, 0, 2, 3, 4, 5, 6, 7], "tsa": ["vendor"] * 8, "tcbw": [0] * 8}


class NoProfile(Exception):
    pass


def _read_json(path, default):
    try:
        with open(path) as handle:
            return json.load(handle)
    except (IOError, OSError, ValueError):
        return copy.deepcopy(default)


def _write_json(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp.%d" % os.getpid()
    with open(tmp, "w") as handle:
        json.dump(data, handle, indent=1, sort_keys=True)
    os.rename(tmp, path)


@contextlib.contextmanager
def locked():
    """Serialise state changes between concurrent shim processes."""
    os.makedirs(paths.state_dir(), exist_ok=True)
    with open(paths.state_file(".lock"), "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


# ---- persistent ---------------------------------------------------------
def profile_data():
    data = _read_json(paths.state_file("profile.json"), None)
    if data is None:
        raise NoProfile("fabricsim: no profile; run 'fabricsim init --profile NAME'")
    return data


def save_profile_data(data):
    _write_json(paths.state_file("profile.json"), data)


def faults():
    return _read_json(paths.state_file("faults.json"), {})


def save_faults(data):
    _write_json(paths.state_file("faults.json"), data)


def lldpad():
    return _read_json(paths.state_file("lldpad.json"), {})


def save_lldpad(data):
    _write_json(paths.state_file("lldpad.json"), data)


def lldpad_running(profile):
    return bool(lldpad().get("running", profile.data.get("lldpad_running", False)))


def nv():
    """NV (non-volatile) firmware configuration per adapter card: {card: {"next": {}, "current": {}}}
    (values that differ from the parameter defaults; tools/mlxtools.py)."""
    return _read_json(paths.state_file("nv.json"), {})


def save_nv(data):
    _write_json(paths.state_file("nv.json"), data)


def load_profile():
    profile = Profile(profile_data(), faults())
    from . import links
    profile.live = links.refresh(profile)
    return profile


# ---- volatile -------------------------------------------------------------
def firmware_defaults(profile):
    """What every NIC reports right after boot / driver load."""
    nic_state = {"qos": {}, "acs": {}, "cma": {}}
    for nic in profile.nics:
        model = profile.model(nic)
        for port in nic["ports"]:
            if port["link_layer"] != "Ethernet":
                continue
            nic_state["qos"][port["netdev"]] = {
                "dcbx": profile.data.get("dcbx_default", "fw"),
                "apps": [],          # DCB app table, newest first (kernel dcb_app_list order)
                "dscp2prio_hw": [d >> 3 for d in range(64)],
                "pfc_en": 0,
                "delay": 7,
                "prio_tc": list(DEFAULT_ETS["prio_tc"]),
                "tsa": list(DEFAULT_ETS["tsa"]),
                "tcbw": list(DEFAULT_ETS["tcbw"]),
                "maxrate": [0] * 8,
                "buffer_size": list(model["buffer_size"]),
                "tot_size": model["tot_size"],
                "prio2buffer": list(model["prio2buffer"]),
            }
        nic_state["cma"][nic["dev"]] = {str(p["port"]): "RoCE v2" for p in nic["ports"]
                                        if p["link_layer"] == "Ethernet"}
    for bdf, dev in profile.pci.items():
        if dev.get("acs_cap"):
            nic_state["acs"][bdf] = dev.get("acs_ctl", 0)
    for bdf, on in profile.faults.get("acs_redir", {}).items():
        if bdf in nic_state["acs"]:
            nic_state["acs"][bdf] = (nic_state["acs"][bdf] | 0x1D) if on else (nic_state["acs"][bdf] & ~0x0C)
    return nic_state


def nic_state():
    ensure()
    return _read_json(paths.run_file("nic.json"), {})


def save_nic_state(data):
    _write_json(paths.run_file("nic.json"), data)


def ensure():
    """Rebuild the volatile tree when it is missing (fresh boot, unit not run yet)."""
    if os.path.exists(paths.run_file("nic.json")):
        return
    with locked():
        if not os.path.exists(paths.run_file("nic.json")):
            rebuild(reset=True)


def rebuild(reset=False):
    """Re-render the sysfs tree; with reset=True also return NICs to firmware defaults.
    Caller holds the lock."""
    from . import sysfs
    profile = load_profile()
    os.makedirs(paths.run_dir(), exist_ok=True)
    sysfs.build(profile, reset=reset)
    if reset:
        from .tools import kmod, mlxtools
        kmod.boot(profile)
        mlxtools.boot(profile, profile.faults)     # NV config: next-boot values become current
    if reset or not os.path.exists(paths.run_file("nic.json")):
        save_nic_state(firmware_defaults(profile))
    return profile
