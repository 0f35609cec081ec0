"""``examples/bot.py`` (issue 13, point 2): the standalone remote bot plays whole games through the HTTP API
against a real gunicorn and a real ``worker.py`` process (the ``server`` fixture of ``test_e2e``), as its own
process with nothing but ``requests``."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import urllib.request

import pytest
from api_support import ROOT
from test_e2e import _call, processes, server  # noqa: F401 - the fixtures, shared rather than copied

BOT = ROOT / "examples" / "bot.py"
pytestmark = pytest.mark.e2e


def _run_bot(*args: str) -> str:
    done = subprocess.run([sys.executable, str(BOT), *args], capture_output=True, text=True, timeout=120,
                          cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_bot_is_short_and_imports_nothing_but_requests_and_the_standard_library():
    source = BOT.read_text()
    assert len(source.splitlines()) < 80
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
