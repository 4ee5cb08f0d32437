"""Testinfra hosts for a Molecule scenario, reached straight through podman.

testinfra's ansible backend has no podman mapping and would fall back to one Ansible run
per command; ``podman://NAME`` runs ``podman exec`` directly.
"""
import os

import yaml


def hosts_of(group="all"):
    inventory_file = os.environ["MOLECULE_INVENTORY_FILE"]
    with open(inventory_file) as handle:
        inventory = yaml.safe_load(handle)
    names = set()

    def walk(node, in_group):
        if not isinstance(node, dict):
            return
        if in_group:
            names.update((node.get("hosts") or {}).keys())
        for child_name, child in (node.get("children") or {}).items():
            walk(child, in_group or child_name == group)

    for top_name, top in inventory.items():
        walk(top, group == "all" or top_name == group)
    return ["podman://%s" % name for name in sorted(names)]
