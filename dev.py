#!/usr/bin/env python3
"""Set up and run tilehouse on a machine that has only Python 3.11+ (standard library only).

    python3 dev.py serve [ARGS]   create .venv, install tilehouse, then `tilehouse serve ARGS`
    python3 dev.py test [ARGS]    create .venv, install tilehouse[test], then `python -m pytest ARGS`

The install is redone only when pyproject.toml changes (a stamp in .venv records its hash).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")


def ensure_env(extra: str) -> None:
    if sys.version_info < (3, 11):  # noqa: UP036 - dev.py runs on whatever python3 the machine has
        sys.exit(f"tilehouse needs Python 3.11 or newer, this is {sys.version.split()[0]}")
    stamp = VENV / f".tilehouse-{extra or 'base'}"
    want = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if stamp.exists() and stamp.read_text() == want:
        return
    if not (BIN / "python").exists():
        print("dev.py: creating .venv", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    target = f"{ROOT}[{extra}]" if extra else str(ROOT)
    print(f"dev.py: installing {Path(target).name} into .venv", flush=True)
    subprocess.run([str(BIN / "python"), "-m", "pip", "install", "--quiet", "--upgrade", "pip"], check=True)
    subprocess.run([str(BIN / "python"), "-m", "pip", "install", "--quiet", "-e", target], check=True)
    stamp.write_text(want)


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("serve", "test"):
        print(__doc__)
        return 2
    cmd, rest = argv[0], argv[1:]
    if cmd == "test":
        ensure_env("test")
        return subprocess.call([str(BIN / "python"), "-m", "pytest", *rest], cwd=ROOT)
    ensure_env("")
    proc = subprocess.Popen([str(BIN / "tilehouse"), "serve", *rest], cwd=ROOT)
    while True:
        try:
            return proc.wait()
        except KeyboardInterrupt:
            continue  # serve got the Ctrl-C too and stops its children in order; wait for it


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
