# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The roles' settings dicts, the files they install and the drift check's specs, built in
Python from the roles' variables: the one home of which variable goes where. The roles' vars
(``__roce_qos_settings``, ``__roce_qos_files``, ``__roce_qos_drift_spec``, ``__nccl_env_config``,
``__gpudirect_config``, ...) are each one ``lookup('rdma.fabric.role_spec', NAME)``
(plugins/lookup/role_spec.py), so the role's tasks and the drift check read the same dicts.

At fleet size every template string costs a Jinja compile in every forked worker, once per
host: these dicts were Jinja dict literals of up to 27 keys, the largest part of the drift
check's controller CPU after the module call (README, "Fleet scale"). Here a variable is read
through ``get``, which templates only a value that is a template (most are plain defaults).

``get(name[, default])``: the templated value of a variable (the default, when given, for an
undefined one; otherwise an error naming it). ``render(term[, template_vars])``: the text of
a role template, ``rdma.fabric.role_template``'s lookup.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleError, AnsibleUndefinedVariable
from ansible.module_utils.parsing.convert_bool import boolean

try:   # the bool filter's own conversion, so a value converts here as `| bool` converts it
    from ansible.plugins.filter.core import to_bool
except ImportError:   # pragma: no cover - older ansible-core
    from ansible.module_utils.parsing.convert_bool import boolean as _boolean

    def to_bool(value):
        return _boolean(value, strict=False)

# roce_qos: the settings dict's keys, each the variable roce_qos_KEY, in the order the
# plugins/filter/roce_qos.py filters list them; the flags convert as `| bool`
ROCE_QOS_SETTINGS = (
    "interfaces", "trust", "lossless_priority", "roce_dscp", "cnp_dscp", "cnp_priority",
    "dscp2prio_extra", "pfc_priorities", "prio_tc", "tsa", "tcbw", "buffer_size", "prio2buffer",
    "cable_len", "dcqcn_priorities", "dcqcn_np_params", "dcqcn_rp_params", "default_tos", "tos_ecn",
)
ROCE_QOS_FLAGS = ("rdma_cm_tos", "lldp", "lldp_willing")
# The files the boot-time applier needs besides its state file (which depends on the ports):
# path, role template, mode.
ROCE_QOS_FILES = (
    ("/usr/local/sbin/rdma-fabric-roce-qos-apply", "roce_qos/rdma-fabric-roce-qos-apply.sh.j2", "0755"),
    ("/etc/systemd/system/rdma-fabric-roce-qos.service", "roce_qos/rdma-fabric-roce-qos.service.j2", "0644"),
    ("/etc/systemd/system/rdma-fabric-roce-qos@.service", "roce_qos/rdma-fabric-roce-qos@.service.j2", "0644"),
    ("/etc/udev/rules.d/90-rdma-fabric-roce-qos.rules", "roce_qos/90-rdma-fabric-roce-qos.rules.j2", "0644"),
)
ROCE_QOS_UNITS = (("rdma-fabric-roce-qos.service", True),)

# nccl_env: the role variables, as the nccl_env_config_errors and nccl_env_node filters read them
NCCL_ENV_CONFIG = (
    "nccl_env_conf_path", "nccl_env_file_owner", "nccl_env_file_group", "nccl_env_environment_file",
    "nccl_env_header", "nccl_env_header_rails", "nccl_env_refresh_facts", "nccl_env_no_rails",
    "nccl_env_ib_hca_ports", "nccl_env_ib_hca_exclude", "nccl_env_gid_selection", "nccl_env_gid_addresses",
    "nccl_env_roce_dscp", "nccl_env_roce_ecn", "nccl_env_ib_sl", "nccl_env_net_gdr_level",
    "nccl_env_socket_ifname", "nccl_env_ib_qps_per_connection", "nccl_env_cross_nic", "nccl_env_ib_timeout",
    "nccl_env_dmabuf_enable", "nccl_env_extra", "nccl_env_allow_unknown", "nccl_env_verify",
    "nccl_env_fleet_check", "nccl_env_fleet_groups", "nccl_env_fleet_per_node",
)

# gpudirect: the role variables, as the gpudirect_config_errors and gpudirect_plan filters read them
GPUDIRECT_CONFIG = (
    "gpudirect_kernel_arguments", "gpudirect_acs_kernel_param", "gpudirect_kernel_backend",
    "gpudirect_grub_update_command", "gpudirect_acs_runtime", "gpudirect_acs_script_path",
    "gpudirect_unit_dir", "gpudirect_acs_unit_after", "gpudirect_peer_memory", "gpudirect_peer_memory_module",
    "gpudirect_modules_load_dir", "gpudirect_gdr_level", "gpudirect_reboot", "gpudirect_reboot_timeout",
    "gpudirect_health_retries", "gpudirect_health_delay",
)
# The boot-time ACS script and unit: path (a variable, or a variable and a file name), template, mode.
GPUDIRECT_ACS_FILES = (
    (("gpudirect_acs_script_path", None), "gpudirect/rdma-fabric-acs.sh.j2", "0755"),
    (("gpudirect_unit_dir", "rdma-fabric-acs.service"), "gpudirect/rdma-fabric-acs.service.j2", "0644"),
)
# The drift check renders the ACS files with this plan as __gpudirect_plan: the node puts its
# own plan's value where each slot stands (module_utils/_state_check.py).
GPUDIRECT_SLOT_PLAN = {"acs_mask": "@RDMA_FABRIC_ACS_MASK@", "acs_bridges": ["@RDMA_FABRIC_ACS_BRIDGES@"]}
GPUDIRECT_SLOTS = {"@RDMA_FABRIC_ACS_MASK@": "acs_mask", "@RDMA_FABRIC_ACS_BRIDGES@": "acs_bridges"}


def getter(templar, variables):
    """``get(name[, default])`` over a host's variables (a task's, or a lookup's): the value
    templated with ``templar`` (whose variables they are), once per name."""
    memo = {}

    def get(name, *default):
        if name not in variables:
            if default:
                return default[0]
            raise AnsibleUndefinedVariable("rdma.fabric role spec: the variable %r is undefined" % name)
        if name not in memo:
            memo[name] = templar.template(variables[name])
        return memo[name]
    return get


def renderer(loader, templar, variables):
    """``render(term[, template_vars])``: rdma.fabric.role_template's lookup over the variables."""
    from ansible.plugins.loader import lookup_loader
    template = lookup_loader.get("rdma.fabric.role_template", loader=loader, templar=templar)

    def render(term, template_vars=None):
        return template.run([term], variables, template_vars=template_vars or {})[0]
    return render


def lookup_expression(name):
    """The role var that is the named dict: what the roles' vars/main.yml hold."""
    return "{{ lookup('rdma.fabric.role_spec', '%s') }}" % name


def built_var(value):
    """The name a role var's raw value builds (``lookup_expression(name)``), or None: the drift
    check's action builds such a var here directly, with one getter for every area, which is
    what templating it would return."""
    if isinstance(value, str):
        for name in SPECS:
            if value.strip() == lookup_expression(name):
                return name
    return None


def flag(get, name):
    """The boolean variable ``name``, converted as ``| bool`` converts it; a value that is no
    boolean (``maybe``: the bool filter makes it false with a warning that names no variable)
    is an error naming the variable and the value. Null stays false."""
    value = get(name)
    if value is None:
        return False
    try:
        boolean(value, strict=True)
        valid = True
    except TypeError:
        valid = False
    if not valid:
        raise AnsibleError("%s=%r: expected a boolean (true/false, yes/no, on/off, 1/0)" % (name, value))
    return to_bool(value)


def roce_qos_settings(get):
    """The roce_qos role's settings dict (``__roce_qos_settings``): keys without the prefix;
    nccl_roce_dscp, one DSCP for QoS and NCCL, checked when the nccl_env role's variable is set."""
    settings = dict((key, get("roce_qos_" + key)) for key in ROCE_QOS_SETTINGS)
    settings.update((key, flag(get, "roce_qos_" + key)) for key in ROCE_QOS_FLAGS)
    settings["nccl_roce_dscp"] = get("nccl_env_roce_dscp", None)
    return settings


def roce_qos_files(get, render):
    """The files the roce_qos role installs for its boot-time applier (``__roce_qos_files``)."""
    return [{"path": path, "content": render(term), "mode": mode} for path, term, mode in ROCE_QOS_FILES]


def roce_qos_units(get, render):
    """The units the roce_qos role enables (``__roce_qos_units``)."""
    return [{"name": name, "enabled": enabled} for name, enabled in ROCE_QOS_UNITS]


def roce_qos_drift_spec(get, render):
    """What the drift check sends the node for roce_qos (``__roce_qos_drift_spec``): the settings
    and files, no facts; state_check plans the ports from its own read with the role's planner."""
    return {
        "settings": roce_qos_settings(get),
        "lldp": flag(get, "roce_qos_lldp"),
        "persist": flag(get, "roce_qos_persist"),
        "state_file": "%s/desired.conf" % (get("roce_qos_persist_dir"),),
        "files": roce_qos_files(get, render),
        "units": roce_qos_units(get, render),
    }


def nccl_env_config(get):
    """The nccl_env role's variables (``__nccl_env_config``)."""
    return dict((name, get(name)) for name in NCCL_ENV_CONFIG)


def nccl_env_drift_spec(get, render):
    """What the drift check sends the node for nccl_env (``__nccl_env_drift_spec``): the
    variables and paths; state_check decides the node's settings and file text from its own read."""
    environment_file = get("nccl_env_environment_file")
    return {
        "config": nccl_env_config(get),
        "paths": [get("nccl_env_conf_path")] + ([environment_file] if environment_file else []),
        "owner": get("nccl_env_file_owner"),
        "group": get("nccl_env_file_group"),
    }


def gpudirect_config(get):
    """The gpudirect role's variables (``__gpudirect_config``)."""
    return dict((name, get(name)) for name in GPUDIRECT_CONFIG)


def gpudirect_acs_files(get, render, plan=None):
    """The boot-time ACS script and unit (``__gpudirect_acs_files``), rendered with the role's
    ``__gpudirect_plan``, or with ``plan`` in its place."""
    extra = {"__gpudirect_plan": plan} if plan is not None else None
    files = []
    for (variable, name), term, mode in GPUDIRECT_ACS_FILES:
        path = get(variable) if name is None else "%s/%s" % (get(variable), name)
        files.append({"path": path, "content": render(term, extra), "mode": mode})
    return files


def gpudirect_drift_spec(get, render):
    """What the drift check sends the node for gpudirect (``__gpudirect_drift_spec``): the
    variables, the kernel_cmdline options and the ACS files rendered with slots, no facts;
    state_check plans from its own read with the role's planner and fills the slots."""
    update_command = get("gpudirect_grub_update_command")
    return {
        "config": gpudirect_config(get),
        "kernel_cmdline": {
            "backend": get("gpudirect_kernel_backend"),
            "grub_file": get("gpudirect_grub_file"),
            "proc_cmdline": get("gpudirect_proc_cmdline"),
            "update_command": update_command if update_command else None,
        },
        "acs_files": gpudirect_acs_files(get, render, gpudirect_slot_plan()),
        "slots": dict(GPUDIRECT_SLOTS),
    }


def gpudirect_slot_plan():
    """The plan whose values are the drift check's slots (``__gpudirect_slot_plan``)."""
    return dict(GPUDIRECT_SLOT_PLAN, acs_bridges=list(GPUDIRECT_SLOT_PLAN["acs_bridges"]))


# the names lookup('rdma.fabric.role_spec', NAME) takes: name -> builder(get, render)
SPECS = {
    "roce_qos_settings": lambda get, render: roce_qos_settings(get),
    "roce_qos_files": roce_qos_files,
    "roce_qos_units": roce_qos_units,
    "roce_qos_drift_spec": roce_qos_drift_spec,
    "nccl_env_config": lambda get, render: nccl_env_config(get),
    "nccl_env_drift_spec": nccl_env_drift_spec,
    "gpudirect_config": lambda get, render: gpudirect_config(get),
    "gpudirect_acs_files": gpudirect_acs_files,
    "gpudirect_slot_plan": lambda get, render: gpudirect_slot_plan(),
    "gpudirect_drift_spec": gpudirect_drift_spec,
}


def build(name, get, render):
    """The named dict or list (a key of SPECS); AnsibleError naming it otherwise."""
    builder = SPECS.get(name) if isinstance(name, str) else None
    if builder is None:
        raise AnsibleError("rdma.fabric.role_spec: %r is not one of %s" % (name, ", ".join(sorted(SPECS))))
    return builder(get, render)
