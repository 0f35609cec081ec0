"""The layers (docs/developing.md): imports go one way; ``engine`` and ``ai`` import without Flask, Redis
or RQ; ``service`` and ``ai`` have no import cycle; the worker process never imports Flask."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

FORBIDDEN = {"engine": ("flask", "redis", "rq", "marshmallow", "ai", "service"),
             "ai": ("flask", "redis", "rq", "marshmallow", "service")}


def test_engine_and_ai_import_without_web_or_queue_libraries():
    for package, banned in FORBIDDEN.items():
        code = (f"import sys, {package}\n"
                f"bad = [m for m in sys.modules if m.split('.')[0] in {banned!r}]\n"
                "print(','.join(sorted(bad)))")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        assert out.stdout.strip() == "", f"{package} pulled in {out.stdout.strip()}"


# --------------------------------------------------------------------------- no import cycles

ROOT = Path(__file__).resolve().parents[1]
#: the packages whose modules may import each other in one direction only
ACYCLIC = ("service", "ai")


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST, module: str, is_package: bool, known: set[str]) -> set[str]:
    """The modules of ``known`` that ``module`` imports, anywhere in its body -- inside functions too;
    only ``if TYPE_CHECKING:`` blocks, which never run, are left out."""
    found: set[str] = set()
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node):
            stack.extend(node.orelse)
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = module if is_package else module.rpartition(".")[0]
                for _ in range(node.level - 1):
                    package = package.rpartition(".")[0]
                base = f"{package}.{base}" if base else package
            for alias in node.names:
                found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base)
        stack.extend(ast.iter_child_nodes(node))
    return {m for m in found if m in known and m != module}


def import_graph(root: Path = ROOT, packages: tuple[str, ...] = ACYCLIC) -> dict[str, set[str]]:
    files = {_module_name(p, root): p for pkg in packages for p in (root / pkg).rglob("*.py")}
    known = set(files)
    return {m: _imports(ast.parse(p.read_text()), m, p.name == "__init__.py", known) for m, p in files.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected group of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
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


def test_service_and_ai_have_no_import_cycle_counting_imports_inside_functions():
    assert cycles(import_graph()) == []


def test_the_cycle_rule_finds_a_cycle_made_by_an_import_inside_a_function(tmp_path):
    pkg = tmp_path / "service"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "store.py").write_text("from service import clock\n")
    (pkg / "clock.py").write_text("def later():\n    from service.store import Store\n")
    (pkg / "typed.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from service import store\n")
    graph = import_graph(tmp_path, ("service",))
    assert graph["service.typed"] == set()
    assert cycles(graph) == [["service.clock", "service.store"]]


# --------------------------------------------------------------------------- the worker never imports Flask

def test_the_worker_and_every_module_its_jobs_import_never_import_flask():
    code = ("import sys, worker, service.jobs, service.queues, service.tables\n"
            "from rq.utils import import_attribute\n"
            "from service import queues\n"
            "for name in (queues.PLAY_TURN, queues.ON_PLAY_FAILURE, queues.TIMEOUT, queues.SUGGEST_JOB,\n"
            "             queues.MERGE_SUGGESTION):\n"
            "    import_attribute(name)\n"
            "bad = [m for m in sys.modules if m.split('.')[0] in ('flask', 'werkzeug', 'flask_limiter')]\n"
            "print(','.join(sorted(bad)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "", f"the worker process imported {out.stdout.strip()}"


def test_the_service_errors_module_knows_nothing_of_http():
    source = (ROOT / "service" / "errors.py").read_text()
    tree = ast.parse(source)
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)} | {
        a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert imported <= {"__future__", "collections.abc", "typing"}
