"""Read the ansible.posix.json callback's output on stdin; print JSON {host: {"reached": N,
"changed": N, "tasks": [names]}}: the tasks whose module ran on the node (not skipped, not a
controller-only action such as set_fact, debug or assert)."""
import json
import sys

CONTROLLER = {"set_fact", "debug", "assert", "fail", "meta", "include_tasks", "import_tasks", "include_role",
              "import_role", "include_vars", "add_host", "group_by", "validate_argument_spec"}

text = sys.stdin.read()
data = json.loads(text[text.index("{"):])
counts = {}
for play in data["plays"]:
    for task in play["tasks"]:
        for host, result in task["hosts"].items():
            entry = counts.setdefault(host, {"reached": 0, "changed": 0, "tasks": []})
            action = result.get("action", "").rsplit(".", 1)[-1]
            if result.get("skipped") or action in CONTROLLER:
                continue
            entry["reached"] += 1
            entry["changed"] += bool(result.get("changed"))
            entry["tasks"].append(task["task"]["name"])
json.dump(counts, sys.stdout)
