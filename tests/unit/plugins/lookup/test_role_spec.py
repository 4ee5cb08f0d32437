"""rdma.fabric.role_spec: the roles' settings dicts, files and drift specs, built in Python from
the host's variables, as an ansible-playbook run reads them (role defaults, inventory values
that are templates, `| bool` conversion, files rendered by rdma.fabric.role_template)."""
import glob
import json
import os
import re
import subprocess
import sys

import pytest
import yaml
from ansible.errors import AnsibleError, AnsibleUndefinedVariable

from ansible_collections.rdma.fabric.plugins.plugin_utils import _role_specs as S

# ansible-core 2.19 ships the json stdout callback; before, it is ansible.posix's
_NATIVE = hasattr(__import__("ansible.template", fromlist=["Templar"]).Templar, "evaluate_expression")
JSON_CALLBACK = "ansible.builtin.json" if _NATIVE else "ansible.posix.json"

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
NAMES = sorted(S.SPECS)


def _defaults(role):
    with open(os.path.join(REPO, "roles", role, "defaults", "main.yml")) as handle:
        return yaml.safe_load(handle)


PLAY = """
- hosts: gpu1
  gather_facts: false
  tasks:
    - {import_role: {name: rdma.fabric.roce_qos, tasks_from: drift_spec}}
    - {import_role: {name: rdma.fabric.nccl_env, tasks_from: drift_spec}}
    - {import_role: {name: rdma.fabric.gpudirect, tasks_from: drift_spec}}
    - {import_role: {name: rdma.fabric.opensm, tasks_from: drift_spec}}
    # the health role's variables, and its preflight run on them (the area's checks)
    - {import_role: {name: rdma.fabric.health, tasks_from: preflight}}
    # the rails role's variables, and its preflight (the area's and the rail planner's checks)
    - {import_role: {name: rdma.fabric.rails, tasks_from: preflight}}
    # the fabric_test role's variables, and its preflight
    - {import_role: {name: rdma.fabric.fabric_test, tasks_from: preflight}}
    # the nic_firmware role's variables
    - {import_role: {name: rdma.fabric.nic_firmware, tasks_from: drift_spec}}
    - name: Every name, and the role_template text of a file, as the run sees them
      ansible.builtin.debug:
        msg:
          specs: "{{ dict(names | zip(query('rdma.fabric.role_spec', *names))) }}"
          vars: {roce_qos: "{{ __roce_qos_spec }}",
                 gpudirect: "{{ __gpudirect_spec }}", nccl: "{{ __nccl_env_spec }}"}
          apply_sh: "{{ lookup('rdma.fabric.role_template', 'roce_qos/rdma-fabric-roce-qos-apply.sh.j2') }}"
      vars:
        names: %s
""" % json.dumps(NAMES)

# inventory values the way operators write them: a template, a yes/no string, an override
INVENTORY = """
all:
  hosts:
    gpu1:
      ansible_connection: local
      ansible_python_interpreter: %s
      roce_qos_trust: "{{ 'ds' ~ 'cp' }}"
      roce_qos_lldp: "no"
      roce_qos_roce_dscp: 24
      gpudirect_acs_script_path: /opt/rdma/acs.sh
      nccl_env_environment_file: /etc/nccl.env
      opensm_sm_key: "0x00000000c0ffee01"
      opensm_role: master
      rails_pools: [10.10.0.0/24, 10.10.1.0/24]
""" % sys.executable


def _run(tmp_path, play=PLAY):
    (tmp_path / "play.yml").write_text(play)
    (tmp_path / "inventory.yml").write_text(INVENTORY)
    env = dict(os.environ, ANSIBLE_STDOUT_CALLBACK=JSON_CALLBACK,
               ANSIBLE_COLLECTIONS_PATH=os.pathsep.join([os.path.join(REPO, ".cache", "collections")] + (
                   [] if JSON_CALLBACK.startswith("ansible.builtin.") else [os.environ.get("ANSIBLE_COLLECTIONS_PATH", "")])),
               ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp"), ANSIBLE_NOCOLOR="1")
    proc = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i",
                           str(tmp_path / "inventory.yml"), str(tmp_path / "play.yml")],
                          capture_output=True, text=True, env=env, check=False)
    return proc


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    proc = _run(tmp_path_factory.mktemp("role_spec"))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    result = json.loads(proc.stdout)["plays"][0]["tasks"][-1]["hosts"]["gpu1"]
    return result["msg"]


def test_every_name_builds_in_a_run(run):
    assert sorted(run["specs"]) == NAMES
    # the role vars are those lookups
    assert run["vars"] == {"roce_qos": run["specs"]["roce_qos"],
                           "gpudirect": run["specs"]["gpudirect"], "nccl": run["specs"]["nccl_env"]}


def test_roce_qos_settings_are_the_argument_spec_variables_templated_and_converted(run):
    defaults = _defaults("roce_qos")
    settings = run["specs"]["roce_qos"]["settings"]
    expected = dict((name[len("roce_qos_"):], value) for name, value in defaults.items())
    # "no" is false, as `| bool` reads it; nccl_env's roce_dscp default follows roce_qos's
    expected.update(trust="dscp", roce_dscp=24, lldp=False, nccl_roce_dscp=24)
    assert settings == expected


def test_every_roce_qos_variable_of_the_argument_spec_is_a_setting():
    with open(os.path.join(REPO, "roles", "roce_qos", "meta", "argument_specs.yml")) as handle:
        options = yaml.safe_load(handle)["argument_specs"]["main"]["options"]
    assert sorted(S.role_options("roce_qos")) == sorted(options) == sorted(_defaults("roce_qos"))
    from ansible_collections.rdma.fabric.plugins.module_utils.areas import roce_qos
    flags = sorted(name[len("roce_qos_"):] for name, option in options.items() if option.get("type") == "bool")
    assert sorted(roce_qos.FLAGS) == flags


def test_the_specs_files_are_the_role_templates_text(run):
    from ansible_collections.rdma.fabric.plugins.module_utils.areas import roce_qos
    spec = run["specs"]["roce_qos"]
    assert [f["path"] for f in spec["files"]] == [path for path, _term, _mode in roce_qos.FILES]
    assert spec["files"][0]["content"] == run["apply_sh"]
    assert spec["units"] == [{"name": "rdma-fabric-roce-qos.service", "enabled": True}]


def test_the_gpudirect_spec_renders_its_acs_files_with_slots(run):
    from ansible_collections.rdma.fabric.plugins.module_utils.areas import gpudirect
    spec = run["specs"]["gpudirect"]
    assert [f["path"] for f in spec["files"]] == ["/opt/rdma/acs.sh", _defaults("gpudirect")["gpudirect_unit_dir"] + "/rdma-fabric-acs.service"]
    script = spec["files"][0]["content"]
    assert "MASK=@RDMA_FABRIC_ACS_MASK@" in script and 'BRIDGES="@RDMA_FABRIC_ACS_BRIDGES@"' in script
    assert "ExecStart=/opt/rdma/acs.sh" in spec["files"][1]["content"]
    # every variable of the argument spec, templated and converted
    expected = dict((name[len("gpudirect_"):], value) for name, value in _defaults("gpudirect").items())
    expected.update(acs_script_path="/opt/rdma/acs.sh")
    assert spec["settings"] == expected
    assert sorted(S.role_options("gpudirect")) == sorted(_defaults("gpudirect"))
    # the node fills the slots from its plan
    filled = gpudirect.fill_slots(script, {"acs_mask": "002c", "acs_bridges": ["0000:17:00.0", "0000:18:02.0"]})
    assert "MASK=002c" in filled and 'BRIDGES="0000:17:00.0 0000:18:02.0"' in filled


def test_the_nccl_env_spec_has_every_variable_and_the_host(run):
    spec = run["specs"]["nccl_env"]
    defaults = _defaults("nccl_env")
    assert sorted(spec["settings"]) == sorted(name[len("nccl_env_"):] for name in defaults)
    assert spec["settings"]["environment_file"] == "/etc/nccl.env" and spec["host"] == "gpu1"
    assert spec["settings"]["conf_path"] == defaults["nccl_env_conf_path"]
    assert spec["settings"]["roce_dscp"] == 24    # its default, a template over roce_qos's


def test_an_undefined_variable_is_an_error_naming_it(tmp_path):
    play = """
- hosts: gpu1
  gather_facts: false
  tasks:
    - ansible.builtin.debug:
        msg: "{{ lookup('rdma.fabric.role_spec', 'roce_qos') }}"
"""
    proc = _run(tmp_path, play)
    assert proc.returncode != 0 and "the variable 'roce_qos_interfaces' is undefined" in proc.stdout


def test_get_templates_values_and_takes_a_default():
    class Templar(object):
        def template(self, value):
            return value.upper() if isinstance(value, str) else value
    get = S.getter(Templar(), {"a": "{{ x }}", "b": 3})
    assert get("a") == "{{ X }}" and get("b") == 3 and get("c", None) is None
    with pytest.raises(AnsibleUndefinedVariable, match="'c' is undefined"):
        get("c")


@pytest.mark.parametrize("name", ["roce_qos_settings", "ROCE_QOS", "", ["roce_qos"]])
def test_an_unknown_name_is_an_error_naming_it(name):
    with pytest.raises(AnsibleError, match=re.escape("%r is not one of %s" % (name, ", ".join(sorted(S.SPECS))))):
        S.build(name, None, None)


def test_no_role_var_is_still_a_jinja_dict_of_role_variables():
    """The settings dicts have one home (the builders): no role's vars spell them again."""
    for path in glob.glob(os.path.join(REPO, "roles", "*", "vars", "main.yml")):
        with open(path) as handle:
            text = handle.read()
        for name in ("roce_qos_trust", "roce_qos_lldp", "roce_qos_tcbw", "nccl_env_conf_path", "nccl_env_file_owner") + (
                "gpudirect_kernel_arguments", "gpudirect_acs_kernel_param", "gpudirect_kernel_backend"):
            assert "'%s':" % name not in text and "'%s':" % name.replace("roce_qos_", "") not in text, (path, name)


def test_each_name_is_the_role_var_of_that_name_and_its_lookup():
    role_vars = {}
    for role in ("roce_qos", "nccl_env", "gpudirect", "opensm", "health", "rails", "fabric_test", "nic_firmware"):
        with open(os.path.join(REPO, "roles", role, "vars", "main.yml")) as handle:
            role_vars.update(yaml.safe_load(handle))
    for name in NAMES:
        var = "__%s_spec" % name if name in S.AREA_OBJECTS else "__" + name
        assert role_vars[var] == S.lookup_expression(name), name
        assert S.built_var(role_vars[var]) == name
    assert S.built_var("{{ lookup('rdma.fabric.role_spec', 'roce_qos') | combine({}) }}") is None
    assert S.built_var({"a": 1}) is None


class _Other(object):
    """A value of a type templating may change (not plain data)."""


@pytest.mark.parametrize("value, templated", [
    ("plain", False), (3, False), (None, False), (True, False), ([1, "a", {"b": [2.5]}], False),
    ("{{ x }}", True), (["a", "{% if x %}b{% endif %}"], True), ({"k": "{# c #}"}, True), (_Other(), True),
])
def test_get_templates_only_what_holds_a_template_or_is_not_plain_data(value, templated):
    calls = []

    class Templar(object):
        def template(self, value):
            calls.append(value)
            return value
    assert S.getter(Templar(), {"v": value})("v") is value
    assert bool(calls) is templated


def test_get_templates_each_variable_once():
    calls = []

    class Templar(object):
        def template(self, value):
            calls.append(value)
            return value
    get = S.getter(Templar(), {"nccl_env_roce_dscp": "{{ roce_qos_roce_dscp }}"})
    assert get("nccl_env_roce_dscp") == get("nccl_env_roce_dscp") and len(calls) == 1


def test_the_health_spec_ships_the_timer_runner_and_what_it_imports(run):
    spec = run["specs"]["health"]
    paths = [f["path"] for f in spec["files"]]
    assert paths[0] == "/usr/local/lib/rdma-fabric/rdma-fabric-health"
    assert "_health_timer import main" in spec["files"][0]["content"] or "import _health_timer" in spec["files"][0]["content"]
    assert "/etc/rdma-fabric/health.json" in paths
    assert any(p.endswith("/module_utils/reports/_health_timer.py") for p in paths)
    # and the node's drift check after it (_drift_timer: the drift check's own code)
    assert any(p.endswith("/module_utils/drift/_drift_timer.py") for p in paths)
    assert any(p.endswith("/module_utils/drift/_state_check.py") for p in paths)
    assert not any(p.endswith("/module_utils/acceptance/_perftest_run.py") for p in paths)
    assert spec["settings"]["host"] == "gpu1" and spec["read"]["host"] == "gpu1"
    assert spec["settings"]["report_dir"].endswith("/health-report")      # a template default, templated


# The drift check's action builds the same specs without importing any role: the host's variables
# over the roles' defaults (_role_specs.host_variables), in a play that imports nothing. A probe
# action (play-adjacent, a subclass of the real one) returns what it would send to the node.
PROBE = '''
from ansible_collections.rdma.fabric.plugins.action.drift_check import ActionModule as DriftCheck


class ActionModule(DriftCheck):
    def run(self, tmp=None, task_vars=None):
        self._ActionModule__get = None
        groups = dict((area, "all") for area in self._task.args["areas"])
        specs = self._specs_of_groups(groups, task_vars["inventory_hostname"], task_vars)
        settings = self._task.args.get("settings") or []
        return {"specs": specs, "settings": self._settings(settings, task_vars) if settings else {}}

    def _settings(self, names, task_vars):
        from ansible_collections.rdma.fabric.plugins.plugin_utils import _role_specs
        from ansible_collections.rdma.fabric.plugins.module_utils.drift import _drift_areas as A
        return _role_specs.checked_settings(A.NODE_AREAS, names, self._getter(task_vars))
'''

NO_IMPORT_PLAY = """
- hosts: gpu1
  gather_facts: false
  tasks:
    - name: The specs the drift check's action builds, no role imported
      spec_probe:
        areas: %s
        settings: [gpudirect_reboot, gpudirect_fail_on_not_ready, nccl_env_fleet_check, roce_qos_lldp]
""" % json.dumps(["roce_qos", "nccl_env", "gpudirect", "opensm", "nic_firmware"])


def _probe(tmp_path, play=NO_IMPORT_PLAY):
    (tmp_path / "action_plugins").mkdir()
    (tmp_path / "action_plugins" / "spec_probe.py").write_text(PROBE)
    proc = _run(tmp_path, play=play)
    return proc


def test_the_drift_check_builds_the_role_specs_without_importing_the_roles(run, tmp_path):
    proc = _probe(tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    result = json.loads(proc.stdout)["plays"][0]["tasks"][-1]["hosts"]["gpu1"]
    for area in ("roce_qos", "nccl_env", "gpudirect", "opensm", "nic_firmware"):
        # the same dict, files and all, as the role's own lookup gives inside the imported role
        assert result["specs"][area] == run["specs"][area], area
    # (roce_qos's settings hold nccl_env's roce_dscp, whose default is a template over roce_qos_roce_dscp)
    assert result["specs"]["roce_qos"]["settings"]["nccl_roce_dscp"] == 24
    # the settings a play decides with: the role's defaults, and the inventory's "no" as `| bool` reads it
    assert result["settings"] == {"gpudirect_reboot": "never", "gpudirect_fail_on_not_ready": False,
                                  "nccl_env_fleet_check": "fail", "roce_qos_lldp": False}


@pytest.mark.parametrize("name, message", [
    ("opensm_sm_key", "opensm_sm_key is a secret: it is not returned"),
    ("no_such_variable", "settings: no_such_variable not a variable of the roles"),
])
def test_a_setting_that_is_a_secret_or_unknown_is_an_error_naming_it(name, message):
    get = S.getter(mock_templar(), {"opensm_sm_key": "0x1"})
    with pytest.raises(AnsibleError, match=message):
        S.checked_settings(("opensm", "roce_qos"), [name], get)


def test_a_setting_the_argument_spec_refuses_is_an_error_naming_the_variable_and_value():
    get = S.getter(mock_templar(), {"gpudirect_reboot": "sometimes"})
    with pytest.raises(AnsibleError, match="gpudirect_reboot must be one of: never, if_required, got: sometimes"):
        S.checked_settings(("gpudirect",), ["gpudirect_reboot"], get)


def mock_templar():
    class Templar(object):
        def template(self, value):
            return value
    return Templar()


CACHE_PROBE = PROBE + '''

class CachingProbe(ActionModule):
    pass


_run_probe = ActionModule.run


def _run_with_cache_listing(self, tmp=None, task_vars=None):
    import os
    from ansible import constants as C
    result = _run_probe(self, tmp, task_vars)
    directory = os.path.join(C.DEFAULT_LOCAL_TMP, "rdma_fabric_role_spec")
    result["kept"] = sorted(os.listdir(directory)) if os.path.isdir(directory) else []
    return result


ActionModule.run = _run_with_cache_listing
'''

CACHE_INVENTORY = """
all:
  vars:
    ansible_connection: local
    ansible_python_interpreter: %s
    roce_qos_roce_dscp: 24
  hosts:
    gpu1: {}
    gpu2: {}
    gpu3: {roce_qos_roce_dscp: 30}
""" % sys.executable

CACHE_PLAY = """
- hosts: all
  gather_facts: false
  serial: 1
  tasks:
    - name: The specs, one host after the other
      spec_probe:
        areas: [roce_qos, gpudirect, nccl_env]
"""


def test_hosts_with_the_same_values_share_one_spec_per_run(tmp_path):
    """The drift check builds an area's spec once per run for every distinct set of the values it
    reads; a host with another value gets its own. nccl_env's names the host (its HOST_FIELDS): it
    is shared too, with the host's own name set in each host's."""
    (tmp_path / "action_plugins").mkdir()
    (tmp_path / "action_plugins" / "spec_probe.py").write_text(CACHE_PROBE)
    (tmp_path / "play.yml").write_text(CACHE_PLAY)
    (tmp_path / "inventory.yml").write_text(CACHE_INVENTORY)
    env = dict(os.environ, ANSIBLE_STDOUT_CALLBACK=JSON_CALLBACK,
               ANSIBLE_COLLECTIONS_PATH=os.pathsep.join([os.path.join(REPO, ".cache", "collections")] + (
                   [] if JSON_CALLBACK.startswith("ansible.builtin.") else [os.environ.get("ANSIBLE_COLLECTIONS_PATH", "")])),
               ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp"), ANSIBLE_NOCOLOR="1")
    proc = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i",
                           str(tmp_path / "inventory.yml"), str(tmp_path / "play.yml")],
                          capture_output=True, text=True, env=env, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    hosts = {}
    for play in json.loads(proc.stdout)["plays"]:
        for host, result in play["tasks"][-1]["hosts"].items():
            hosts[host] = result
    specs = dict((host, result["specs"]) for host, result in hosts.items())
    assert specs["gpu1"]["roce_qos"] == specs["gpu2"]["roce_qos"]
    assert specs["gpu1"]["gpudirect"] == specs["gpu2"]["gpudirect"] == specs["gpu3"]["gpudirect"]
    assert specs["gpu3"]["roce_qos"]["settings"]["roce_dscp"] == 30 != specs["gpu1"]["roce_qos"]["settings"]["roce_dscp"]
    assert [specs[h]["nccl_env"]["host"] for h in ("gpu1", "gpu2", "gpu3")] == ["gpu1", "gpu2", "gpu3"]
    assert specs["gpu1"]["nccl_env"]["settings"] == specs["gpu2"]["nccl_env"]["settings"]
    # nccl_env_roce_dscp's default is roce_qos_roce_dscp: gpu3's differs
    assert specs["gpu3"]["nccl_env"]["settings"] != specs["gpu1"]["nccl_env"]["settings"]
    # kept after gpu1: one spec of each area; after gpu3, a second roce_qos and nccl_env one
    kept = [sorted(set(name.split("-")[0] for name in hosts[h]["kept"] if name.endswith(".json"))) for h in ("gpu1", "gpu3")]
    assert kept == [["gpudirect", "nccl_env", "roce_qos"], ["gpudirect", "nccl_env", "roce_qos"]]
    for area in ("roce_qos", "nccl_env"):
        count = dict((h, sum(1 for n in hosts[h]["kept"] if n.startswith(area + "-") and n.endswith(".json"))) for h in hosts)
        assert count == {"gpu1": 1, "gpu2": 1, "gpu3": 2}, area
