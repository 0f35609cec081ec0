"""Real server processes for the end-to-end tests: gunicorn serving the app and ``python worker.py`` RQ
workers, started against the test Redis on loopback, and stopped (SIGTERM, then SIGKILL) afterwards."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from api_support import ROOT

from service.redis_local import free_port


def environment(redis_url: str, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    # a metrics listener of its own (the default 127.0.0.1:9100 would be shared by every server started)
    env = {**os.environ, "TILEHOUSE_REDIS_URL": redis_url, "TILEHOUSE_LOG_LEVEL": "WARNING",
           "TILEHOUSE_METRICS_BIND": f"127.0.0.1:{free_port()}", **(extra or {})}
    for name in ("PROMETHEUS_MULTIPROC_DIR", "TILEHOUSE_WORKER_CLASS"):
        env.pop(name, None)
    return env


def start_gunicorn(env: Mapping[str, str], log: Path, port: int | None = None,
                   config_file: bool = False) -> tuple[subprocess.Popen, str]:
    """gunicorn on loopback; ``config_file``: with the project's gunicorn.conf.py (which reads the
    listeners from ``TILEHOUSE_BIND`` and ``TILEHOUSE_METRICS_BIND``) instead of command-line settings."""
    port = port or free_port()
    env = dict(env)
    if config_file:
        env["TILEHOUSE_BIND"] = f"127.0.0.1:{port}"
        argv = ["-c", "gunicorn.conf.py"]
    else:
        argv = ["--workers", "2", "--bind", f"127.0.0.1:{port}", "--log-level", "warning"]
    with open(log, "ab") as out:
        proc = subprocess.Popen([sys.executable, "-m", "gunicorn", *argv, "service:create_app()"],
                                cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=out)
    return proc, f"http://127.0.0.1:{port}"


def start_worker(env: Mapping[str, str], log: Path, name: str | None = None) -> subprocess.Popen:
    argv = [sys.executable, "worker.py"] + (["--name", name] if name else [])
    with open(log, "ab") as out:
        return subprocess.Popen(argv, cwd=ROOT, env=dict(env), stdout=subprocess.DEVNULL, stderr=out)


def wait_ready(base: str, procs: list[subprocess.Popen], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for p in procs:
            assert p.poll() is None, f"{p.args} exited with {p.returncode}"
        try:
            with urllib.request.urlopen(base + "/readyz", timeout=1) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.1)
    raise AssertionError("the API did not become ready")


def stop(procs: list[subprocess.Popen], timeout: float = 15.0) -> None:
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p in procs:
        try:
            p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


@contextmanager
def api_and_workers(redis_url: str, tmp_path: Path, workers: int = 1,
                    extra_env: Mapping[str, str] | None = None, config_file: bool = False) -> Iterator[str]:
    """gunicorn (2 workers) and ``workers`` worker processes; yields the base URL once /readyz is 200."""
    env = environment(redis_url, extra_env)
    gunicorn, base = start_gunicorn(env, tmp_path / "gunicorn.log", config_file=config_file)
    procs = [start_worker(env, tmp_path / "worker.log") for _ in range(workers)]
    try:
        wait_ready(base, [gunicorn, *procs])
        yield base
    finally:
        stop([*procs, gunicorn])



def apt_get(package: str) -> bool:
    """``apt-get install`` Debian's ``package`` (an ``apt-get update`` only when the first try fails), when we
    are root on a machine with apt-get; whether it is installed."""
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        return False
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    cmd = ["apt-get", "install", "-y", "-q", "--no-install-recommends", package]
    if subprocess.run(cmd, env=env, capture_output=True).returncode == 0:
        return True
    subprocess.run(["apt-get", "update", "-q"], env=env, capture_output=True)
    return subprocess.run(cmd, env=env, capture_output=True).returncode == 0


def apt_install(package: str, binary: str) -> str | None:
    """The path of ``binary``, installing ``package`` (:func:`apt_get`) first when it is missing."""
    if not shutil.which(binary):
        apt_get(package)
    return shutil.which(binary)
