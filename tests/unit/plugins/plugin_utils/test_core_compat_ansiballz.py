"""Issue 44: the collection's AnsiballZ payloads are kept between runs (rdma.fabric.linear seeds the
run's cache with them before the play's first fork, and keeps what the run built): a run then
loads the payload instead of walking the module's imports again, and gets the same bytes."""
import json
import os
import shutil
import subprocess
import sys

import pytest

from ansible_collections.rdma.fabric.plugins.plugin_utils import _core_compat as K

# the collection as ansible_collections/rdma/fabric (tests/unit/conftest.py links it)
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", ".cache", "collections"))
MODULE = os.path.join(ROOT, "ansible_collections", "rdma", "fabric", "plugins", "modules", "state_check.py")


# a worker of a run, in its own process (ansible-core's collection loader, as ansible-playbook sets it
# up): builds state_check's payload in the run's local temporary directory, counting the walks of
# the module's imports, and prints the walks and the payload's digest
BUILD = r"""
import hashlib, json, sys
from ansible import constants as C
from ansible.plugins.loader import init_plugin_loader
init_plugin_loader([sys.argv[1]])
from ansible.executor import module_common
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar
C.DEFAULT_LOCAL_TMP = sys.argv[2]
walks = []
real = module_common.recursive_finder
def counting(*args, **kwargs):
    walks.append(args[0])
    return real(*args, **kwargs)
module_common.recursive_finder = counting
built = module_common.modify_module(module_name="state_check", module_path=sys.argv[3], module_args={},
                                    templar=Templar(loader=DataLoader()), environment={},
                                    task_vars={"ansible_python_interpreter": "/usr/bin/python3"})
import re
data = built.b_module_data if hasattr(built, "b_module_data") else built[0]  # 2.16-2.18: a tuple
print(json.dumps([walks, hashlib.sha256(max(re.findall(rb"[A-Za-z0-9+/=]{1000,}", data), key=len)).hexdigest()]))
"""


def _build(local_tmp):
    out = subprocess.run([sys.executable, "-c", BUILD, ROOT, str(local_tmp), MODULE], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, check=True, env=dict(os.environ, ANSIBLE_COLLECTIONS_PATH=ROOT))
    walks, digest = json.loads(out.stdout.strip().splitlines()[-1])
    return walks, digest


@pytest.fixture()
def tmp_base(tmp_path):
    yield tmp_path
    shutil.rmtree(str(tmp_path), ignore_errors=True)


def test_a_second_run_loads_the_kept_payload_and_sends_the_same_bytes(tmp_base):
    key = K.ansiballz_cache_key()
    first_tmp, second_tmp = tmp_base / "ansible-local-1", tmp_base / "ansible-local-2"
    assert K.ansiballz_seed(str(first_tmp), key) == []          # nothing kept yet
    first_calls, first = _build(first_tmp)
    assert first_calls == ["state_check"]                       # built: the imports walked
    kept = K.ansiballz_save(str(first_tmp), key)
    assert kept and all(n.startswith("ansible_collections.rdma.fabric.plugins.modules.state_check-") for n in kept)
    store = K.ansiballz_dirs(str(first_tmp), key)[1]
    assert oct(os.stat(store).st_mode & 0o777) == "0o700"
    assert all(oct(os.stat(os.path.join(store, n)).st_mode & 0o777) == "0o600" for n in kept)
    # the next run: seeded before its workers fork, it walks nothing and sends the same payload
    assert K.ansiballz_seed(str(second_tmp), key) == kept
    second_calls, second = _build(second_tmp)
    assert second_calls == []
    assert second == first
    assert K.ansiballz_save(str(second_tmp), key) == []         # already kept


def test_another_key_is_not_seeded_and_the_most_recent_keys_are_kept(tmp_base):
    first_tmp, other_tmp = tmp_base / "ansible-local-1", tmp_base / "ansible-local-2"
    _build(first_tmp)
    assert K.ansiballz_save(str(first_tmp), "key-0")
    # a changed module_utils file (another key): its run builds again
    assert K.ansiballz_seed(str(other_tmp), "key-1") == []
    calls = _build(other_tmp)[0]
    assert calls == ["state_check"]
    assert K.ansiballz_save(str(other_tmp), "key-1")
    store_parent = os.path.dirname(K.ansiballz_dirs(str(other_tmp), "key-1")[1])
    # two checkouts used in turn keep theirs (a bench's before and after)
    assert sorted(os.listdir(store_parent)) == ["key-0", "key-1"]
    os.utime(os.path.join(store_parent, "key-0"), (1, 1))
    for number in range(2, 2 + K.ANSIBALLZ_KEEP_KEYS):
        os.utime(os.path.join(store_parent, "key-%d" % (number - 1)), (number, number))   # older, in order
        assert K.ansiballz_save(str(other_tmp), "key-%d" % number)
    # the most recently used ones stay; the oldest are removed
    newest = ["key-%d" % n for n in range(2 + K.ANSIBALLZ_KEEP_KEYS - K.ANSIBALLZ_KEEP_KEYS, 2 + K.ANSIBALLZ_KEEP_KEYS)]
    assert sorted(os.listdir(store_parent)) == sorted(newest)


def test_the_key_follows_every_module_utils_file(tmp_base):
    collection = tmp_base / "collection"
    utils = collection / "plugins" / "module_utils" / "drift"
    utils.mkdir(parents=True)
    (collection / "plugins" / "modules").mkdir()
    (utils / "_x.py").write_text("A = 1\n")
    (collection / "plugins" / "modules" / "m.py").write_text("import x\n")
    before = K.ansiballz_cache_key(str(collection))
    assert K.ansiballz_cache_key(str(collection)) == before
    (utils / "__pycache__").mkdir()
    (utils / "__pycache__" / "_x.cpython-311.pyc").write_bytes(b"\0")   # compiled files do not count
    assert K.ansiballz_cache_key(str(collection)) == before
    (utils / "_x.py").write_text("A = 22\n")                                # size and mtime
    changed = K.ansiballz_cache_key(str(collection))
    assert changed != before
    (utils / "_y.py").write_text("")                                       # a new file
    assert K.ansiballz_cache_key(str(collection)) != changed


def test_the_cache_can_be_turned_off(monkeypatch):
    monkeypatch.setenv(K.ANSIBALLZ_CACHE_ENV, "0")
    assert not K.ansiballz_enabled()
    monkeypatch.setenv(K.ANSIBALLZ_CACHE_ENV, "yes")
    assert K.ansiballz_enabled()


def test_only_the_collections_finished_payloads_are_kept(tmp_base):
    run_dir, _store = K.ansiballz_dirs(str(tmp_base / "ansible-local-1"), "k")
    os.makedirs(run_dir)
    for name in ("ansible.modules.ping-ZIP_DEFLATED-none", K.ANSIBALLZ_PREFIX + "x-ZIP_DEFLATED-none.lock",
                 K.ANSIBALLZ_PREFIX + "x-ZIP_DEFLATED-none-part", K.ANSIBALLZ_PREFIX + "x-ZIP_DEFLATED-none"):
        with open(os.path.join(run_dir, name), "wb") as handle:
            handle.write(b"payload")
    assert K.ansiballz_save(str(tmp_base / "ansible-local-1"), "k") == [K.ANSIBALLZ_PREFIX + "x-ZIP_DEFLATED-none"]
