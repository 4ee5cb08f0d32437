"""Issue 44: ansible-core's collection loader compiles a collection's source at every import of every
run; rdma.fabric.linear keeps the compiled code of this collection's modules between runs (as
Python keeps .pyc files): a second run compiles none of them, and a changed file is compiled again."""
import json
import os
import shutil
import subprocess
import sys

from ansible_collections.rdma.fabric.plugins.plugin_utils import _core_compat as K

# the collection as ansible_collections/rdma/fabric (tests/unit/conftest.py links it)
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", ".cache", "collections"))

# a run's main process, in its own process (ansible-core's collection loader, as ansible-playbook sets
# it up): installs the cache, imports the drift check's action, and prints which of the collection's
# files ansible-core compiled
RUN = r"""
import builtins, json, sys
from ansible.plugins.loader import init_plugin_loader
init_plugin_loader([sys.argv[1]])
from ansible_collections.rdma.fabric.plugins.plugin_utils import _core_compat
compiled = []
real = builtins.compile
def counting(source, filename, *args, **kwargs):
    if "/rdma/fabric/" in str(filename):
        compiled.append(str(filename))
    return real(source, filename, *args, **kwargs)
builtins.compile = counting
_core_compat.install_code_cache(sys.argv[2])
import importlib
module = importlib.import_module(sys.argv[3])
print(json.dumps({"compiled": compiled, "file": module.__file__}))
"""

TARGET = "ansible_collections.rdma.fabric.plugins.action.drift_check"


def _run(root, directory, target=TARGET):
    proc = subprocess.run([sys.executable, "-c", RUN, root, str(directory), target],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.splitlines()[-1])


def test_a_second_run_compiles_none_of_the_collections_files(tmp_path):
    first = _run(ROOT, tmp_path / "code")
    assert len(first["compiled"]) > 20          # the action and the node areas it builds specs with
    second = _run(ROOT, tmp_path / "code")
    assert second["compiled"] == []
    assert oct(os.stat(tmp_path / "code").st_mode & 0o777) == "0o700"


def test_a_changed_file_is_compiled_again(tmp_path):
    # a copy of the collection whose action file changes between the runs
    copy = tmp_path / "collections" / "ansible_collections" / "rdma" / "fabric"
    os.makedirs(copy)
    for part in ("plugins", "meta", "roles"):
        shutil.copytree(os.path.join(ROOT, "ansible_collections", "rdma", "fabric", part), copy / part, symlinks=False,
                        ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(os.path.join(ROOT, "ansible_collections", "rdma", "fabric", "galaxy.yml"), copy / "galaxy.yml")
    root = str(tmp_path / "collections")
    _run(root, tmp_path / "code")
    action = copy / "plugins" / "action" / "drift_check.py"
    action.write_text(action.read_text() + "\nCHANGED = True\n")
    again = _run(root, tmp_path / "code")
    assert again["compiled"] == [str(action)]


def test_a_directory_others_can_write_is_not_read(tmp_path):
    directory = tmp_path / "code"
    _run(ROOT, directory)
    os.chmod(directory, 0o777)
    assert len(_run(ROOT, directory)["compiled"]) > 20


def test_other_modules_are_compiled_by_ansible_core(tmp_path):
    """Only this collection's modules are kept."""
    assert K.CODE_PREFIX == "ansible_collections.rdma.fabric."
    _run(ROOT, tmp_path / "code")
    assert all(name.endswith(".code") for name in os.listdir(tmp_path / "code"))


def test_cached_data_is_built_once_and_again_when_a_file_changes(tmp_path, monkeypatch):
    """What the drift check's action reads in every run's main process (a role's argument specs,
    its checked defaults) is kept beside the code, under a key of its files."""
    monkeypatch.delenv(K.CODE_CACHE_ENV, raising=False)
    source = tmp_path / "argument_specs.yml"
    source.write_text("a: 1\n")
    built = []

    def build():
        built.append(source.read_text())
        return {"options": {"x": {"type": "int", "choices": [1, 2]}}, "read": source.read_text()}
    directory = tmp_path / "code"
    first = K.cached_data("role_options", [str(source)], build, str(directory))
    again = K.cached_data("role_options", [str(source)], build, str(directory))
    assert first == again and len(built) == 1
    assert oct(os.stat(directory).st_mode & 0o777) == "0o700"
    # another kind of data from the same file is another entry
    K.cached_data("checked_defaults", [str(source)], build, str(directory))
    assert len(built) == 2
    # a changed file (another size): built again, the new data returned
    source.write_text("a: 22\n")
    assert K.cached_data("role_options", [str(source)], build, str(directory))["read"] == "a: 22\n"
    assert len(built) == 3


def test_cached_data_trusts_no_other_directory_and_can_be_turned_off(tmp_path, monkeypatch):
    source = tmp_path / "f.yml"
    source.write_text("x\n")
    built = []
    directory = tmp_path / "code"
    K.cached_data("k", [str(source)], lambda: built.append(1) or {"n": len(built)}, str(directory))
    os.chmod(directory, 0o777)          # writable by others: not read
    assert K.cached_data("k", [str(source)], lambda: built.append(1) or {"n": len(built)}, str(directory)) == {"n": 2}
    os.chmod(directory, 0o700)
    monkeypatch.setenv(K.CODE_CACHE_ENV, "0")
    assert K.cached_data("k", [str(source)], lambda: built.append(1) or {"n": len(built)}, str(directory)) == {"n": 3}
    # a file that is gone: built (the builder says what is wrong)
    monkeypatch.delenv(K.CODE_CACHE_ENV)
    assert K.cached_data("k", [str(tmp_path / "gone.yml")], lambda: {"built": True}, str(directory)) == {"built": True}


def test_the_role_specs_read_from_the_cache_are_the_files_own(tmp_path, monkeypatch):
    """The argument specs and checked defaults of every node area, kept and read back, are what
    reading the roles' files gives."""
    from ansible_collections.rdma.fabric.plugins.module_utils.drift import _drift_areas as A
    from ansible_collections.rdma.fabric.plugins.plugin_utils import _role_specs as R
    monkeypatch.delenv(K.CODE_CACHE_ENV, raising=False)
    monkeypatch.setattr(K, "code_cache_dir", lambda local_tmp=None: str(tmp_path / "code"))
    monkeypatch.setattr(R, "_OPTIONS", {})
    monkeypatch.setattr(R, "_DEFAULTS", {})
    kept = dict((role, (R.role_options(role), R.checked_defaults(role))) for role in A.NODE_AREAS)   # written
    R._OPTIONS.clear()
    R._DEFAULTS.clear()
    read_back = dict((role, (R.role_options(role), R.checked_defaults(role))) for role in A.NODE_AREAS)
    assert len(os.listdir(tmp_path / "code")) == 2 * len(A.NODE_AREAS)
    monkeypatch.setenv(K.CODE_CACHE_ENV, "0")
    R._OPTIONS.clear()
    R._DEFAULTS.clear()
    fresh = dict((role, (R.role_options(role), R.checked_defaults(role))) for role in A.NODE_AREAS)
    assert kept == read_back == fresh
    assert fresh["roce_qos"][0]["roce_qos_pfc_priorities"]["type"] == "list" and fresh["roce_qos"][1]
