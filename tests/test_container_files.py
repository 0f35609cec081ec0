"""Containers: the Dockerfile and docker-compose.yml say what a deployment needs (no Docker engine
runs here, so the files are parsed: compose with PyYAML, the Dockerfile instruction by instruction).

Dockerfile: multi-stage on a slim Python base, wheels built and installed offline into a virtual
environment in the first stage, which the final stage only copies, no compiler installed in the final stage, a non-root user, a HEALTHCHECK that needs no curl, the
API (gunicorn) as the default command, worker.py and openapi.yaml in the image.
Compose: Redis with append-only persistence on a named volume and a health check, the API and a worker
service that starts after Redis is healthy and can be scaled (no fixed name, no published port).
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
COMPILERS = ("gcc", "g++", "clang", "build-essential", "make", "cc ")


def dockerfile_instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    text = (ROOT / "Dockerfile").read_text()
    joined = re.sub(r"\\\n", " ", text)
    out = []
    for line in joined.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        word, _, rest = line.partition(" ")
        out.append((word.upper(), rest.strip()))
    return out


def stages() -> list[list[tuple[str, str]]]:
    result: list[list[tuple[str, str]]] = []
    for instr in dockerfile_instructions():
        if instr[0] == "FROM":
            result.append([])
        if result:
            result[-1].append(instr)
    return result


def build_args() -> dict[str, str]:
    return dict(arg.split("=", 1) for word, arg in dockerfile_instructions() if word == "ARG" and "=" in arg)


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


# ------------------------------------------------------------------------------------------ Dockerfile

def test_dockerfile_is_multi_stage_on_a_slim_python_311_base():
    all_stages = stages()
    assert len(all_stages) >= 2
    args = build_args()
    for stage in all_stages:
        image = stage[0][1].split()[0]
        image = re.sub(r"\$\{(\w+)\}", lambda m: args[m.group(1)], image)
        assert re.fullmatch(r"python:3\.11[.\d]*-slim(-\w+)?(@sha256:[0-9a-f]{64})?", image), image


def test_every_base_image_is_pinned_by_digest_and_dev_py_pin_images_moves_the_pins():
    import dev

    args = build_args()
    froms = [re.sub(r"\$\{(\w+)\}", lambda m: args[m.group(1)], stage[0][1].split()[0]) for stage in stages()]
    compose_images = [s["image"] for s in yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"].values()
                      if "build" not in s and not s["image"].startswith("tilehouse:")]
    for image in froms + compose_images:
        assert dev.IMAGE_REF.fullmatch(image), f"{image} is not pinned by digest"
    # the update command rewrites each pin to what the registry says the tag is now, and nothing else
    text = (ROOT / "Dockerfile").read_text()
    asked = []
    new = dev.pin_images(text, lambda name, tag: asked.append((name, tag)) or "sha256:" + "0" * 64)
    assert asked == [("python", "3.11-slim-bookworm")]
    assert new == dev.IMAGE_REF.sub(lambda m: f"{m['name']}:{m['tag']}@sha256:{'0' * 64}", text) != text


def test_dockerfile_builds_wheels_first_and_the_final_stage_only_copies_what_they_installed():
    first, final = stages()[0], stages()[-1]
    build_runs = " ".join(a for w, a in first if w == "RUN")
    assert "pip wheel" in build_runs and "pip install --no-index /wheels/" in build_runs
    assert ("COPY", "--from=build /opt/venv /opt/venv") in final
    # The wheel's package data service/openapi.yaml may be a link to the top-level file: copy its target.
    copied_first = " ".join(a for w, a in first if w == "COPY")
    linked = ROOT / "service" / "openapi.yaml"
    if linked.is_symlink():
        target = linked.resolve().relative_to(ROOT)
        assert str(target) in copied_first.split(), f"the build stage must copy {target}"
    assert not any(w == "RUN" and "pip" in a for w, a in final), "the final stage installs nothing itself"
    assert any(w == "ENV" and "PATH=/opt/venv/bin:" in a for w, a in final)


def test_final_image_installs_no_compiler():
    final = stages()[-1]
    for word, args in final:
        if word == "RUN":
            assert not any(c in args for c in COMPILERS), args
            assert "apt-get install" not in args and "apk add" not in args, args


def test_final_image_runs_as_a_non_root_user():
    users = [a for w, a in stages()[-1] if w == "USER"]
    assert users, "no USER in the final stage"
    user = users[-1].split(":")[0]
    assert user not in ("root", "0")


def test_healthcheck_hits_healthz_with_python_not_curl():
    (check,) = [a for w, a in stages()[-1] if w == "HEALTHCHECK"]
    _, _, cmd = check.partition("CMD")
    argv = json.loads(cmd)
    assert argv[:2] == ["python", "-c"]
    assert "/healthz" in argv[2] and "curl" not in check
    compile(argv[2], "healthcheck", "exec")


def test_default_command_is_the_api_under_gunicorn_and_worker_py_is_in_the_image():
    final = stages()[-1]
    (cmd,) = [json.loads(a) for w, a in final if w == "CMD"]
    assert cmd == ["gunicorn", "-c", "gunicorn.conf.py", "service.app:create_app()"]
    copied = " ".join(a for w, a in final if w == "COPY")
    for name in ("gunicorn.conf.py", "worker.py", "openapi.yaml"):
        assert name in copied, name
    env = " ".join(a for w, a in final if w == "ENV")
    assert "TILEHOUSE_BIND=0.0.0.0:8000" in env


def test_dockerignore_keeps_the_local_venv_and_git_out_of_the_build_context():
    ignored = {line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()
               if line.strip() and not line.startswith("#")}
    assert {".git", ".venv", ".tilehouse"} <= ignored
    # and keeps everything the Dockerfile copies
    for word, args in dockerfile_instructions():
        if word == "COPY" and "--from" not in args:
            for src in shlex.split(args)[:-1]:
                if not src.startswith("--"):
                    assert src.rstrip("/") not in ignored, src


# ------------------------------------------------------------------------------------------ compose

def test_compose_redis_persists_append_only_on_a_named_volume_with_a_health_check(compose):
    redis = compose["services"]["redis"]
    cmd = redis["command"]
    assert cmd[cmd.index("--appendonly") + 1] == "yes"
    volume, _, target = redis["volumes"][0].partition(":")
    assert target == "/data" and volume in compose["volumes"]
    assert "ping" in redis["healthcheck"]["test"]


@pytest.mark.parametrize("service", ["api", "worker"])
def test_compose_api_and_worker_start_after_redis_is_healthy(compose, service):
    spec = compose["services"][service]
    assert spec["depends_on"]["redis"]["condition"] == "service_healthy"
    assert spec["environment"]["TILEHOUSE_REDIS_URL"].startswith("redis://redis:6379")
    assert spec["healthcheck"]["test"][0] == "CMD"


def test_compose_api_runs_the_image_default_command_and_checks_readiness(compose):
    api = compose["services"]["api"]
    assert "command" not in api
    assert any("/readyz" in part for part in api["healthcheck"]["test"])
    assert any(str(p).endswith(":8000") for p in api["ports"])


def test_compose_reserves_a_worker_for_ai_seats_that_serves_the_play_queue_first(compose):
    services = compose["services"]
    reserved = services["worker-play"]
    assert reserved["command"] == ["python", "worker.py", "--queues", "play,suggest"]
    assert reserved["image"] == services["worker"]["image"] and reserved["pull_policy"] == "never"
    assert reserved["depends_on"] == services["worker"]["depends_on"]
    assert reserved["environment"] == services["worker"]["environment"]


def test_compose_worker_runs_worker_py_from_the_one_image_the_api_builds_and_can_be_scaled(compose):
    services = compose["services"]
    worker, api = services["worker"], services["api"]
    assert worker["command"] == ["python", "worker.py"]
    # one image: only the api service builds it; the worker runs the same tag and never pulls it
    assert "build" in api and "build" not in worker
    assert worker["image"] == api["image"] and worker["pull_policy"] == "never"
    # `docker compose up --scale worker=4` needs no fixed container name and no published host port.
    assert "container_name" not in worker and "ports" not in worker
    # RQ's warm shutdown finishes the job in hand: the grace period must outlast an AI job.
    assert int(str(worker["stop_grace_period"]).rstrip("s")) >= 120


#: README variables that are not settings of a container: the tests' Redis, `tilehouse serve`'s own
#: options, and what docker-compose.yml itself substitutes
NOT_CONTAINER_SETTINGS = {"TILEHOUSE_TEST_REDIS_URL", "TILEHOUSE_WORKERS", "TILEHOUSE_DATA_DIR", "TILEHOUSE_PORT",
                          "TILEHOUSE_ENV_FILE", "TILEHOUSE_IMAGE_TAG"}


@pytest.mark.parametrize("service", ["api", "worker"])
def test_every_tilehouse_setting_reaches_the_containers_through_one_env_file(compose, service):
    (env_file,) = compose["services"][service]["env_file"]
    assert env_file == "${TILEHOUSE_ENV_FILE:-tilehouse.env}"
    listed = set(re.findall(r"^#? ?(TILEHOUSE_[A-Z0-9_]+)=", (ROOT / "tilehouse.env").read_text(), re.M))
    wanted = {name for name in documented_variables() if name.startswith("TILEHOUSE_")} - NOT_CONTAINER_SETTINGS
    assert wanted - listed == set(), f"tilehouse.env lacks {sorted(wanted - listed)}"
    assert "tilehouse.env" in (ROOT / ".dockerignore").read_text().split()


def test_the_api_container_serves_metrics_only_on_an_unpublished_second_listener(compose):
    api = compose["services"]["api"]
    host, _, port = api["environment"]["TILEHOUSE_METRICS_BIND"].rpartition(":")
    assert host == "0.0.0.0" and port in [str(p) for p in api["expose"]]
    assert not any(str(p).rsplit(":", 1)[-1] == port for p in api["ports"])


def test_the_image_takes_build_args_for_a_private_index_and_an_extra_ca_in_the_build_stage_only(compose):
    first, final = stages()[0], stages()[-1]
    wanted = {"PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "EXTRA_CA_CERT"}
    assert wanted <= {a.split("=")[0] for w, a in first if w == "ARG"}
    assert not wanted & {a.split("=")[0] for w, a in final if w == "ARG"}
    run = " ".join(a for w, a in first if w == "RUN")
    assert "EXTRA_CA_CERT" in run and "PIP_CERT=" in run
    assert set(compose["services"]["api"]["build"]["args"]) == wanted


# ------------------------------------------------------------------------------------------ README

ENV_NAME = re.compile(r"\b(TILEHOUSE_[A-Z0-9_]*[A-Z0-9]|PROMETHEUS_MULTIPROC_DIR|FORWARDED_ALLOW_IPS)\b")
SOURCES = ("engine", "ai", "service", "bench")


def environment_variables_in_use() -> set[str]:
    from service import config

    names = {config.ENV_PREFIX + name for name in config.DEFAULTS}
    files = [p for d in SOURCES for p in (ROOT / d).rglob("*.py")]
    files += [ROOT / n for n in ("worker.py", "gunicorn.conf.py", "Dockerfile", "docker-compose.yml")]
    for path in files:
        names |= set(ENV_NAME.findall(path.read_text()))
    return names


def documented_variables() -> set[str]:
    rows = [line for line in (ROOT / "README.md").read_text().splitlines() if line.startswith("| `")]
    return {m.group(1) for line in rows if (m := re.match(r"\| `([A-Z0-9_]+)` \|", line))}


def test_readme_lists_every_environment_variable_in_one_table():
    missing = environment_variables_in_use() - documented_variables()
    assert not missing, f"README's environment table lacks {sorted(missing)}"


def test_the_wheel_the_image_installs_lists_every_python_package():
    """The image installs a built wheel, not the checkout: a package missing from pyproject's explicit list
    works in an editable install and the tests, and is absent from the container."""
    import tomllib

    setuptools_cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = setuptools_cfg.get("packages")
    if not isinstance(listed, list):  # packages.find discovers every package itself
        return
    on_disk = {str(init.parent.relative_to(ROOT)).replace("/", ".")
               for top in SOURCES for init in (ROOT / top).rglob("__init__.py")}
    assert on_disk <= set(listed), f"pyproject.toml [tool.setuptools] packages lacks {sorted(on_disk - set(listed))}"


def test_docs_index_links_the_rules_page_of_every_registered_rule_set():
    import engine

    index = (ROOT / "docs" / "index.md").read_text()
    for rules_id in engine.RULES:
        assert f"](rules/{rules_id}.md)" in index, rules_id
        assert (ROOT / "docs" / "rules" / f"{rules_id}.md").exists(), rules_id
