"""The layers (docs/developing.md): imports go one way; ``engine`` and ``ai`` import without Flask, Redis
or RQ; ``service`` and ``ai`` have no import cycle; the worker process never imports Flask."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import engine

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

# --------------------------------------------------------------------------- the engine <-> AI boundary
# docs/developing.md, "The three layers": what ``ai/`` uses of an engine is public and listed in the engine
# module (its search kit); ``ai/`` imports no ``_private`` engine name, reads no private attribute of an
# engine object and assigns no attribute of a ``State``.  Checked on the source (AST), so a line that is
# never run breaks the rule all the same.

AI_SOURCES = sorted((Path(__file__).resolve().parent.parent / "ai").rglob("*.py"))
#: the receivers whose attributes code may set and whose private attributes it may read: its own
OWN = ("self", "cls")


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _engine_modules(tree: ast.Module) -> dict[str, str]:
    """Local name -> the engine module it is bound to, for ``import engine.x [as m]`` and
    ``from engine import x``."""
    bound: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "engine":
                    bound[alias.asname or "engine"] = alias.name if alias.asname else "engine"
        elif isinstance(node, ast.ImportFrom) and node.module == "engine" and not node.level:
            for alias in node.names:
                bound[alias.asname or alias.name] = f"engine.{alias.name}"
    return bound


def private_engine_uses(source: str) -> list[str]:
    """The places ``source`` imports a private engine name (``from engine.x import _y``) or reads a private
    attribute of something other than itself (``engine.x._y``, ``m._y`` for an engine module ``m``, a
    state's ``st._turn``)."""
    tree = ast.parse(source)
    found: list[str] = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "engine"
                and not node.level):
            found += [f"line {node.lineno}: from {node.module} import {a.name}" for a in node.names
                      if _private(a.name)]
        elif isinstance(node, ast.Attribute) and _private(node.attr) and not (
                isinstance(node.value, ast.Name) and node.value.id in OWN):
            found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


def _attribute_targets(target: ast.expr) -> list[ast.Attribute]:
    if isinstance(target, ast.Attribute):
        return [target]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [a for t in target.elts for a in _attribute_targets(t)]
    if isinstance(target, ast.Starred):
        return _attribute_targets(target.value)
    return []


def foreign_attribute_assignments(source: str) -> list[str]:
    """The places ``source`` sets or deletes an attribute of an object other than itself (``world.x = ...``,
    ``st.x += ...``, ``del st.x``, ``setattr(...)``, ``delattr(...)``): in ``ai/`` such an object is a
    state, whose fields only its engine may change."""
    tree = ast.parse(source)
    found: list[str] = []
    for node in ast.walk(tree):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = node.targets
        elif isinstance(node, ast.For):
            targets = [node.target]
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            targets = [node.optional_vars]
        elif isinstance(node, ast.comprehension):
            targets = [node.target]
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id in ("setattr", "delattr")):
            found.append(f"line {node.lineno}: {ast.unparse(node)}")
        for t in targets:
            found += [f"line {a.lineno}: {ast.unparse(a)}" for a in _attribute_targets(t)
                      if not (isinstance(a.value, ast.Name) and a.value.id in OWN)]
    return found


def test_ai_imports_no_private_engine_name():
    bad = {str(p): found for p in AI_SOURCES if (found := private_engine_uses(p.read_text()))}
    assert not bad, f"ai/ reaches into engine internals (use or add to the engine's search kit): {bad}"


def test_ai_assigns_no_attribute_of_a_state():
    bad = {str(p): found for p in AI_SOURCES if (found := foreign_attribute_assignments(p.read_text()))}
    assert not bad, f"ai/ sets attributes of objects it does not own (a state's fields are its engine's): " \
                    f"{bad}"


def test_the_boundary_rules_catch_every_form_they_name():
    # each form the rules name, found; the same code on the right side of the line, not
    caught = ["from engine.tiengow import _LEAD, moves_for",
              "import engine.tiengow as tg\ntg._SIZE",
              "import engine.tiengow\nengine.tiengow._SIZE",
              "from engine import tiengow\ntiengow._discard_of(())",
              "def f(st):\n    return st._turn"]
    for source in caught:
        assert private_engine_uses(source), source
    assert private_engine_uses(caught[0]) == ["line 1: from engine.tiengow import _LEAD"]
    assert not private_engine_uses("from engine.tiengow import moves_for\nclass A:\n    def f(self):\n"
                                   "        return self._x, cls._y, type(self).__name__")
    set_ = ["world.halt_at_deal_end = True", "st.turn, x = 1, 2", "st.cur += ((0, 1, ()),)",
            "st.n: int = 0", "del st.cur", "setattr(st, 'turn', 1)", "for st.turn in range(2): pass",
            "with open('f') as st.log: pass", "[0 for st.turn in range(2)]"]
    for source in set_:
        assert foreign_attribute_assignments(source), source
    assert not foreign_attribute_assignments("class A:\n    def f(self):\n        self.x = 1\n"
                                             "        st = self.copy()\n        st2 = st.clone()\n"
                                             "        st.hands[0] = ()\n")


def test_ai_uses_only_the_listed_search_kit_of_a_rule_sets_engine():
    """Every name ``ai/`` imports from a rule set's engine module is in that module's ``SEARCH_KIT``, and
    every name listed there is public and defined."""
    kits = {}
    for rules_id in sorted(engine.RULES):
        module = importlib.import_module(f"engine.{rules_id}")
        kit = module.SEARCH_KIT
        assert all(not n.startswith("_") and hasattr(module, n) for n in kit), rules_id
        assert list(kit) == sorted(set(kit)), f"{rules_id}: SEARCH_KIT is not sorted and distinct"
        kits[f"engine.{rules_id}"] = set(kit)
    bad = []
    used = set()
    for path in AI_SOURCES:
        tree = ast.parse(path.read_text())
        bound = _engine_modules(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module in kits and not node.level:
                for a in node.names:
                    used.add(node.module)
                    if a.name not in kits[node.module]:
                        bad.append(f"{path.name}:{node.lineno} {node.module}.{a.name}")
            elif (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                  and bound.get(node.value.id) in kits and node.attr not in kits[bound[node.value.id]]):
                bad.append(f"{path.name}:{node.lineno} {bound[node.value.id]}.{node.attr}")
    assert not bad, f"ai/ uses engine names its SEARCH_KIT does not list: {bad}"
    assert used == set(kits), "every rule set's heuristics use its engine's search kit"
