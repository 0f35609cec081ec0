"""ARCHITECTURE.md: imports go one way; ``engine`` and ``ai`` import without Flask, Redis or RQ."""

from __future__ import annotations

import subprocess
import sys

FORBIDDEN = {"engine": ("flask", "redis", "rq", "marshmallow", "ai", "service"),
             "ai": ("flask", "redis", "rq", "marshmallow", "service")}


def test_engine_and_ai_import_without_web_or_queue_libraries():
    for package, banned in FORBIDDEN.items():
        code = (f"import sys, {package}\n"
                f"bad = [m for m in sys.modules if m.split('.')[0] in {banned!r}]\n"
                "print(','.join(sorted(bad)))")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        assert out.stdout.strip() == "", f"{package} pulled in {out.stdout.strip()}"
