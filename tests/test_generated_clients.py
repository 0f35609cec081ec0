"""Clients generated from openapi.yaml alone, as a frontend developer would make them, play against a live
server (a real gunicorn and a real ``worker.py`` for the AI seats: the ``server`` fixture of ``test_e2e``).

* Python: openapi-python-client generates a package (with clients/python/openapi-python-client.yaml, which
  only tells it to read the document's own ``application/yaml`` answer as text) with no error or warning; the
  test imports it and plays a whole Tien Gow deal and a whole Kozel round through its functions only, every
  answer read as its typed model: rules, engines, creation, seat and spectator views, moves, a 422's errors, a
  409, events by type, joining an open seat, the replay.
* TypeScript: ``npm ci`` in clients/typescript, openapi-typescript's types, ``tsc --strict``, and the client
  run against the same server (skipped, saying why, where node or npm is not on the PATH).
"""

from __future__ import annotations

import importlib
import os
import random
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from api_support import ROOT, SPEC
from test_e2e import _call, processes, server  # noqa: F401 - the fixtures, shared rather than copied

pytestmark = pytest.mark.e2e

PYTHON_CONFIG = ROOT / "clients" / "python" / "openapi-python-client.yaml"
TYPESCRIPT = ROOT / "clients" / "typescript"
#: the package name openapi-python-client gives a document titled "tilehouse"
PACKAGE = "tilehouse_client"


@pytest.fixture
def generated(tmp_path) -> Iterator[ModuleType]:
    """The Python client generated into a temporary folder and imported."""
    out = tmp_path / "python-client"
    # the generator formats its output with ruff when it finds it: the one next to this interpreter
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run([sys.executable, "-m", "openapi_python_client", "generate", "--path", str(ROOT / "openapi.yaml"),
                           "--config", str(PYTHON_CONFIG), "--meta", "none", "--output-path", str(out / PACKAGE)],
                          capture_output=True, text=True, timeout=300, env=env)
    report = done.stdout + done.stderr
    assert done.returncode == 0, report
    assert "warning" not in report.lower() and "error" not in report.lower(), report
    sys.path.insert(0, str(out))
    try:
        yield importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(out))
        for name in [m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]:
            del sys.modules[name]


class Api:
    """The generated package's modules by the names a developer would write them."""

    def __init__(self, pkg: ModuleType) -> None:
        self.pkg = pkg
        self.models = importlib.import_module(f"{PACKAGE}.models")
        self.types = importlib.import_module(f"{PACKAGE}.types")

    def op(self, tag: str, operation: str) -> Any:
        return importlib.import_module(f"{PACKAGE}.api.{tag}.{operation}")


def _parsed(response: Any, model: Any, status: int = 200) -> Any:
    assert response.status_code == status, (response.status_code, response.content[:300])
    assert isinstance(response.parsed, model), type(response.parsed)
    return response.parsed


def _play_to(api: Api, base: str, game_id: str, token: str, rng: random.Random, done: Any) -> Any:
    """Move for the seat of ``token`` until ``done(view)``; the AI seats move in the worker process."""
    seat_client = api.pkg.AuthenticatedClient(base_url=base, token=token)
    models = api.models
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        view = _parsed(api.op("games", "get_game").sync_detailed(game_id, client=seat_client), models.GameView)
        if done(view):
            return view
        if view.legal_moves:
            move = rng.choice(view.legal_moves)
            assert isinstance(move, models.Move)
            after = api.op("games", "play_move").sync_detailed(
                game_id, client=seat_client, body=models.MoveRequest(move=move.id, version=view.version))
            _parsed(after, models.GameView)
        else:
            time.sleep(0.05)
    raise AssertionError("the game did not get there in time")


def test_generated_python_and_typescript_clients_play_against_a_live_server(generated, server, tmp_path):  # noqa: F811
    # one server for both (each start and stop of gunicorn and the worker costs seconds)
    _plays_a_tien_gow_deal(generated, server)
    _joins_and_plays_a_kozel_round(generated, server)
    _typescript_client_compiles_strictly_and_plays(server, tmp_path)


def _plays_a_tien_gow_deal(generated: ModuleType, base: str) -> None:
    api, models = Api(generated), Api(generated).models
    anyone = generated.Client(base_url=base)
    rules = _parsed(api.op("rules", "list_rules").sync_detailed(client=anyone), list)
    assert all(isinstance(r, models.RuleSet) for r in rules)
    assert [r.id for r in rules] == sorted(r.id for r in rules) and "tiengow" in [r.id for r in rules]
    tiengow = _parsed(api.op("rules", "get_rules").sync_detailed("tiengow", client=anyone), models.RuleSet)
    assert all(isinstance(o, models.Option) for o in tiengow.options)
    engines = _parsed(api.op("engines", "list_engines").sync_detailed(client=anyone), list)
    assert all(isinstance(e, models.Engine) for e in engines) and {"greedy", "random"} <= {e.id for e in engines}

    # a 422 names the bad field
    bad = api.op("games", "create_game").sync_detailed(client=anyone, body=models.CreateGame(
        rules="tiengow", seats=[models.SeatRequest(kind=models.SeatRequestKind.HUMAN)]))
    problem = _parsed(bad, models.ValidationProblem, 422)
    assert problem.status == 422 and "seats" in problem.errors.additional_properties

    body = models.CreateGame(rules="tiengow", options=models.Settings.from_dict({"deals": 1}), seats=[
        models.SeatRequest(kind=models.SeatRequestKind.HUMAN, name="Ann"),
        models.SeatRequest(kind=models.SeatRequestKind.AI, engine="greedy"),
        models.SeatRequest(kind=models.SeatRequestKind.AI, engine="random"),
        models.SeatRequest(kind=models.SeatRequestKind.AI, engine="greedy")])
    created = _parsed(api.op("games", "create_game").sync_detailed(client=anyone, body=body), models.CreatedGame, 201)
    game_id, token = created.game.id, created.seats[0].token
    seat_client = generated.AuthenticatedClient(base_url=base, token=token)

    # the spectator view: no token at all (openapi-python-client types these operations as needing an
    # AuthenticatedClient whenever security lists a scheme, even beside {}; the plain Client works)
    spectator = _parsed(api.op("games", "get_game").sync_detailed(game_id, client=anyone), models.GameView)
    assert spectator.you is None and spectator.hand is None and spectator.legal_moves == []
    assert isinstance(spectator.table, models.GameViewTable) and spectator.table.additional_properties

    # the replay is a 409 while the deal runs
    early = api.op("games", "get_replay").sync_detailed(game_id, client=anyone)
    assert early.status_code == 409 and early.parsed.type_ == "urn:tilehouse:problem:game-not-finished"
    assert early.parsed.version >= spectator.version  # the AI seats may have moved since

    view = _play_to(api, base, game_id, token, random.Random(4), lambda v: v.status == models.GameViewStatus.FINISHED)
    assert view.you == 0 and isinstance(view.result, models.Result) and len(view.result.payoffs) == 4

    events = _parsed(api.op("games", "list_events").sync_detailed(game_id, client=seat_client), list)
    kinds = {type(e).__name__ for e in events}
    assert {"LeadEvent", "TrickWonEvent", "DealEndEvent", "MatchEndEvent"} <= kinds, kinds
    lead = next(e for e in events if isinstance(e, models.LeadEvent))
    assert isinstance(lead.data, models.TienGowPlayData) and lead.data.tiles
    ending = next(e for e in events if isinstance(e, models.MatchEndEvent))
    assert isinstance(ending.data, models.PointsMatchEndData) and len(ending.data.points) == 4

    replay = _parsed(api.op("games", "get_replay").sync_detailed(game_id, client=anyone), models.Replay)
    assert replay.rules == "tiengow" and replay.version == view.version and len(replay.moves) == view.version
    assert 0 <= replay.seed < 2**53 and replay.requested_seed is not None and replay.requested_seed < 2**53


def _joins_and_plays_a_kozel_round(generated: ModuleType, base: str) -> None:
    api, models = Api(generated), Api(generated).models
    anyone = generated.Client(base_url=base)
    body = models.CreateGame(rules="kozel", options=models.Settings.from_dict({"target": 1}), seed=5, seats=[
        models.SeatRequest(kind=models.SeatRequestKind.OPEN),
        models.SeatRequest(kind=models.SeatRequestKind.AI, engine="random")])
    created = _parsed(api.op("games", "create_game").sync_detailed(client=anyone, body=body), models.CreatedGame, 201)
    game_id = created.game.id
    assert created.game.status == models.GameViewStatus.WAITING and [j.seat for j in created.join] == [0]

    lobby = _parsed(api.op("lobby", "list_open_games").sync_detailed(client=anyone, rules="kozel"), models.LobbyPage)
    assert game_id in [g.id for g in lobby.games]
    joined = _parsed(api.op("lobby", "join_seat").sync_detailed(
        game_id, 0, client=anyone, body=models.JoinRequest(name="generated")), models.JoinedSeat)
    again = api.op("lobby", "join_seat").sync_detailed(game_id, 0, client=anyone)
    assert again.status_code == 409 and isinstance(again.parsed, models.Problem)

    seat_client = generated.AuthenticatedClient(base_url=base, token=joined.token)
    # a stale version is a 409 with the current one
    view = _play_to(api, base, game_id, joined.token, random.Random(2), lambda v: bool(v.legal_moves)
                    or v.status == models.GameViewStatus.FINISHED)
    if view.legal_moves:
        stale = api.op("games", "play_move").sync_detailed(game_id, client=seat_client, body=models.MoveRequest(
            move=view.legal_moves[0].id, version=view.version + 1))
        assert stale.status_code == 409 and isinstance(stale.parsed, models.Problem)
    view = _play_to(api, base, game_id, joined.token, random.Random(2),
                    lambda v: v.status == models.GameViewStatus.FINISHED)
    assert view.seats[0].name == "generated" and isinstance(view.result, models.Result)

    spectator = _parsed(api.op("games", "list_events").sync_detailed(game_id, client=anyone), list)
    mine = _parsed(api.op("games", "list_events").sync_detailed(game_id, client=seat_client), list)
    assert [type(e).__name__ for e in spectator] == [type(e).__name__ for e in mine]
    assert {"JoinEvent", "StartEvent", "RoundEndEvent", "MatchEndEvent"} <= {type(e).__name__ for e in mine}
    # a draw's tile is the drawer's secret: in its own log only
    draws = [(s, m) for s, m in zip(spectator, mine, strict=True) if isinstance(m, models.DrawEvent) and m.seat == 0]
    for public, own in draws:
        assert isinstance(own.data, models.DrawDataKozel) and isinstance(own.data.tile, str)
        assert isinstance(public.data.tile, generated.types.Unset)
    ending = next(e for e in mine if isinstance(e, models.MatchEndEvent))
    assert isinstance(ending.data, models.MatchEndDataKozel)

    replay = _parsed(api.op("games", "get_replay").sync_detailed(game_id, client=anyone), models.Replay)
    assert replay.rules == "kozel" and replay.requested_seed == 5 and len(replay.events) == len(mine)


def _npm() -> tuple[str, str]:
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("node and npm are not on the PATH: the TypeScript client is not built here (the Python "
                    "client passed)")
    return node, npm


def _typescript_client_compiles_strictly_and_plays(base: str, tmp_path: Path) -> None:
    node, npm = _npm()
    # a copy laid out as the repository is (the package's generate script reads ../../openapi.yaml), without
    # what a build leaves behind
    work = tmp_path / "clients" / "typescript"
    shutil.copytree(TYPESCRIPT, work, ignore=shutil.ignore_patterns("node_modules", "dist", "api.d.ts"))
    shutil.copy(ROOT / "openapi.yaml", tmp_path / "openapi.yaml")

    def run(*argv: str) -> str:
        done = subprocess.run(argv, cwd=work, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    run(npm, "ci", "--no-audit", "--no-fund", "--prefer-offline")
    run(npm, "run", "generate")
    run(npm, "run", "build")
    out = run(node, "dist/play.js", base)
    lines = dict(line.split(": ", 1) for line in out.splitlines() if ": " in line)
    assert lines["status"] == "finished", out
    assert int(lines["events"]) > 0 and "lead" in lines["types"].split(",") and "match_end" in lines["types"].split(",")
    assert lines["422"].startswith("seats"), out
    assert 0 <= int(lines["seed"]) < 2**53 and lines["replay moves"] == lines["version"], out
    assert set(SPEC["components"]["schemas"]["EventType"]["enum"]) >= set(lines["types"].split(","))
