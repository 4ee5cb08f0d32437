"""The imports of plugins/: no circle, and the area objects (module_utils/areas/) import nothing
above them: not the drift check (drift/), not the reports (reports/), not a plugin-level package
(plugins/filter, action, plugin_utils, ...). Read from the source (ast), imports inside functions too."""
import ast
import os

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
PLUGINS = os.path.join(REPO, "plugins")
PACKAGE = "ansible_collections.rdma.fabric."
# What an area object may not import (module_utils/areas/ sits below them).
ABOVE_AREAS = ("plugins/module_utils/drift/", "plugins/module_utils/reports/")
# The one import of the areas into reports/ left: the health area checks its settings with the
# health judge's own rules (reports/_health: merge_checks, REPLACE, LIMIT_DICTS), whose table the
# judge owns. reports/_health imports only common/ and nccl/; moving the judge's check rules out of
# reports/ removes this entry.
ALLOWED = {("plugins/module_utils/areas/health.py", "plugins/module_utils/reports/_health.py")}


def _files():
    for root, _dirs, files in os.walk(PLUGINS):
        for name in files:
            if name.endswith(".py"):
                yield os.path.relpath(os.path.join(root, name), REPO)


def _target(dotted):
    """The repository file of a dotted module name (a module, or a package's __init__)."""
    if not dotted.startswith(PACKAGE):
        return None
    path = dotted[len(PACKAGE):].replace(".", "/")
    for candidate in (path + ".py", path + "/__init__.py"):
        if os.path.isfile(os.path.join(REPO, candidate)):
            return candidate
    return None


def imports_of(rel):
    """The plugins/ files ``rel`` imports (``from X import name`` is X/name.py where that exists)."""
    with open(os.path.join(REPO, rel)) as handle:
        tree = ast.parse(handle.read(), rel)
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                found = _target("%s.%s" % (node.module, alias.name)) or _target(node.module)
                if found:
                    out.add(found)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                found = _target(alias.name)
                if found:
                    out.add(found)
    out.discard(rel)
    return sorted(p for p in out if not p.endswith("/__init__.py"))


def graph():
    return dict((rel, imports_of(rel)) for rel in _files())


def circles(edges):
    """Every import circle, each as the list of its files (Tarjan's strongly connected components)."""
    index, low, stack, on_stack, out, counter = {}, {}, [], set(), [], [0]

    def visit(node):
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in edges.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                item = stack.pop()
                on_stack.discard(item)
                component.append(item)
                if item == node:
                    break
            if len(component) > 1:
                out.append(sorted(component))
    for node in sorted(edges):
        if node not in index:
            visit(node)
    return out


def upward(edges):
    out = []
    for rel, targets in sorted(edges.items()):
        if not rel.startswith("plugins/module_utils/areas/"):
            continue
        for target in targets:
            above = target.startswith(ABOVE_AREAS) or not target.startswith("plugins/module_utils/")
            if above and (rel, target) not in ALLOWED:
                out.append((rel, target))
    return out


def test_no_import_circle_in_plugins():
    assert circles(graph()) == []


def test_no_area_object_imports_upward():
    assert upward(graph()) == []


def test_the_checks_find_a_circle_and_an_upward_import():
    edges = {"a.py": ["b.py"], "b.py": ["c.py"], "c.py": ["a.py"], "d.py": ["a.py"]}
    assert circles(edges) == [["a.py", "b.py", "c.py"]]
    edges = {"plugins/module_utils/areas/x.py": ["plugins/module_utils/drift/_state_check.py",
                                                 "plugins/filter/area.py", "plugins/module_utils/common/_common.py"]}
    assert upward(edges) == [("plugins/module_utils/areas/x.py", "plugins/module_utils/drift/_state_check.py"),
                             ("plugins/module_utils/areas/x.py", "plugins/filter/area.py")]


def test_the_graph_sees_imports_inside_functions():
    # _state_check imports the opensm area inside gather_facts
    assert "plugins/module_utils/areas/opensm.py" in imports_of("plugins/module_utils/drift/_state_check.py")
