"""``python3 dev.py serve``: the launcher passes SIGTERM and SIGINT on to ``tilehouse serve`` and waits for
it, so every process under it (Redis, gunicorn and its workers, the RQ workers) stops and the port is free.

The launcher runs as a real process on a free port; it is started through ``dev.serve`` (what ``dev.py
serve`` calls once ``.venv`` is set up) so the test does not reinstall the environment.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from service.redis_local import free_port

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parent.parent
START_TIMEOUT = 90.0
STOP_TIMEOUT = 60.0


def descendants(pid: int) -> set[int]:
    """Every live process below ``pid`` (from /proc: parent ids), zombies left out."""
    parents: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if fields[0] != "Z":
                parents.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def port_free(port: int) -> bool:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the process tree from /proc")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_to_dev_py_serve_stops_every_child_and_frees_the_port(tmp_path, sig):
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TILEHOUSE_", "PROMETHEUS_"))}
    # a metrics listener of its own: the default 127.0.0.1:9100 is a running `serve`'s, like port 8000
    metrics_port = free_port()
    env["TILEHOUSE_METRICS_BIND"] = f"127.0.0.1:{metrics_port}"
    log = (tmp_path / "serve.log").open("wb")
    children: set[int] = set()
    # the signal goes to the launcher alone (not its process group), as `kill PID` or a supervisor sends it
    launcher = subprocess.Popen(
        [sys.executable, "-c", "import sys, dev; sys.exit(dev.serve(sys.argv[1:]))", "--bind",
         f"127.0.0.1:{port}", "--workers", "1", "--data-dir", str(tmp_path / "data"), "--stop-timeout", "20"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, process_group=0)
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            assert launcher.poll() is None, (tmp_path / "serve.log").read_text()[-3000:]
            with contextlib.suppress(OSError), urllib.request.urlopen(
                    f"http://127.0.0.1:{port}/readyz", timeout=2) as resp:
                if resp.status == 200:
                    break
            assert time.monotonic() < deadline, "dev.py serve did not become ready"
            time.sleep(0.2)
        children |= descendants(launcher.pid)
        # tilehouse serve, its Redis, the gunicorn master, two gunicorn workers, one RQ worker
        assert len(children) >= 5, children
        launcher.send_signal(sig)
        assert launcher.wait(timeout=STOP_TIMEOUT) == 0
        deadline = time.monotonic() + 10
        while any(alive(p) for p in children) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert [p for p in children if alive(p)] == []
        assert port_free(port) and port_free(metrics_port)
    finally:
        if launcher.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(launcher.pid, signal.SIGKILL)
            launcher.wait()
        for pid in children:  # whatever a failed run left behind
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        log.close()
