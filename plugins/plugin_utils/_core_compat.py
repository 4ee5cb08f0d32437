# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one place where rdma.fabric depends on how a given ansible-core works inside.

Nothing else in the collection imports ``ansible._internal`` or reads a private attribute of
an ansible-core object (tests/unit/plugins/strategy/test_core_compat.py checks the first).

**Private names** (used only by the ``rdma.fabric.linear`` strategy, through
``WaitingLinearStrategy`` below, and only on the versions in ``STRATEGY_CORE_RANGE``; outside
them the strategy refuses to start, see ``check_strategy_core``). Each was read in the source of
ansible-core 2.16.19, 2.17.14, 2.18.19 and 2.19.14; the code this relies on is the same in all
four (``StrategyBase.__init__``, ``_queue_task``, ``_wait_on_pending_results``,
``results_thread_main``, ``TaskQueueManager.has_dead_workers``):

- ``StrategyBase._queue_task(host, task, task_vars, play_context)``: overridden; waits for a
  free worker slot, then calls the base method, which takes the first free slot.
- ``StrategyBase._wait_on_pending_results(iterator)``: overridden with the base's loop, a
  blocking wait in place of its ``time.sleep(C.DEFAULT_INTERNAL_POLL_INTERVAL)``.
- ``StrategyBase._process_pending_results(iterator)``: called, as the base loop calls it.
- ``StrategyBase._workers``: read; a list with one ``WorkerProcess`` (a
  ``multiprocessing.Process``: ``is_alive()``, ``sentinel``) or ``None`` per fork.
- ``StrategyBase._results``: a ``collections.deque`` that ``results_thread_main`` appends to,
  holding ``_results_lock``; replaced (under that lock) by a deque whose ``append`` also wakes
  the strategy.
- ``StrategyBase._results_lock``: held while ``_results`` is replaced.
- ``StrategyBase._pending_results``: read.
- ``StrategyBase._tqm._terminated``: read; ``StrategyBase._tqm.has_dead_workers()``: called.
- ``Task._uuid`` and ``Task._role`` (with the public ``Role.get_name``): read in ``_queue_task``
  before the fork, to import this collection's filter plugins in the main process once a task of
  its roles, or one that names it, is about to run (``task_uses_collection``, ``preload_filters``).

**The collection loader's compile** (used by the strategy, ``install_code_cache`` below):
``ansible.utils.collection_loader._collection_finder._AnsibleCollectionPkgLoaderBase.get_code(fullname)``
compiles a module's source (``compile``, no bytecode cache) the first time the loader is asked, and
keeps the code object in ``self._compiled_code``; the same in the four versions. The strategy wraps
it for this collection's modules only: a code object kept by an earlier run is returned (and set
there) instead of compiling.

**The AnsiballZ cache's layout** (used by the strategy, ``ansiballz_seed``/``ansiballz_save``
below): ansible-core builds a module's payload once per run, in each version the same way
(``ansible.executor.module_common._find_module_utils``): it walks the module's imports
(``recursive_finder``), zips them, and writes the result to
``C.DEFAULT_LOCAL_TMP/ansiballz_cache/<module FQCN>-<compression>-<extensions>``, a file the
other workers of the run load instead of building it again; a file that is there is used as
it is. The state_check module's payload costs about 0.75 CPU-s to build on this machine (ping's
0.2 s), once per run: at 16 hosts about 30 ms per host. The strategy keeps the collection's own
modules' files (those named ``ansible_collections.rdma.fabric.plugins.modules.*``) between runs,
under a key that changes with ansible-core's version, the controller's Python and every file of
the collection's modules and module_utils, and puts them back before the play's first worker
forks.

**Public API that differs by version** (used by the ``rdma.fabric.role_template`` lookup,
``render_template``): ansible-core 2.19 templates a file with ``Templar.copy_with_new_env``
(``available_variables``, ``searchpath``), ``Templar.template`` and ``trust_as_template``; 2.16 to
2.18 with ``Templar.copy_with_new_env(environment_class=AnsibleEnvironment)``,
``Templar.set_temporary_context`` and ``Templar.template(convert_data=...)``, and reads the file
with ``DataLoader.get_text_file_contents`` (2.19) or itself (2.16 to 2.18, which have only the
private ``DataLoader._get_file_contents``), as each version's
``ansible.builtin.template`` lookup does (its source was read in the same four versions: 2.16 to
2.18 have the same lookup). ``TEMPLAR_2_19`` tells them apart the way ansible-core's porting
guide suggests, by ``Templar.evaluate_expression``.

**A role's defaults read as a role import reads them** (``load_role_file``, the drift check's
action, which does not import the roles): on 2.19 each string of the file that holds a template
is marked trusted with ``trust_as_template``, as ansible-core's own role loader
(``DataLoader.load_from_file(trusted_as_template=True)``) marks the file's strings; 2.16 to 2.18
template every string that is not unsafe. ``templar_with`` gives a templar over other variables (``Templar.copy_with_new_env``,
``available_variables``, public on both).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import contextlib
import gc
import hashlib
import importlib
import json
import marshal
import os
import shutil
import sys
import tempfile
from importlib import util as importlib_util
from collections import deque
from multiprocessing.connection import wait as _wait_for

from ansible import constants as C
from ansible.errors import AnsibleError
from ansible.module_utils.common.text.converters import to_text
from ansible.release import __version__ as CORE_VERSION
from ansible.template import Templar, generate_ansible_template_vars

from ansible_collections.rdma.fabric.plugins.plugin_utils import _malloc

# The ansible-core minor versions the strategy runs on: those CI tests (lab/core-matrix.sh on
# the lowest, lab/test.sh on the highest) and whose private code is listed above, the same as
# meta/runtime.yml's requires_ansible (a unit test checks they agree).
STRATEGY_CORE_RANGE = ((2, 16), (2, 19))

# A wait never blocks longer than this: what a missed wake-up can cost at most.
SAFETY_TIMEOUT = 1.0

TEMPLAR_2_19 = hasattr(Templar, "evaluate_expression")


def core_minor(version=None):
    """'2.19.14' -> (2, 19); '2.20.0.dev0' -> (2, 20); the running ansible-core's by default."""
    major, minor = (version or CORE_VERSION).split(".")[:2]
    return int(major), int("".join(ch for ch in minor if ch.isdigit()) or 0)


def strategy_core_supported(version=None):
    low, high = STRATEGY_CORE_RANGE
    return low <= core_minor(version) <= high


def check_strategy_core(version=None):
    """AnsibleError, naming the range and the version found, outside STRATEGY_CORE_RANGE."""
    version = version or CORE_VERSION
    if not strategy_core_supported(version):
        (low_major, low_minor), (high_major, high_minor) = STRATEGY_CORE_RANGE
        raise AnsibleError(
            "rdma.fabric.linear: this strategy wraps internals of ansible-core and runs only on the versions "
            "it is tested on, ansible-core %d.%d to %d.%d (>=%d.%d.0,<%d.%d); found ansible-core %s. Use the "
            "builtin strategy on this version (strategy = ansible.builtin.linear in ansible.cfg, "
            "ANSIBLE_STRATEGY=ansible.builtin.linear, or strategy: ansible.builtin.linear on the play)."
            % (low_major, low_minor, high_major, high_minor, low_major, low_minor, high_major, high_minor + 1,
               version))


# ---------------------------------------------------------------------------------------------
# The strategy's waits (rdma.fabric.linear)

class WakingDeque(deque):
    """The strategy's results deque: each append also writes a byte to a pipe the strategy
    waits on (the results thread appends under the strategy's lock, and nothing else does)."""

    def __init__(self, items, wake_fd):
        super(WakingDeque, self).__init__(items)
        self._wake_fd = wake_fd

    def append(self, x):
        super(WakingDeque, self).append(x)
        try:
            os.write(self._wake_fd, b"r")
        except (BlockingIOError, OSError):
            pass   # the pipe is full (a wake-up is pending) or closed (the run is ending)


def busy_sentinels(workers):
    """The sentinels of the workers still running, and whether every slot is busy."""
    sentinels = []
    for worker in workers:
        if worker is not None and worker.is_alive():
            sentinels.append(worker.sentinel)
    return sentinels, bool(workers) and len(sentinels) == len(workers)


def waiting_strategy(base):
    """A subclass of the strategy class ``base`` (a StrategyBase) that blocks on its workers'
    sentinels and on a results pipe where ``base`` polls. Refuses (AnsibleError) to be
    instantiated outside STRATEGY_CORE_RANGE."""

    class WaitingStrategy(base):

        def __init__(self, tqm):
            check_strategy_core()
            super(WaitingStrategy, self).__init__(tqm)
            self._rdma_wake = None
            results = getattr(self, "_results", None)
            if isinstance(results, deque) and hasattr(self, "_results_lock"):
                wake_r, wake_w = os.pipe()
                for fd in (wake_r, wake_w):
                    os.set_blocking(fd, False)
                    os.set_inheritable(fd, False)
                self._rdma_wake = (wake_r, wake_w)
                with self._results_lock:
                    self._results = WakingDeque(self._results, wake_w)

        def run(self, iterator, play_context, *args, **kwargs):
            # before the first fork: each worker gives back the payload buffers it freed (_malloc)
            _malloc.fix_mmap_threshold()
            # before the play imports the collection's action plugins: their compiled code kept
            if code_cache_enabled():
                try:
                    install_code_cache()
                except Exception:   # noqa: BLE001 (a cache: any doubt, ansible-core compiles)
                    pass
            # before the play's first worker forks: the collection's payloads kept by an earlier run
            key = None
            if ansiballz_enabled():
                try:
                    key = ansiballz_cache_key()
                    ansiballz_seed(key=key)
                except Exception:   # noqa: BLE001 (a cache: any doubt, ansible-core builds them)
                    key = None
            try:
                return super(WaitingStrategy, self).run(iterator, play_context, *args, **kwargs)
            finally:
                if key is not None:
                    try:
                        ansiballz_save(key=key)
                    except Exception:   # noqa: BLE001
                        pass

        def cleanup(self):
            try:
                super(WaitingStrategy, self).cleanup()
            finally:
                for fd in self._rdma_wake or ():
                    os.close(fd)
                self._rdma_wake = None

        def _drain_wakeups(self):
            try:
                while os.read(self._rdma_wake[0], 4096):
                    pass
            except (BlockingIOError, OSError):
                pass

        def _queue_task(self, host, task, task_vars, play_context):
            # While every slot is busy the base loop would spin until one ends; after this wait
            # its first pass finds the ended one.
            while True:
                try:
                    sentinels, full = busy_sentinels(self._workers)
                except (AttributeError, TypeError, ValueError):
                    break   # not the workers this strategy knows: the base loop waits
                if not full:
                    break
                _wait_for(sentinels, timeout=SAFETY_TIMEOUT)
            # The base forks the worker here. Python's cyclic garbage collector, run in the worker,
            # walks (writes the header of) every tracked object the worker inherited: each page it
            # touches is copied (copy on write), the main process's whole heap in a long task.
            # Frozen before the fork (gc.freeze, as Python's documentation advises), the inherited
            # objects are left out of the worker's collections; the main process unfreezes at once.
            # Before the first fork of a task of this collection's roles, or one that names its
            # plugins: its filter plugins imported here, once, so that the workers inherit them
            # (each worker imported every one of them, with their module_utils, by itself).
            if not getattr(self, "_rdma_filters", False) and filters_preload_enabled():
                checked = self.__dict__.setdefault("_rdma_checked", set())
                uuid = getattr(task, "_uuid", None)
                if uuid not in checked:
                    checked.add(uuid)
                    if task_uses_collection(task):
                        self._rdma_filters = True
                        preload_filters()
            frozen = gc_freeze_enabled()
            if frozen:
                gc.freeze()
            try:
                return super(WaitingStrategy, self)._queue_task(host, task, task_vars, play_context)
            finally:
                if frozen:
                    gc.unfreeze()

        def _wait_on_pending_results(self, iterator):
            """The base's loop (ansible.plugins.strategy.StrategyBase), with a blocking wait in
            place of its sleep of internal_poll_interval."""
            if self._rdma_wake is None:
                return super(WaitingStrategy, self)._wait_on_pending_results(iterator)
            ret_results = []
            while self._pending_results > 0 and not self._tqm._terminated:
                if self._tqm.has_dead_workers():
                    raise AnsibleError("A worker was found in a dead state")
                self._drain_wakeups()
                ret_results.extend(self._process_pending_results(iterator))
                if self._pending_results > 0:
                    try:
                        sentinels = busy_sentinels(self._workers)[0]
                    except (AttributeError, TypeError, ValueError):
                        sentinels = []
                    # A result that arrived after the drain above is a byte in the pipe: no
                    # wake-up is lost between the check and the wait.
                    _wait_for([self._rdma_wake[0]] + sentinels, timeout=SAFETY_TIMEOUT)
            return ret_results

    return WaitingStrategy


# ---------------------------------------------------------------------------------------------
# The collection's modules' AnsiballZ payloads kept between runs (rdma.fabric.linear)

ANSIBALLZ_PREFIX = "ansible_collections.rdma.fabric.plugins.modules."
# RDMA_FABRIC_ANSIBALLZ_CACHE=0 (or false, no, off) builds the payloads in every run, as ansible-core does
ANSIBALLZ_CACHE_ENV = "RDMA_FABRIC_ANSIBALLZ_CACHE"
# the keys kept, the most recently used first: two checkouts of the collection used in turn (two
# projects of a controller, a bench's before and after) would otherwise rebuild at every run
ANSIBALLZ_KEEP_KEYS = 4
_COLLECTION = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def ansiballz_cache_key(collection=_COLLECTION):
    """What the collection's payloads depend on: ansible-core's version and its module_utils, the
    controller's Python, and the path, size and modification time of every file under the
    collection's plugins/modules and plugins/module_utils (their __pycache__ left out)."""
    digest = hashlib.sha256()
    import ansible.module_utils
    core_utils = os.path.dirname(os.path.abspath(ansible.module_utils.__file__))
    digest.update(("%s\0%s\0%s\0%s\0" % (CORE_VERSION, sys.version, core_utils, collection)).encode())
    for root in [core_utils] + [os.path.join(collection, "plugins", part) for part in ("modules", "module_utils")]:
        for directory, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                path = os.path.join(directory, name)
                try:
                    stat = os.stat(path)
                except OSError:
                    continue
                digest.update(("%s\0%d\0%d\n" % (os.path.relpath(path, root), stat.st_size, stat.st_mtime_ns)).encode())
    return digest.hexdigest()[:32]


def ansiballz_dirs(local_tmp=None, key=None):
    """(the run's AnsiballZ cache directory, the kept payloads' directory for ``key``): the run's is
    ansible-core's, in its local temporary directory; the kept ones live beside the runs' own
    directories (local_tmp's parent, ~/.ansible/tmp by default), one directory per key."""
    local_tmp = local_tmp or C.DEFAULT_LOCAL_TMP
    store = os.path.join(os.path.dirname(os.path.abspath(local_tmp)), "rdma_fabric_ansiballz")
    return os.path.join(local_tmp, "ansiballz_cache"), os.path.join(store, key or ansiballz_cache_key())


def ansiballz_enabled():
    return os.environ.get(ANSIBALLZ_CACHE_ENV, "1").strip().lower() not in ("0", "false", "no", "off")


def _kept_name(name):
    return name.startswith(ANSIBALLZ_PREFIX) and not name.endswith((".lock", "-part")) and not name.startswith(".")


def ansiballz_seed(local_tmp=None, key=None):
    """Put the kept payloads of the collection's modules into the run's cache (those it does not
    have yet); returns their names. Any error: nothing more is put, ansible-core builds them."""
    run_dir, store = ansiballz_dirs(local_tmp, key)
    seeded = []
    try:
        names = sorted(n for n in os.listdir(store) if _kept_name(n))
    except OSError:
        return seeded
    try:
        os.makedirs(run_dir, exist_ok=True)
        for name in names:
            target = os.path.join(run_dir, name)
            if os.path.exists(target):
                continue
            part = target + "-rdma-fabric-part"
            shutil.copyfile(os.path.join(store, name), part)
            os.rename(part, target)   # as ansible-core writes it: never a partly written file
            seeded.append(name)
    except OSError:
        pass
    return seeded


def ansiballz_save(local_tmp=None, key=None):
    """Keep the payloads of the collection's modules that this run built (its cache's files not kept
    yet), in a directory only the controller's user can read; of the other keys' directories (a
    changed collection or ansible-core, another checkout) the ANSIBALLZ_KEEP_KEYS - 1 most recently
    used stay, the rest are removed. Returns the names kept."""
    from ansible_collections.rdma.fabric.plugins.module_utils.common import _fileio
    run_dir, store = ansiballz_dirs(local_tmp, key)
    kept = []
    try:
        names = sorted(n for n in os.listdir(run_dir) if _kept_name(n))
    except OSError:
        return kept
    for name in names:
        target = os.path.join(store, name)
        if os.path.exists(target):
            continue
        try:
            with open(os.path.join(run_dir, name), "rb") as handle:
                data = handle.read()
            _fileio.write_atomic(target, data, 0o600, make_dirs=0o700)
            kept.append(name)
        except (OSError, _fileio.FileError):
            return kept
    parent = os.path.dirname(store)
    try:
        os.utime(store)   # the key this run used: the most recent
        others = [os.path.join(parent, other) for other in os.listdir(parent) if other != os.path.basename(store)]
        others.sort(key=lambda path: os.stat(path).st_mtime, reverse=True)
        for other in others[ANSIBALLZ_KEEP_KEYS - 1:]:
            shutil.rmtree(other, ignore_errors=True)
    except OSError:
        pass
    return kept


# ---------------------------------------------------------------------------------------------
# The collection's filter plugins, imported before the workers fork (rdma.fabric.linear)

FILTERS_ENV = "RDMA_FABRIC_PRELOAD_FILTERS"
FILTERS_PACKAGE = "ansible_collections.rdma.fabric.plugins.filter"
COLLECTION_NAME = "rdma.fabric"


def filters_preload_enabled():
    return os.environ.get(FILTERS_ENV, "1").strip().lower() not in ("0", "false", "no", "off")


def task_uses_collection(task):
    """True for a task of one of this collection's roles, or one whose arguments, variables,
    conditions or loop name this collection (``rdma.fabric.``): its templates may call the
    collection's filters in the worker."""
    role = getattr(task, "_role", None)
    if role is not None:
        try:
            name = role.get_name(include_role_fqcn=True)
        except TypeError:
            name = role.get_name()
        if str(name).startswith(COLLECTION_NAME + "."):
            return True
    # include_role / import_role: the role's name is not templated by the task's worker; the
    # role's own tasks are checked when they are queued (the drift check's scheduler gate, a
    # run_once include of rdma.fabric.health skipped by its condition, imported nothing)
    including = str(getattr(task, "action", "") or "").rsplit(".", 1)[-1] in ("include_role", "import_role")
    text = []
    for attribute in ("args", "vars", "when", "loop"):
        try:
            value = getattr(task, attribute, None)
            if attribute == "args" and including and isinstance(value, dict):
                value = dict((key, item) for key, item in value.items() if key != "name")
            text.append(repr(value))
        except Exception:   # noqa: BLE001 (an attribute that cannot be shown names nothing)
            continue
    return any(COLLECTION_NAME + "." in part for part in text)


def preload_filters(package=FILTERS_PACKAGE, directory=None, lookups=True):
    """Import every filter plugin of this collection (``plugins/filter/*.py``) under the name
    ansible-core's plugin loader gives it (``ansible_collections.rdma.fabric.plugins.filter.NAME``,
    which it takes from ``sys.modules`` when there). A filter the workers' templates call is then
    inherited at the fork instead of imported by each worker; ansible-core's Jinja plugin loader
    imports all of a collection's filter files in a worker that uses one (the fabric test's
    workers: more than half of their CPU, issue 44). With ``lookups``, the collection's lookup
    plugins too (the roles' vars call ``role_spec`` and ``role_template``). Returns the names
    imported; one that fails is left to the worker, as before."""
    directory = directory or os.path.join(_COLLECTION, "plugins", "filter")
    places = [(package, directory)]
    if lookups:
        places.append((package.rsplit(".", 1)[0] + ".lookup", os.path.join(os.path.dirname(directory), "lookup")))
    done = []
    for prefix, where in places:
        try:
            names = sorted(os.listdir(where))
        except OSError:
            continue
        for filename in names:
            if not filename.endswith(".py") or filename.startswith("_"):
                continue
            name = "%s.%s" % (prefix, filename[:-3])
            try:
                importlib.import_module(name)
            except Exception:   # noqa: BLE001 (the worker imports it, and reports what fails, as before)
                continue
            done.append(name)
    return done


# ---------------------------------------------------------------------------------------------
# The collection's compiled Python code, kept between runs (rdma.fabric.linear)

CODE_CACHE_ENV = "RDMA_FABRIC_CODE_CACHE"
CODE_PREFIX = "ansible_collections.rdma.fabric."


GC_FREEZE_ENV = "RDMA_FABRIC_GC_FREEZE"


def gc_freeze_enabled():
    return hasattr(gc, "freeze") and os.environ.get(GC_FREEZE_ENV, "1").strip().lower() not in ("0", "false", "no", "off")


def code_cache_enabled():
    return os.environ.get(CODE_CACHE_ENV, "1").strip().lower() not in ("0", "false", "no", "off")


def code_cache_dir(local_tmp=None):
    """Beside the runs' own directories (local_tmp's parent, ~/.ansible/tmp by default), one
    directory per Python version."""
    local_tmp = local_tmp or C.DEFAULT_LOCAL_TMP
    return os.path.join(os.path.dirname(os.path.abspath(local_tmp)), "rdma_fabric_code",
                        "%s-%s" % (sys.implementation.cache_tag, importlib_util.MAGIC_NUMBER.hex()))


def _code_key(filename):
    stat = os.stat(filename)
    return hashlib.sha256(("%s\0%d\0%d" % (filename, stat.st_size, stat.st_mtime_ns)).encode()).hexdigest()


def _private_dir(path):
    """True when ``path`` is a real directory (no symlink) of this user that nobody else can write."""
    try:
        stat = os.lstat(path)
    except OSError:
        return False
    return os.path.isdir(path) and not os.path.islink(path) and stat.st_uid == os.geteuid() and not stat.st_mode & 0o022


def install_code_cache(directory=None):
    """ansible-core's collection loader compiles a collection's source at every import, in every
    run (``_AnsibleCollectionPkgLoaderBase.get_code``, private; no bytecode cache): the drift
    check's action imports about 50 of this collection's files in the main process, a third of
    their import time the compile. This keeps their code objects (``marshal``, as Python's own
    ``.pyc``) between runs, under a key of the file's path, size and modification time (as a
    ``.pyc`` is checked), in a directory only the controller's user can write; any other module,
    or any doubt, is compiled by ansible-core. Installed once per process."""
    from ansible.utils.collection_loader import _collection_finder
    base = getattr(_collection_finder, "_AnsibleCollectionPkgLoaderBase", None)
    original = getattr(base, "get_code", None)
    if original is None or getattr(original, "_rdma_fabric_code_cache", False):
        return False
    directory = directory or code_cache_dir()

    def get_code(self, fullname):
        if getattr(self, "_compiled_code", None) or not fullname.startswith(CODE_PREFIX):
            return original(self, fullname)
        try:
            filename = self.get_filename(fullname)
            if not filename or not filename.endswith(".py") or not os.path.isfile(filename):
                return original(self, fullname)
            path = os.path.join(directory, _code_key(filename) + ".code")
            if _private_dir(directory) and os.path.isfile(path) and not os.path.islink(path):
                with open(path, "rb") as handle:
                    code = marshal.load(handle)
                if getattr(code, "co_filename", None) == filename:
                    self._compiled_code = code
                    return code
        except Exception:   # noqa: BLE001 (a cache: any doubt, ansible-core compiles)
            return original(self, fullname)
        code = original(self, fullname)
        try:
            if code is not None:
                os.makedirs(directory, 0o700, exist_ok=True)
                if _private_dir(directory):
                    fd, part = tempfile.mkstemp(prefix=".code-", dir=directory)
                    with os.fdopen(fd, "wb") as handle:
                        handle.write(marshal.dumps(code))
                    os.rename(part, path)
        except Exception:   # noqa: BLE001
            pass
        return code

    get_code._rdma_fabric_code_cache = True
    base.get_code = get_code
    return True


def cached_data(kind, paths, build, directory=None):
    """``build()``'s JSON data (a role's argument specs as read, its checked defaults), kept
    between runs beside the code cache (install_code_cache) under a key of ``kind``, ansible-core's
    version and each of ``paths``' path, size and modification time: what the drift check's action
    reads in every run's main process from files that rarely change. Any doubt (no cache, another
    user's directory, a file that does not load) builds it again; ``RDMA_FABRIC_CODE_CACHE=0`` turns
    it off with the code cache."""
    if not code_cache_enabled():
        return build()
    try:
        directory = directory or code_cache_dir()
        key = hashlib.sha256("\0".join([kind, CORE_VERSION] + [_code_key(path) for path in paths]).encode()).hexdigest()
        path = os.path.join(directory, "%s-%s.json" % (kind, key))
        if _private_dir(directory) and os.path.isfile(path) and not os.path.islink(path):
            with open(path) as handle:
                return json.load(handle)["data"]
    except (OSError, ValueError, KeyError, TypeError):
        return build()
    data = build()
    try:
        os.makedirs(directory, 0o700, exist_ok=True)
        if _private_dir(directory):
            fd, part = tempfile.mkstemp(prefix=".data-", dir=directory)
            with os.fdopen(fd, "w") as handle:
                json.dump({"data": data}, handle)
            os.rename(part, path)
    except (OSError, TypeError, ValueError):
        pass
    return data


# ---------------------------------------------------------------------------------------------
# A role's variables, without importing the role (the drift check's action)

def load_role_file(path, loader=None):
    """The data of the role's YAML file ``path`` (defaults/main.yml), its template strings
    trusted as ansible-core's role loader trusts them; ``None`` for an empty file. Read with
    libyaml's safe loader where PyYAML has it (ansible-core's own loader tags every value with its
    origin: ten times slower, and a role's defaults carry no tag a template needs but trust)."""
    import yaml
    with open(path, "rb") as handle:
        data = yaml.load(handle, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))   # a safe loader
    return _trusted(data) if TEMPLAR_2_19 else data


def _trusted(value):
    """``value`` with each string that holds a template trusted as a template (2.19)."""
    from ansible.template import trust_as_template
    if isinstance(value, str):
        return trust_as_template(value) if ("{{" in value or "{%" in value or "{#" in value) else value
    if isinstance(value, dict):
        return dict((key, _trusted(item)) for key, item in value.items())
    if isinstance(value, list):
        return [_trusted(item) for item in value]
    return value


def templar_with(templar, variables):
    """A templar like ``templar`` over ``variables`` (used as given, not copied)."""
    return templar.copy_with_new_env(available_variables=variables)


# ---------------------------------------------------------------------------------------------
# Templating a role file as ansible.builtin.template's lookup does (rdma.fabric.role_template)

# ansible.builtin.template's lookup defaults (2.16 to 2.18 have no trim_blocks option: their
# environment has trim_blocks on)
TEMPLATE_OVERRIDES = dict(variable_start_string="{{", variable_end_string="}}", comment_start_string="{#",
                          comment_end_string="#}", trim_blocks=True)


def template_vars(path, fullpath, variables):
    """The variables ansible.builtin.template's lookup adds for the file (template_path, ...,
    ansible_managed) on top of ``variables``: 2.19 keeps an ``ansible_managed`` the host sets,
    2.16 to 2.18 replace it."""
    added = generate_ansible_template_vars(path, fullpath)
    if TEMPLAR_2_19 and "ansible_managed" in variables:
        added.pop("ansible_managed", None)
    return added


@contextlib.contextmanager
def template_context(templar, variables, searchpath):
    """A templar for rendering a file with ``variables`` (used as given, not copied) and
    ``searchpath`` for includes, for the ``with`` block; the caller's templar is not changed."""
    if TEMPLAR_2_19:
        yield templar.copy_with_new_env(available_variables=variables, searchpath=searchpath)
        return
    from ansible.template import AnsibleEnvironment
    new = templar.copy_with_new_env(environment_class=AnsibleEnvironment)
    with new.set_temporary_context(available_variables=variables, searchpath=searchpath):
        yield new


def read_template(loader, path):
    """The text of the template file ``path``, as the builtin lookup reads it."""
    if hasattr(loader, "get_text_file_contents"):   # 2.19
        return loader.get_text_file_contents(path)
    with open(path, "rb") as handle:
        return to_text(handle.read(), errors="surrogate_or_strict")


def render_template(templar, source):
    """``source`` (a file's text) rendered by ``templar`` (from template_context) with the
    options of ansible.builtin.template's lookup."""
    if TEMPLAR_2_19:
        from ansible.template import trust_as_template
        return templar.template(trust_as_template(source), preserve_trailing_newlines=True, escape_backslashes=False,
                                overrides=TEMPLATE_OVERRIDES)
    overrides = dict((k, v) for k, v in TEMPLATE_OVERRIDES.items() if k != "trim_blocks")
    text = templar.template(source, preserve_trailing_newlines=True, convert_data=True, escape_backslashes=False,
                            overrides=overrides)
    if C.DEFAULT_JINJA2_NATIVE:
        from ansible.utils.native_jinja import NativeJinjaText
        text = NativeJinjaText(text)
    return text
