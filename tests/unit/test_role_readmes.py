# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every role has a README.md whose variables are those of its argument spec.

The convention (README.md of each role):

    ## Variables

    | variable | type | default | description |
    |---|---|---|---|
    | `opensm_role` | str | `standby` | ... |

- one row per option of ``meta/argument_specs.yml``, all entry points together (an option of
  several entry points is listed once); the set of names must be the set of options;
- the type is the spec's ``type`` (``str`` when unset), ``list of ELEMENTS`` for a list with
  ``elements``;
- the default is one value in backticks: the spec's ``default`` (``null`` when it has none) or
  the value of ``defaults/main.yml`` (a template there, such as ``{{ ... }}``, is written as it is).

And every ``rdma.fabric.NAME`` a role README names is a plugin, role or playbook of the
collection: a README does not describe what no longer exists.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import glob
import os
import re

import pytest
import yaml

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
ROLES = sorted(os.path.basename(os.path.dirname(path)) for path in glob.glob(os.path.join(REPO, "roles", "*", "meta")))
_ROW = re.compile(r"^\|(.*)\|\s*$")
_CODE = re.compile(r"^`(.*)`$")


class ReadmeError(Exception):
    """The README's '## Variables' section or its table is not in the convention."""


def _require(condition, message):
    if not condition:
        raise ReadmeError(message)


def _load(path):
    with open(path) as handle:
        return yaml.safe_load(handle)


def spec_options(role):
    """{name: option} over every entry point of the role's argument spec."""
    specs = _load(os.path.join(REPO, "roles", role, "meta", "argument_specs.yml"))["argument_specs"]
    options = {}
    for entry in specs.values():
        options.update((entry or {}).get("options") or {})
    return options


def _cells(line):
    """The cells of a table row; ``\\|`` is a ``|`` inside a cell (as in GitHub's tables)."""
    return [cell.strip().replace("\\|", "|") for cell in re.split(r"(?<!\\)\|", _ROW.match(line).group(1))]


def readme_variables(text):
    """{name: {"type": ..., "default": ...}} of the table in the README's '## Variables' section.
    Raises ReadmeError with the reason when the section or its table is not there."""
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if line.strip() == "## Variables"]
    _require(len(starts) == 1, "expected one '## Variables' section, found %d" % len(starts))
    rows = []  # the section's first table
    for line in lines[starts[0] + 1:]:
        if line.startswith("## ") or line.startswith("# ") or (rows and not _ROW.match(line)):
            break
        if _ROW.match(line):
            rows.append(line)
    _require(len(rows) >= 2, "'## Variables' has no table")
    header = [cell.lower() for cell in _cells(rows[0])]
    _require(header[:3] == ["variable", "type", "default"], "table header %r: expected variable | type | default | ..." % header)
    _require(set(_cells(rows[1])[0]) <= set("-: "), "second table row is not the header rule")
    found = {}
    for line in rows[2:]:
        cells = _cells(line)
        _require(len(cells) >= 3, "row %r: expected variable | type | default" % line)
        name = _CODE.match(cells[0])
        _require(name, "first column %r: expected `variable_name`" % cells[0])
        _require(name.group(1) not in found, "%s listed twice" % name.group(1))
        found[name.group(1)] = {"type": cells[1], "default": cells[2]}
    return found


def _type(option):
    kind = option.get("type", "str")
    if kind == "list" and option.get("elements"):
        return "list of %s" % option["elements"]
    return kind


def _default_ok(cell, wanted):
    code = _CODE.match(cell)
    if not code:
        return False
    text = code.group(1)
    for value in wanted:
        if isinstance(value, str) and text == value:
            return True
        try:
            if yaml.safe_load(text) == value:
                return True
        except yaml.YAMLError:
            pass
    return False


def readme_problems(role, text):
    """What is wrong with the role's README text; empty when it matches the argument spec."""
    try:
        listed = readme_variables(text)
    except ReadmeError as exc:
        return ["roles/%s/README.md: %s" % (role, exc)]
    options = spec_options(role)
    problems = []
    for name in sorted(set(options) - set(listed)):
        problems.append("%s: in meta/argument_specs.yml, not in the README's variables" % name)
    for name in sorted(set(listed) - set(options)):
        problems.append("%s: in the README's variables, not in meta/argument_specs.yml" % name)
    defaults = _load(os.path.join(REPO, "roles", role, "defaults", "main.yml")) or {}
    for name in sorted(set(options) & set(listed)):
        if listed[name]["type"] != _type(options[name]):
            problems.append("%s: type %r, the spec says %r" % (name, listed[name]["type"], _type(options[name])))
        wanted = [options[name].get("default")] + ([defaults[name]] if name in defaults else [])
        if not _default_ok(listed[name]["default"], wanted):
            problems.append("%s: default %s, expected one of %s in backticks"
                            % (name, listed[name]["default"], " or ".join(repr(value) for value in wanted)))
    return ["roles/%s/README.md: %s" % (role, problem) for problem in problems]


def collection_names():
    """Every name rdma.fabric.NAME can refer to: plugins, roles, playbooks."""
    names = set(ROLES)
    for path in glob.glob(os.path.join(REPO, "plugins", "*", "*.py")) + glob.glob(os.path.join(REPO, "plugins", "*", "*.yml")):
        names.add(os.path.splitext(os.path.basename(path))[0])
    for path in glob.glob(os.path.join(REPO, "plugins", "filter", "*.py")):
        with open(path) as handle:
            names.update(re.findall(r"^def ([a-z][a-z0-9_]*)\(", handle.read(), re.M))
    names.update(os.path.splitext(os.path.basename(path))[0] for path in glob.glob(os.path.join(REPO, "playbooks", "*.yml")))
    return names


def _readme(role):
    path = os.path.join(REPO, "roles", role, "README.md")
    assert os.path.isfile(path), "roles/%s has no README.md" % role
    with open(path) as handle:
        return handle.read()


def test_every_role_is_checked():
    assert len(ROLES) >= 7


@pytest.mark.parametrize("role", ROLES)
def test_readme_lists_the_argument_spec(role):
    problems = readme_problems(role, _readme(role))
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("role", ROLES)
def test_readme_names_only_what_exists(role):
    names = collection_names()
    unknown = sorted(set(re.findall(r"rdma\.fabric\.([a-z][a-z0-9_]*)", _readme(role))) - names)
    assert unknown == [], "roles/%s/README.md names rdma.fabric.%s, which the collection does not have" % (role, unknown)


def _table(rows):
    return "\n".join(["## Variables", "", "| variable | type | default | description |", "|---|---|---|---|"] + rows) + "\n"


def test_a_variable_missing_from_the_readme_is_found():
    role = "rails"
    options = spec_options(role)
    rows = ["| `%s` | %s | `%s` | x |" % (name, _type(option), yaml.safe_dump(option.get("default"), default_flow_style=True).strip().replace("\n...", ""))
            for name, option in options.items()]
    assert readme_problems(role, _table(rows)) == []
    dropped = sorted(options)[0]
    assert readme_problems(role, _table([row for row in rows if not row.startswith("| `%s`" % dropped)])) == [
        "roles/%s/README.md: %s: in meta/argument_specs.yml, not in the README's variables" % (role, dropped)]
    assert readme_problems(role, _table(rows + ["| `rails_gone` | str | `x` | x |"])) == [
        "roles/%s/README.md: rails_gone: in the README's variables, not in meta/argument_specs.yml" % role]
    assert readme_problems(role, "# rails\n") == ["roles/rails/README.md: expected one '## Variables' section, found 0"]
