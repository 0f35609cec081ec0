"""End to end: gunicorn (the project's gunicorn.conf.py: 2 gevent workers) and ``python worker.py`` run as
real processes against the test Redis; a whole game with AI seats is played over real HTTP on loopback,
and a browser-like client follows a game on its push stream with a stream ticket."""

from __future__ import annotations

import http.client
import json
import os
import random
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass

import pytest
from api_support import ROOT, check_response, check_schema, sse_frames
from processes import wait_ready

from service.redis_local import free_port

pytestmark = pytest.mark.e2e

#: seconds between keep-alive comments of a quiet stream (short, so reading one never waits long)
STREAM_KEEPALIVE = 0.5
#: gunicorn's graceful timeout in these tests (seconds)
GRACEFUL_TIMEOUT = 60


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


@dataclass
class Processes:
    base: str
    gunicorn: subprocess.Popen
    worker: subprocess.Popen


@pytest.fixture
def server(processes):
    return processes.base


@pytest.fixture
def processes(redis_conn, redis_url, tmp_path):
    port = free_port()
    env = {**os.environ, "TILEHOUSE_REDIS_URL": redis_url, "TILEHOUSE_LOG_LEVEL": "WARNING",
           "TILEHOUSE_BIND": f"127.0.0.1:{port}", "TILEHOUSE_WEB_CONCURRENCY": "2",
           "TILEHOUSE_STREAM_KEEPALIVE_SECONDS": str(STREAM_KEEPALIVE),
           # far above the time a stop takes, so that a stream ended by the stop cannot be mistaken for one
           # cut by the graceful timeout
           "TILEHOUSE_GRACEFUL_TIMEOUT": str(GRACEFUL_TIMEOUT)}
    for name in ("PROMETHEUS_MULTIPROC_DIR", "TILEHOUSE_WORKER_CLASS"):
        env.pop(name, None)
    with open(tmp_path / "gunicorn.log", "wb") as glog, open(tmp_path / "worker.log", "wb") as wlog:
        gunicorn = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", str(ROOT / "gunicorn.conf.py"), "service:create_app()"],
            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=glog)
        worker = subprocess.Popen([sys.executable, "worker.py"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                                  stderr=wlog)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_ready(base, [gunicorn, worker])
        yield Processes(base, gunicorn, worker)
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


class _Stream:
    """A push stream read over a raw HTTP connection, as a browser's EventSource reads it."""

    def __init__(self, base: str, path: str, last_event_id: int | None = None) -> None:
        host, port = base.removeprefix("http://").split(":")
        self.conn = http.client.HTTPConnection(host, int(port), timeout=10)
        headers = {"Accept": "text/event-stream", "Origin": "https://table.example"}
        if last_event_id is not None:
            headers["Last-Event-ID"] = str(last_event_id)
        self.conn.request("GET", path, headers=headers)
        resp = self.conn.getresponse()
        self.headers = resp.headers
        check_response("GET", path.split("?")[0], resp.status, resp.getheader("Content-Type"), b"")
        assert resp.status == 200 and resp.getheader("Access-Control-Allow-Origin") == "*"
        self.frames = sse_frames(iter(resp.readline, b""))
        assert next(self.frames) == {"retry": 3000}

    def next_event(self) -> dict | None:
        """The next event, or None when the server ended the stream."""
        for frame in self.frames:
            if "data" in frame:
                check_schema("Event", frame["data"])
                assert frame["id"] == str(frame["data"]["n"]) and frame["event"] == frame["data"]["type"]
                return frame["data"]
        return None

    def until_version(self, version: int) -> list[dict]:
        out: list[dict] = []
        while not out or out[-1]["version"] < version:
            ev = self.next_event()
            assert ev is not None, "the stream ended early"
            out.append(ev)
        return out

    def close(self) -> None:
        self.conn.close()


def test_a_browser_follows_a_game_on_its_stream_with_a_ticket_resumes_it_and_sees_it_end(server):
    status, created = _call(server, "POST", "/v1/games", {
        "rules": "kozel", "seed": 5, "seats": [{"kind": "human", "name": "Ann"}, {"kind": "ai", "engine": "greedy"}]})
    assert status == 201
    game_id, token = created["game"]["id"], created["seats"][0]["token"]
    # the preflight a browser sends before it may read the stream from another origin
    req = urllib.request.Request(server + f"/v1/games/{game_id}/stream", method="OPTIONS", headers={
        "Origin": "https://table.example", "Access-Control-Request-Method": "GET",
        "Access-Control-Request-Headers": "last-event-id"})
    with urllib.request.urlopen(req, timeout=10) as r:
        assert r.status == 200 and r.headers["Access-Control-Allow-Headers"] == "last-event-id"
    status, ticket = _call(server, "POST", f"/v1/games/{game_id}/stream-tickets", token=token)
    assert status == 201 and ticket["seat"] == 0
    stream = _Stream(server, ticket["stream"])
    received: list[dict] = []
    rng = random.Random(3)
    moves = 0
    dropped = False
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        status, view = _call(server, "GET", f"/v1/games/{game_id}", token=token)
        if view["status"] == "finished":
            break
        if view["ai"]["pending"] or view["to_move"] != 0:
            received += stream.until_version(view["version"] + 1)  # the AI seat's move, pushed
            continue
        status, after = _call(server, "POST", f"/v1/games/{game_id}/moves",
                              {"move": rng.choice(view["legal_moves"])["id"], "version": view["version"]}, token)
        assert status == 200
        moves += 1
        if moves == 2 and not dropped:
            # the connection drops; a move is made meanwhile; the browser reconnects with the same URL
            stream.close()
            dropped = True
            stream = _Stream(server, ticket["stream"], last_event_id=received[-1]["n"] if received else 0)
        mine = stream.until_version(after["version"])
        assert mine[-1]["version"] == after["version"] and mine[-1]["seat"] == 0  # our move's own event
        received += mine
    else:
        pytest.fail("the game did not finish")
    while (ev := stream.next_event()) is not None:  # the last events, then the server ends the stream
        received.append(ev)
    stream.close()
    assert dropped and moves >= 3
    status, events = _call(server, "GET", f"/v1/games/{game_id}/events", token=token)
    assert received == events  # nothing lost or doubled across the reconnect, each as GET /events gives it
    # a reconnect to the finished game: nothing left, 204, and EventSource stops reconnecting
    status, done = _call(server, "GET", f"/v1/games/{game_id}/stream?ticket={ticket['ticket']}&after={events[-1]['n']}")
    assert status == 204 and done is None


def test_a_stopping_api_ends_its_open_streams_at_once_instead_of_holding_them_to_the_graceful_timeout(processes):
    status, created = _call(processes.base, "POST", "/v1/games", {"rules": "kozel", "seats": [{"kind": "human"}] * 2})
    assert status == 201
    streams = [_Stream(processes.base, f"/v1/games/{created['game']['id']}/stream") for _ in range(3)]
    stopped = time.monotonic()
    processes.gunicorn.send_signal(signal.SIGTERM)
    for stream in streams:
        # each ends (the server closes it after its keep-alives) -- otherwise only the graceful timeout would
        # end it; its client then reconnects elsewhere with Last-Event-ID
        assert stream.next_event() is None
        stream.close()
    assert time.monotonic() - stopped < GRACEFUL_TIMEOUT / 2, "the streams were held until the graceful timeout"
    processes.gunicorn.wait(timeout=GRACEFUL_TIMEOUT)
