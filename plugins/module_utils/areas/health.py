# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The health area: the fabric health checks of a running GPU node (rdma_health reads and
judges; module_utils/reports/_health.py is the judge) and the periodic check on the node (a runner,
its config, a oneshot service and its timer, with the module_utils the runner imports).
Everything the rdma.fabric.health role decides, as pure functions with no host I/O:

- ``settings(variables)``: the role's settings from its variables (every option of
  ``roles/health/meta/argument_specs.yml``), plus the host's name and ``rdma_fabric_environment``;
- ``config_errors(settings)``: every problem, each naming the ``health_*`` variable and the value;
- ``checks(settings)``: the checks rdma_health and the timer judge with;
- ``spec(variables, render, node_module_utils)``: the settings, the checks, the rdma_health
  arguments and the timer's files (the units rendered from the role's templates, the runner's
  config, the module_utils files the controller read for ``NODE_ENTRY``);
- ``plan(facts, spec)``: the timer's ``node_files`` call (``requests``); the same on every node.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import math
import posixpath
import re


from ansible_collections.rdma.fabric.plugins.module_utils.areas import _spec
from ansible_collections.rdma.fabric.plugins.module_utils.reports import _health
from ansible_collections.rdma.fabric.plugins.module_utils.common._common import PlanError
from ansible_collections.rdma.fabric.plugins.module_utils.areas._settings import role_settings

NAME = "health"
PREFIX = "health_"
# plan() reads no fact of the node: the timer's files are the same on every node
FACTS = ()
PLAN_FACTS = None
OTHER_VARIABLES = ("inventory_hostname", "rdma_fabric_environment")
FLAGS = ("check_sm", "check_gdr", "check_lossless", "timer", "timer_drift")
# the periodic check on the node: where the runner, its config and the module_utils go
TIMER_DIR = "/usr/local/lib/rdma-fabric"
TIMER_CONFIG = "/etc/rdma-fabric/health.json"
NODE_ENTRY = "reports/_health_timer.py"
TIMER_FILES = (
    (TIMER_DIR + "/rdma-fabric-health", "health/rdma-fabric-health.j2", "0644"),
    ("/etc/systemd/system/rdma-fabric-health.service", "health/rdma-fabric-health.service.j2", None),
    ("/etc/systemd/system/rdma-fabric-health.timer", "health/rdma-fabric-health.timer.j2", None),
)
TIMER_UNIT = "rdma-fabric-health.timer"
# the node's drift check after each health run (_drift_timer): the specs the roles left
# (_spec.SPEC_DIR) and its textfile, next to health_timer_textfile
DRIFT_SPEC_DIR = _spec.SPEC_DIR
DRIFT_TEXTFILE = "rdma_fabric_node_drift.prom"
# The role's defaults of its limits dictionaries (roles/health/defaults/main.yml): a value the
# inventory gives is merged over them, unless it holds ``replace: true`` (then it is the whole
# set: a threshold it leaves out is not judged, a GPU model it leaves out has no expectation).
DEFAULT_THRESHOLDS = {"max_pause_per_s": 1000, "max_cnp_per_s": 20000, "max_discards_per_s": 0,
                      "max_symbol_errors_per_s": 0, "max_flaps": 0, "gid_occupancy_max": 0.9}
DEFAULT_GPU_MODELS = {"H100": {"ports": 8, "min_rate_gbps": 400}, "H200": {"ports": 8, "min_rate_gbps": 400},
                      "B200": {"ports": 8, "min_rate_gbps": 400}}
# the limits dictionaries among health_checks' keys (merged over the judge's own, or the ones above)
CHECKS_LIMITS = _health.LIMIT_DICTS


def settings(variables):
    """The role's settings (keys without the ``health_`` prefix), the host and the environment."""
    out = role_settings(variables, PREFIX, FLAGS)
    out["host"] = variables.get("inventory_hostname")
    out["environment"] = variables.get("rdma_fabric_environment") or {}
    return out


# systemd time span units (systemd.time(7)); a span is one or more NUMBER[UNIT]
_SPAN_UNIT = r"(?:us|usec|ms|msec|s|sec|second|seconds|m|min|minute|minutes|h|hr|hour|hours|d|day|days|w|week|weeks" \
             r"|M|month|months|y|year|years)?"
_SPAN = re.compile(r"\s*(?:[0-9]+(?:\.[0-9]+)?\s*%s\s*)+" % _SPAN_UNIT)
# seconds per unit (systemd.time(7): no unit is seconds, m minutes, M months of 30.44 days, y 365.25 days)
_SPAN_SECONDS = {"us": 1e-6, "usec": 1e-6, "ms": 1e-3, "msec": 1e-3, "": 1, "s": 1, "sec": 1, "second": 1, "seconds": 1,
                 "m": 60, "min": 60, "minute": 60, "minutes": 60, "h": 3600, "hr": 3600, "hour": 3600, "hours": 3600,
                 "d": 86400, "day": 86400, "days": 86400, "w": 604800, "week": 604800, "weeks": 604800,
                 "M": 2629800, "month": 2629800, "months": 2629800, "y": 31557600, "year": 31557600, "years": 31557600}


def span_seconds(span):
    """The seconds of a systemd time span (``1h 30min``, ``5min``, ``90``); None if it is not one."""
    if isinstance(span, bool) or not isinstance(span, (str, int)) or not _SPAN.fullmatch(str(span)):
        return None
    return sum(float(number) * _SPAN_SECONDS[unit]
               for number, unit in re.findall(r"([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)", str(span)))


def _limits(value, defaults):
    """``(limits, replace)``: ``value`` (a dict, its ``replace`` key taken out) merged over
    ``defaults``, or itself with ``replace: true``; ``(None, None)`` when it is no dict or
    its ``replace`` is no boolean (config_errors names it)."""
    if not isinstance(value, dict):
        return None, None
    given = dict(value)
    replace = given.pop(_health.REPLACE, False)
    if not isinstance(replace, bool):
        return None, None
    if replace:
        return given, True
    merged = dict(defaults or {})
    merged.update(given)
    return merged, False


def _replace_errors(config, names):
    """A ``replace`` key that is no boolean, named (``replace: yes`` from an extra var is text)."""
    errors = []
    for variable in names:
        value = config.get(variable)
        if isinstance(value, dict) and _health.REPLACE in value and not isinstance(value[_health.REPLACE], bool):
            errors.append("%s.%s=%r: true (the dict is the whole set) or false (merged over the defaults)"
                          % (variable, _health.REPLACE, value[_health.REPLACE]))
    return errors


def _checks_errors(config, names):
    """The judge's own checks (``_health.merge_checks``) of each variable in ``names``
    (variable: check key, or None for a dict of checks), the message naming the variable."""
    errors = []
    for variable, key in names:
        value = config.get(variable)
        if isinstance(value, dict) and key in (None,) + CHECKS_LIMITS and variable != "health_checks":
            value = dict((k, v) for k, v in value.items() if k != _health.REPLACE)
        try:
            if key is None:
                _health.merge_checks(value, variable)
            else:
                _health.merge_checks({key: value})
        except _health.HealthError as exc:
            text = str(exc)
            errors.append(variable + text[len(key):] if key and text.startswith(key) else text)
    return errors


# node_exporter's textfile collector reads only the files named *.prom in its directory
_TEXTFILE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.:-]*\.prom")


def textfile_errors(variable, value, drift=True):
    """A Prometheus textfile path node_exporter's textfile collector reads: absolute, its
    name ``*.prom`` (any other name is never read: the alerts would see no metric at all, and
    a stale one never), not the drift check's own file next to it (``health_timer_drift``)."""
    if not isinstance(value, str) or not value.startswith("/") or any(c in value for c in "\r\n\x00"):
        return ["%s=%r: expected an absolute path of a *.prom file in node_exporter's textfile directory"
                % (variable, value)]
    directory, name = posixpath.split(value)
    if posixpath.normpath(value) != value or not directory:
        return ["%s=%r: expected a plain absolute path (no '.', '..', '//' or trailing '/')" % (variable, value)]
    if not _TEXTFILE_NAME.fullmatch(name):
        return ["%s=%r: node_exporter's textfile collector reads only *.prom files (letters, digits, '_', '.', "
                "'-' and ':'): the name %r would never be read" % (variable, value, name)]
    if drift and name == DRIFT_TEXTFILE:
        return ["%s=%r: %s is the drift check's textfile next to it (health_timer_drift): use another name"
                % (variable, value, DRIFT_TEXTFILE)]
    return []


def _path_errors(config, names, absolute=True, optional=False):
    errors = []
    for variable in names:
        value = config.get(variable)
        if optional and value in (None, ""):
            continue
        if not isinstance(value, str) or not value or any(c in value for c in "\r\n\x00") \
                or (absolute and not value.startswith("/")):
            errors.append("%s=%r: expected %s" % (variable, value, "an absolute path" if absolute else "a path"))
    return errors


def config_errors(settings):
    """Every problem of the role's settings, one message each naming the variable and the
    value: rdma_health's own checks (seconds, the checks the judge takes), the paths and the
    timer's period."""
    if not isinstance(settings, dict):
        raise PlanError("health: expected the role's settings dict, got %s" % type(settings).__name__)
    config = dict((PREFIX + key, value) for key, value in settings.items())
    errors = []
    seconds = {}
    for variable in ("health_interval", "health_flap_window", "health_boot_grace"):
        value = config.get(variable)
        try:    # an extra var (-e) is text
            number = None if isinstance(value, bool) else float(value)
        except (TypeError, ValueError):
            number = None
        if number is None or math.isnan(number) or math.isinf(number) or number < 0:
            errors.append("%s=%r: a number of seconds >= 0" % (variable, value))
        elif number == 0 and variable == "health_interval":
            # two counter samples 0 s apart: every rate (pause, CNP, discards, symbol errors) is unjudged
            errors.append("health_interval=%r: the seconds between the two counter samples must be > 0 (0 would "
                          "judge no rate: pause frames, CNPs, discards, symbol errors)" % (value,))
        else:
            seconds[variable] = number
    errors += _path_errors(config, ("health_state_file",))
    errors += textfile_errors("health_timer_textfile", config.get("health_timer_textfile"),
                              drift=config.get("health_timer_drift", True))
    errors += _path_errors(config, ("health_nccl_log",), optional=True)
    errors += _path_errors(config, ("health_report_dir",), absolute=False)
    errors += _path_errors(config, ("health_bundle_dir",), absolute=False, optional=True)
    every = config.get("health_timer_every")
    period = span_seconds(every)
    if period is None:
        errors.append("health_timer_every=%r: expected a systemd time span such as 1h, 30min or 1h 30min" % (every,))
    elif period <= 0:
        # OnUnitActiveSec=0 / OnBootSec=0: the timer never runs again after its first run
        errors.append("health_timer_every=%r: the timer's period must be longer than 0 s (a period of 0 never "
                      "runs the periodic check again)" % (every,))
    elif "health_interval" in seconds and period < seconds["health_interval"]:
        errors.append("health_timer_every=%r (%g s) is shorter than one check (health_interval=%r s between "
                      "the counter samples): give a longer period" % (every, period, config.get("health_interval")))
    errors += _replace_errors(config, ("health_thresholds", "health_gpu_models", "health_nic_models"))
    errors += _checks_errors(config, (
        ("health_thresholds", None), ("health_gpu_models", "gpu_models"), ("health_nic_models", "nic_models"),
        ("health_ignore_devices", "ignore_devices"), ("health_sm_priority", "sm_priority"),
        ("health_dmabuf_enable", "dmabuf_enable"), ("health_checks", None)))
    return errors


def checks(settings):
    """The checks rdma_health and the timer judge with: the thresholds, the model data and
    the switches, then ``health_checks`` over them."""
    thresholds, replace = _limits(settings.get("thresholds"), DEFAULT_THRESHOLDS)
    extra = settings.get("checks")
    out = dict(thresholds or {})     # a bad value: config_errors names it
    if replace:
        # the thresholds given are the whole set: the others are not judged (null), as the user said
        out.update((key, None) for key in DEFAULT_THRESHOLDS if key not in out)
    gpu_models = _limits(settings.get("gpu_models"), DEFAULT_GPU_MODELS)[0]
    nic_models = _limits(settings.get("nic_models"), {})[0]
    out.update(gpu_models=gpu_models if gpu_models is not None else settings.get("gpu_models"),
               nic_models=nic_models if nic_models is not None else settings.get("nic_models"),
               ignore_devices=settings.get("ignore_devices"), sm=settings["check_sm"],
               sm_priority=settings.get("sm_priority"), gdr=settings["check_gdr"],
               lossless=settings["check_lossless"], dmabuf_enable=settings.get("dmabuf_enable"))
    for key, value in (extra if isinstance(extra, dict) else {}).items():
        if key in ("gpu_models", "nic_models") and isinstance(out.get(key), dict):
            # health_checks' models merge over health_gpu_models / health_nic_models, unless replace
            merged = _limits(value, out[key])[0]
            out[key] = merged if merged is not None else value
        else:
            out[key] = value    # the judge merges counter_limits, ethtool_limits over its own
    return out


def read_args(settings):
    """rdma_health's arguments on a live node (the role adds ``bundle`` for a bundle run)."""
    args = {"interval": settings["interval"], "state_file": settings["state_file"],
            "flap_window": settings["flap_window"], "boot_grace": settings["boot_grace"],
            "sm": settings["check_sm"], "gdr": settings["check_gdr"], "lossless": settings["check_lossless"],
            "host": settings["host"], "checks": checks(settings)}
    if settings.get("nccl_log") and not settings.get("bundle_dir"):
        args["nccl_log"] = settings["nccl_log"]
    return args


def drift_config(settings):
    """The timer's ``drift`` entry (``_drift_timer``), None with ``health_timer_drift: false``."""
    if not settings.get("timer_drift", True) or not isinstance(settings.get("timer_textfile"), str):
        return None     # a textfile that is no path: config_errors names it
    textfile = posixpath.join(posixpath.dirname(settings["timer_textfile"]), DRIFT_TEXTFILE)
    return {"spec_dir": DRIFT_SPEC_DIR, "textfile": textfile}


def timer_config(settings):
    """The runner's JSON config (TIMER_CONFIG): what it hands _health_timer.run."""
    config = {"host": settings["host"], "interval": settings["interval"], "state_file": settings["state_file"],
              "flap_window": settings["flap_window"], "boot_grace": settings["boot_grace"],
              "sm": settings["check_sm"], "gdr": settings["check_gdr"], "lossless": settings["check_lossless"],
              "nccl_log": settings.get("nccl_log"), "checks": checks(settings), "textfile": settings["timer_textfile"]}
    period = span_seconds(settings.get("timer_every"))
    if period:
        # exported by the timer: the alert rules judge staleness in periods, whatever the period
        config["period_seconds"] = period
    drift = drift_config(settings)
    if drift:
        config["drift"] = drift
    return json.dumps(config, indent=4, sort_keys=True, ensure_ascii=False)


def spec(variables, render, node_module_utils=()):
    """What the controller hands the node: the settings, the checks, rdma_health's arguments
    and the timer's files (rendered with ``render(template, template_vars)``;
    ``node_module_utils``: ``[{path, content}]`` under the module_utils package, relative,
    the files NODE_ENTRY imports, as the controller read them)."""
    current = settings(variables)
    template_vars = {"__health_timer_dir": TIMER_DIR, "__health_timer_config": TIMER_CONFIG}
    files = []
    for path, term, mode in TIMER_FILES:
        entry = {"path": path, "content": render(term, template_vars)}
        if mode:
            entry["mode"] = mode
        files.append(entry)
    files.append({"path": TIMER_CONFIG, "content": timer_config(current)})
    package = TIMER_DIR + "/ansible_collections/rdma/fabric/plugins/module_utils/"
    files.extend({"path": package + f["path"], "content": f["content"], "mode": "0644"} for f in node_module_utils)
    return {"settings": current, "checks": checks(current), "read": read_args(current), "files": files}


def plan(facts, spec):
    """The timer's files and unit (``timer``, a node_files config) and ``requests``: the
    same on every node (``facts`` is not read)."""
    enabled = spec["settings"]["timer"]
    timer = {"files": list(spec["files"]), "units": [{"name": TIMER_UNIT, "enabled": enabled, "active": enabled}]}
    return {"timer": timer, "requests": [{"resource": "node_files", "name": "health timer", "config": timer}]}
