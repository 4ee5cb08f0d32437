# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read, parse, compare and apply DCQCN (mlx5 ECN sysfs), the RoCE default ToS and the
RDMA-CM default RoCE mode.

Files (MLNX_OFED mlx5, see samples/mlx5_sysfs_dcqcn.txt; no ``params/`` directory)::

    $SYSFS_PATH/class/net/IF/ecn/roce_np/enable/0..7        0|1 (notification point = receiver, sends CNPs)
    $SYSFS_PATH/class/net/IF/ecn/roce_np/<param>            cnp_dscp, cnp_802p_prio, min_time_between_cnps
    $SYSFS_PATH/class/net/IF/ecn/roce_rp/enable/0..7        0|1 (reaction point = sender, slows down)
    $SYSFS_PATH/class/net/IF/ecn/roce_rp/<param>            rpg_*, clamp_tgt_rate, dce_tcp_*, ...
    $SYSFS_PATH/class/infiniband/DEV/tc/PORT/traffic_class  reads "Global tclass=N" (empty when unset),
                                                            takes "N"
    $SYSFS_PATH/kernel/config/rdma_cm/DEV/ports/PORT/default_roce_tos
                                                            RDMA-CM default ToS: "%u", takes kstrtou8
    $SYSFS_PATH/kernel/config/rdma_cm/DEV/ports/PORT/default_roce_mode
                                                            RDMA-CM default RoCE mode: reads and takes
                                                            exactly "RoCE v2" or "IB/RoCE v1"

The rdma_cm configfs group ``rdma_cm/DEV`` exists only after a ``mkdir`` (configfs fills it
in); the value lives in the kernel's cma_device and survives the ``rmdir``. The reader does
what mlnx-tools' ``cma_roce_tos`` and ``cma_roce_mode`` do: create the group when it is absent
and remove it again when done (``RdmaCmGroups``).

The RoCE ToS lives in this module because it is the other sysfs QoS knob of the same
driver: one module owns every QoS sysfs write, so ``state: rendered`` gives the complete
``path=value`` list a boot-time unit replays (mlx5 forgets all of them on reboot).

Layout: ``read_tree`` is the only I/O seam and returns ``{path: text}``, the same shape
``parse_running_config`` builds from ``grep -r . <dirs>`` output (``path:value`` lines),
so ``parse_tree`` serves gathered and parsed alike; ``plan_writes`` is the pure compare;
``apply_write`` makes one write. ``DcqcnResource`` plugs them into the resource engine.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

from ansible_collections.rdma.fabric.plugins.module_utils.common._common import (
    RDMA_DEVICE_MAX, ToolError, check_name, read_sysfs, sysfs_path, write_sysfs,
)
from ansible_collections.rdma.fabric.plugins.module_utils.resources._resource import Resource
from ansible_collections.rdma.fabric.plugins.module_utils.resources import _qos_validate as V
from ansible_collections.rdma.fabric.plugins.module_utils.common import _lazy_re

POINTS = ("np", "rp")
# the fields kept in the rdma_cm configfs group of the device port
RDMA_CM_FIELDS = ("rdma_cm_tos", "rdma_cm_roce_mode")
# What the mlx5 driver takes for each ECN parameter file, checked before the first write.
# Sources (read, not copied): MLNX_OFED mlnx-ofa_kernel drivers/net/ethernet/mellanox/mlx5/core/
# en_ecn.c, whose mlx5e_store_<param>() functions parse the text with sscanf("%d") into an int
# and hand it to MLX5_SET() with no range check of their own, and include/linux/mlx5/mlx5_ifc.h
# (mlx5_ifc_cong_control_r_roce_ecn_np_bits / _rp_bits), the firmware field each one lands in.
# MLX5_SET() keeps only the field's low bits, so a value too wide for its field is not refused
# by the kernel but silently truncated (cnp_dscp 64 becomes DSCP 0): the module refuses it.
#   cnp_dscp: 6 bits (0-63); cnp_802p_prio: 3 bits (0-7); clamp_tgt_rate and
#   clamp_tgt_rate_after_time_inc: 1 bit (0-1); every other parameter: a 32-bit field read
#   through a signed int (0 .. 2^31-1).
INT_MAX = 2 ** 31 - 1
PARAM_RANGES = {
    "cnp_dscp": (0, 63, "DSCP"), "cnp_802p_prio": (0, 7, "priority"),
    "clamp_tgt_rate": (0, 1, "flag"), "clamp_tgt_rate_after_time_inc": (0, 1, "flag"),
}
KNOWN_PARAMS = {
    "np": ("min_time_between_cnps", "cnp_dscp", "cnp_802p_prio"),
    "rp": ("clamp_tgt_rate", "clamp_tgt_rate_after_time_inc", "rpg_time_reset", "rpg_byte_reset",
           "rpg_threshold", "rpg_max_rate", "rpg_ai_rate", "rpg_hai_rate", "rpg_gd", "rpg_min_dec_fac",
           "rpg_min_rate", "rate_to_set_on_first_cnp", "dce_tcp_g", "dce_tcp_rtt",
           "rate_reduce_monitor_period", "initial_alpha_value"),
}
_TCLASS = _lazy_re.compile(r"Global tclass=(-?\d+)")
# The RDMA-CM default RoCE mode: the option's names -> the kernel's text. The text is
# drivers/infiniband/core/cache.c gid_type_str[] (what cma_configfs.c default_roce_mode_show
# prints and default_roce_mode_store compares exactly, one trailing newline allowed; EINVAL for
# any other text, and for a mode the port does not support: an IB port knows only IB/RoCE v1).
ROCE_MODES = {"v2": "RoCE v2", "v1": "IB/RoCE v1"}
ROCE_MODE_CHOICES = ("v2", "v1", "RoCE v2", "IB/RoCE v1")
ROCE_MODE_NAMES = dict((text, name) for name, text in ROCE_MODES.items())


# --------------------------------------------------------------------------- paths
def ecn_dir(interface):
    return sysfs_path("class", "net", interface, "ecn")


def point_dir(interface, point):
    return os.path.join(ecn_dir(interface), "roce_" + point)


def enable_path(interface, point, prio):
    return os.path.join(point_dir(interface, point), "enable", str(prio))


def param_path(interface, point, name):
    return os.path.join(point_dir(interface, point), name)


def tos_path(rdma_device, port):
    return sysfs_path("class", "infiniband", rdma_device, "tc", str(port), "traffic_class")


def rdma_cm_dir():
    return sysfs_path("kernel", "config", "rdma_cm")


def cm_tos_path(rdma_device, port):
    return os.path.join(rdma_cm_dir(), rdma_device, "ports", str(port), "default_roce_tos")


def cm_mode_path(rdma_device, port):
    return os.path.join(rdma_cm_dir(), rdma_device, "ports", str(port), "default_roce_mode")


def roce_mode_name(text):
    """The kernel's text of a RoCE mode as the option names it (``v2``, ``v1``); any other text
    (``Invalid GID type``) stays as it is, so it differs from every wanted mode."""
    text = (text or "").strip()
    return ROCE_MODE_NAMES.get(text, text)


def normalize_roce_mode(field, value):
    """``v2``/``v1`` or the kernel's spellings ``RoCE v2``/``IB/RoCE v1`` -> ``v2``/``v1``;
    ValidationError naming the field and the value otherwise."""
    if value in ROCE_MODE_CHOICES:
        return value if value in ROCE_MODES else ROCE_MODE_NAMES[value]
    raise V.ValidationError("%s=%r: must be one of v2 (RoCE v2), v1 (IB/RoCE v1), or the kernel's spellings "
                            "'RoCE v2', 'IB/RoCE v1'" % (field, value))


class DcqcnError(ValueError):
    def __init__(self, msg):
        super(DcqcnError, self).__init__(msg)
        self.msg = msg


class RdmaCmGroups(object):
    """The rdma_cm configfs groups this run created, removed again by ``release``."""

    def __init__(self):
        self.created = []

    def ensure(self, rdma_device):
        """Make sure ``rdma_cm/<rdma_device>`` exists; DcqcnError saying why it cannot."""
        base = rdma_cm_dir()
        if not os.path.isdir(base):
            raise DcqcnError("rdma_device=%s: %s does not exist: configfs is not mounted at %s or the rdma_cm "
                             "module is not loaded (modprobe rdma_cm), so the RDMA-CM defaults (ToS, RoCE mode) "
                             "cannot be read or set" % (rdma_device, base, os.path.dirname(base)))
        group = os.path.join(base, rdma_device)
        if os.path.isdir(group):
            return
        try:
            os.mkdir(group)
        except OSError as exc:
            raise DcqcnError("rdma_device=%s: mkdir %s failed: %s (rdma_cm does not know the device?)"
                             % (rdma_device, group, os.strerror(exc.errno) if exc.errno else exc))
        self.created.append(group)

    def release(self):
        """rmdir the groups created; the values stay in the kernel. Returns the errors."""
        errors = []
        while self.created:
            group = self.created.pop()
            try:
                os.rmdir(group)
            except OSError as exc:
                errors.append("rmdir %s: %s" % (group, os.strerror(exc.errno) if exc.errno else exc))
        return errors


# --------------------------------------------------------------------------- reader
def read_tree(interface=None, rdma_device=None, port=1, rdma_cm_device=None, rdma_cm=None, rdma_cm_required=True,
              rdma_cm_fields=None):
    """The only I/O seam: every DCQCN file of ``interface``, the verbs ToS file of
    ``rdma_device``/``port`` and the RDMA-CM defaults (ToS, RoCE mode) of
    ``rdma_cm_device``/``port`` (through ``rdma_cm``, an RdmaCmGroups), as ``{path: text}``.
    ``rdma_cm_fields``: the RDMA-CM files needed (``rdma_cm_tos``, ``rdma_cm_roce_mode``); None
    reads those there are. Raises DcqcnError when they are missing; a missing rdma_cm configfs
    is skipped instead when not ``rdma_cm_required``."""
    tree = {}
    if interface:
        if not os.path.isdir(sysfs_path("class", "net", interface)):
            raise DcqcnError("interface=%s: no such network interface (%s)"
                             % (interface, sysfs_path("class", "net", interface)))
        if not os.path.isdir(ecn_dir(interface)):
            raise DcqcnError("interface=%s: %s does not exist; the inbox (upstream) mlx5 driver has no "
                             "per-priority ECN sysfs (DCQCN then follows the firmware defaults, see mlxconfig "
                             "ROCE_CC_PRIO_MASK); MLNX_OFED's mlx5_core provides it" % (interface, ecn_dir(interface)))
        for point in POINTS:
            base = point_dir(interface, point)
            if not os.path.isdir(base):
                continue
            for name in sorted(os.listdir(base)):
                path = os.path.join(base, name)
                if name == "enable" and os.path.isdir(path):
                    for prio in sorted(os.listdir(path)):
                        tree[os.path.join(path, prio)] = read_sysfs(os.path.join(path, prio), "")
                elif os.path.isfile(path):
                    tree[path] = read_sysfs(path, "")
    if rdma_device:
        if not os.path.isdir(sysfs_path("class", "infiniband", rdma_device)):
            raise DcqcnError("rdma_device=%s: no such RDMA device (%s)"
                             % (rdma_device, sysfs_path("class", "infiniband", rdma_device)))
        path = tos_path(rdma_device, port)
        if not os.path.isfile(path):
            raise DcqcnError("rdma_device=%s port=%s: %s does not exist (the per-port default ToS needs "
                             "MLNX_OFED's mlx5_ib, or the port does not exist)" % (rdma_device, port, path))
        tree[path] = read_sysfs(path, "")
    if rdma_cm_device and (rdma_cm_required or os.path.isdir(rdma_cm_dir())):
        if not os.path.isdir(sysfs_path("class", "infiniband", rdma_cm_device)):
            raise DcqcnError("rdma_device=%s: no such RDMA device (%s)"
                             % (rdma_cm_device, sysfs_path("class", "infiniband", rdma_cm_device)))
        rdma_cm.ensure(rdma_cm_device)
        for field, path in (("rdma_cm_tos", cm_tos_path(rdma_cm_device, port)),
                            ("rdma_cm_roce_mode", cm_mode_path(rdma_cm_device, port))):
            needed = rdma_cm_fields is None or field in rdma_cm_fields
            if needed and not os.path.isfile(path):
                if rdma_cm_fields is None and os.path.isdir(os.path.dirname(path)):
                    continue        # gathered: a kernel without that attribute
                raise DcqcnError("rdma_device=%s port=%s: %s does not exist (no such port)"
                                 % (rdma_cm_device, port, path))
            if needed:
                tree[path] = read_sysfs(path, "")
    return tree


def parse_running_config(text):
    """``grep -r . /sys/class/net/IF/ecn /sys/class/infiniband/DEV/tc`` output, one
    ``path:value`` per line, into ``{path: value}``. ``path: value`` and ``path=value``
    (the rendered form) are accepted too; the path is everything up to the first
    ``:``/``=`` after the last ``/``."""
    tree = {}
    for number, line in enumerate((text or "").splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        match = re.match(r"^(/\S*/[^/:=\s]+)\s*[:=]\s?(.*)\Z", line)
        if not match:
            raise DcqcnError("running_config line %d %r: expected 'PATH:VALUE' (grep -r . DIR output)"
                             % (number, line))
        tree[match.group(1)] = match.group(2).strip()
    return tree


def check_captured_numbers(text):
    """Captured ``PATH:VALUE`` lines of ECN and ToS files hold numbers (``traffic_class`` may
    read ``Global tclass=N``), ``default_roce_mode`` one of the kernel's two texts; a malformed
    one raises DcqcnError as ``running_config line N '...': ...`` instead of being kept as text."""
    for number, line in enumerate((text or "").splitlines(), 1):
        match = re.match(r"^(/\S*/[^/:=\s]+)\s*[:=]\s?(.*)\Z", line.strip())
        if not match:
            continue
        path, value = match.group(1), match.group(2).strip()
        if path.endswith("/default_roce_mode"):
            if value not in ROCE_MODE_NAMES:
                raise DcqcnError("running_config line %d '%s': %r is not a RoCE mode (RoCE v2 or IB/RoCE v1)"
                                 % (number, line.strip(), value))
            continue
        if re.search(r"/ecn/roce_(np|rp)/", path) or path.endswith("/default_roce_tos"):
            good = re.fullmatch(r"\d+", value)
        elif path.endswith("/traffic_class"):
            good = value == "" or re.fullmatch(r"(?:Global tclass=)?\d+", value)
        else:
            continue
        if not good:
            raise DcqcnError("running_config line %d '%s': %r is not a number" % (number, line.strip(), value))


def _int_or_text(text):
    try:
        return int(text)
    except (TypeError, ValueError):
        return text


def parse_tree(tree, interface=None, rdma_device=None, port=1):
    """``{path: text}`` -> state ``{np: {enabled_priorities, params}, rp: ..., roce_tos}``.

    Paths are matched by their tail (``.../class/net/IF/ecn/roce_np/...``) so a tree read
    under any ``$SYSFS_PATH`` or pasted from another host parses the same. ``interface``
    None takes the only interface found; ``rdma_device`` None the only device found.
    """
    ecn = re.compile(r"/class/net/([^/]+)/ecn/roce_(np|rp)/(?:enable/(\d+)|([^/]+))\Z")
    tos = re.compile(r"/class/infiniband/([^/]+)/tc/(\d+)/traffic_class\Z")
    cm_tos = re.compile(r"/rdma_cm/([^/]+)/ports/(\d+)/default_roce_tos\Z")
    cm_mode = re.compile(r"/rdma_cm/([^/]+)/ports/(\d+)/default_roce_mode\Z")
    interfaces, devices, cm_devices, cm_modes = {}, {}, {}, {}
    for path, text in tree.items():
        match = ecn.search(path)
        if match:
            ifname, point, prio, name = match.groups()
            entry = interfaces.setdefault(ifname, {}).setdefault(point, {"enable": {}, "params": {}})
            if prio is not None:
                entry["enable"][int(prio)] = _int_or_text(text)
            else:
                entry["params"][name] = _int_or_text(text)
            continue
        match = tos.search(path)
        if match:
            tclass = _TCLASS.search(text or "")
            value = int(tclass.group(1)) if tclass else None
            if value is None and (text or "").strip().lstrip("-").isdigit():
                value = int(text)           # a pasted/rendered plain number
            devices[(match.group(1), int(match.group(2)))] = value if value is None or value >= 0 else None
            continue
        match = cm_tos.search(path)
        if match:
            cm_devices[(match.group(1), int(match.group(2)))] = _int_or_text((text or "").strip())
            continue
        match = cm_mode.search(path)
        if match:
            cm_modes[(match.group(1), int(match.group(2)))] = roce_mode_name(text)
    state = {}
    if interface is None and len(interfaces) == 1:
        interface = list(interfaces)[0]
    if interface is not None:
        found = interfaces.get(interface, {})
        for point in POINTS:
            if point in found:
                enable = found[point]["enable"]
                state[point] = {
                    "enabled_priorities": sorted(p for p, v in enable.items() if v == 1),
                    "params": dict(found[point]["params"]),
                    "enable": dict(enable),     # every priority file and its value (for replaced)
                }
            else:
                state[point] = None
    device_ports = set(devices) | set(cm_devices) | set(cm_modes)
    if rdma_device is None and len(device_ports) == 1:
        rdma_device, port = list(device_ports)[0]
    if rdma_device is not None:
        state["roce_tos"] = devices.get((rdma_device, int(port)))
        if (rdma_device, int(port)) in cm_devices:
            state["rdma_cm_tos"] = cm_devices[(rdma_device, int(port))]
        if (rdma_device, int(port)) in cm_modes:
            state["rdma_cm_roce_mode"] = cm_modes[(rdma_device, int(port))]
    return state


def to_result(state):
    """The state as returned (before/after/gathered/parsed): no internal ``enable`` map."""
    out = {}
    for key, value in state.items():
        if key in POINTS and value is not None:
            value = {"enabled_priorities": list(value["enabled_priorities"]), "params": dict(value["params"])}
        out[key] = value
    return out


# --------------------------------------------------------------------------- want
def normalize_want(config, interface, rdma_device, prefix="config"):
    """Validate ``config``; raise ValidationError naming the field and the value."""
    config = config or {}
    want = {}
    for point in POINTS:
        spec = config.get(point)
        if spec is None:
            continue
        if not interface:
            raise V.ValidationError("%s.%s is given but interface is not: the ECN files are per "
                                    "network interface" % (prefix, point))
        field = "%s.%s" % (prefix, point)
        params = spec.get("params")
        if params is not None:
            if not isinstance(params, dict):
                raise V.ValidationError("%s.params=%r: expected a dict name: integer" % (field, params))
            checked = {}
            for name, value in params.items():
                if not re.match(r"^[A-Za-z0-9_.]+\Z", str(name)) or name == "enable":
                    raise V.ValidationError("%s.params: %r is not a parameter file name" % (field, name))
                other = [p for p in POINTS if p != point][0]
                if str(name) in KNOWN_PARAMS[other]:
                    raise V.ValidationError("%s.params.%s: %s is a roce_%s parameter (give it under %s.%s.params)"
                                            % (field, name, name, other, prefix, other))
                low, high, what = PARAM_RANGES.get(str(name), (0, INT_MAX, None))
                checked[str(name)] = V.int_in_range("%s.params.%s" % (field, name), value, low, high, what)
            params = checked
        want[point] = {
            "enabled_priorities": V.priority_list(field + ".enabled_priorities", spec.get("enabled_priorities")),
            "params": params,
        }
    if config.get("roce_tos") is not None:
        if not rdma_device:
            raise V.ValidationError("%s.roce_tos=%s is given but %s.rdma_device is not"
                                    % (prefix, config["roce_tos"], prefix))
        want["roce_tos"] = V.int_in_range(prefix + ".roce_tos", config["roce_tos"], 0, 255, "ToS")
    if config.get("rdma_cm_tos") is not None:
        if not rdma_device:
            raise V.ValidationError("%s.rdma_cm_tos=%s is given but %s.rdma_device is not"
                                    % (prefix, config["rdma_cm_tos"], prefix))
        want["rdma_cm_tos"] = V.int_in_range(prefix + ".rdma_cm_tos", config["rdma_cm_tos"], 0, 255, "ToS")
    if config.get("rdma_cm_roce_mode") is not None:
        if not rdma_device:
            raise V.ValidationError("%s.rdma_cm_roce_mode=%s is given but %s.rdma_device is not"
                                    % (prefix, config["rdma_cm_roce_mode"], prefix))
        want["rdma_cm_roce_mode"] = normalize_roce_mode(prefix + ".rdma_cm_roce_mode", config["rdma_cm_roce_mode"])
    return want


# --------------------------------------------------------------------------- compare
def plan_writes(want, have, state, interface, rdma_device, port):
    """Pure compare: ``[(path, value)]`` that take ``have`` to ``want``.

    merged turns the listed priorities on; replaced also turns every other priority file
    the device has off. Only files whose value differs are written. ``have`` None means
    unknown (rendered): everything given is written, and parameter names cannot be
    checked. Order: parameters first (CNP DSCP/priority right before the first CNP), then
    enables, then disables, then the verbs ToS, then the RDMA-CM ToS and RoCE mode (written
    as the kernel's text, ``RoCE v2`` or ``IB/RoCE v1``).
    """
    params, enables, disables, tos = [], [], [], []
    for point in POINTS:
        if point not in want:
            continue
        spec = want[point]
        current = None if have is None else have.get(point)
        if have is not None and current is None:
            raise V.ValidationError("config.%s: %s does not exist on %s"
                                    % (point, point_dir(interface, point), interface))
        for name in sorted(spec["params"] or {}):
            value = spec["params"][name]
            if current is not None and name not in current["params"]:
                raise V.ValidationError(
                    "config.%s.params.%s: no such parameter on %s; it has: %s"
                    % (point, name, interface, ", ".join(sorted(current["params"])) or "(none)"))
            if current is None or current["params"].get(name) != value:
                params.append((param_path(interface, point, name), value))
        listed = spec["enabled_priorities"]
        if listed is None:
            continue
        enable = {} if current is None else current["enable"]
        for prio in listed:
            if current is not None and prio not in enable:
                raise V.ValidationError("config.%s.enabled_priorities: %s has no priority %d file"
                                        % (point, interface, prio))
            if enable.get(prio) != 1:
                enables.append((enable_path(interface, point, prio), 1))
        if state == "replaced":
            for prio in sorted(enable):
                if prio not in listed and enable[prio] != 0:
                    disables.append((enable_path(interface, point, prio), 0))
    if "roce_tos" in want and (have is None or have.get("roce_tos") != want["roce_tos"]):
        tos.append((tos_path(rdma_device, port), want["roce_tos"]))
    if "rdma_cm_tos" in want and (have is None or have.get("rdma_cm_tos") != want["rdma_cm_tos"]):
        tos.append((cm_tos_path(rdma_device, port), want["rdma_cm_tos"]))
    if "rdma_cm_roce_mode" in want and (have is None or have.get("rdma_cm_roce_mode") != want["rdma_cm_roce_mode"]):
        tos.append((cm_mode_path(rdma_device, port), ROCE_MODES[want["rdma_cm_roce_mode"]]))
    return params + enables + disables + tos


def write_string(write):
    """Writes are reported as ``path=value`` (what ``echo value > path`` does)."""
    return "%s=%s" % write


def desired_state(want, have, state):
    """Predicted state after the writes (for check mode)."""
    result = {}
    for key, value in (have or {}).items():
        if key in POINTS and value is not None:
            value = {"enabled_priorities": list(value["enabled_priorities"]),
                     "params": dict(value["params"]), "enable": dict(value["enable"])}
        result[key] = value
    for point in POINTS:
        if point not in want or result.get(point) is None:
            continue
        entry = result[point]
        entry["params"].update(want[point]["params"] or {})
        listed = want[point]["enabled_priorities"]
        if listed is not None:
            for prio in list(entry["enable"]):
                if prio in listed:
                    entry["enable"][prio] = 1
                elif state == "replaced":
                    entry["enable"][prio] = 0
            entry["enabled_priorities"] = sorted(p for p, v in entry["enable"].items() if v == 1)
    for key in ("roce_tos", "rdma_cm_tos", "rdma_cm_roce_mode"):
        if key in want:
            result[key] = want[key]
    return result


# --------------------------------------------------------------------------- apply
def _write_tos(path, value):
    # traffic_class reads back "Global tclass=N", never the "N" written, so write_sysfs's
    # read-back compare always disagrees: check the parsed read-back instead.
    try:
        write_sysfs(path, value)
    except ToolError as exc:
        back = _TCLASS.search(read_sysfs(path, "") or "")
        if not back or int(back.group(1)) != int(value):
            raise exc


def apply_write(write):
    """One ``(path, value)`` write; ToolError naming the path when the kernel refuses it."""
    path, value = write
    if path.endswith("/traffic_class"):
        _write_tos(path, value)
    elif path.endswith("/default_roce_mode"):
        try:
            write_sysfs(path, value)
        except ToolError as exc:
            if "Invalid argument" not in exc.msg:
                raise
            raise ToolError(exc.msg + " (the kernel refuses a RoCE mode the port does not support: an InfiniBand "
                            "port has only IB/RoCE v1, RoCE v2 needs a RoCE port whose device supports it)")
    else:
        write_sysfs(path, value)


class DcqcnResource(Resource):
    """dcqcn on the engine: one object per interface (its ECN files, the verbs and RDMA-CM
    default ToS and the RDMA-CM default RoCE mode of its RDMA device port)."""

    name = "dcqcn"
    key_field = "interface"

    def __init__(self, module):
        super(DcqcnResource, self).__init__(module)
        self.rdma_cm = RdmaCmGroups()
        self.targets = {}

    def identity(self, entry, field):
        """The interface, or for a ToS-only entry ``rdma_device/port``."""
        if entry.get("interface") is not None:
            key = check_name(field + ".interface", entry["interface"])
        elif entry.get("rdma_device") is not None:
            check_name(field + ".rdma_device", entry["rdma_device"], "RDMA device", RDMA_DEVICE_MAX)
            key = "%s/%s" % (entry["rdma_device"], entry.get("port") or 1)
        else:
            raise V.ValidationError("%s: give interface (ECN files) or rdma_device (ToS)" % field)
        self.targets[key] = dict((k, entry.get(k)) for k in ("interface", "rdma_device"))
        self.targets[key]["port"] = entry.get("port") or 1
        return key

    def identity_fields(self, key):
        return dict(self.targets[key])

    def normalize(self, entry, field):
        device = entry.get("rdma_device")
        if device is not None:
            check_name(field + ".rdma_device", device, "RDMA device", RDMA_DEVICE_MAX)
        port = entry.get("port")
        port = 1 if port is None else V.int_in_range(field + ".port", port, 1, 255, "port")
        target = {"interface": entry.get("interface"), "rdma_device": device, "port": port}
        if self.state == "gathered":
            target["config"] = None
            return target
        config = dict((k, entry.get(k)) for k in ("np", "rp", "roce_tos") + RDMA_CM_FIELDS if entry.get(k) is not None)
        target["config"] = normalize_want(config, entry.get("interface"), device, field)
        return target

    def read(self, key, want):
        config = want["config"]
        everything = config is None
        interface, device, port = want["interface"], want["rdma_device"], want["port"]
        read_interface = interface if (everything or "np" in config or "rp" in config) else None
        read_device = device if (everything or "roce_tos" in config) else None
        cm_fields = None if everything else [k for k in RDMA_CM_FIELDS if k in config]
        read_cm = device if (everything or cm_fields) else None
        tree = read_tree(read_interface, read_device, port, read_cm, self.rdma_cm, rdma_cm_required=not everything,
                         rdma_cm_fields=cm_fields)
        # An empty name matches nothing: report only what this entry manages.
        found = parse_tree(tree, read_interface or "", device or "", port)
        keep = {"roce_tos": read_device, "rdma_cm_tos": read_cm, "rdma_cm_roce_mode": read_cm}
        return dict((k, v) for k, v in found.items() if keep.get(k, read_interface))

    def parse(self, text):
        check_captured_numbers(text)
        tree = parse_running_config(text)
        if not tree:
            raise DcqcnError("holds no 'PATH:VALUE' line of an ECN or ToS file (grep -r . DIR output)")
        found = parse_tree(tree)
        if not found:
            raise DcqcnError("found no ECN or ToS file of exactly one interface/device in it; paths must end in "
                             "class/net/IF/ecn/roce_np|roce_rp/..., class/infiniband/DEV/tc/PORT/traffic_class "
                             "or rdma_cm/DEV/ports/PORT/default_roce_tos|default_roce_mode")
        return to_result(found)

    def export(self, key, have):
        return to_result(have)

    def plan(self, key, want, have, state):
        return plan_writes(want["config"], have, state, want["interface"], want["rdma_device"], want["port"])

    def predict(self, key, want, have, state):
        return desired_state(want["config"], have, state)

    def apply(self, key, command):
        apply_write(command)

    def render(self, command):
        return write_string(command)

    def header(self, key):
        return "dcqcn %s" % key

    def cleanup(self):
        return self.rdma_cm.release()
