"""``GET /v1/games/{id}/replay`` (issue 13, point 4) through the Flask test client (every answer validated
against openapi.yaml), a real Redis and a real RQ worker, and ``tilehouse replay FILE`` on what it answers:
per rule set a finished match reproduces move by move, every event included; a running one is a 409."""

from __future__ import annotations

import json
import random

import pytest
from api_support import bearer, cheap_ai, create, play_out, tokens_by_seat

import engine
from engine.replay import check
from service import cli

pytest_plugins = ["api_fixtures"]

#: (rules, players, options): short matches of every rule set, one human seat and AI seats
CASES = [("tiengow", 4, {}), ("tiengow_wall", 3, {}), ("tiuu", 2, {}), ("kozel", 3, {"target": 20}),
         ("kozel", 4, {"teams": True, "target": 20})]


@pytest.mark.parametrize(("rules_id", "players", "options"), CASES)
def test_a_finished_match_replays_move_by_move_with_every_hand_revealed(client, drain, tmp_path, capsys,
                                                                       rules_id, players, options):
    seats = [{"kind": "human", "name": "Ann"}] + [cheap_ai("greedy" if i % 2 else "random")
                                                  for i in range(players - 1)]
    created = create(client, rules_id, seats, seed=23, options=options)
    game_id, token = created["game"]["id"], tokens_by_seat(created)[0]
    view = play_out(client, drain, game_id, token, random.Random(5))

    r = client.get(f"/v1/games/{game_id}/replay")
    assert r.status_code == 200
    replay = r.get_json()
    assert replay["rules"] == rules_id and replay["players"] == players
    assert replay["options"] == view["options"] and replay["result"] == view["result"]
    assert replay["requested_seed"] == 23
    assert replay["seats"][0]["kind"] == "human" and replay["seats"][1]["kind"] == "ai"
    # one move per version, and every event the log holds, secrets of every seat included
    assert [m["version"] for m in replay["moves"]] == list(range(1, view["version"] + 1))
    public = client.get(f"/v1/games/{game_id}/events").get_json()
    mine = client.get(f"/v1/games/{game_id}/events", headers=bearer(token)).get_json()
    assert [e["n"] for e in replay["events"]] == [e["n"] for e in public]
    for ev, pub, own in zip(replay["events"], public, mine, strict=True):
        assert ev["data"] == pub["data"] and {**ev["data"], **ev["secret"].get("0", {})} == own["data"]
    # every seat's hand at the start is in the initial state
    initial = engine.load_state(replay["initial_state"])
    for seat in range(players):
        assert initial.view(seat)["hand"], seat
    # seat tokens get the same document
    assert client.get(f"/v1/games/{game_id}/replay", headers=bearer(token)).get_json() == replay

    assert check(replay) == []
    path = tmp_path / "replay.json"
    path.write_text(json.dumps(replay))
    assert cli.main(["replay", str(path)]) == 0
    assert f"{len(replay['moves'])} moves and {len(replay['events'])} events reproduced" in capsys.readouterr().out


def test_a_replay_whose_moves_or_events_were_changed_does_not_reproduce(client, drain, tmp_path, capsys):
    created = create(client, "kozel", [{"kind": "human"}, cheap_ai("random")], seed=4, options={"target": 10})
    game_id, token = created["game"]["id"], tokens_by_seat(created)[0]
    play_out(client, drain, game_id, token, random.Random(1))
    replay = client.get(f"/v1/games/{game_id}/replay").get_json()

    tampered_event = json.loads(json.dumps(replay))
    tampered_event["events"][0]["data"]["tampered"] = True
    assert any("differ" in p for p in check(tampered_event))

    wrong_seed = {**replay, "seed": replay["seed"] + 1}
    assert check(wrong_seed)

    truncated = {**replay, "moves": replay["moves"][:-1]}
    assert "the moves end before the match does" in check(truncated)

    path = tmp_path / "bad.json"
    path.write_text(json.dumps(tampered_event))
    assert cli.main(["replay", str(path)]) == 1
    assert "does NOT reproduce" in capsys.readouterr().out


def test_the_replay_of_a_running_match_is_a_409_problem_and_shows_nothing(client):
    created = create(client, "tiengow", [{"kind": "human"}] * 4, seed=3)
    game_id = created["game"]["id"]
    for headers in ({}, bearer(created["seats"][0]["token"]), bearer(created["admin_token"])):
        r = client.get(f"/v1/games/{game_id}/replay", headers=headers)
        assert r.status_code == 409
        body = r.get_json()
        assert body["type"] == "urn:tilehouse:problem:game-not-finished" and body["version"] == 0
        assert "initial_state" not in body and "events" not in body


def test_the_replay_of_an_unknown_game_is_404_and_a_bad_token_401(client):
    assert client.get("/v1/games/0123456789abcdef/replay").status_code == 404
    created = create(client, "tiuu", [{"kind": "human"}, {"kind": "human"}], seed=3)
    r = client.get(f"/v1/games/{created['game']['id']}/replay", headers=bearer("nonsense"))
    assert r.status_code == 401
