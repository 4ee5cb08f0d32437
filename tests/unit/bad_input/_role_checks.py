# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a role run says about its variables before it touches a node, for test_every_option.py.

Run as ``python _role_checks.py REPO < cases.json``: a case is ``{"id", "role", "vars"}`` (the
inventory's values of the role's variables). For each, on the role's defaults with the case's
values over them and the role's vars/main.yml over those (Ansible's precedence):

1. the role's argument spec, validated as ``ansible.builtin.validate_argument_spec`` does it
   for the role's ``main`` entry point (ArgumentSpecValidator, role mode, its message);
2. when the spec accepts the values, the ``ansible.builtin.assert`` tasks of the role's
   ``tasks/preflight.yml`` (a role without one: the first tasks of its ``tasks/main.yml``, whose
   first task checks the variables), the shared steps it imports from ``rdma.fabric.area_steps``
   included, in order, evaluated as the assert action does (``when``, each
   ``that``, then ``fail_msg``), up to the first task that is neither an assert nor a debug
   (the first one that reads the node). A task with ``no_log`` shows its name and the censored
   text only, as the run's output does.

Prints ``{id: {"stage": "spec" | "preflight" | "accepted", "msg": text}}`` as JSON. A separate
process: the plugin loader is initialised for the collection here, never in the test run."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import inspect
import json
import os
import sys

CENSORED = "the output has been hidden due to the fact that 'no_log: true' was specified for this result"
ASSERT = ("ansible.builtin.assert", "assert")
DEBUG = ("ansible.builtin.debug", "debug")
IMPORT_ROLE = ("ansible.builtin.import_role", "import_role", "ansible.builtin.include_role", "include_role")


def main(repo):
    collections = os.path.join(repo, ".cache", "collections")
    sys.path.insert(0, collections)
    from ansible.plugins.loader import init_plugin_loader
    init_plugin_loader([collections])
    from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
    from ansible.parsing.dataloader import DataLoader
    from ansible.template import Templar

    loader = DataLoader()
    # ansible-core 2.19 loads strings as untrusted unless told; earlier versions take no such argument
    TRUSTED = {"trusted_as_template": True} if "trusted_as_template" in inspect.signature(loader.load_from_file).parameters else {}

    def load(role, *parts):
        path = os.path.join(repo, "roles", role, *parts)
        return (loader.load_from_file(path, **TRUSTED) or {}) if os.path.exists(path) else {}

    def _true(templar, condition):
        if hasattr(templar, "evaluate_conditional"):   # ansible-core 2.19
            return templar.evaluate_conditional(condition)
        from ansible.playbook.conditional import Conditional
        conditional = Conditional(loader=loader)
        conditional.when = [condition]
        return conditional.evaluate_conditional(templar, templar.available_variables)

    def shared_steps(tasks):
        """The tasks with each import of a step of the internal role rdma.fabric.area_steps
        (``tasks_from``) replaced by that step's tasks, with the import's vars over the role's
        defaults, as Ansible imports them."""
        out = []
        for task in tasks:
            imported = next((task[a] for a in IMPORT_ROLE if a in task), None)
            if not isinstance(imported, dict) or imported.get("name") != "rdma.fabric.area_steps":
                out.append(task)
                continue
            given = dict(load("area_steps", "defaults", "main.yml"), **(task.get("vars") or {}))
            for step in load("area_steps", "tasks", "%s.yml" % imported.get("tasks_from", "main")) or []:
                out.append(dict(step, vars=dict(given, **(step.get("vars") or {}))))
        return out

    out = {}
    for case in json.load(sys.stdin):
        role, given = case["role"], case["vars"]
        spec = load(role, "meta", "argument_specs.yml")["argument_specs"]["main"]["options"]
        values = dict(load(role, "defaults", "main.yml"))
        values.update(given)
        variables = {"inventory_hostname": "node1", "ansible_play_hosts_all": ["node1"],
                     "ansible_play_hosts": ["node1"], "group_names": [], "hostvars": {"node1": dict(given)},
                     "groups": {"all": ["node1"], "ungrouped": ["node1"]},
                     "playbook_dir": repo, "role_path": os.path.join(repo, "roles", role),
                     "ansible_check_mode": False, "omit": "__omit_place_holder__"}
        variables.update(values)
        variables.update(load(role, "vars", "main.yml"))
        # validate_argument_spec: the spec's variables from the task vars, templated, role mode
        try:
            provided = Templar(loader=loader, variables=variables).template(
                dict((k, v) for k, v in values.items() if k in spec))
        except Exception as exc:   # the validation task fails with the templating error
            out[case["id"]] = {"stage": "spec", "msg": "%s: %s" % (type(exc).__name__, exc)}
            continue
        errors = ArgumentSpecValidator(spec).validate(provided, validate_role_argument_spec=True).error_messages
        if errors:
            out[case["id"]] = {"stage": "spec", "msg": "Validation of arguments failed:\n%s" % "\n".join(errors)}
            continue
        out[case["id"]] = {"stage": "accepted", "msg": ""}
        preflight = "preflight.yml" if os.path.exists(os.path.join(repo, "roles", role, "tasks", "preflight.yml")) \
            else "main.yml"
        tasks = shared_steps(load(role, "tasks", preflight) or [])
        for task in tasks:
            action = next((a for a in ASSERT + DEBUG if a in task), None)
            if action is None:
                break
            if action in DEBUG:
                continue
            args = task[action]
            templar = Templar(loader=loader, variables=dict(variables, **(task.get("vars") or {})))
            try:
                when = task.get("when")
                if when is not None and not all(_true(templar, c) for c in
                                                (when if isinstance(when, list) else [when])):
                    continue
                that = args["that"] if isinstance(args["that"], list) else [args["that"]]
                if all(_true(templar, c) for c in that):
                    continue
                msg = templar.template(args.get("fail_msg", args.get("msg", "Assertion failed")))
            except Exception as exc:   # the task fails with the templating error
                msg = "%s: %s" % (type(exc).__name__, exc)
            if task.get("no_log"):
                msg = CENSORED
            out[case["id"]] = {"stage": "preflight", "msg": "TASK [%s] %s" % (task.get("name", action), msg)}
            break
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
