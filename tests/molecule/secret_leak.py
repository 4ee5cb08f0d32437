# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The secret-leak test (issue 26), run by molecule/opensm_ha's side_effect on the live SMs.

Sets a distinctive value for every secret the collection handles (OpenSM's sm_key, m_key,
sa_key and cc_key; a token, a password and an AWS secret in the NCCL log the health check and
the bundle read), then runs, each with ``--diff -vvv`` and the ``tree`` and ``junit``
callbacks writing every task result as JSON/XML:

1. the OpenSM converge with the new keys;
2. the drift check after the standby's ``sm_key`` was edited by hand to another distinctive
   value, tab-separated (OpenSM splits on tabs too), then with remediation;
3. the health run with the NCCL log;
4. a support bundle collection (archives unpacked).

Everything produced (console logs, callback trees, JUnit files, drift and health reports,
bundle files and archives, each SM node's journal) is searched for the distinctive hex and
strings: zero hits. The runs must have done what they claim (a drift record for sm_key, the
keys live in opensm.conf, module invocations in the journal), so an empty search is not a
test that did nothing.

    tests/molecule/secret_leak.py OUT_DIR      (MOLECULE_* variables set, as in a side_effect)
"""

from __future__ import absolute_import, division, print_function

import json
import os
import re
import subprocess
import sys
import tarfile

MARK = "5ec2e7"           # in every secret value below, and in nothing else
KEYS = {"sm_key": "0x5ec2e7000000a001", "m_key": "0x5ec2e7000000a002",
        "sa_key": "0x5ec2e7000000a003", "cc_key": "0x5ec2e7000000a004"}
DRIFTED_SM_KEY = "0x5ec2e7000000a005"
NCCL_LOG = "/var/tmp/nccl-secret-leak.log"
NCCL_TEXT = """\
node:1:1 [0] NCCL INFO NCCL_IB_HCA set to mlx5_0
node:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB eth0:10.0.0.1<0>
node:1:1 [0] NCCL INFO env NCCL_TOKEN=tok-5ec2e7-a006 NCCL_DEBUG=INFO
node:1:1 [0] NCCL INFO AWS_SECRET_ACCESS_KEY=5ec2e7a007/wJalrXUtnFEMI
node:1:1 [0] NCCL INFO proxy password: pw-5ec2e7-a008
node:1:1 [0] NCCL INFO sa_key 0x5ec2e7000000a009
"""
SMS = ("opensm-sm1", "opensm-sm2")


def run(argv, log, env=None, check=None):
    """Run ``argv``, its stdout and stderr into ``log``; returns the exit code."""
    with open(log, "w") as handle:
        proc = subprocess.run(argv, stdout=handle, stderr=subprocess.STDOUT, env=env, check=False)
    if check is not None and proc.returncode not in check:
        with open(log) as handle:
            tail = handle.read()[-3000:]
        sys.exit("%s exited %d (want %s): see %s\n%s" % (" ".join(argv[:4]), proc.returncode, check, log, tail))
    return proc.returncode


def node(host, command):
    return subprocess.run(["podman", "exec", host, "sh", "-c", command], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True, check=True).stdout


def main(out):
    top = os.environ["MOLECULE_PROJECT_DIRECTORY"]
    inventory = os.environ["MOLECULE_INVENTORY_FILE"]
    os.makedirs(out, exist_ok=True)
    extra = os.path.join(out, "..", "secret-leak-vars.json")   # outside the searched tree
    with open(extra, "w") as handle:
        json.dump({"opensm_sm_key": KEYS["sm_key"], "opensm_m_key": KEYS["m_key"],
                   "opensm_extra_options": {"sa_key": KEYS["sa_key"], "cc_key": KEYS["cc_key"]},
                   "health_nccl_log": NCCL_LOG, "health_timer": False, "health_interval": 1}, handle)

    def playbook(step, name, *args, check=None):
        env = dict(os.environ, ANSIBLE_CALLBACKS_ENABLED="ansible.builtin.tree,ansible.builtin.junit",
                   ANSIBLE_CALLBACK_TREE_DIR=os.path.join(out, step, "tree"),
                   JUNIT_OUTPUT_DIR=os.path.join(out, step, "junit"), JUNIT_HIDE_TASK_ARGUMENTS="False",
                   ANSIBLE_NOCOLOR="1")
        os.makedirs(os.path.join(out, step), exist_ok=True)
        argv = ["ansible-playbook", "-i", inventory, os.path.join(top, "playbooks", name), "--limit", "opensm",
                "--diff", "-vvv", "-e", "@" + extra] + list(args)
        return run(argv, os.path.join(out, step, "console.log"), env, check)

    # 1. converge with the keys
    playbook("converge", "opensm.yml", check=[0])
    conf = node("opensm-sm1", "cat /etc/opensm/opensm.conf")
    assert all(re.search(r"(?m)^%s\s+%s$" % (k, v), conf) for k, v in KEYS.items()), \
        "the converge did not write the keys: %s" % conf
    for host in SMS:
        node(host, "printf '%%s' '%s' > %s" % (NCCL_TEXT.replace("'", ""), NCCL_LOG))

    # 2. a key drifted by hand (tab-separated), the drift check, then remediation
    node("opensm-sm2", "sed -i 's/^sm_key .*/sm_key\\t%s/' /etc/opensm/opensm.conf" % DRIFTED_SM_KEY)
    report = os.path.join(out, "drift", "report")
    rc = playbook("drift", "drift_check.yml", "-e", "drift_report_dir=" + report)
    with open(os.path.join(report, "drift.json")) as handle:
        records = json.load(handle)["records"]
    assert rc != 0 and any(r["host"] == "opensm-sm2" and r["setting"] == "sm_key" for r in records), \
        "the drifted sm_key is no record: %s" % records
    playbook("remediate", "drift_check.yml", "-e", "drift_report_dir=" + os.path.join(out, "remediate", "report"),
             "-e", "drift_check_remediate=true", check=[0])

    # 3. health with the NCCL log, 4. a support bundle
    playbook("health", "health.yml", "-e", "health_report_dir=" + os.path.join(out, "health", "report"), check=[0, 2])
    bundles = os.path.join(out, "collect", "bundles")
    playbook("collect", "collect.yml", "-e", "collect_dir=" + bundles, check=[0])
    for host in SMS:
        with tarfile.open(os.path.join(bundles, host + ".tar.gz")) as archive:
            for member in archive.getmembers():
                if member.isfile():
                    data = archive.extractfile(member).read()
                    with open(os.path.join(out, "collect", "unpacked-%s-%s" % (host, member.name.replace("/", "_"))),
                              "wb") as handle:
                        handle.write(data)
        assert "NCCL_TOKEN=<redacted>" in open(os.path.join(bundles, host, "nccl.log")).read()

    # the nodes' journals
    for host in SMS:
        journal = node(host, "journalctl --no-pager -o cat")
        assert re.search(r"ansible-rdma\.fabric\.\w+.*Invoked with|Invoked with", journal), \
            "no module invocation in %s's journal: the search would prove nothing" % host
        with open(os.path.join(out, "journal-%s.txt" % host), "w") as handle:
            handle.write(journal)

    hits, searched = [], 0
    for directory, _dirs, files in os.walk(out):
        for name in files:
            path = os.path.join(directory, name)
            with open(path, "rb") as handle:
                data = handle.read()
            if path.endswith(".tar.gz"):
                continue              # searched unpacked
            searched += 1
            for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
                if MARK in line.lower():
                    hits.append("%s:%d: %s" % (os.path.relpath(path, out), number, line.strip()[:200]))
    print("secret-leak: %d files searched, %d hits" % (searched, len(hits)))
    if hits:
        sys.exit("secret values found in the output:\n" + "\n".join(hits[:50]))


if __name__ == "__main__":
    main(os.path.abspath(sys.argv[1]))
