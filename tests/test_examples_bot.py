"""``examples/bot.py``: the standalone remote bot plays whole games through the HTTP API against a real
gunicorn and a real ``worker.py`` process (the ``server`` fixture of ``test_e2e``), as its own process with
nothing but ``requests``; it tries the next open game when it loses a join race (a proxy lets a rival take
the seat just before the bot's join reaches the server), stops at a game that ends under it (the other
seat resigns), and waits out a restart of the server (gunicorn stopped and started again on its port)."""

from __future__ import annotations

import ast
import json
import random
import re
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest
from api_support import ROOT
from processes import environment, start_gunicorn, start_worker, stop, wait_ready
from test_e2e import _call, processes, server  # noqa: F401 - the fixtures, shared rather than copied

from service.redis_local import free_port

BOT = ROOT / "examples" / "bot.py"
pytestmark = pytest.mark.e2e


def _start_bot(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, str(BOT), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=ROOT)


def _run_bot(*args: str) -> str:
    done = subprocess.run([sys.executable, str(BOT), *args], capture_output=True, text=True, timeout=120,
                          cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_bot_is_short_and_imports_nothing_but_requests_and_the_standard_library():
    source = BOT.read_text()
    assert len(source.splitlines()) < 120
    imported = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            imported |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported.add((node.module or "").split(".")[0])
    assert imported - {"requests"} <= set(sys.stdlib_module_names), imported


def test_the_bot_plays_a_whole_game_with_its_seat_token_over_real_http(server):  # noqa: F811
    status, created = _call(server, "POST", "/v1/games", {
        "rules": "tiengow", "seed": 8,
        "seats": [{"kind": "ai", "engine": "greedy"}, {"kind": "human", "name": "bot"},
                  {"kind": "ai", "engine": "random"}, {"kind": "ai", "engine": "greedy"}]})
    assert status == 201
    game_id, token = created["game"]["id"], created["seats"][0]["token"]
    out = _run_bot(server, game_id, "1", "--token", token, "--seed", "3")
    status, view = _call(server, "GET", f"/v1/games/{game_id}")
    assert status == 200 and view["status"] == "finished"
    assert f"game {game_id} seat 1: {view['result']['reason']}, payoffs {view['result']['payoffs']}" in out
    with urllib.request.urlopen(f"{server}/v1/games/{game_id}/events", timeout=10) as r:
        events = json.load(r)
    assert any(e["seat"] == 1 for e in events)  # the bot's own moves are in the log


def test_the_bot_joins_an_open_seat_and_plays_the_whole_game(server):  # noqa: F811
    status, created = _call(server, "POST", "/v1/games", {
        "rules": "tiuu", "seats": [{"kind": "ai", "engine": "greedy"}, {"kind": "open"}]})
    assert status == 201 and created["seats"] == []
    game_id = created["game"]["id"]
    out = _run_bot(server, game_id, "1", "--name", "remote bot")
    status, view = _call(server, "GET", f"/v1/games/{game_id}")
    assert view["status"] == "finished" and view["seats"][1]["name"] == "remote bot"
    assert f"game {game_id} seat 1: " in out
    # the seat was handed out once: a second join is refused
    status, problem = _call(server, "POST", f"/v1/games/{game_id}/seats/1/join", {})
    assert status == 409, problem


def test_the_bot_finds_open_games_in_the_lobby_and_plays_them_one_after_the_other(server):  # noqa: F811
    ids = []
    for _ in range(2):
        status, created = _call(server, "POST", "/v1/games", {
            "rules": "kozel", "options": {"target": 15},
            "seats": [{"kind": "open"}, {"kind": "ai", "engine": "random"}]})
        assert status == 201
        ids.append(created["game"]["id"])
    out = _run_bot(server, "--lobby", "kozel", "--games", "2")
    assert sorted(line.split()[1] for line in out.splitlines()) == sorted(ids)
    for game_id in ids:
        status, view = _call(server, "GET", f"/v1/games/{game_id}")
        assert view["status"] == "finished"
    status, lobby = _call(server, "GET", "/v1/games?status=open&rules=kozel")
    assert status == 200 and lobby["games"] == []


class _RacingProxy(BaseHTTPRequestHandler):
    """Forwards to the server; the first join it sees is preceded by a rival's join of the same seat."""

    upstream: ClassVar[str] = ""
    raced: ClassVar[list[str]] = []

    def _forward(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0)) or None
        join = re.fullmatch(r"/v1/games/([^/]+)/seats/\d+/join", self.path)
        if join and not self.raced:
            self.raced.append(join.group(1))
            _call(self.upstream, "POST", self.path, {"name": "rival"})
        req = urllib.request.Request(self.upstream + self.path, data=body, method=self.command, headers={
            k: v for k, v in self.headers.items() if k in ("Authorization", "Content-Type", "If-None-Match")})
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                status, headers, data = r.status, r.headers, r.read()
        except urllib.error.HTTPError as e:
            status, headers, data = e.code, e.headers, e.read()
        self.send_response(status)
        for name in ("Content-Type", "ETag"):
            if headers.get(name):
                self.send_header(name, headers[name])
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = _forward

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def racing_proxy(server) -> Iterator[str]:  # noqa: F811
    _RacingProxy.upstream, _RacingProxy.raced = server, []
    proxy = ThreadingHTTPServer(("127.0.0.1", 0), _RacingProxy)
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{proxy.server_address[1]}"
    finally:
        proxy.shutdown()
        proxy.server_close()


def test_the_bot_tries_the_next_open_game_after_a_lost_race_and_stops_at_a_game_ended_under_it(
        server, racing_proxy):  # noqa: F811
    _loses_a_race_then_plays_the_next_open_game(server, racing_proxy)
    _stops_when_its_game_ends_under_it_and_refuses_a_finished_one(server)


def _loses_a_race_then_plays_the_next_open_game(server: str, racing_proxy: str) -> None:  # noqa: F811
    ids = []
    for _ in range(2):
        status, created = _call(server, "POST", "/v1/games", {
            "rules": "kozel", "options": {"target": 1}, "seats": [{"kind": "open"}, {"kind": "ai", "engine": "random"}]})
        assert status == 201
        ids.append(created["game"]["id"])
    bot = _start_bot(racing_proxy, "--lobby", "kozel")
    out, err = bot.communicate(timeout=120)
    assert bot.returncode == 0, err
    lost = _RacingProxy.raced[0]
    won = next(i for i in ids if i != lost)
    assert f"seat 0 of {lost}: " in err and "trying the next open game" in err and "Traceback" not in err
    assert out.startswith(f"game {won} seat 0: ")
    assert _call(server, "GET", f"/v1/games/{lost}")[1]["seats"][0]["name"] == "rival"
    assert _call(server, "GET", f"/v1/games/{won}")[1]["status"] == "finished"


def _stops_when_its_game_ends_under_it_and_refuses_a_finished_one(server: str) -> None:  # noqa: F811
    status, created = _call(server, "POST", "/v1/games", {
        "rules": "tiuu", "seats": [{"kind": "human", "name": "Ann"}, {"kind": "open"}]})
    assert status == 201
    game_id, ann = created["game"]["id"], created["seats"][0]["token"]
    bot = _start_bot(server, game_id, "1", "--name", "bot")
    deadline = time.monotonic() + 30
    while _call(server, "GET", f"/v1/games/{game_id}")[1]["status"] == "waiting":
        assert time.monotonic() < deadline and bot.poll() is None, bot.stderr.read() if bot.stderr else ""
        time.sleep(0.05)
    status, _ = _call(server, "POST", f"/v1/games/{game_id}/resign", token=ann)
    assert status == 200
    out, err = bot.communicate(timeout=60)
    assert bot.returncode == 0, err
    assert out.startswith(f"game {game_id} seat 1: resigned, payoffs ")
    # a finished game's seat cannot be joined: a message, no traceback
    late = subprocess.run([sys.executable, str(BOT), server, game_id, "1"], capture_output=True, text=True,
                          timeout=60, cwd=ROOT)
    assert late.returncode == 1 and "trying the next open game" in late.stderr and "Traceback" not in late.stderr


def test_the_bot_waits_out_a_restart_of_the_server_and_finishes_its_game(redis_conn, redis_url, tmp_path):
    # the other seat is a person this test plays, so the game cannot end while the server is away
    env, port = environment(redis_url), free_port()
    gunicorn, base = start_gunicorn(env, tmp_path / "gunicorn.log", port=port)
    worker = start_worker(env, tmp_path / "worker.log")
    try:
        wait_ready(base, [gunicorn, worker])
        status, created = _call(base, "POST", "/v1/games", {
            "rules": "kozel", "options": {"target": 1}, "seed": 3,
            "seats": [{"kind": "open"}, {"kind": "human", "name": "Ann"}]})
        assert status == 201
        game_id, ann = created["game"]["id"], created["seats"][0]["token"]
        bot = _start_bot(base, game_id, "0")
        deadline = time.monotonic() + 30
        while _call(base, "GET", f"/v1/games/{game_id}")[1]["status"] == "waiting":
            assert time.monotonic() < deadline and bot.poll() is None
            time.sleep(0.02)
        stop([gunicorn])  # the bot has joined and waits for its turn or for Ann
        time.sleep(1.0)
        assert bot.poll() is None, bot.communicate()
        gunicorn, _ = start_gunicorn(env, tmp_path / "gunicorn.log", port=port)
        wait_ready(base, [gunicorn, worker])
        rng, deadline = random.Random(1), time.monotonic() + 60
        while (view := _call(base, "GET", f"/v1/games/{game_id}", token=ann)[1])["status"] != "finished":
            assert time.monotonic() < deadline and bot.poll() is None, "the bot stopped playing"
            if view["legal_moves"]:
                _call(base, "POST", f"/v1/games/{game_id}/moves",
                      {"move": rng.choice(view["legal_moves"])["id"], "version": view["version"]}, ann)
            else:
                time.sleep(0.02)
        out, err = bot.communicate(timeout=60)
        assert bot.returncode == 0, err
        assert out.startswith(f"game {game_id} seat 0: ")
    finally:
        stop([worker, gunicorn])
