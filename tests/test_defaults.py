"""Each default is defined once: a setting of the app (``service.config.DEFAULTS``) has its default in
service/config.py only, and a setting a process reads from the environment (``TILEHOUSE_<NAME>``) has one
named default wherever it is read -- no module repeats a default as a literal.  Checked on the source (AST)
of every tracked Python file outside tests/."""

from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path

import pytest

from service import config

ROOT = Path(__file__).resolve().parents[1]
#: the calls that read a setting with a fallback: ``os.environ.get(NAME, default)``, ``os.getenv``,
#: ``cfg.get(KEY, default)``, ``setdefault`` and gunicorn.conf.py's typed readers
READERS = ("get", "getenv", "setdefault", "_int", "_float")
#: where the app's defaults live
HOME = "service/config.py"
#: a named constant
NAMED = re.compile(r"[A-Z][A-Z0-9_]*")


def _setting(node: ast.Call) -> str | None:
    """The setting ``node`` reads with a fallback (``BIND`` for ``TILEHOUSE_BIND``), or None."""
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    if name not in READERS or len(node.args) < 2:
        return None
    first = node.args[0]
    if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
        return None
    if first.value.startswith(config.ENV_PREFIX):
        return first.value.removeprefix(config.ENV_PREFIX)
    return first.value if first.value in config.DEFAULTS else None


def default_sources(sources: dict[str, str]) -> dict[str, dict[str, list[str]]]:
    """Setting -> where its default comes from -> the places (``file:line``): a named constant by its
    name (``DEFAULT_BIND``, however it is reached), a literal as ``literal`` at each place."""
    found: dict[str, dict[str, list[str]]] = {}
    for name, text in sources.items():
        for node in ast.walk(ast.parse(text)):
            if not isinstance(node, ast.Call) or (setting := _setting(node)) is None:
                continue
            named = [n.id if isinstance(n, ast.Name) else n.attr for n in ast.walk(node.args[1])
                     if isinstance(n, (ast.Name, ast.Attribute))
                     and NAMED.fullmatch(n.id if isinstance(n, ast.Name) else n.attr)]
            origin = named[-1] if named else "literal"
            found.setdefault(setting, {}).setdefault(origin, []).append(f"{name}:{node.lineno}")
    return found


def repeated_defaults(sources: dict[str, str]) -> list[str]:
    """The settings whose default is given in more than one place or, for the app's, outside its home."""
    problems = []
    for setting, origins in sorted(default_sources(sources).items()):
        literals = [p for p in origins.get("literal", []) if not p.startswith(f"{HOME}:")]
        if setting in config.DEFAULTS and literals:
            problems.append(f"{setting}: the app's default repeated as a literal at {literals}")
        elif len(origins) > 1 or len(origins.get("literal", [])) > 1:
            problems.append(f"{setting}: defaults from {origins}")
    return problems


def _tracked_python() -> dict[str, str]:
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: nothing lists the tracked files")
    listing = subprocess.run(["git", "ls-files", "-z", "*.py"], cwd=ROOT, check=True, capture_output=True,
                             text=True)
    names = [n for n in listing.stdout.split("\0")
             if n and not n.startswith("tests/") and (ROOT / n).is_file()]
    return {n: (ROOT / n).read_text(encoding="utf-8") for n in names}


def test_the_rule_finds_a_default_given_twice_and_an_app_default_outside_its_home():
    sources = {
        "gunicorn.conf.py": 'import os\nbind = os.environ.get("TILEHOUSE_BIND", "127.0.0.1:8000")\n',
        "service/runner.py": 'DEFAULT_BIND = "x"\nb = os.environ.get("TILEHOUSE_BIND", DEFAULT_BIND)\n',
        "service/storage.py": 'retry = app.config.get("RETRY_AFTER_SECONDS", 5)\n',
        "worker.py": 'a = os.environ.get("TILEHOUSE_LOG_LEVEL", "INFO")\n'
                     'b = os.getenv("TILEHOUSE_LOG_LEVEL", "INFO")\n',
        "service/ok.py": 'a = os.environ.get("TILEHOUSE_WORKERS", "2")\n'
                         'r = cfg.get("RETRY_AFTER_SECONDS", config.DEFAULT_RETRY_AFTER_SECONDS)\n'
                         'x = os.environ.get("PATH", "/bin")\n',
    }
    found = [p.split(":")[0] for p in repeated_defaults(sources)]
    assert found == ["BIND", "LOG_LEVEL", "RETRY_AFTER_SECONDS"]
    sources["service/runner.py"] = 'b = os.environ.get("TILEHOUSE_BIND", config.DEFAULT_BIND)\n'
    sources["gunicorn.conf.py"] = 'bind = os.environ.get("TILEHOUSE_BIND", _config.DEFAULT_BIND)\n'
    assert [p.split(":")[0] for p in repeated_defaults(sources)] == ["LOG_LEVEL", "RETRY_AFTER_SECONDS"]


def test_each_default_is_defined_once():
    problems = repeated_defaults(_tracked_python())
    assert not problems, "\n".join(problems)
