# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rdma.fabric.role_template: render a template of one of this collection's roles, as
ansible.builtin.template renders it, without its deep copy of every variable per call."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: role_template
author: rdma.fabric contributors (@rdma-fabric)
short_description: Render a template of one of this collection's roles
version_added: 0.3.0
description:
  - Renders C(ROLE/FILE) from the C(templates) directory of the rdma.fabric role C(ROLE) and
    returns the text, the same text as P(ansible.builtin.template#lookup) returns for that
    file (the same variables, C(ansible_managed), C(template_path) and the other template
    variables, and the same Jinja settings).
  - The roles' C(vars/main.yml) render the files they install with it, so a role's files come
    out the same from a task inside the role and from one outside it (the drift check's).
  - It is cheaper than P(ansible.builtin.template#lookup), which deep-copies every variable of
    the host for each file it renders. At fleet size that copy was most of the drift check's
    controller CPU (README, "Fleet scale"). The template reads the host's variables through a
    shallow copy instead; templates never change their variables.
  - Within one run, a file is rendered once for every distinct set of values of the variables
    its template reads, and reused by every host with the same values (the forked workers share
    the run's local temporary directory, removed when the run ends). A template that calls
    C(lookup), C(query) or C(now), reads C(hostvars), C(vars) or C(template_run_date), or uses the
    C(random), C(shuffle) or C(password_hash) filter, includes or imports another file, or starts
    with a C(#jinja2:) header, is rendered for every host.
  - It renders with ansible-core's public templating API, as the builtin lookup of the running
    ansible-core renders (2.16 to 2.19); it reads which variables a template uses with Jinja's
    own parser.
options:
  _terms:
    description:
      - C(ROLE/FILE), for example C(roce_qos/rdma-fabric-roce-qos.service.j2).
      - C(ROLE) is a role of rdma.fabric and C(FILE) a file name in its C(templates) directory
        (no C(/) and no C(..)).
    required: true
    type: list
    elements: str
  template_vars:
    description: Variables the template sees besides the host's, as for P(ansible.builtin.template#lookup).
    type: dict
    default: {}
"""

EXAMPLES = r"""
- name: Show the boot-time unit the roce_qos role installs
  ansible.builtin.debug:
    msg: "{{ lookup('rdma.fabric.role_template', 'roce_qos/rdma-fabric-roce-qos.service.j2') }}"

- name: Render the OpenSM drop-in for Red Hat
  ansible.builtin.debug:
    msg: >-
      {{ lookup('rdma.fabric.role_template', 'opensm/opensm-dropin.conf.j2',
                template_vars={'__opensm_dropin_execstart': ''}) }}
"""

RETURN = r"""
_raw:
  description: The text of each rendered file, in the order of the terms.
  type: list
  elements: str
"""

import contextlib
import hashlib
import json
import os
import re
import tempfile

try:
    import fcntl
except ImportError:   # pragma: no cover - not POSIX: no lock, each worker renders what it misses
    fcntl = None

import jinja2
from jinja2 import meta as jinja2_meta
from jinja2 import nodes as jinja2_nodes

from ansible import constants as C
from ansible.errors import AnsibleLookupError
from ansible.plugins.lookup import LookupBase

from ansible_collections.rdma.fabric.plugins.module_utils.common import _secrets
from ansible_collections.rdma.fabric.plugins.plugin_utils import _core_compat

ROLES_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "roles")
_TERM = re.compile(r"([a-z][a-z0-9_]*)/([A-Za-z0-9_.@-]+)")
# what makes a template's text depend on more than its variables' values
_IMPURE_NAMES = frozenset(("lookup", "query", "q", "now", "template_run_date", "hostvars", "vars"))
_IMPURE_FILTERS = frozenset(("random", "shuffle", "password_hash"))
# what makes it read text (and so variables) from another file
_OTHER_FILE_NODES = (jinja2_nodes.Include, jinja2_nodes.Import, jinja2_nodes.FromImport, jinja2_nodes.Extends)


def template_path(term):
    """ROLE/FILE -> the file's absolute path; AnsibleLookupError naming the term otherwise."""
    match = _TERM.fullmatch(term) if isinstance(term, str) else None
    if not match or match.group(2) in (".", ".."):
        raise AnsibleLookupError("role_template: expected ROLE/FILE (a role of rdma.fabric and a file in its "
                                 "templates directory), got %r" % (term,))
    path = os.path.join(ROLES_DIR, match.group(1), "templates", match.group(2))
    if not os.path.isfile(path):
        raise AnsibleLookupError("role_template: %r: rdma.fabric has no such role template (looked for %s)"
                                 % (term, path))
    return path


class LookupModule(LookupBase):

    def run(self, terms, variables=None, **kwargs):
        # the one option, read here (not through the option machinery: it also runs as a plain class)
        unknown = sorted(set(kwargs) - set(["template_vars"]))
        if unknown:
            raise AnsibleLookupError("role_template: unknown option(s) %s (it takes template_vars)" % ", ".join(unknown))
        extra = kwargs.get("template_vars") or {}
        if not isinstance(extra, dict):
            raise AnsibleLookupError("role_template: template_vars: expected a dict, got %r" % (extra,))
        paths = [template_path(term) for term in terms]
        variables = variables or {}
        ret = []
        for path in paths:
            source = _core_compat.read_template(self._loader, path)
            # shallow: the template reads the host's variables and adds its own on top
            data = dict(variables)
            data.update(_core_compat.template_vars(os.path.basename(path), path, data))
            data.update(extra)
            with _core_compat.template_context(self._templar, data, [os.path.dirname(path)]) as templar:
                text = _RenderCache(templar, path, source, data).text(
                    lambda templar=templar, source=source: _core_compat.render_template(templar, source))
            ret.append(text)
        return ret

    def names(self, terms):
        """``(names, pure)`` of each term's template: the variables it reads, and whether its text
        depends on them alone (template_names; read once per run)."""
        out = []
        for term in terms:
            path = template_path(term)
            out.append(tuple(_names_of(path, _core_compat.read_template(self._loader, path))[1:]))
        return out

    def keys(self, terms, variables=None, template_vars=None):
        """The run cache's key of each term's file rendered over ``variables`` (what ``run`` would
        render it with), without rendering it; ``None`` for a file rendered every time."""
        out = []
        for term in terms:
            path = template_path(term)
            source = _core_compat.read_template(self._loader, path)
            data = dict(variables or {})
            data.update(_core_compat.template_vars(os.path.basename(path), path, data))
            data.update(template_vars or {})
            with _core_compat.template_context(self._templar, data, [os.path.dirname(path)]) as templar:
                out.append(_RenderCache(templar, path, source, data).key)
        return out


def _any_plugin(*args, **kwargs):
    raise AssertionError("rdma.fabric.role_template parses templates, it never renders them")


class _AnyPlugins(dict):
    """Filters or tests for the parse environment: every name exists (Ansible's environment
    loads a collection's filters by name when a template uses them)."""

    def get(self, key, default=None):
        return dict.get(self, key, _any_plugin)

    def __contains__(self, key):
        return True


def parse_environment():
    """A plain Jinja environment that parses a template as Ansible's does (the lookup's
    delimiters, trim_blocks, the configured extensions, any filter or test name). Only for
    reading which variables a template uses: ansible-core renders it."""
    extensions = [name for name in (C.DEFAULT_JINJA2_EXTENSIONS or "").replace(" ", "").split(",") if name]
    environment = jinja2.Environment(extensions=extensions, **_core_compat.TEMPLATE_OVERRIDES)
    environment.filters = _AnyPlugins(environment.filters)
    environment.tests = _AnyPlugins(environment.tests)
    return environment


def template_names(source, environment=None):
    """``(names, pure)``: the variables a template reads, and whether its text depends on them
    alone (no lookup, query, now or run date, no random filter, no other file included or
    imported, no ``#jinja2:`` header changing its syntax)."""
    if source.startswith("#jinja2:"):
        return [], False
    ast = (environment or parse_environment()).parse(source)
    names = sorted(jinja2_meta.find_undeclared_variables(ast))
    # every name it loads, globals (lookup, query, now) included, and every filter it calls
    loaded = set(node.name for node in ast.find_all(jinja2_nodes.Name))
    filters = set(node.name for node in ast.find_all(jinja2_nodes.Filter))
    other_files = any(True for _node in ast.find_all(_OTHER_FILE_NODES))
    return names, not (loaded & _IMPURE_NAMES or filters & _IMPURE_FILTERS or other_files)


class _RenderCache(object):
    """The run's rendered role files, shared by the forked workers: the same template with the
    same values of the variables it reads renders the same text, so a fleet of hosts that
    share their settings renders each file once per run instead of once per host. The files
    live in the run's local temporary directory (removed when the run ends); a template that
    is not pure (template_names), a value that cannot be read, or no such directory, is
    rendered every time."""

    def __init__(self, templar, path, source, data):
        self.key = None
        try:
            directory = os.path.join(C.DEFAULT_LOCAL_TMP, "rdma_fabric_role_template")
            ident, names, pure = _names_of(path, source)
            if not pure:
                return
            values = [(name, templar.template(data[name]) if name in data else "<absent>") for name in names]
            digest = hashlib.sha256(json.dumps([ident, values], sort_keys=True, default=repr).encode())
            self.key = os.path.join(directory, digest.hexdigest() + ".txt")
        except Exception:   # noqa: BLE001 (any doubt: render it, as the builtin lookup would)
            self.key = None

    def text(self, render):
        """The file's text: the run's copy, or rendered by ``render()``. The workers of one task start
        together (at 16 hosts every host is in the first batch of forks): the first to miss a file
        renders it under the file's lock while the others wait for its text, instead of all of them
        rendering it at once."""
        if self.key is None:
            return render()
        text = self.get()
        if text is not None:
            return text
        with _locked(self.key):
            text = self.get()
            if text is None:
                text = render()
                self.put(text)
        return text

    def get(self):
        if self.key is None:
            return None
        try:
            with open(self.key, encoding="utf-8", newline="") as handle:
                return handle.read()
        except (IOError, OSError):
            return None

    def put(self, text):
        # a text that holds a secret (opensm.conf's keys) is never written to the controller's disk
        if self.key is not None and isinstance(text, str) and _secrets.redact_text(text) == text:
            try:
                _write_atomic(self.key, text)
            except (IOError, OSError):
                pass


@contextlib.contextmanager
def _locked(path):
    """An exclusive lock on ``path`` + ``.lock`` (in the run's cache directory) for the ``with``
    block; none where the lock cannot be taken."""
    handle = None
    try:
        if fcntl is not None:
            os.makedirs(os.path.dirname(path), 0o700, exist_ok=True)
            handle = open(path + ".lock", "a")
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
    except (IOError, OSError):
        if handle is not None:
            handle.close()
        handle = None
    try:
        yield
    finally:
        if handle is not None:
            handle.close()   # closing the descriptor releases the lock


def _names_of(path, source):
    """``(ident, names, pure)`` of the template file ``path``: its identity (path, modification time,
    size) and template_names, read once per run (the run cache's names file)."""
    stat = os.stat(path)
    ident = hashlib.sha256(("%s\0%d\0%d" % (path, stat.st_mtime_ns, stat.st_size)).encode()).hexdigest()
    names_file = os.path.join(C.DEFAULT_LOCAL_TMP, "rdma_fabric_role_template", ident + ".names.json")
    names, pure = _read_or_make(names_file, lambda: json.dumps(template_names(source)), json.loads)
    return ident, names, pure


def _read_or_make(path, make, load):
    """``load`` of the run cache's file ``path``, made by ``make()`` (text) under the file's lock
    by the first worker that misses it."""
    try:
        with open(path) as handle:
            return load(handle.read())
    except (IOError, OSError, ValueError):
        pass
    with _locked(path):
        try:
            with open(path) as handle:
                return load(handle.read())
        except (IOError, OSError, ValueError):
            text = make()
            _write_atomic(path, text)
            return load(text)


def _write_atomic(path, text):
    """The run cache's file, written whole under a temporary name and renamed (a reader sees it
    whole or not at all). Not synced to disk: the cache lives as long as the run's temporary
    directory, and a lost file is rendered again; _fileio's fsync of the file and the directory
    was a third of a render's cost per host."""
    directory = os.path.dirname(path)
    os.makedirs(directory, 0o700, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(text.encode("utf-8"))
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
