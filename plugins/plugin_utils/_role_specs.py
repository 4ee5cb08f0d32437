# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The roles' specs, built in Python from the roles' variables on the controller. An area
object (module_utils/areas/, listed in areas/_registry) has its variables read from its role's argument spec,
checked as the role's argument validation checks them, and turned into its spec by the area
(``__roce_qos_spec``). Each role var is one
``lookup('rdma.fabric.role_spec', NAME)`` (plugins/lookup/role_spec.py), so the role's tasks
and the drift check read the same dicts.

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

import hashlib
import json
import os
import re

import yaml
from ansible.errors import AnsibleError, AnsibleUndefinedVariable
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.module_utils.parsing.convert_bool import boolean

from ansible_collections.rdma.fabric.plugins.module_utils.common import _secrets
from ansible_collections.rdma.fabric.plugins.module_utils.common._common import PlanError
from ansible_collections.rdma.fabric.plugins.module_utils.areas import _registry
from ansible_collections.rdma.fabric.plugins.plugin_utils import _core_compat, _node_package

try:   # the bool filter's own conversion, so a value converts here as `| bool` converts it
    from ansible.plugins.filter.core import to_bool
except ImportError:   # pragma: no cover - older ansible-core
    from ansible.module_utils.parsing.convert_bool import boolean as _boolean

    def to_bool(value):
        return _boolean(value, strict=False)


# The area objects (module_utils/areas/) whose spec is built from their role's argument spec
# (areas/_registry: role_spec).
class _AreaObjects(object):
    """``{area: area object}`` of the areas whose spec is built here, each imported on first use:
    the drift check's action (imported in the controller's main process, before the forks) needs
    the node areas only, not the controller areas' planners (rails' and its address library,
    health's report writers, the fabric test's acceptance)."""

    def __init__(self, names):
        self._names = tuple(names)

    def __contains__(self, name):
        return name in self._names

    def __iter__(self):
        return iter(self._names)

    def __len__(self):
        return len(self._names)

    def __getitem__(self, name):
        if name not in self._names:
            raise KeyError(name)
        return _registry.module(name)


AREA_OBJECTS = _AreaObjects(_registry.names(role_spec=True))


def _rails_inputs(variables):
    from ansible_collections.rdma.fabric.plugins.plugin_utils import _rails_role
    return _rails_role.spec_inputs(variables)


# What an area's spec takes from the controller besides the host's variables (what needs the
# whole fleet's planner): area -> function(checked variables) -> keyword arguments of its spec.
CONTROLLER_INPUTS = {"rails": _rails_inputs}
_COLLECTION = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_OPTIONS = {}
_DEFAULTS = {}
_ROLE_DEFAULTS = {}
# libyaml's safe loader where PyYAML has it (about ten times faster than the pure-Python one)
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


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
            value = variables[name]
            # a value with no template in it is what templating returns (most are the roles'
            # plain defaults): only a template costs the templating engine's call
            memo[name] = templar.template(value) if _has_template(value) or not _plain(value) else value
        return memo[name]
    get.is_getter = True
    return get


def renderer(loader, templar, variables):
    """``render(term[, template_vars])``: rdma.fabric.role_template's lookup over the variables."""
    from ansible.plugins.loader import lookup_loader
    template = lookup_loader.get("rdma.fabric.role_template", loader=loader, templar=templar)

    def render(term, template_vars=None):
        return template.run([term], variables, template_vars=template_vars or {})[0]

    def key(term, template_vars=None):
        return template.keys([term], variables, template_vars=template_vars or {})[0]

    def names(term):
        return template.names([term])[0]
    render.key, render.names = key, names
    return render


def spec_names(area):
    """The variables an area's spec reads: its role's argument spec and OTHER_VARIABLES."""
    return set(role_options(area)) | set(getattr(AREA_OBJECTS[area], "OTHER_VARIABLES", ()))


def spec_key(area, get):
    """The key of the area's spec over a host's values: every variable it reads (its role's
    argument spec and OTHER_VARIABLES), templated. ``None`` where the spec is the host's own (it reads
    the host's name) or holds a secret (never written to the controller's disk), or where a
    variable cannot be read (building the spec says why)."""
    area_object = AREA_OBJECTS[area]
    options = role_options(area)
    others = tuple(getattr(area_object, "OTHER_VARIABLES", ()))
    if host_fields(area) is not None:
        # the host's name goes only into the spec's HOST_FIELDS, which the cache's reader sets
        others = tuple(name for name in others if name != "inventory_hostname")
    if "inventory_hostname" in others or has_secret(area):
        return None
    try:
        values = [(name, get(name)) for name in sorted(options)] + [(name, get(name, None)) for name in sorted(others)]
        text = json.dumps([area, values], sort_keys=True, default=repr)
    except (AnsibleError, TypeError, ValueError):
        return None
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


_HAS_SECRET = {}


def has_secret(area):
    """Whether a variable of the area's role is a secret (read once per process: preload)."""
    if area not in _HAS_SECRET:
        _HAS_SECRET[area] = any(_secrets.is_secret(name) for name in role_options(area))
    return _HAS_SECRET[area]


def host_fields(area):
    """``function(variables) -> {key: value}``: the keys of the area's spec that are the host's own
    (its name), which is all its spec takes of the host's name; None when the area declares none
    (HOST_FIELDS). A spec the run cache shares between hosts gets these set for each host."""
    area_object = AREA_OBJECTS[area]
    if not getattr(area_object, "HOST_FIELDS", ()):
        return None
    return area_object.host_fields


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


def role_options(role):
    """The variables of ``role``: the options of every entry point of its
    ``meta/argument_specs.yml``, the role's contract (read once per process)."""
    if role not in _OPTIONS:
        path = os.path.join(_COLLECTION, "roles", role, "meta", "argument_specs.yml")

        def read():
            with open(path) as handle:
                specs = yaml.load(handle, Loader=_YAML_LOADER)["argument_specs"]  # a safe loader
            options = {}
            for entry in specs.values():
                options.update(entry.get("options") or {})
            return options
        # kept between runs (plain data: JSON gives back what the safe loader gave)
        _OPTIONS[role] = _core_compat.cached_data("role_options", [path], read)
    return _OPTIONS[role]


def _canonical(value):
    """A value as text that tells types apart (1, 1.0, True and '1' differ), for comparing a host's
    value with the role's default."""
    return json.dumps(value, sort_keys=True, default=repr)


_PLAIN_SCALARS = (str, bool, int, float, type(None))


def _plain(value):
    """Plain data (str, numbers, booleans, None, and lists and dicts of them): what templating
    returns as it is when it holds no template."""
    if isinstance(value, _PLAIN_SCALARS):
        return True
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return all(_plain(v) for v in value)
    return False


def _has_template(value):
    if isinstance(value, str):
        return "{{" in value or "{%" in value or "{#" in value
    if isinstance(value, dict):
        return any(_has_template(k) or _has_template(v) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return any(_has_template(v) for v in value)
    return False


def checked_defaults(role):
    """``{variable: canonical value}`` of the role's defaults (defaults/main.yml) that its argument
    spec accepts as they are: plain values (no template), not required, that the check leaves
    unchanged. A host whose value is the same (same type, same value) has nothing to check there:
    checked_variables checks only the others. When the defaults together fail the check, none is
    trusted and every variable is checked (read once per process, like the argument specs)."""
    if role not in _DEFAULTS:
        defaults_path = os.path.join(_COLLECTION, "roles", role, "defaults", "main.yml")

        def read():
            try:
                options = role_options(role)
                with open(defaults_path) as handle:
                    defaults = yaml.load(handle, Loader=_YAML_LOADER) or {}   # a safe loader
                plain = dict((name, value) for name, value in defaults.items()
                             if name in options and not options[name].get("required") and not _has_template(value))
                result = ArgumentSpecValidator(dict((name, options[name]) for name in plain)).validate(dict(plain))
                if not result.error_messages:
                    return dict((name, _canonical(value)) for name, value in plain.items()
                                if _canonical(result.validated_parameters.get(name)) == _canonical(value))
            except (OSError, KeyError, TypeError, ValueError, AttributeError, yaml.YAMLError):
                pass
            return {}
        # kept between runs, under a key of the files it reads and of this file (its rules)
        sources = [os.path.join(_COLLECTION, "roles", role, "meta", "argument_specs.yml"), defaults_path,
                   os.path.abspath(__file__)]
        _DEFAULTS[role] = _core_compat.cached_data("checked_defaults", sources, read)
    return _DEFAULTS[role]


def role_defaults(role):
    """The role's ``defaults/main.yml`` as a role import reads it (its template strings trusted
    as templates), read once per process: what a host sees of the role's variables when the
    inventory does not set them."""
    if role not in _ROLE_DEFAULTS:
        path = os.path.join(_COLLECTION, "roles", role, "defaults", "main.yml")
        data = _core_compat.load_role_file(path) if os.path.exists(path) else None
        if data is not None and not isinstance(data, dict):
            raise AnsibleError("rdma.fabric.%s: %s is not a mapping of variables" % (role, path))
        _ROLE_DEFAULTS[role] = data or {}
    return _ROLE_DEFAULTS[role]


def host_variables(task_vars, roles):
    """A host's variables as a task inside the ``roles`` sees them, without importing them: the
    roles' defaults (the lowest precedence) under the task's variables. The drift check's action
    reads every area's role this way: the playbook imports no role, so ansible-core neither loads
    the roles for each run nor merges their defaults into every host's variables for every task."""
    merged = {}
    for role in roles:
        merged.update(role_defaults(role))
    merged.update(task_vars)
    return merged


def preload(roles):
    """Read the argument specs of ``roles``, and check their defaults, now. The drift check's
    action calls it when the strategy imports it in the controller's main process: each task's
    worker is a fork of that process and finds them read, where it would parse them again for
    every host."""
    for role in roles:
        try:
            role_options(role)
            checked_defaults(role)
            role_defaults(role)
            if role in AREA_OBJECTS:
                has_secret(role)
        except (OSError, KeyError, TypeError, yaml.YAMLError, AnsibleError):
            pass   # the worker reads it again and reports the error where it is used
    # the lookup that renders the roles' templates, found and its configuration read from its
    # DOCUMENTATION (a YAML parse) by the plugin loader here, not in each worker's renderer()
    try:
        from ansible.plugins.loader import lookup_loader
        lookup_loader.get("rdma.fabric.role_template", class_only=True)
    except (ImportError, AnsibleError, OSError, KeyError, TypeError, ValueError, AttributeError):
        pass   # renderer() finds it again and reports the error where it is used


def checked_variables(role, get, others=()):
    """``{variable: value}`` of every variable of the role's argument spec (and of ``others``
    that are defined), each checked as the role's argument validation checks it: a value the
    spec refuses is an error naming the variable and the value (a secret's name only)."""
    options = role_options(role)
    variables = dict((name, get(name)) for name in options)
    # a value that is the role's checked default (checked_defaults) passes as it is: only the
    # others are checked, per host (most of a fleet's variables are the defaults)
    trusted = checked_defaults(role)
    checked = [name for name in options if name not in trusted or _canonical(variables[name]) != trusted[name]]
    try:
        result = ArgumentSpecValidator(dict((name, options[name]) for name in checked)).validate(
            dict((name, variables[name]) for name in checked))
    except (TypeError, ValueError):
        # ansible-core 2.16's validator raises on some values of the wrong shape (a list for an int
        # with choices joins its items as text): name each variable whose own check raises
        raise AnsibleError("rdma.fabric.%s: %s" % (role, "; ".join(_raising(options, variables))))
    if result.error_messages:
        raise AnsibleError("rdma.fabric.%s: %s" % (role, "; ".join(_spec_error(m, variables)
                                                                   for m in result.error_messages)))
    # a number the inventory gives as a template is text before ansible-core 2.19's native
    # types ("{{ roce_qos_roce_dscp }}" is '26'): the spec's conversion, as the role's own check does
    for name in checked:
        if options[name].get("type") in ("int", "float") and isinstance(variables.get(name), str):
            variables[name] = result.validated_parameters[name]
    variables.update((name, get(name, None)) for name in others)
    return variables


def setting_roles(roles, names):
    """``{role: [name, ...]}``: the role of each of the variables ``names``. A name that is no
    variable of the roles, or a secret, is an error naming it."""
    out = {}
    for name in names:
        role = next((role for role in roles if name in role_options(role)), None)
        if role is None:
            raise AnsibleError("drift_check: settings: %s not a variable of the roles %s" % (name, ", ".join(roles)))
        if _secrets.is_secret(name):
            raise AnsibleError("drift_check: settings: %s is a secret: it is not returned" % name)
        out.setdefault(role, []).append(name)
    return out


def checked_settings(roles, names, get):
    """``{name: value}`` of the roles' variables ``names``, each checked against its role's
    argument spec as the role checks it (a converged play's decisions: ``gpudirect_reboot``).
    ``get`` is a getter, or a function that returns one (called once the names are known good)."""
    by_role = setting_roles(roles, names)
    if by_role and not getattr(get, "is_getter", False):
        get = get()
    out = {}
    for role, mine in sorted(by_role.items()):
        options = role_options(role)
        variables = dict((name, get(name)) for name in mine)
        result = ArgumentSpecValidator(dict((name, options[name]) for name in mine)).validate(dict(variables))
        if result.error_messages:
            raise AnsibleError("rdma.fabric.%s: %s" % (role, "; ".join(_spec_error(m, variables)
                                                                       for m in result.error_messages)))
        out.update((name, result.validated_parameters[name]) for name in mine)
    return out


def _raising(options, variables):
    """``variable=value: ...`` for each variable whose own argument check raises (a secret's name only)."""
    out = []
    for name in sorted(options):
        try:
            ArgumentSpecValidator({name: options[name]}).validate({name: variables.get(name)})
        except (TypeError, ValueError):
            expected = "a value of type %s%s" % (options[name].get("type", "str"), " out of %s" % (
                options[name]["choices"],) if options[name].get("choices") else "")
            out.append("%s: the value does not match the argument spec (expected %s)" % (name, expected)
                       if _secrets.is_secret(name) else "%s=%r: expected %s" % (name, variables.get(name), expected))
    return out or ["the argument spec's check failed on a value of the wrong shape"]


def _spec_error(message, variables):
    """The argument validator's message as ``variable=value: what is wrong`` (a secret's
    value, which the message may quote, is not shown)."""
    found = re.match(r"argument '([^']+)' (.*)\Z", message, re.S)
    if not found or found.group(1) not in variables:
        return message
    name = found.group(1)
    if _secrets.is_secret(name):
        return "%s: the value does not match the argument spec (%s)" % (name, found.group(2).split(":", 1)[0])
    return "%s=%r: %s" % (name, variables[name], found.group(2))


def area_spec(area, get, render):
    """The area object's spec (``lookup('rdma.fabric.role_spec', AREA)``): its settings from the
    role's checked variables, and its files rendered from the role's templates."""
    area_object = AREA_OBJECTS[area]
    # an area whose node runs collection code without Ansible gets those module_utils files
    extra = (_node_package.files(area_object.NODE_ENTRY),) if getattr(area_object, "NODE_ENTRY", None) else ()
    try:
        variables = checked_variables(area, get, area_object.OTHER_VARIABLES)
        inputs = CONTROLLER_INPUTS[area](variables) if area in CONTROLLER_INPUTS else {}
        return area_object.spec(variables, render, *extra, **inputs)
    except PlanError as exc:
        raise AnsibleError(str(exc))


def _builder(area):
    return lambda get, render: area_spec(area, get, render)


# the names lookup('rdma.fabric.role_spec', NAME) takes: name -> builder(get, render)
SPECS = dict((area, _builder(area)) for area in AREA_OBJECTS)


def build(name, get, render):
    """The named dict or list (a key of SPECS); AnsibleError naming it otherwise."""
    builder = SPECS.get(name) if isinstance(name, str) else None
    if builder is None:
        raise AnsibleError("rdma.fabric.role_spec: %r is not one of %s" % (name, ", ".join(sorted(SPECS))))
    return builder(get, render)
