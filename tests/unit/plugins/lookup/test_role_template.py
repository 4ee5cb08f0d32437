"""rdma.fabric.role_template renders every role template as ansible.builtin.template's lookup does."""
import glob
import json
import os
import subprocess
import sys

import pytest
import yaml
from ansible.errors import AnsibleLookupError
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar

from ansible_collections.rdma.fabric.plugins.lookup import role_template as R

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
TEMPLATES = sorted(glob.glob(os.path.join(REPO, "roles", "*", "templates", "*.j2")))


def _defaults():
    """Every role's defaults, as the roles' templates see them, and the plan values they use."""
    data = {}
    for path in sorted(glob.glob(os.path.join(REPO, "roles", "*", "defaults", "main.yml"))
                       + glob.glob(os.path.join(REPO, "roles", "*", "vars", "main.yml"))):
        with open(path) as handle:
            data.update(yaml.safe_load(handle) or {})
    data.update({
        "__gpudirect_plan": {"acs_mask": "0034", "acs_bridges": ["0000:17:00.0", "0000:18:02.0"]},
        "__opensm_priority": 14, "__opensm_guid": "0x0002c90300a0b0c1",
        "__opensm_options": {"sm_priority": "14", "sweep_interval": "10", "log_flags": "0x03"},
        "__opensm_partition_lines": ["Default=0x7fff,ipoib : ALL=full ;"],
        "__opensm_dropin_execstart": "/usr/sbin/opensm --config /etc/opensm/opensm.conf",
        "__health_timer_dir": "/usr/local/lib/rdma-fabric", "__health_timer_config": "/etc/rdma-fabric/health.json",
        "inventory_hostname": "node-01",
    })
    return data


def _ours(variables):
    loader = DataLoader()
    return R.LookupModule(loader=loader, templar=Templar(loader=loader, variables=variables))


def _operator():
    """Every variable the role templates read set as an operator might, away from the defaults:
    lists and dicts of several items, a value with a backslash, a quote and a percent sign (the
    health unit escapes them in Jinja expressions), the master SM with partitions, and an
    ansible_managed of their own."""
    data = _defaults()
    data.update({
        "gpudirect_acs_script_path": "/opt/rdma fabric/acs.sh",
        "gpudirect_acs_unit_after": ["fabricsim.service", "systemd-modules-load.service", "network-online.target"],
        "__gpudirect_plan": {"acs_mask": "0000", "acs_bridges": []},
        "health_timer_every": "15min", "health_timer_textfile": "/srv/prometheus/rdma fabric.prom",
        "rdma_fabric_environment": {"NCCL_IB_HCA": "mlx5_0,mlx5_1", "ODD": 'a "b" \\c 50% \\n', "N": 4},
        "opensm_fabric": "fabric-b", "opensm_role": "master", "opensm_standby_rank": 2,
        "opensm_keep_default_partition": False, "opensm_cache_dir": "/var/lib/opensm-cache-b",
        "opensm_partitions": [
            {"name": "gpu", "pkey": "0x0002", "ipoib": True, "mtu": 4, "rate": 7, "sl": 3,
             "members": [{"guid": "0x0002c90300a0b0c1", "membership": "full"}, {"guid": "ALL", "membership": "limited"}]},
            {"name": "storage", "pkey": 3, "defmember": "limited"},
        ],
        "__opensm_priority": 15,
        "__opensm_options": {"sm_priority": "15", "sweep_interval": "0", "log_flags": "0x03", "routing_engine": "ftree,updn",
                             "honor_guid2lid_file": "TRUE", "max_wire_smps": "8"},
        "__opensm_partition_lines": ["gpu=0x0002,ipoib,mtu=4,rate=7,sl=3 : 0x0002c90300a0b0c1=full, ALL=limited ;",
                                     "storage=0x0003,defmember=limited : ;"],
        "__opensm_guid": "0x0002c90300a0b0ff",
        "__opensm_dropin_execstart": "",
        "__health_timer_dir": "/opt/rdma-fabric", "__health_timer_config": "/etc/rdma-fabric/health-b.json",
        "roce_qos_persist_dir": "/var/lib/rdma-fabric/roce qos",
        "ansible_managed": "Managed by the fabric team; do not edit",
        "inventory_hostname": "node-b-17",
    })
    return data


# Both lookups in a fresh interpreter whose plugin loader finds this collection (its filters,
# which opensm's templates use), as under ansible-playbook, for each set of variables:
# [{file: [ours, builtin, repr(type(ours)), repr(type(builtin))]}, ...].
RENDER_BOTH = r"""
import json, os, sys
from ansible.plugins.loader import init_plugin_loader, lookup_loader
init_plugin_loader([sys.argv[1]])
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar
given = json.load(sys.stdin)
out = []
for variables in given["variable_sets"]:
    extra = given["template_vars"]
    loader = DataLoader()
    templar = Templar(loader=loader, variables=variables)
    ours = lookup_loader.get("rdma.fabric.role_template", loader=loader, templar=templar)
    builtin = lookup_loader.get("ansible.builtin.template", loader=loader, templar=templar)
    rendered = {}
    for path in sys.argv[2:]:
        term = path.split(os.sep)[-3] + "/" + os.path.basename(path)
        # the builtin as a task of the role calls it (template_path is the file's name)
        in_role = dict(variables, ansible_search_path=[os.path.dirname(os.path.dirname(path))])
        a = ours.run([term], in_role, template_vars=extra)[0]
        b = builtin.run([os.path.basename(path)], in_role, template_vars=extra)[0]
        rendered[term] = [a, b, type(a).__name__, type(b).__name__]
    out.append(rendered)
print(json.dumps(out))
"""


def test_the_roles_have_templates_to_compare():
    assert len(TEMPLATES) >= 10


def render_both(paths, template_vars=None, variable_sets=None):
    given = {"variable_sets": variable_sets or [_defaults()], "template_vars": template_vars or {}}
    proc = subprocess.run([sys.executable, "-c", RENDER_BOTH, os.path.join(REPO, ".cache", "collections")] + paths,
                          input=json.dumps(given), capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    return out if variable_sets else out[0]


def test_each_role_template_renders_as_the_builtin_lookup():
    """Every role template, with the defaults and with an operator's values, byte for byte the
    text of ansible.builtin.template's lookup on the running ansible-core."""
    defaults, operator = render_both(TEMPLATES, variable_sets=[_defaults(), _operator()])
    for rendered in (defaults, operator):
        assert len(rendered) == len(TEMPLATES)
        for term, (ours, builtin, ours_type, builtin_type) in sorted(rendered.items()):
            assert ours == builtin, term
            assert ours_type == builtin_type, term
            assert ours.strip() and "{{" not in ours and "{%" not in ours, term
    # the operator's values reached the files (the two sets render differently)
    for term in defaults:
        # the units and the health runner read no variable an operator sets (but ansible_managed)
        if term not in ("roce_qos/rdma-fabric-roce-qos.service.j2", "roce_qos/rdma-fabric-roce-qos@.service.j2",
                        "health/rdma-fabric-health.j2", "health/rdma-fabric-scheduler-gate.j2"):
            assert defaults[term][0] != operator[term][0], term
    assert "50%%" in operator["health/rdma-fabric-health.service.j2"][0]
    assert "gpu=0x0002" in operator["opensm/partitions.conf.j2"][0]


def test_template_vars_reach_the_template_as_with_the_builtin():
    path = os.path.join(REPO, "roles", "opensm", "templates", "opensm-dropin.conf.j2")
    rendered = render_both([path], {"__opensm_dropin_execstart": "/usr/libexec/opensm-launch"})
    ours, builtin = rendered["opensm/opensm-dropin.conf.j2"][:2]
    assert ours == builtin and "/usr/libexec/opensm-launch" in ours


def test_the_hosts_variables_are_not_changed():
    variables = _defaults()
    before = dict(variables)
    ours = _ours(variables)
    ours.run(["roce_qos/rdma-fabric-roce-qos.service.j2"], variables)
    assert variables == before and "template_path" not in variables


@pytest.mark.parametrize("term", ["roce_qos", "roce_qos/", "Roce/x.j2", "roce_qos/../defaults/main.yml",
                                  "roce_qos/sub/x.j2", "roce_qos/..", "/etc/passwd", 7])
def test_a_bad_term_is_an_error_naming_it(term):
    with pytest.raises(AnsibleLookupError, match="role_template: expected ROLE/FILE.*%s" % repr(term).replace(".", r"\.")):
        R.template_path(term)


def test_a_missing_template_is_an_error_naming_it_and_the_path():
    with pytest.raises(AnsibleLookupError, match=r"'roce_qos/nope\.j2'.*roles/roce_qos/templates/nope\.j2"):
        R.template_path("roce_qos/nope.j2")


def test_an_unknown_option_or_bad_template_vars_is_an_error():
    variables = _defaults()
    ours = _ours(variables)
    with pytest.raises(AnsibleLookupError, match="unknown option.*trim_blocks"):
        ours.run(["roce_qos/rdma-fabric-roce-qos.service.j2"], variables, trim_blocks=False)
    with pytest.raises(AnsibleLookupError, match="template_vars: expected a dict, got 'x'"):
        ours.run(["roce_qos/rdma-fabric-roce-qos.service.j2"], variables, template_vars="x")


# The run's render cache: two hosts with the same values of what a template reads get the text
# rendered once; a value it reads that differs renders again; one it does not read does not.
CACHE_RUN = r"""
import json, os, sys
from ansible import constants as C
from ansible.plugins.loader import init_plugin_loader, lookup_loader
init_plugin_loader([sys.argv[1]])
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar
variables = json.load(sys.stdin)
loader = DataLoader()
directory = os.path.join(C.DEFAULT_LOCAL_TMP, "rdma_fabric_role_template")
term = "gpudirect/rdma-fabric-acs.service.j2"
def render(**changed):
    data = dict(variables, **changed)
    ours = lookup_loader.get("rdma.fabric.role_template", loader=loader, templar=Templar(loader=loader, variables=data))
    text = ours.run([term], data)[0]
    return text, sorted(f for f in os.listdir(directory) if f.endswith(".txt"))
out = [render(), render(), render(unrelated_variable="x"), render(gpudirect_acs_script_path="/opt/acs.sh")]
print(json.dumps(out))
"""


def test_the_run_renders_each_distinct_file_once():
    proc = subprocess.run([sys.executable, "-c", CACHE_RUN, os.path.join(REPO, ".cache", "collections")],
                          input=json.dumps(_defaults()), capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    (first, files1), (second, files2), (unrelated, files3), (changed, files4) = json.loads(proc.stdout)
    assert len(files1) == 1 and files2 == files1 and files3 == files1    # hits: nothing new rendered
    assert second == first and unrelated == first
    assert len(files4) == 2 and "/opt/acs.sh" in changed and "/opt/acs.sh" not in first


@pytest.mark.parametrize("source, pure", [
    ("{{ a }} {% for x in b %}{{ x | upper }}{% endfor %}", True),
    ("{{ a | rdma.fabric.area_errors('a') }}{% if b is rdma.fabric.nothing %}{% endif %}", True),
    ("{{ lookup('pipe', 'date') }}", False),
    ("{{ query('file', a) }}", False),
    ("{{ now() }}", False),
    ("{{ template_run_date }}", False),
    ("{{ hostvars[a].b }}", False),
    ("{{ b | random }}", False),
    ("{{ b | shuffle | first }}", False),
    ("{{ a }}{% include b %}", False),
    ("{% import 'x.j2' as x %}{{ a }}{{ b }}", False),
    ("{% from 'x.j2' import y %}{{ a }}{{ b }}", False),
    ("{% extends 'x.j2' %}{{ a }}{{ b }}", False),
    ("#jinja2: variable_start_string: '[%', variable_end_string: '%]'\n[% a %]{{ b }}", False),
])
def test_template_names_and_purity(source, pure):
    names, got = R.template_names(source)
    assert got is pure
    if pure:
        assert names == ["a", "b"]


def test_the_names_parser_never_renders():
    environment = R.parse_environment()
    with pytest.raises(AssertionError, match="never renders"):
        environment.filters.get("rdma.fabric.anything")("x")


def test_the_lookup_uses_no_private_ansible_core_api():
    with open(R.__file__) as handle:
        source = handle.read()
    for private in ("ansible._internal", "._engine", "_get_file_contents", "_available_variables"):
        assert private not in source, private


# Issue 26: a rendered text that holds a secret (opensm.conf's sm_key) is rendered every time,
# never left in the controller's temporary directory (a killed run leaves that directory).
SECRET_RUN = r"""
import json, os, sys
from ansible import constants as C
from ansible.plugins.loader import init_plugin_loader, lookup_loader
init_plugin_loader([sys.argv[1]])
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar
variables = json.load(sys.stdin)
loader = DataLoader()
directory = os.path.join(C.DEFAULT_LOCAL_TMP, "rdma_fabric_role_template")
ours = lookup_loader.get("rdma.fabric.role_template", loader=loader, templar=Templar(loader=loader, variables=variables))
text = ours.run(["opensm/opensm.conf.j2"], variables)[0]
kept = ""
for name in os.listdir(directory) if os.path.isdir(directory) else []:
    with open(os.path.join(directory, name)) as handle:
        kept += handle.read()
print(json.dumps([text, kept]))
"""


def test_a_text_holding_a_secret_is_never_cached_on_disk():
    key = "0x5ec2e7fe1df00d42"
    data = _defaults()
    data["__opensm_options"] = dict(data["__opensm_options"], sm_key=key)
    proc = subprocess.run([sys.executable, "-c", SECRET_RUN, os.path.join(REPO, ".cache", "collections")],
                          input=json.dumps(data), capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    text, kept = json.loads(proc.stdout)
    assert key in text and key not in kept


LOCK_RUN = r"""
import json, os, sys, time
sys.path.insert(0, sys.argv[1])
from ansible_collections.rdma.fabric.plugins.lookup import role_template as R
directory, log = sys.argv[2], sys.argv[3]

def make(tag):
    with open(log, "a") as handle:
        handle.write(tag + "\n")
    time.sleep(0.3)     # the others arrive while it renders
    return "rendered by %d" % os.getpid()

cache = object.__new__(R._RenderCache)
cache.key = os.path.join(directory, "file.txt")
text = cache.text(lambda: make("text"))
names = R._read_or_make(os.path.join(directory, "t.names.json"), lambda: json.dumps([["a"], make("names") != ""]),
                        json.loads)
print(json.dumps([text, names]))
"""


def test_workers_that_miss_a_file_together_render_it_once(tmp_path):
    """At 16 hosts every worker starts at once: the first renders each file (and reads a template's
    names) under its lock, the others wait and read its text."""
    log = tmp_path / "calls"
    procs = [subprocess.Popen([sys.executable, "-c", LOCK_RUN, os.path.join(REPO, ".cache", "collections"),
                               str(tmp_path / "cache"), str(log)], stdout=subprocess.PIPE, text=True)
             for _worker in range(4)]
    outs = [json.loads(proc.communicate(timeout=60)[0]) for proc in procs]
    assert all(proc.returncode == 0 for proc in procs)
    assert sorted(log.read_text().split()) == ["names", "text"]      # each made once, by one of the four
    assert len(set(json.dumps(out) for out in outs)) == 1 and outs[0][1] == [["a"], True]
