"""docs/api-guide.md runs as written: its shell sessions (the ``console`` blocks: ``$`` commands, ``>``
continuation lines, then what they printed) are run in order, in one bash, against a live server (a real
gunicorn and a real ``worker.py`` on a free port instead of localhost:8000), and every printed answer matches
the guide's. What differs from run to run by design is masked on both sides: game ids, tokens, request and
job ids, dates, epoch and elapsed milliseconds. A long answer cut in the guide (``... (N more lines)``)
matches on the lines shown and on N.

``TILEHOUSE_WRITE_GUIDE=1`` writes the answers of the run into the guide instead (cut where it was cut).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from api_support import ROOT
from processes import api_and_workers, free_port

pytestmark = pytest.mark.e2e

GUIDE = ROOT / "docs" / "api-guide.md"
#: where the guide's server listens
GUIDE_BASE = "localhost:8000"
#: the metrics listener the guide reads (TILEHOUSE_METRICS_BIND's default)
GUIDE_METRICS = "localhost:9100"
CUT = re.compile(r"^\.\.\. \((\d+) more lines\)$")
#: what differs between runs by design, masked before comparing (tokens before the ids they start with)
MASKS = [
    (re.compile(r"^Date: .*$", re.M), "Date: <date>"),
    (re.compile(r"\b[0-9a-f]{16}\.[A-Za-z0-9_-]{43}\b"), "<token>"),
    (re.compile(r"\b[A-Za-z0-9_-]{43}\b"), "<token>"),
    (re.compile(r"\b[0-9a-f]{32}\b"), "<request-id>"),
    (re.compile(r"\b[0-9a-f]{16}\b"), "<id>"),
    (re.compile(r'("[a-z_]*_ms"): \d+(\.\d+)?'), r"\1: <ms>"),
]


@dataclass
class Step:
    command: str
    expected: list[str]
    #: the output line index of a "... (N more lines)" mark and N
    cut: tuple[int, int] | None = None
    #: the guide's line numbers of the output (to write the run's answers back)
    lines: tuple[int, int] = (0, 0)
    got: list[str] = field(default_factory=list)


def steps(text: str) -> list[Step]:
    """The guide's shell commands in order, each with the output the guide shows."""
    out: list[Step] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        if lines[i].strip() != "```console":
            i += 1
            continue
        i += 1
        while lines[i] != "```":
            assert lines[i].startswith("$ "), f"docs/api-guide.md:{i + 1}: a console block starts with a $ command"
            command = [lines[i][2:]]
            i += 1
            while lines[i].startswith("> "):
                command.append(lines[i][2:])
                i += 1
            start = i
            while lines[i] != "```" and not lines[i].startswith("$ "):
                i += 1
            expected = lines[start:i]
            cut = next(((k, int(m.group(1))) for k, line in enumerate(expected) if (m := CUT.match(line))), None)
            out.append(Step("\n".join(command), expected, cut, (start, i)))
        i += 1
    return out


def _mask(lines: list[str]) -> list[str]:
    text = "\n".join(line.rstrip() for line in lines)
    for rx, repl in MASKS:
        text = rx.sub(repl, text)
    return text.strip("\n").split("\n") if text.strip("\n") else []


def run(all_steps: list[Step], base: str, cwd: Path, metrics: str) -> None:
    """Run every command in one bash (variables and functions carry over), output split per command."""
    marker = "@@guide-step-{}@@"
    script = ["set +e"]
    for n, step in enumerate(all_steps):
        script += [step.command.replace(GUIDE_BASE, base.removeprefix("http://")).replace(GUIDE_METRICS, metrics),
                   f"printf '\\n{marker.format(n)}\\n'"]
    done = subprocess.run(["bash", "-c", "\n".join(script)], cwd=cwd, capture_output=True, text=True, timeout=300)
    assert not done.stderr.strip(), done.stderr
    rest = done.stdout.replace("\r\n", "\n")
    for n, step in enumerate(all_steps):
        got, _, rest = rest.partition(f"\n{marker.format(n)}\n")
        step.got = got.strip("\n").split("\n") if got.strip("\n") else []


def _write(text: str, all_steps: list[Step]) -> str:
    lines = text.split("\n")
    for step in reversed(all_steps):
        shown = step.got
        if step.cut is not None:
            keep = step.cut[0]
            shown = [*step.got[:keep], f"... ({len(step.got) - keep} more lines)"]
        lines[step.lines[0]:step.lines[1]] = shown
    return "\n".join(lines)


def test_the_api_guide_runs_as_written_and_prints_what_it_shows(redis_conn, redis_url, tmp_path):
    if shutil.which("curl") is None:
        pytest.skip("curl is not on the PATH")
    text = GUIDE.read_text()
    all_steps = steps(text)
    assert len(all_steps) > 30
    metrics = f"127.0.0.1:{free_port()}"
    with api_and_workers(redis_url, tmp_path, workers=2, config_file=True,
                         extra_env={"TILEHOUSE_METRICS_BIND": metrics}) as base:
        work = tmp_path / "guide"
        work.mkdir()
        run(all_steps, base, work, metrics)
    if os.environ.get("TILEHOUSE_WRITE_GUIDE") == "1":
        GUIDE.write_text(_write(text, all_steps))
        return
    for step in all_steps:
        expected, got = _mask(step.expected), _mask(step.got)
        if step.cut is not None:
            keep, more = step.cut
            assert (got[:keep], len(got) - keep) == (expected[:keep], more), step.command
        else:
            assert got == expected, step.command
