"""Where each NIC port is cabled: the LLDP neighbour lldptool -n reports (switch name, port).

Default: every port goes to ``leaf01``, port ``swpN`` (N = 1 + the netdev's index in the
profile). `fabricsim cable NETDEV SWITCH PORT` recables one port (persistent, state_dir/cabling.json:
a miscabled rail for the tests); `fabricsim cable --clear` puts every cable back.
"""
import json
import os

from . import paths


def _path():
    return paths.state_file("cabling.json")


def overrides():
    try:
        with open(_path()) as handle:
            return json.load(handle)
    except (IOError, OSError, ValueError):
        return {}


def save(data):
    os.makedirs(os.path.dirname(_path()), exist_ok=True)
    tmp = _path() + ".tmp.%d" % os.getpid()
    with open(tmp, "w") as handle:
        json.dump(data, handle, indent=1, sort_keys=True)
    os.rename(tmp, _path())


def neighbour(profile, netdev):
    """(system name, port ifname) of the switch port the netdev is cabled to."""
    cable = overrides().get(netdev)
    if cable:
        return cable["switch"], cable["port"]
    default = profile.data.get("lldp_cabling", {}).get(netdev)
    if default:
        return default["switch"], default["port"]
    return "leaf01", "swp%d" % (1 + profile.netdevs().index(netdev))
