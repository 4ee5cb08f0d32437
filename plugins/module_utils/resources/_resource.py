# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The resource engine: the one lifecycle of every rdma.fabric module that changes a node.

A module supplies a ``Resource`` subclass (its normaliser, single reader, parser, planner
and applier) and calls ``run_resource`` (a multi-object module: ``module_argument_spec``,
``MODULE_KWARGS`` and ``run_module``). The engine does, in this order and nowhere else:

1. normalise and validate every ``config`` entry (messages name the field and the value;
   duplicate identities are refused), with no I/O;
2. ``rendered``: plan from scratch (``have`` None) and return the commands, no I/O;
3. read ``have`` of every object through the resource's reader (the only I/O seam);
4. ``gathered``: return what was read;
5. plan every object (pure want vs have, keyed by identity) before the first write, so a
   planning error on the last interface stops the run before anything is applied;
6. apply the commands in order unless in check mode, stopping at the first failure;
7. read back every object that was written to and return ``before``, ``commands``,
   ``after`` (predicted in check mode), ``diff`` with headers (only when asked), and
   ``changed`` computed from ``before`` vs ``after``. A failure midway returns what was
   applied, the command that failed, what was not attempted, the object it failed on
   (``failed_on``, its identity fields), and the state read back:
   ``changed`` is true when the read-back differs, whatever the tool said.

Objects: a multi-object resource (``multi = True``) takes ``config`` as a list of dicts
keyed by ``key_field`` (the vyos resource-module shape) and returns ``before``/``after``
as lists of per-object dicts that carry the identity; a single-object resource takes
``config`` as given and returns dicts.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rdma.fabric.plugins.module_utils.common._common import ToolError
from ansible_collections.rdma.fabric.plugins.module_utils.resources._qos_validate import ValidationError

STATES = ("merged", "replaced", "overridden", "deleted", "gathered", "rendered", "parsed")
# AnsibleModule(required_if=...) of a multi-object module: what each state needs.
REQUIRED_IF = [
    ("state", "merged", ("config",)),
    ("state", "replaced", ("config",)),
    ("state", "gathered", ("config",)),
    ("state", "rendered", ("config",)),
    ("state", "parsed", ("running_config",)),
]
# The states of a multi-object module, and the AnsibleModule() keywords it is made with.
MODULE_STATES = ("merged", "replaced", "gathered", "rendered", "parsed")
MODULE_KWARGS = dict(required_if=REQUIRED_IF, supports_check_mode=True)


def module_argument_spec(config_options, **options):
    """The argument spec of a multi-object module: ``state`` (MODULE_STATES, default
    ``merged``), ``running_config``, the module's own top-level ``options`` and ``config``,
    a list of dicts with ``config_options``."""
    spec = dict(state=dict(type="str", default="merged", choices=list(MODULE_STATES)),
                running_config=dict(type="str"))
    spec.update(options)
    spec["config"] = dict(type="list", elements="dict", options=config_options)
    return spec


def run_module(module, resource):
    """``run_resource`` with the module's ``state``, ``config`` and ``running_config``."""
    params = module.params
    run_resource(module, resource, params["state"], params["config"], params["running_config"])


class Resource(object):
    """What a module supplies. Override the hooks; the engine calls nothing else."""

    name = "resource"           # the tool or object kind, in messages and diff headers
    key_field = "interface"     # identity of each config entry (multi-object resources)
    multi = True
    state = None                # set by run_resource

    def __init__(self, module):
        self.module = module

    # --- want
    def check_key(self, field, value):
        """Validate one identity; return it normalised. Raise ValidationError."""
        return value

    def identity(self, entry, field):
        """The identity of one config entry (hashable), from ``key_field`` by default."""
        return self.check_key("%s.%s" % (field, self.key_field), entry.get(self.key_field))

    def identity_fields(self, key):
        """The identity as it appears in each returned per-object dict."""
        return {self.key_field: key}

    def normalize(self, entry, field):
        """One config entry -> want. ``field`` is how to name it (``config[2]``)."""
        raise NotImplementedError

    def validate_all(self, wants):
        """Cross-object rules over ``{key: want}``; raise ValidationError."""

    # --- have
    def read(self, key, want):
        """The only I/O seam: the state of one object. Raise ToolError (or ValueError)."""
        raise NotImplementedError

    def parse(self, text):
        """Captured text -> the parsed result (``state: parsed``). Raise ValueError."""
        raise NotImplementedError

    def export(self, key, have):
        """A state as returned (before/after/gathered): JSON-able, without internals."""
        return have

    # --- plan
    def plan(self, key, want, have, state):
        """Pure: the commands that take ``have`` to ``want`` (``have`` None: from scratch)."""
        raise NotImplementedError

    def predict(self, key, want, have, state):
        """Pure: the state after the commands (check mode)."""
        raise NotImplementedError

    def leftover(self, key, want, after, state):
        """Commands still needed after the read-back (the device did not keep something)."""
        try:
            return self.plan(key, want, after, state)
        except (ValidationError, ValueError):
            return []

    # --- apply
    def apply(self, key, command):
        """Run one command; raise ToolError on failure."""
        raise NotImplementedError

    def render(self, command):
        """A command as a string for ``commands``."""
        return " ".join(command) if isinstance(command, (list, tuple)) else str(command)

    def header(self, key):
        """Diff header of one object."""
        return "%s %s" % (self.name, key) if self.multi else self.name

    def cleanup(self):
        """Called once before the module exits; returns warnings (e.g. groups not removed)."""
        return []

    def extra_result(self):
        """Module-specific result keys (e.g. kernel_cmdline's reboot_required), added when the
        module exits or fails; the engine's own keys win."""
        return {}


def _message(exc):
    return getattr(exc, "msg", None) or str(exc)


class _Exit(Exception):
    def __init__(self, failed, result):
        super(_Exit, self).__init__(result.get("msg", ""))
        self.failed = failed
        self.result = result


def _fail(**result):
    raise _Exit(True, result)


def _done(**result):
    raise _Exit(False, result)


def _entries(resource, config, state):
    """[(key, want)] from ``config``; ValidationError naming the field and the value."""
    if not resource.multi:
        return [(None, resource.normalize(config, "config"))]
    if config is None:
        config = []
    if not isinstance(config, list):
        raise ValidationError("config=%r: expected a list of dicts, one per %s" % (config, resource.key_field))
    entries, seen = [], {}
    for index, entry in enumerate(config):
        field = "config[%d]" % index
        if not isinstance(entry, dict):
            raise ValidationError("%s=%r: expected a dict with %s" % (field, entry, resource.key_field))
        key = resource.identity(entry, field)
        if key in seen:
            raise ValidationError("%s: %s=%s is given twice (also in %s); give each %s once"
                                  % (field, resource.key_field, key, seen[key], resource.key_field))
        seen[key] = field
        want = resource.normalize(entry, field)
        entries.append((key, want))
    if state == "replaced":
        _replaced_errors(resource, config, entries)
    if state in ("merged", "overridden", "rendered") and not entries:
        resource.module.warn("config is empty: nothing to %s" % ("render" if state == "rendered" else "change"))
    return entries


def _option_defaults(resource):
    """``{suboption: default}`` of the module's ``config`` entries (what AnsibleModule fills in)."""
    spec = getattr(getattr(resource, "module", None), "argument_spec", None)
    options = ((spec or {}).get("config") or {}).get("options") if isinstance(spec, dict) else None
    return dict((name, option.get("default")) for name, option in (options or {}).items()
                if isinstance(option, dict))


def _replaced_errors(resource, config, entries):
    """state=replaced with nothing in it is refused: an empty config would change nothing while
    saying it replaced the state, and an entry that names only its object (every other option
    unset or at its default) would reset that object (a rail interface's addresses, routes and
    rules deleted). ValidationError naming the option."""
    if not entries:
        raise ValidationError("config=%r: state=replaced with an empty config: list each %s with the settings it "
                              "should have (replaced resets what an entry does not give), or use state=merged"
                              % (config, resource.key_field))
    defaults = _option_defaults(resource)
    for index, (key, _want) in enumerate(entries):
        entry = config[index]
        identity = set(resource.identity_fields(key))
        given = [name for name, value in entry.items()
                 if name not in identity and value is not None and not (name in defaults and value == defaults[name])]
        if not given:
            named = " ".join("%s=%s" % (k, v) for k, v in sorted(resource.identity_fields(key).items()) if v is not None)
            raise ValidationError("config[%d]: state=replaced with nothing but %s: it would reset every setting of "
                                  "that %s; give the settings it should have, or use state=merged"
                                  % (index, named, resource.key_field))


def _shape(resource, keys, states):
    """before/after as returned: a list of per-object dicts, or the single object's dict."""
    if not resource.multi:
        return states.get(None)
    out = []
    for key in keys:
        value = states.get(key)
        item = resource.identity_fields(key)
        if isinstance(value, dict):
            item.update(value)
        else:
            item["state"] = value
        out.append(item)
    return out


def run_resource(module, resource, state, config=None, running_config=None):
    """The lifecycle; ends the module with exit_json or fail_json. ``resource.state`` is
    set first, so that ``normalize`` knows what the entries are for (gathered entries
    only name the objects)."""
    resource.state = state
    try:
        _run(module, resource, state, config, running_config)
    except _Exit as end:
        result = end.result
        for key, value in (resource.extra_result() or {}).items():
            result.setdefault(key, value)
        warnings = resource.cleanup() or []
        for warning in warnings:
            module.warn(warning)
        if end.failed:
            module.fail_json(**result)
        module.exit_json(**result)


def check_resource(module, resource, state, config=None):
    """The lifecycle in check mode, returning ``(failed, result)`` instead of ending the
    module: what a drift check runs for each resource, several in one module call."""
    return _returned(module, resource, state, config, check=True)


def apply_resource(module, resource, state, config=None):
    """The whole lifecycle (apply, read back; a failure midway reported with what was applied,
    the command that failed, what was not attempted and the state read back; nothing written
    in ``module.check_mode``), returning ``(failed, result)`` instead of ending the module:
    what ``state_check`` with ``apply`` runs for each resource of a drifted area."""
    return _returned(module, resource, state, config, check=False)


def _returned(module, resource, state, config, check):
    """``_run``'s end as ``(failed, result)``, with the resource's extra result keys and its
    cleanup's warnings (``result.warnings``)."""
    resource.state = state
    failed, result = True, {"msg": "%s: the engine ended without a result" % resource.name}
    try:
        _run(module, resource, state, config, None, check=check)
    except _Exit as end:
        failed, result = end.failed, end.result
        for key, value in (resource.extra_result() or {}).items():
            result.setdefault(key, value)
    finally:
        warnings = resource.cleanup() or []
    if warnings:
        result.setdefault("warnings", []).extend(warnings)
    return failed, result


def _run(module, resource, state, config, running_config, check=False):
    if state == "parsed":
        try:
            parsed = resource.parse(running_config)
        except (ValidationError, ValueError) as exc:
            msg = _message(exc)
            _fail(msg=msg if msg.startswith("running_config") else "running_config: %s" % msg)
        _done(changed=False, parsed=parsed)

    try:
        entries = _entries(resource, config, state)
        wants = dict(entries)
        if state != "gathered":
            resource.validate_all(wants)
    except (ValidationError, ValueError) as exc:
        _fail(msg=_message(exc))
    keys = [key for key, _want in entries]

    if state == "rendered":
        rendered = []
        try:
            for key in keys:
                rendered.extend(resource.render(c) for c in resource.plan(key, wants[key], None, "merged"))
        except (ValidationError, ValueError) as exc:
            _fail(msg=_message(exc))
        _done(changed=False, rendered=rendered)

    haves = {}
    for key in keys:
        try:
            haves[key] = resource.read(key, wants[key])
        except (ToolError, ValueError) as exc:
            result = exc.as_result() if isinstance(exc, ToolError) else {"msg": _message(exc)}
            if resource.multi:
                named = ["%s=%s" % (k, v) for k, v in resource.identity_fields(key).items() if v is not None]
                if not any(result["msg"].startswith(n) for n in named):
                    result["msg"] = "%s: %s" % (" ".join(named), result["msg"])
            _fail(**result)
    before = dict((key, resource.export(key, haves[key])) for key in keys)

    if state == "gathered":
        _done(changed=False, gathered=_shape(resource, keys, before))

    plans = {}
    for key in keys:
        try:
            plans[key] = resource.plan(key, wants[key], haves[key], state)
        except (ValidationError, ValueError) as exc:
            _fail(msg=_message(exc), before=_shape(resource, keys, before), commands=[])
    commands = [resource.render(c) for key in keys for c in plans[key]]
    after = dict(before)
    result = {"commands": commands}

    if check or module.check_mode:
        for key in keys:
            if plans[key]:
                after[key] = resource.export(key, resource.predict(key, wants[key], haves[key], state))
    else:
        failure = _apply(resource, keys, plans)
        written = [key for key in keys if plans[key] and (failure is None or key in failure["touched"])]
        read_errors, read_back = [], {}
        for key in written:
            try:
                read_back[key] = resource.read(key, wants[key])
                after[key] = resource.export(key, read_back[key])
            except (ToolError, ValueError) as exc:
                after[key] = None
                name = key if resource.multi else resource.name
                read_errors.append("reading %s back failed: %s" % (name, _message(exc)))
        if failure is not None:
            error = failure["error"]
            msg = ("%s failed midway%s. Applied: %s. Failed: %s (%s). Not attempted: %s."
                   % (resource.name, " on %s" % failure["key"] if resource.multi else "",
                      "; ".join(failure["applied"]) or "none", failure["failed"], _message(error),
                      "; ".join(failure["not_attempted"]) or "none"))
            if read_errors:
                msg += " " + "; ".join(read_errors) + "."
            shaped_after = _shape(resource, keys, after)
            msg += " State read back: %s" % (shaped_after,)
            extra = error.as_result() if isinstance(error, ToolError) else {}
            extra.pop("msg", None)
            if resource.multi:
                # the object the failure happened on, as its identity (what a rollback restores)
                extra["failed_on"] = dict((k, v) for k, v in resource.identity_fields(failure["key"]).items()
                                          if v is not None)
            _fail(msg=msg, changed=any(before[k] != after[k] for k in keys),
                  applied=failure["applied"], failed_command=failure["failed"],
                  not_attempted=failure["not_attempted"], before=_shape(resource, keys, before),
                  after=shaped_after, commands=commands, **extra)
        if read_errors:
            _fail(msg="all commands ran but " + "; ".join(read_errors), changed=True,
                  before=_shape(resource, keys, before), after=_shape(resource, keys, after), commands=commands)
        for key in written:
            leftover = resource.leftover(key, wants[key], read_back[key], state)
            if leftover:
                module.warn("%s did not keep everything: still needed %s"
                            % (key if resource.multi else resource.name,
                               "; ".join(resource.render(c) for c in leftover)))

    result["changed"] = any(before[k] != after[k] for k in keys)
    result["before"] = _shape(resource, keys, before)
    result["after"] = _shape(resource, keys, after)
    if module._diff:
        diffs = [dict(before=before[k], after=after[k],
                      before_header="%s (before)" % resource.header(k),
                      after_header="%s (after)" % resource.header(k))
                 for k in keys if before[k] != after[k]]
        if diffs:
            result["diff"] = diffs if resource.multi else diffs[0]
    _done(**result)


def _apply(resource, keys, plans):
    """Apply every object's commands in order; None, or a dict describing the failure."""
    applied = []
    pending = [(key, command) for key in keys for command in plans[key]]
    touched = []
    for index, (key, command) in enumerate(pending):
        if key not in touched:
            touched.append(key)
        try:
            resource.apply(key, command)
        except (ToolError, ValueError) as exc:
            return {"key": key, "applied": applied, "failed": resource.render(command), "error": exc,
                    "not_attempted": [resource.render(c) for _k, c in pending[index + 1:]], "touched": touched}
        applied.append(resource.render(command))
    return None
