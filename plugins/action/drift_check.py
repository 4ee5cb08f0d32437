# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rdma.fabric.drift_check: per host, the whole drift check in one state_check call. Each area
goes as its spec (its role's settings and rendered files, no facts); the node reads, plans what
the role would set with the roles' own planners, checks and judges. Returns one record per
drifted setting. With ``apply``, the same call also converges each drifted roce_qos, nccl_env
and gpudirect area (state_check's ``apply``). Documentation in plugins/modules/drift_check.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

from ansible import constants as C
from ansible.errors import AnsibleError
from ansible.module_utils.parsing.convert_bool import boolean
from ansible.plugins.action import ActionBase

from ansible_collections.rdma.fabric.plugins.module_utils.drift import _drift_areas as A
from ansible_collections.rdma.fabric.plugins.plugin_utils import _core_compat, _role_specs
# the lookup that renders the roles' templates (_role_specs.renderer), imported with this plugin
from ansible_collections.rdma.fabric.plugins.lookup import role_template

# The strategy imports this plugin in the controller's main process, before it forks a worker
# per host: the argument specs read here, and the lookup imported above, are read once per run,
# not once per host.
_role_specs.preload(A.NODE_AREAS)


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(("areas", "area_groups", "apply", "apply_defer", "settings", "apply_var",
                             "settings_var", "environment_var"))

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        task_vars = task_vars or {}
        host = task_vars.get("inventory_hostname")
        args = self._task.args
        read = _VariableReader(self._templar, task_vars)
        apply, defer = (_boolean(args, name, read) for name in ("apply", "apply_defer"))
        if ("areas" in args) == ("area_groups" in args):
            raise AnsibleError("drift_check: expected one of areas (area: the role's __ROLE_drift_spec) "
                               "and area_groups (area: the inventory group it applies to)")
        environment = _environment(read.option(args, "environment", None))
        names, what = read.option(args, "settings", [])
        names = names or []
        if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
            raise AnsibleError("drift_check: %s: expected a list of the roles' variable names, got %r" % (what, names))
        _role_specs.setting_roles(A.NODE_AREAS, names)
        self.__get = None
        if "area_groups" in args:
            specs = self._specs_of_groups(args.get("area_groups"), host, task_vars)
        else:
            specs = args.get("areas") or {}
            if not isinstance(specs, dict):
                raise AnsibleError("drift_check: areas: expected a dict of area: spec, got %r" % (specs,))
            specs = dict((k, v) for k, v in specs.items() if v)
        unknown = sorted(set(specs) - set(A.NODE_AREAS))
        if unknown:
            raise AnsibleError("drift_check: areas: %s not one of %s" % (", ".join(unknown), ", ".join(A.NODE_AREAS)))
        for area, spec in sorted(specs.items()):
            if not isinstance(spec, dict):
                raise AnsibleError("drift_check: areas.%s: expected the role's spec (a dict), got %r" % (area, spec))
        result.update(changed=False, drift_records=[], checked=[])
        if names:
            # what the play needs of the roles' variables (gpudirect_reboot, ...), as the role sees them
            result["settings"] = _role_specs.checked_settings(A.NODE_AREAS, names, lambda: self._getter(task_vars))
        if apply:
            result.update(applied={}, drift_records_after=[])
        if not specs:
            return result
        if "opensm" in specs:
            # opensm.conf holds the SM_Key: the result (its records) is not shown, as no_log
            result["_ansible_no_log"] = True
        module_args = {"areas": specs, "host": host, "return_facts": False}
        self._node_environment(environment)
        if apply:
            module_args["apply"] = True
            if defer and "nic_firmware" in specs and _role_specs.checked_settings(
                    A.NODE_AREAS, ["nic_firmware_reboot"], self._getter(task_vars))["nic_firmware_reboot"] == "if_required":
                # its firmware play may reboot it: its ports may come back with other link types
                module_args["apply_unless_drifted"] = ["nic_firmware"]
        probe = self._execute_module("rdma.fabric.state_check", task_vars=task_vars, module_args=module_args)
        if probe.get("unreachable"):
            if result.get("_ansible_no_log"):
                probe["_ansible_no_log"] = True
            return probe
        if probe.get("failed") and not (apply and "applied" in probe):
            result["drift_records"] = [A.host_record(host, "state_check failed: %s" % probe.get("msg"))]
            result["checked"] = sorted(specs)
            if apply and defer:
                # reported as the check reports it; site.yml's later plays converge every area
                result.update(apply_deferred="not checked: state_check failed", drift_records_after=result["drift_records"])
            elif apply:
                # nothing could be checked, nothing was applied: the converge failed
                result.update(failed=True, msg="%s: state_check failed: %s" % (host, probe.get("msg")),
                              drift_records_after=result["drift_records"])
            return result
        result.update(drift_records=probe.get("drift_records") or [], checked=probe.get("checked") or [])
        if apply:
            result.update(applied=probe.get("applied") or {}, changed=bool(probe.get("changed")),
                          drift_records_after=probe.get("drift_records_after") or [], plans=probe.get("plans") or {})
            if probe.get("apply_deferred"):
                result["apply_deferred"] = probe["apply_deferred"]
            if probe.get("failed"):
                result.update(failed=True, msg=probe.get("msg"))
        return result

    def _specs_of_groups(self, area_groups, host, task_vars):
        """area_groups (area: group) -> {area: spec} for the areas whose group holds the host,
        each spec what the role's ``lookup('rdma.fabric.role_spec', AREA)`` returns inside the
        role: only the host's own areas cost. The playbook imports no role: the host's variables
        are read over the five roles' defaults (_role_specs.host_variables)."""
        if not isinstance(area_groups, dict):
            raise AnsibleError("drift_check: area_groups: expected a dict of area: inventory group, got %r"
                               % (area_groups,))
        groups = task_vars.get("groups") or {}
        own = []
        for area, group in sorted(area_groups.items()):
            if area not in A.NODE_AREAS:
                raise AnsibleError("drift_check: area_groups: %r not one of %s" % (area, ", ".join(A.NODE_AREAS)))
            if not isinstance(group, str) or not group:
                raise AnsibleError("drift_check: area_groups.%s: expected an inventory group name, got %r"
                                   % (area, group))
            if host in (groups.get(group) or ()):
                own.append(area)
        if not own:
            return {}
        get = self._getter(task_vars)
        templar, variables = self.__templar, self.__variables
        render = _role_specs.renderer(self._loader, templar, variables)
        specs = {}
        for area in own:
            name = "__%s_spec" % area
            if name in task_vars and _role_specs.built_var(task_vars[name]) is None:
                # the play sets the area's spec itself
                specs[area] = templar.template(task_vars[name])
            elif area in _role_specs.AREA_OBJECTS:
                specs[area] = _cached_spec(area, get, render)
            else:   # pragma: no cover - every node area is an area object (areas/_registry)
                raise AnsibleError("drift_check: area_groups.%s: %s is undefined" % (area, name))
        return specs

    def _node_environment(self, environment):
        """The mapping in the variable ``environment_var`` names (``rdma_fabric_environment`` in
        playbooks/drift_check.yml) added to the node call's environment, under the task's own
        ``environment`` (which wins where both set a name): what the play's ``environment:`` keyword
        gave the call, without templating the keyword in every host's worker."""
        if environment:
            own = self._task.environment
            own = list(own) if isinstance(own, list) else ([own] if own else [])
            # ActionBase merges them first to last (the play's, the block's, the task's): the
            # variable's goes first, so the task's own keyword wins
            self._task.environment = [dict(environment)] + own

    def _getter(self, task_vars):
        """The host's variables over the five roles' defaults, and one getter for every area (a
        variable two areas read is templated once)."""
        if self.__get is None:
            self.__variables = _role_specs.host_variables(task_vars, A.NODE_AREAS)
            self.__templar = _core_compat.templar_with(self._templar, self.__variables)
            self.__get = _role_specs.getter(self.__templar, self.__variables)
        return self.__get


def _boolean(args, name, read):
    value, what = read.option(args, name, False)
    try:
        return boolean(value, strict=True)
    except TypeError:
        raise AnsibleError("drift_check: %s=%r: expected true or false" % (what, value))


def _environment(value_what):
    """The environment ``environment_var`` names (None when it is not given or undefined), checked:
    a mapping of variable names; an error names the variable and the value."""
    environment, what = value_what
    if environment is None:
        return None
    if not isinstance(environment, dict) or not all(isinstance(key, str) and key for key in environment):
        raise AnsibleError("drift_check: %s=%r: expected a mapping of environment variable names to values"
                           % (what, environment))
    return environment


class _VariableReader(object):
    """An option given by the name of the variable that holds it (``apply_var: __drift_check_apply``):
    the host's value, templated only when it holds a template. A task argument that is a template
    costs a Jinja compile in every host's worker; most of these values are plain (a default, an
    inventory value)."""

    def __init__(self, templar, task_vars):
        self._templar, self._task_vars, self._get = templar, task_vars, None

    def option(self, args, name, default):
        """``(value, what)``: the option ``name`` (``NAME_var``, when given, names the variable to
        read it from; an undefined one is ``default``), and the name an error should give: the
        variable's, as the user set it, or the option's."""
        var = args.get(name + "_var")
        if var is None:
            return args.get(name, default), name
        if not isinstance(var, str) or not var:
            raise AnsibleError("drift_check: %s_var=%r: expected the name of a variable" % (name, var))
        if name in args:
            raise AnsibleError("drift_check: %s and %s_var: expected one of them" % (name, name))
        if self._get is None:
            self._get = _role_specs.getter(self._templar, self._task_vars)
        return self._get(var, default), var


def _cached_spec(area, get, render):
    """The area's spec, built once per run for every distinct set of the values it reads: the hosts
    of a group share their settings, so the first host's spec (checked, its files rendered) is
    the others'. Kept in the run's local temporary directory, which the forked workers share. The
    key is the values of the area's variables (_role_specs.spec_key); the entry also holds the
    values of the other variables its files' templates read (their names, from the run cache),
    which a host must match to take it. A file whose template is not pure (a lookup, the run date),
    and a spec that reads the host's name or holds a secret, are built for every host."""
    key = _role_specs.spec_key(area, get) if hasattr(render, "names") else None
    if key is None:
        return _role_specs.build(area, get, render)
    path = os.path.join(C.DEFAULT_LOCAL_TMP, "rdma_fabric_role_spec", "%s-%s.json" % (area, key))
    own = _role_specs.host_fields(area)
    spec = _read_spec(path, get)
    if spec is not None:
        return _own(spec, own, get)
    with role_template._locked(path):   # pylint: disable=protected-access
        spec = _read_spec(path, get)
        if spec is not None:
            return _own(spec, own, get)
        read, pure = set(), [True]

        def recording(term, template_vars=None):
            names, is_pure = render.names(term)
            read.update(name for name in names if name not in (template_vars or {}))
            pure[0] = pure[0] and is_pure
            return render(term, template_vars)
        spec = _role_specs.build(area, get, recording)
        if pure[0]:
            extra = dict((name, get(name, _ABSENT)) for name in sorted(read - _role_specs.spec_names(area)))
            try:
                role_template._write_atomic(path, json.dumps(   # pylint: disable=protected-access
                    {"spec": spec, "extra": _canonical(extra)}))
            except (IOError, OSError, TypeError, ValueError):
                pass
        return spec


_ABSENT = "<absent>"


def _own(spec, host_fields, get):
    """A kept spec with the keys that are the host's own (the area's HOST_FIELDS) set for this host."""
    if host_fields is not None:
        spec.update(host_fields({"inventory_hostname": get("inventory_hostname", None)}))
    return spec


def _canonical(values):
    return json.dumps(values, sort_keys=True, default=repr)


def _read_spec(path, get):
    """The kept spec at ``path`` when this host's values of the other variables its files read are
    the same, else None."""
    try:
        with open(path) as handle:
            kept = json.load(handle)
        extra = json.loads(kept["extra"])
        if _canonical(dict((name, get(name, _ABSENT)) for name in extra)) != kept["extra"]:
            return None
        return kept["spec"]
    except (IOError, OSError, ValueError, KeyError, TypeError):
        return None
