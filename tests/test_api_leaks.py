"""Hidden information never leaks (docs/api.md: "Hidden information is never sent to anyone who may not see
it"), for every rule set, over whole games played through HTTP.

Two checks, both against the engine's own knowledge of what is hidden:

* Information-set invariance.  At regular steps the stored state is swapped for
  ``state.determinize(seat, rng)`` -- a world the engine says ``seat`` cannot tell apart from the real one
  (same view, different hidden tiles) -- and every answer that viewer gets (view, move list, the error for a
  refused move, for a spectator too) must be byte-for-byte the same.  Anything that depended on a hidden
  tile would differ.
* Events.  Each stored event says who may see what (``data`` for all, ``secret[s]`` for seat ``s``); every
  viewer must get exactly the public part plus its own secret part, and no fact of another seat's secret;
  the push stream (``GET .../stream``, with a seat's stream ticket or as a spectator) gives each viewer
  exactly what ``GET .../events`` gives it.

Suggestion jobs, whose statistics show the asking seat's own moves, are readable only with that seat's token.
"""

from __future__ import annotations

import json
import random

import pytest
from api_support import bearer, check_schema, create, humans, sse_frames, tokens_by_seat

import engine
from service import store as store_module

pytest_plugins = ["api_fixtures"]

CHECKS_PER_GAME = 6


def _answers(client, game_id: str, h: dict[str, str], probe_move: str) -> tuple:
    view = client.get(f"/v1/games/{game_id}", headers=h)
    moves = client.get(f"/v1/games/{game_id}/moves", headers=h)
    refused = client.post(f"/v1/games/{game_id}/moves", json={"move": probe_move}, headers=h) if h else None
    return (view.status_code, view.get_data(), moves.get_data(),
            None if refused is None else (refused.status_code, refused.get_data()))


def _swap_state(conn, game_id: str, state_dict: dict) -> bytes:
    key = store_module.game_key(game_id)
    old = conn.hget(key, "doc")
    doc = json.loads(old)
    doc["state"] = state_dict
    conn.hset(key, "doc", json.dumps(doc))
    return old


@pytest.mark.parametrize("rules_id", sorted(engine.RULES))
def test_no_answer_shows_a_hidden_tile_to_a_spectator_or_another_seat(app, client, drain, rules_id):
    conn = app.extensions["redis"]
    # presence (last_seen_ms) moves with the wall clock, not with hidden tiles: hold it still for the comparison
    app.config["PRESENCE_INTERVAL_SECONDS"] = 3600.0
    n = engine.RULES[rules_id].default_players
    created = create(client, rules_id, humans(n), seed=17)
    game_id = created["game"]["id"]
    toks = tokens_by_seat(created)
    rng = random.Random(rules_id)
    step = 0
    worlds_differed = 0
    suggested = False
    # a typical game length, so the checks spread over the whole game
    sample = engine.new_game(rules_id, players=n, seed=17)
    length = 0
    while not sample.finished:
        sample.play(rng.choice(sample.legal_moves()))
        length += 1
    every = max(1, length // CHECKS_PER_GAME)
    while True:
        real = store_module.Store(conn, 60).get(game_id)
        state = real.state
        if step % every == 0 or state.finished:
            for viewer in [None, *range(n)]:
                h = bearer(toks[viewer]) if viewer is not None else {}
                # a move the viewer does not have: some other seat's tile, as a probe of error texts
                other = (viewer + 1) % n if viewer is not None else 0
                # (not one the viewer holds too: Chinese sets have pairs, and a legal probe would move)
                own = state.view(viewer)["hand"] if viewer is not None else []
                hand = [t for t in state.view(other)["hand"] or [] if t not in own] or ["9-9"]
                probe = f"play:{hand[0]}"
                before = _answers(client, game_id, h, probe)
                world = state.determinize(viewer if viewer is not None else (state.to_move or 0),
                                          random.Random(rng.random()))
                if world.to_dict() != state.to_dict():
                    worlds_differed += 1
                old = _swap_state(conn, game_id, world.to_dict())
                try:
                    after = _answers(client, game_id, h, probe)
                finally:
                    conn.hset(store_module.game_key(game_id), "doc", old)
                assert after == before, f"{rules_id} step {step}: seat {viewer}'s answers depend on hidden tiles"
            if not suggested and not state.finished:
                _check_suggestion_privacy(client, drain, game_id, toks, state.to_move, n)
                suggested = True
        if state.finished:
            break
        h = bearer(toks[state.to_move])
        moves = client.get(f"/v1/games/{game_id}/moves", headers=h).get_json()
        r = client.post(f"/v1/games/{game_id}/moves", json={"move": rng.choice(moves)["id"]}, headers=h)
        assert r.status_code == 200
        step += 1
    assert worlds_differed > 0, "no determinization differed from the real state: the check could not fail"
    _check_events(client, conn, game_id, toks, n)


def _check_events(client, conn, game_id: str, toks: dict[int, str], n: int) -> None:
    stored = [json.loads(e) for e in conn.lrange(store_module.events_key(game_id), 0, -1)]
    assert stored
    secret_events = 0
    for viewer in [None, *range(n)]:
        h = bearer(toks[viewer]) if viewer is not None else {}
        got = client.get(f"/v1/games/{game_id}/events", headers=h).get_json()
        assert len(got) == len(stored)
        for ev, raw in zip(got, stored, strict=True):
            own = raw["secret"].get(str(viewer), {}) if viewer is not None else {}
            assert ev["data"] == {**raw["data"], **own}
            for seat, secret in raw["secret"].items():
                if viewer is not None and int(seat) == viewer:
                    continue
                secret_events += 1
                for k, v in secret.items():
                    if raw["data"].get(k, object()) != v and own.get(k, object()) != v:
                        assert ev["data"].get(k, object()) != v, f"seat {seat}'s secret {k} shown to {viewer}"
        last = client.get(f"/v1/games/{game_id}", headers=h).get_json()["last_event"]
        assert last == got[-1]
        assert _streamed(client, game_id, toks[viewer] if viewer is not None else None) == got
    assert secret_events or not any(e["secret"] for e in stored)


def _streamed(client, game_id: str, token: str | None) -> list[dict]:
    """The whole push stream of the finished game as ``token``'s seat opens it with a stream ticket (a
    spectator: with nothing): it must be exactly that viewer's ``GET /events``."""
    url = f"/v1/games/{game_id}/stream"
    if token is not None:
        ticket = client.post(f"/v1/games/{game_id}/stream-tickets", headers=bearer(token)).get_json()
        url = ticket["stream"]
    resp = client.get(url, buffered=False)
    assert resp.status_code == 200 and resp.mimetype == "text/event-stream"
    frames = [f for f in sse_frames(resp.response) if "data" in f]
    for f in frames:
        check_schema("Event", f["data"])
        assert f["id"] == str(f["data"]["n"]) and f["event"] == f["data"]["type"]
    return [f["data"] for f in frames]


def _check_suggestion_privacy(client, drain, game_id: str, toks: dict[int, str], seat: int, n: int) -> None:
    r = client.post(f"/v1/games/{game_id}/suggestions", json={"engine": "ismcts", "params": {"iterations": 4}},
                    headers=bearer(toks[seat]))
    assert r.status_code == 202
    url = r.headers["Location"]
    drain()
    assert client.get(url).status_code == 401
    for other in range(n):
        if other != seat:
            assert client.get(url, headers=bearer(toks[other])).status_code == 403
    mine = client.get(url, headers=bearer(toks[seat])).get_json()
    assert mine["status"] == "finished" and mine["result"]["move"]["id"]
