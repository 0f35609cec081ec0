"""End to end: gunicorn (2 workers) and ``python worker.py`` run as real processes against the test Redis,
and a whole game with AI seats is played over real HTTP on loopback."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest
from api_support import ROOT, check_response

from service.redis_local import free_port

pytestmark = pytest.mark.e2e


def _call(base: str, method: str, path: str, body: dict | None = None, token: str | None = None):
    req = urllib.request.Request(base + path, method=method,
                                 data=None if body is None else json.dumps(body).encode())
    if body is not None:
        req.add_header("Content-Type", "application/json")
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            status, ctype, data = r.status, r.headers.get("Content-Type"), r.read()
    except urllib.error.HTTPError as e:
        status, ctype, data = e.code, e.headers.get("Content-Type"), e.read()
    check_response(method, path.split("?")[0], status, ctype, data)
    return status, (json.loads(data) if data else None)


def _wait_ready(base: str, procs: list[subprocess.Popen], timeout: float = 30.0) -> None:
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


@pytest.fixture
def server(redis_conn, redis_url, tmp_path):
    port = free_port()
    env = {**os.environ, "TILEHOUSE_REDIS_URL": redis_url, "TILEHOUSE_LOG_LEVEL": "WARNING"}
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    with open(tmp_path / "gunicorn.log", "wb") as glog, open(tmp_path / "worker.log", "wb") as wlog:
        gunicorn = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "--workers", "2", "--bind", f"127.0.0.1:{port}",
             "--log-level", "warning", "service:create_app()"],
            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=glog)
        worker = subprocess.Popen([sys.executable, "worker.py"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                                  stderr=wlog)
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_ready(base, [gunicorn, worker])
        yield base
    finally:
        for p in (worker, gunicorn):
            p.send_signal(signal.SIGTERM)
        for p in (worker, gunicorn):
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def test_a_whole_game_with_ai_seats_over_gunicorn_and_a_worker_process(server):
    status, created = _call(server, "POST", "/v1/games", {
        "rules": "tiengow", "seed": 42,
        "seats": [{"kind": "human", "name": "Ann"},
                  {"kind": "ai", "engine": "ismcts", "params": {"iterations": 10}},
                  {"kind": "ai", "engine": "greedy"}, {"kind": "ai", "engine": "random"}]})
    assert status == 201
    game_id, token = created["game"]["id"], created["seats"][0]["token"]
    rng = random.Random(1)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        status, view = _call(server, "GET", f"/v1/games/{game_id}", token=token)
        assert status == 200
        if view["status"] == "finished":
            break
        if view["ai"]["pending"]:
            time.sleep(0.02)
            continue
        move = rng.choice(view["legal_moves"])["id"]
        status, after = _call(server, "POST", f"/v1/games/{game_id}/moves",
                              {"move": move, "version": view["version"]}, token)
        assert status == 200, after
    else:
        pytest.fail("the game did not finish: the worker process is not playing the AI seats")
    assert view["result"]["reason"] and abs(sum(view["result"]["payoffs"])) < 1e-9
    status, events = _call(server, "GET", f"/v1/games/{game_id}/events", token=token)
    assert status == 200 and events[-1]["version"] == view["version"]
    status, _ = _call(server, "DELETE", f"/v1/games/{game_id}", token=created["admin_token"])
    assert status == 204
