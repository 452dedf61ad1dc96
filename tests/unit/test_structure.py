"""The harness's shape: no two modules import each other, even from inside a function, and
libvirt is reached only through the machine backends."""

import ast
import re

from harness.paths import project_root

HARNESS = project_root() / "harness"


def import_graph(root) -> dict[str, set[str]]:
    """harness module -> the harness modules it imports anywhere in it (top level or inside functions)."""
    files = {}
    for path in (root / "harness").rglob("*.py"):
        parts = list(path.relative_to(root).with_suffix("").parts)
        files[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return {m: imports(p, m, set(files)) for m, p in files.items()}


def imports(path, here: str, known: set[str]) -> set[str]:
    package = here.split(".") if path.name == "__init__.py" else here.split(".")[:-1]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = ".".join(package[:len(package) - node.level + 1] + ([node.module] if node.module else [])) \
                if node.level else node.module or ""
            for alias in node.names:  # `from . import x` names a module; `from .x import y` a name in one
                out.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base)
        elif isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
    return {m for m in out if m in known and m != here}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every group of modules that reach each other through imports (Tarjan's components)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_cycle_finder_finds_a_cycle_hidden_in_a_function(tmp_path):
    pkg = tmp_path / "harness"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from . import b\n")
    (pkg / "b.py").write_text("def f():\n    from .a import thing\n")
    (pkg / "c.py").write_text("from .a import thing\n")
    assert cycles(import_graph(tmp_path)) == [["harness.a", "harness.b"]]


def test_no_harness_modules_import_each_other():
    graph = import_graph(project_root())
    assert "harness.images.node" in graph and "harness.lifecycle" in graph["harness.scenario.labs"]
    assert cycles(graph) == []


def test_only_the_machine_backends_reach_libvirt():
    """Everything else goes through the MachineBackend interface (machines/base.py)."""
    reaching = []
    for path in HARNESS.rglob("*.py"):
        if path.parent.name == "machines":
            continue
        text = path.read_text()
        if re.search(r"^\s*(import libvirt|from libvirt\b)", text, re.M) or re.search(r"\.conn\b", text):
            reaching.append(str(path.relative_to(project_root())))
    assert reaching == []


def _imported_by(path, known: set[str]) -> set[str]:
    """The harness modules a file outside harness/ (tasks.py, a benchmark) imports."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                out.add(f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}" in known else node.module)
        elif isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
    return {m for m in out if m in known}


def reached_from_the_product(root, graph) -> set[str]:
    """Every harness module tasks.py, the benchmarks or `python -m harness.host` (scripts/setup)
    can load: their imports, followed through the graph, with each module's packages."""
    from harness import verify

    graph = {m: set(deps) for m, deps in graph.items()}
    # verify loads its layers by name (importlib), so the registry stands for the import
    graph["harness.verify"] |= {f"harness.verify.{m}" for m in verify._MODULES.values()}
    todo = _imported_by(root / "tasks.py", set(graph)) | {"harness.host"}
    for bench in (root / "benchmarks").glob("*.py"):
        todo |= _imported_by(bench, set(graph))
    seen = set()
    while todo:
        m = todo.pop()
        if m in seen:
            continue
        seen.add(m)
        parts = m.split(".")
        todo |= {".".join(parts[:i]) for i in range(1, len(parts))} & set(graph)
        todo |= graph.get(m, set())
    return seen


def test_no_harness_module_is_there_for_the_tests_alone():
    """A test double (a scripted remote, a stand-in backend) lives under tests/, not in the product."""
    root = project_root()
    graph = import_graph(root)
    assert "harness.probes.cluster" in graph
    assert sorted(set(graph) - reached_from_the_product(root, graph)) == []


def test_a_module_only_the_tests_import_is_found(tmp_path):
    pkg = tmp_path / "harness"
    (pkg / "remote").mkdir(parents=True)
    (tmp_path / "benchmarks").mkdir()
    for f in ("__init__.py", "remote/__init__.py", "remote/ssh.py", "remote/fake.py", "host.py", "verify.py"):
        (pkg / f).write_text("")
    (tmp_path / "tasks.py").write_text("from harness.remote import ssh\n")
    graph = import_graph(tmp_path)
    graph.setdefault("harness.verify", set())
    assert set(graph) - reached_from_the_product(tmp_path, graph) == {"harness.remote.fake", "harness.verify"}
