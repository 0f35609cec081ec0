"""docs/developing.md, "Adding a rule set" and "Adding an AI engine": every place a new rule set or engine
must be registered holds every one that exists, and the page names every such place.  And the repository
speaks for itself: no ticket numbers in the tracked sources or in Markdown headings (history is in the
commit log and docs/ai-history.md), and no path into a folder outside the repository."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import re
import subprocess
from pathlib import Path

import pytest

import ai
import engine

ROOT = Path(__file__).resolve().parents[1]
GUIDE = (ROOT / "docs" / "developing.md").read_text()


def _section(title: str) -> str:
    start = GUIDE.index(f"## {title}")
    end = GUIDE.find("\n## ", start + 1)
    return GUIDE[start:] if end == -1 else GUIDE[start:end]


def _has_action_space(rules_id: str) -> bool:
    from tilehouse.agents import actions

    try:
        return bool(actions.move_ids(rules_id, engine.RULES[rules_id].default_players))
    except ValueError:  # no action space for it
        return False


def _has_heuristics(rules_id: str) -> bool:
    if importlib.util.find_spec(f"ai.heuristics.{rules_id}") is None:
        return False
    return callable(getattr(importlib.import_module(f"ai.heuristics.{rules_id}"), "greedy", None))


def _in_web_client(rules_id: str) -> bool:
    listing = re.search(r"export const RULESETS = \{([^}]*)\}", (ROOT / "service/web/static/games.js").read_text())
    return listing is not None and re.search(rf"(^|[\s,]){rules_id}\b", listing.group(1)) is not None


def _in_key_test(rules_id: str) -> bool:
    from test_keys import TABLES

    return rules_id in TABLES


#: the place, as docs/developing.md names it -> whether a rule set is registered there
RULE_SET_PLACES = {
    "docs/rules/<id>.md": lambda r: (ROOT / "docs" / "rules" / f"{r}.md").is_file()
    and f"(rules/{r}.md)" in (ROOT / "docs" / "index.md").read_text(),
    "engine/<id>.py": lambda r: (ROOT / "engine" / f"{r}.py").is_file() and r in engine.RULES,
    "engine/__init__.py": lambda r: re.search(rf"^from engine import .*\b{r}\b", (ROOT / "engine" / "__init__.py")
                                              .read_text(), re.M) is not None,
    "tests/data/perft/<id>.json": lambda r: (ROOT / "tests" / "data" / "perft" / f"{r}.json").is_file(),
    "ai/heuristics/<id>.py": _has_heuristics,
    "tilehouse/agents/actions.py": _has_action_space,
    "service/web/static/games.js": _in_web_client,
    "tests/test_keys.py": _in_key_test,
}


@pytest.mark.parametrize("place", sorted(RULE_SET_PLACES))
def test_every_rule_set_is_registered_in_each_place_the_guide_names(place):
    assert f"`{place}`" in _section("Adding a rule set"), f"docs/developing.md does not name {place}"
    missing = sorted(r for r in engine.RULES if not RULE_SET_PLACES[place](r))
    assert not missing, f"{place} lacks {missing}"


def test_the_guide_names_no_rule_set_place_the_test_does_not_check():
    steps = re.findall(r"^\d+\. \*\*[^*]+\*\*: `([^`]+)`", _section("Adding a rule set"), re.M)
    assert set(steps) == set(RULE_SET_PLACES)


#: the place -> whether a registered engine is there
ENGINE_PLACES = {
    "ai/<id>.py": lambda e: Path(inspect.getfile(type(ai.ENGINES[e]))) == ROOT / "ai" / f"{e}.py",
    "ai/__init__.py": lambda e: type(ai.ENGINES[e]).__name__ in (ROOT / "ai" / "__init__.py").read_text(),
    "docs/ai.md": lambda e: f"`{e}`" in (ROOT / "docs" / "ai.md").read_text(),
}


@pytest.mark.parametrize("place", sorted(ENGINE_PLACES))
def test_every_built_in_engine_is_registered_in_each_place_the_guide_names(place):
    assert f"`{place}`" in _section("Adding an AI engine"), f"docs/developing.md does not name {place}"
    missing = sorted(e for e in ai.ENGINES if not ENGINE_PLACES[place](e))
    assert not missing, f"{place} lacks {missing}"


#: a ticket reference: the word issue(s) or ticket(s), an optional "#", then the number
TICKET = re.compile(r"\b(?:issues?|tickets?)\s*#?\d", re.I)
#: a path into the sibling folder the project's notes live in, outside the repository (the folder's name, a
#: slash and a file name, with or without "../" before): readers of the repository cannot open it
OUTSIDE = re.compile(r"(?<![\w/.-])(?:\.\./)*shared/[\w.-]")
#: tracked source files whose every line (code, docstrings, comments) is checked for ticket numbers
SOURCE_SUFFIXES = (".py", ".js", ".ts", ".yaml", ".yml", ".toml", ".css", ".html")
#: a Markdown heading (ATX style)
HEADING = re.compile(r"^ {0,3}#{1,6}\s")


def _tracked() -> list[str]:
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: nothing lists the tracked files")
    listing = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, check=True, capture_output=True, text=True)
    return [name for name in listing.stdout.split("\0") if name and (ROOT / name).is_file()]


def _text(name: str) -> str | None:
    try:
        return (ROOT / name).read_text(encoding="utf-8")
    except UnicodeDecodeError:  # an image, a font: no prose in it
        return None


def hygiene_problems(name: str, text: str) -> list[str]:
    """What ``name`` (a path in the repository) with contents ``text`` says that it should not: a ticket
    number in a source file's line or in a Markdown heading, a path to a file outside the repository."""
    is_source = name.endswith(SOURCE_SUFFIXES) or name.rsplit("/", 1)[-1] == "Dockerfile"
    is_markdown = name.endswith(".md")
    problems = []
    for number, line in enumerate(text.splitlines(), 1):
        if (is_source or (is_markdown and HEADING.match(line))) and TICKET.search(line):
            problems.append(f"{name}:{number}: ticket number: {line.strip()}")
        if OUTSIDE.search(line):
            problems.append(f"{name}:{number}: path outside the repository: {line.strip()}")
    return problems


def test_the_hygiene_check_finds_ticket_numbers_and_outside_paths():
    issue, shared = "issue", "shared"  # spelled apart, so that this file passes its own check
    assert len(hygiene_problems("engine/x.py", f"# resigning ({issue} 11)\nx = 1  # {issue.title()}s 14 and 17\n")) == 2
    assert hygiene_problems("web/x.js", f"// {issue} #16.2: limits\n") != []
    assert hygiene_problems("docs/x.md", f"### {issue.title()} 14, third round (2026-12-01)\n") != []
    assert hygiene_problems("docs/x.md", f"Measured on 2026-12-01 for {issue} 14.\n") == []  # prose may say it
    assert hygiene_problems("tests/x.py", f'"""Rules (see ../{shared}/rules/tiles.md)."""') != []
    assert hygiene_problems("docs/x.md", f"The contract is `{shared}/API.md`.\n") != []
    assert hygiene_problems("service/x.py", "ticket = tickets.issue(conn, game_id, 0, 30)\n") == []
    assert hygiene_problems("tests/x.py", f'for banned in ("seed", "{shared}/"):\n') == []


def test_no_ticket_numbers_and_no_paths_outside_the_repository():
    problems = [problem for name in _tracked() if (text := _text(name)) is not None
                for problem in hygiene_problems(name, text)]
    assert not problems, "\n".join(problems)

