"""What a client sends as a move is checked field by field and never stored as sent -- the game
keeps the canonical move id only.  Real HTTP (Flask test client), a real Redis."""

from __future__ import annotations

import json

import pytest
from api_support import bearer, create, humans, tokens_by_seat

from service.store import game_key

pytest_plugins = ["api_fixtures"]


def _stored(redis_conn, game_id: str) -> tuple[dict, bytes]:
    raw = redis_conn.hget(game_key(game_id), "doc")
    return json.loads(raw), raw


@pytest.fixture
def tiengow(client):
    created = create(client, "tiengow", humans(4))
    game_id = created["game"]["id"]
    seat = created["game"]["to_move"]
    h = bearer(tokens_by_seat(created)[seat])
    move = client.get(f"/v1/games/{game_id}/moves", headers=h).get_json()[0]
    return game_id, h, move


@pytest.mark.parametrize("extra", [{"junk": "x" * 30_000}, {"note": None}, {"Tiles": []}])
def test_a_move_object_with_an_unknown_field_is_a_422_and_changes_nothing(client, redis_conn, tiengow, extra):
    game_id, h, move = tiengow
    _, before = _stored(redis_conn, game_id)
    r = client.post(f"/v1/games/{game_id}/moves", json={"move": {**move, **extra}}, headers=h)
    assert r.status_code == 422
    assert r.get_json()["errors"] == {"move": [r.get_json()["detail"]]}
    assert repr(next(iter(extra)))[:20] in r.get_json()["detail"]
    assert _stored(redis_conn, game_id)[1] == before
    assert client.get(f"/v1/games/{game_id}").get_json()["version"] == 0


def test_a_retry_with_an_unknown_field_is_a_422_too(client, tiengow):
    game_id, h, move = tiengow
    assert client.post(f"/v1/games/{game_id}/moves", json={"move": move, "version": 0}, headers=h).status_code == 200
    retry = client.post(f"/v1/games/{game_id}/moves", json={"move": {**move, "junk": 1}, "version": 0}, headers=h)
    assert retry.status_code == 422
    assert client.post(f"/v1/games/{game_id}/moves", json={"move": move, "version": 0}, headers=h).status_code == 200


@pytest.mark.parametrize("form", ["object", "id_object", "reversed_id"])
def test_the_stored_move_is_the_canonical_move_id_whatever_form_was_sent(client, redis_conn, tiengow, form):
    game_id, h, move = tiengow
    if form == "object":
        sent = {"action": move["action"], "tiles": [f"{t[2]}-{t[0]}" for t in reversed(move["tiles"])]}
    elif form == "id_object":
        sent = {"id": move["id"]}
    else:
        action, _, tiles = move["id"].partition(":")
        sent = f"{action}:" + "+".join(f"{t[2]}-{t[0]}" for t in reversed(tiles.split("+")))
    r = client.post(f"/v1/games/{game_id}/moves", json={"move": sent}, headers=h)
    assert r.status_code == 200, r.get_json()
    doc, _ = _stored(redis_conn, game_id)
    assert doc["last_move"] == {"seat": r.get_json()["you"], "move": move["id"], "version": 0}
