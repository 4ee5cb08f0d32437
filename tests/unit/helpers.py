# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Shared unit-test helpers: run a module's main() and check its DOCUMENTATION against its argument_spec.

Import as ``from ansible_collections.rdma.fabric.tests.unit import helpers`` (tests/unit/conftest.py
makes that path work under plain pytest as well as under ansible-test).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest
import yaml

from ansible.module_utils import basic
try:
    from ansible.module_utils.testing import patch_module_args
except ImportError:   # ansible-core < 2.19: what that helper does there, for the same modules
    import contextlib
    from unittest import mock

    @contextlib.contextmanager
    def patch_module_args(args=None):
        """Expose ``args`` to the AnsibleModule instances created within this context."""
        payload = json.dumps({"ANSIBLE_MODULE_ARGS": args or {}}).encode()
        with mock.patch.object(basic, "_ANSIBLE_ARGS", payload):
            yield


class ExitJson(Exception):
    """exit_json() was called; args[0] is the result."""


class FailJson(Exception):
    """fail_json() was called; args[0] is the result."""


def _exit_json(self, **kwargs):
    raise ExitJson(kwargs)


def _fail_json(self, **kwargs):
    raise FailJson(kwargs)


def _no_command(self, *args, **kwargs):
    raise AssertionError("no command may run")


def run_module(monkeypatch, main, args, check_mode=False, diff=False, run_command=None, bin_dir=None):
    """Run ``main()`` with ``args``; returns ("exit" | "fail", result).

    run_command: fake ``(argv, **kwargs) -> (rc, stdout, stderr)``; None makes any command an error.
    bin_dir: when given, get_bin_path(name) answers ``bin_dir + name``.
    """
    monkeypatch.setattr(basic.AnsibleModule, "exit_json", _exit_json)
    monkeypatch.setattr(basic.AnsibleModule, "fail_json", _fail_json)
    if run_command is None:
        monkeypatch.setattr(basic.AnsibleModule, "run_command", _no_command)
    else:
        monkeypatch.setattr(basic.AnsibleModule, "run_command", lambda self, argv, **kw: run_command(argv, **kw))
    if bin_dir is not None:
        monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", lambda self, name, *a, **k: bin_dir + name)
    args = dict(args)
    if check_mode:
        args["_ansible_check_mode"] = True
    if diff:
        args["_ansible_diff"] = True
    with patch_module_args(args):
        try:
            main()
        except ExitJson as exc:
            return "exit", exc.args[0]
        except FailJson as exc:
            return "fail", exc.args[0]
    raise AssertionError("module returned without exit_json/fail_json")


def run_main_json(capsys, main, args):
    """Run ``main()`` unpatched; returns its exit code and the JSON result it printed."""
    with patch_module_args(args):
        with pytest.raises(SystemExit) as exc:
            main()
    return exc.value.code, json.loads(capsys.readouterr().out)


def _refuse(*args, **kwargs):
    raise AssertionError("host touched")


def forbid_host(monkeypatch):
    """For captured mode: running a command or looking up a tool fails the test; SYSFS_PATH points nowhere."""
    monkeypatch.setattr(basic.AnsibleModule, "run_command", _refuse)
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", _refuse)
    monkeypatch.setenv("SYSFS_PATH", "/nonexistent")


def _options_match_spec(doc_options, spec, path):
    assert set(doc_options) == set(spec), "%s: %s vs %s" % (path, sorted(doc_options), sorted(spec))
    for name, doc in doc_options.items():
        arg = spec[name]
        where = "%s.%s" % (path, name)
        for key, default in (("type", "str"), ("elements", None), ("choices", None), ("default", None)):
            assert doc.get(key, default) == arg.get(key, default), "%s.%s" % (where, key)
        assert bool(doc.get("required")) == bool(arg.get("required")), where
        assert "description" in doc, where
        if "suboptions" in doc or "options" in arg:
            _options_match_spec(doc.get("suboptions", {}), arg.get("options", {}), where)


def assert_doc_matches_argspec(module):
    """DOCUMENTATION, EXAMPLES and RETURN are YAML, and DOCUMENTATION's options agree with
    ``module.argument_spec()`` on names, type, elements, choices, default, required,
    description and suboptions (what validate-modules checks).  Returns the parsed DOCUMENTATION."""
    doc = yaml.safe_load(module.DOCUMENTATION)
    yaml.safe_load(module.EXAMPLES)
    yaml.safe_load(module.RETURN)
    _options_match_spec(doc["options"], module.argument_spec(), "options")
    return doc


def run_one_object(run_many, args, identity=("interface",), **kwargs):
    """Run a multi-interface module for one interface: the ``identity`` keys and ``config``
    of ``args`` become a one-entry config list, and the per-interface lists of the result
    (before, after, gathered, diff) are unwrapped to that entry, without its identity keys."""
    args = dict(args)
    if any(key in args for key in identity):
        entry = dict(args.pop("config", None) or {})
        for key in identity:
            if key in args:
                entry[key] = args.pop(key)
        args["config"] = [entry]
    kind, res = run_many(args, **kwargs)
    for key in ("before", "after", "gathered"):
        if isinstance(res.get(key), list):
            assert len(res[key]) == 1, res[key]
            res[key] = dict((k, v) for k, v in res[key][0].items() if k not in identity)
    if isinstance(res.get("diff"), list):
        assert len(res["diff"]) == 1
        res["diff"] = res["diff"][0]
    return kind, res


REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def role_defaults(role, **over):
    """A role's ``defaults/main.yml`` as the play would see it, with ``over`` set on top."""
    with open(os.path.join(REPO, "roles", role, "defaults", "main.yml")) as handle:
        variables = yaml.safe_load(handle)
    variables.update(over)
    return variables


def run_on_sim(monkeypatch, sim, main, args, check_mode=False, diff=False):
    """Run a module's ``main()`` with its commands answered by fabricsim's tools (``sim.run``);
    the module must exit (not fail). Returns its result."""
    def run_command(argv, **kwargs):
        out, err, rc = sim.run(os.path.basename(argv[0]), *[str(a) for a in argv[1:]])
        return rc, out, err
    kind, result = run_module(monkeypatch, main, args, check_mode=check_mode, diff=diff,
                              run_command=run_command, bin_dir="/usr/bin/")
    assert kind == "exit", result
    return result
