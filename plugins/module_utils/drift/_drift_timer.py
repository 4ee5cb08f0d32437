# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The drift check on the node, without Ansible (the health role's timer runs it after the
health check): the spec each role left on the node (``areas/_spec``, ``/etc/rdma-fabric/spec/
AREA.json``), checked with the drift check's own code (``_state_check.gather_facts`` and
``check_areas``: the same readers, planners, modules in check mode and records), written as a
Prometheus textfile. Nothing on the node is changed: every resource runs in check mode.

The controller's drift check stays the authority; this says, within one timer period, which
areas drifted against which spec version.

Config (the ``drift`` entry of the health timer's JSON): ``{spec_dir, textfile}``; the host is
the health config's ``host``. Standard library only (``ansible.module_utils.parsing.convert_bool``,
which ``_state_check`` imports, is provided here when Ansible is not installed).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import socket
import sys
import time
import types

from ansible_collections.rdma.fabric.plugins.module_utils.areas import _spec
from ansible_collections.rdma.fabric.plugins.module_utils.common import _fileio, _secrets

TEXTFILE = "rdma_fabric_node_drift.prom"
SPEC_READ_MAX = 16 * _fileio.MiB

# ansible-core's convert_bool.boolean (BOOLEANS_TRUE/FALSE), for a node without Ansible
_TRUE = frozenset(("y", "yes", "on", "1", "true", "t", 1, 1.0, True))
_FALSE = frozenset(("n", "no", "off", "0", "false", "f", 0, 0.0, False))


def _boolean(value, strict=True):
    if isinstance(value, bool):
        return value
    normalized = value
    if isinstance(value, bytes):
        normalized = value.decode("utf-8", "surrogateescape").lower().strip()
    elif isinstance(value, str):
        normalized = value.lower().strip()
    if normalized in _TRUE:
        return True
    if normalized in _FALSE or not strict:
        return False
    raise TypeError("The value '%s' is not a valid boolean.  Valid booleans include: %s"
                    % (value, ", ".join(repr(i) for i in sorted(_TRUE | _FALSE, key=repr))))


def _provide_convert_bool():
    """``ansible.module_utils.parsing.convert_bool`` for the imports of ``_state_check`` and the
    area objects: Ansible's own when installed, else ``_boolean`` (the same sets)."""
    try:
        import ansible.module_utils.parsing.convert_bool  # noqa: F401 pylint: disable=unused-import
        return
    except ImportError:
        pass
    names = ("ansible", "ansible.module_utils", "ansible.module_utils.parsing",
             "ansible.module_utils.parsing.convert_bool")
    for name in names:
        if name not in sys.modules:
            module = types.ModuleType(name)
            module.__path__ = []
            sys.modules[name] = module
    sys.modules[names[-1]].boolean = _boolean
    sys.modules[names[-1]].BOOLEANS_TRUE = _TRUE
    sys.modules[names[-1]].BOOLEANS_FALSE = _FALSE


def check_module():
    """The health timer's NodeModule in check mode: every resource reads and predicts only."""
    from ansible_collections.rdma.fabric.plugins.module_utils.common._node_module import NodeModule

    class CheckModule(NodeModule):
        check_mode = True
        _diff = False

        def run_command(self, argv, environ_update=None, check_rc=False, **kwargs):
            return NodeModule.run_command(self, argv, environ_update=environ_update, check_rc=check_rc)

    return CheckModule()


def timer_areas():
    """The areas this check reads a spec of (areas/_registry: ``timer``), in the registry's order."""
    _provide_convert_bool()     # the area objects import it
    from ansible_collections.rdma.fabric.plugins.module_utils.areas import _registry
    return _registry.names(timer=True)


def read_specs(spec_dir):
    """``(specs, versions, errors)`` of the spec files in ``spec_dir``: ``{area: spec}``,
    ``{area: (spec_version, collection_version)}``, ``{area: why}`` for a file that is there but
    cannot be used (a symlink, unreadable, garbled, too large). No file: the area's role did
    not run here (no series)."""
    specs, versions, errors = {}, {}, {}
    for area in timer_areas():
        path = _spec.path(area, spec_dir)
        try:
            text = _fileio.read_text(path, SPEC_READ_MAX, what="drift spec")
        except (IOError, OSError) as exc:
            if getattr(exc, "errno", None) == errno.ENOENT:
                continue
            errors[area] = str(exc) or "%s: %s" % (path, exc)
            continue
        try:
            spec, spec_version, collection_version = _spec.load(text, area)
        except ValueError as exc:
            errors[area] = "%s: %s" % (path, exc)
            continue
        specs[area] = spec
        versions[area] = (published_version(spec), collection_version)
    return specs, versions, errors


def published_version(spec):
    """The spec version the 0644 textfile publishes: the hash of the spec with every secret value
    removed (``_secrets.redact``: opensm's ``sm_key``, ``sa_key``, ``m_key``, ``cc_key`` and any
    other secret-named setting, as dict keys or inside opensm.conf's text). Hashing after the
    removal, not keying the hash with a node-local secret, was chosen: a published hash of a
    spec holding a key is an offline guessing oracle for a weak key (issue 40), and a hash of
    the redacted spec gives an attacker nothing to guess against while staying comparable across
    nodes and with the controller's ``_spec.version`` of the same redacted spec. A spec
    holding no secret publishes its file's own ``spec_version``; a key rotation alone does not
    change the published value (the file's full version is still checked on load)."""
    return _spec.version(_secrets.redact(spec))


def _is_error(record):
    """A record that says the check could not read, not that a setting differs."""
    return record.get("setting") == "read" and record.get("expected") == "readable"


def check(config, module=None, host=None):
    """One run: ``(records, errors, versions, checked)``. ``errors``: ``{area: [why]}`` for
    every area that could not be (fully) checked; ``checked``: the areas checked."""
    host = host or config.get("host") or socket.gethostname()
    specs, versions, spec_errors = read_specs(config.get("spec_dir") or _spec.SPEC_DIR)
    errors = dict((area, [why]) for area, why in spec_errors.items())
    if not specs:
        return [], errors, versions, []
    _provide_convert_bool()
    from ansible_collections.rdma.fabric.plugins.module_utils.drift import _drift_areas, _state_check
    module = module or check_module()
    try:
        facts, facts_errors = _state_check.gather_facts(module, _drift_areas.readers(specs))
        result = _state_check.check_areas(module, host, specs, facts, facts_errors)
    except Exception as exc:        # the health textfile is written anyway; this run says why
        why = "%s: %s" % (type(exc).__name__, getattr(exc, "msg", None) or exc)
        for area in specs:
            errors.setdefault(area, []).append(why)
        return [], errors, versions, []
    records = []
    for record in result["drift_records"]:
        if record.get("area") == "host":        # a reader failed: no area was checked
            for area in specs:
                errors.setdefault(area, []).append(str(record.get("actual")))
        elif _is_error(record):
            errors.setdefault(record.get("area"), []).append("%s: %s" % (record.get("object"), record.get("actual")))
        else:
            records.append(record)
    checked = [area for area in result.get("checked") or [] if area in specs]
    return records, errors, versions, checked


def _label(value):
    """A Prometheus label value: the report writers' one escaping (reports/_report.label_value)."""
    from ansible_collections.rdma.fabric.plugins.module_utils.reports._report import label_value
    return label_value(value)


def prometheus(host, records, errors, versions, checked, now, duration=None):
    """The textfile: per area with a spec, the drifted settings, the spec version and the
    errors; the run's time (and duration). Only counts and versions: no setting's value."""
    counts = dict((area, 0) for area in checked)
    for record in records:
        if record.get("area") in counts:
            counts[record["area"]] += 1
    unchecked = [area for area in checked if errors.get(area) and not counts[area]]
    h = _label(host)
    lines = [
        "# HELP rdma_fabric_node_drift_settings Settings that differ from the spec the role left on the node "
        "(the node's drift check; 0: none).",
        "# TYPE rdma_fabric_node_drift_settings gauge",
    ]
    lines += ['rdma_fabric_node_drift_settings{host="%s",area="%s"} %d' % (h, _label(area), counts[area])
              for area in sorted(counts) if area not in unchecked]
    lines += [
        "# HELP rdma_fabric_node_drift_spec_info The spec each area was checked against (its version and the "
        "collection version that wrote it).",
        "# TYPE rdma_fabric_node_drift_spec_info gauge",
    ]
    lines += ['rdma_fabric_node_drift_spec_info{host="%s",area="%s",spec_version="%s",collection_version="%s"} 1'
              % (h, _label(area), _label(versions[area][0]), _label(versions[area][1])) for area in sorted(versions)]
    lines += [
        "# HELP rdma_fabric_node_drift_check_errors Reasons an area could not be (fully) checked on the node "
        "(a spec file unreadable or garbled, a reader or a resource read failed; 0: none).",
        "# TYPE rdma_fabric_node_drift_check_errors gauge",
    ]
    areas = sorted(set(checked) | set(versions) | set(errors))
    lines += ['rdma_fabric_node_drift_check_errors{host="%s",area="%s"} %d' % (h, _label(area), len(errors.get(area) or []))
              for area in areas]
    lines += [
        "# HELP rdma_fabric_node_drift_last_run_timestamp_seconds When the node's drift check last ran.",
        "# TYPE rdma_fabric_node_drift_last_run_timestamp_seconds gauge",
        'rdma_fabric_node_drift_last_run_timestamp_seconds{host="%s"} %.3f' % (h, now),
    ]
    if duration is not None:
        lines += [
            "# HELP rdma_fabric_node_drift_run_duration_seconds How long the node's drift check took.",
            "# TYPE rdma_fabric_node_drift_run_duration_seconds gauge",
            'rdma_fabric_node_drift_run_duration_seconds{host="%s"} %.3f' % (h, duration),
        ]
    return "\n".join(lines) + "\n"


def run(config, module=None, host=None):
    """One run: ``(records, text)``; ``records`` the drifted settings (the drift check's records)
    and the errors as ``{host, area, object: "", setting: "check", expected: "checked", actual}``."""
    host = host or config.get("host") or socket.gethostname()
    start = time.time()
    records, errors, versions, checked = check(config, module, host)
    now = time.time()
    text = prometheus(host, records, errors, versions, checked, now, now - start)
    failures = [{"host": host, "area": area, "object": "", "setting": "check", "expected": "checked", "actual": why}
                for area in sorted(errors) for why in errors[area]]
    return records + failures, text


def main_block(config, host=None):
    """The health timer's drift step (``_health_timer.main``): run, write the textfile (0644,
    node_exporter reads it), one line per drifted setting on stderr (no values: a spec may hold
    a key). Returns 0, or 1 when the textfile could not be written."""
    try:
        records, text = run(config, host=host)
    except Exception as exc:        # never stops the health check's own result
        sys.stderr.write("rdma-fabric-drift: %s: %s\n" % (type(exc).__name__, exc))
        return 1
    try:
        _fileio.write_textfile(config.get("textfile"), text)
    except (IOError, OSError, ValueError) as exc:
        sys.stderr.write("rdma-fabric-drift: %s\n" % exc)
        return 1
    for record in records:
        if record["setting"] == "check":
            sys.stderr.write("drift %s: not checked: %s\n" % (record["area"], record["actual"]))
        else:
            sys.stderr.write("drift %s %s %s\n" % (record["area"], record["object"], record["setting"]))
    return 0
