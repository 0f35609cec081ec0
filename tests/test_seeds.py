"""Issue 16.3: seeds that do not reveal hands (``service.fairplay.seeds``).  A table with a human seat is dealt
from the requested seed mixed with the server's secret; the seed is used as given only at all-AI tables or
with ``public_seed``; the effective seed is stored and shown by nothing but the replay of the finished match.
Real HTTP (Flask test client, every answer validated against openapi.yaml), a real Redis, a real RQ worker."""

from __future__ import annotations

import json
import random

import pytest
from api_support import TEST_SEED_SECRET, bearer, create, humans, tokens_by_seat
from rq.job import Job

import engine
from service import keys
from service.fairplay import seeds
from service.store import Store

pytest_plugins = ["api_fixtures"]


def _stored(redis_conn, game_id: str):
    return Store(redis_conn, 60).get(game_id)


def _hand(client, created: dict, seat: int) -> list[str]:
    game_id = created["game"]["id"]
    return client.get(f"/v1/games/{game_id}", headers=bearer(tokens_by_seat(created)[seat])).get_json()["hand"]


def test_a_table_with_a_human_is_not_dealt_from_the_requested_seed_but_from_it_mixed_with_the_secret(
        client, redis_conn):
    created = create(client, "tiengow", humans(4), seed=1)
    offline = engine.new_game("tiengow", players=4, seed=1, options=created["game"]["options"])
    assert _hand(client, created, 0) != offline.view(0)["hand"]
    game = _stored(redis_conn, created["game"]["id"])
    secret = TEST_SEED_SECRET.encode()
    assert game.doc["seed"] == 1 and game.doc["engine_seed"] == seeds.derive(secret, 1) == game.state.seed
    dealt = engine.new_game("tiengow", players=4, seed=game.doc["engine_seed"], options=created["game"]["options"])
    assert _hand(client, created, 0) == dealt.view(0)["hand"]


def test_a_seed_reproduces_a_match_on_its_server_only(make_app):
    mine, other = make_app(SEED_SECRET="one secret").test_client(), make_app(SEED_SECRET="another").test_client()
    first, again = (create(mine, "kozel", humans(2), seed=99) for _ in range(2))
    elsewhere = create(other, "kozel", humans(2), seed=99)
    assert _hand(mine, first, 0) == _hand(mine, again, 0)
    assert _hand(other, elsewhere, 0) != _hand(mine, first, 0)


def test_without_a_configured_secret_one_is_made_once_in_redis_and_shared_by_every_api_process(
        make_app, redis_conn):
    a, b = make_app(SEED_SECRET="").test_client(), make_app(SEED_SECRET="").test_client()
    assert redis_conn.get(keys.SEED_SECRET_KEY) is None
    game_a = create(a, "tiuu", humans(2), seed=5)
    made = redis_conn.get(keys.SEED_SECRET_KEY)
    assert made and len(made) == 2 * seeds.SECRET_BYTES
    game_b = create(b, "tiuu", humans(2), seed=5)
    assert redis_conn.get(keys.SEED_SECRET_KEY) == made
    assert _hand(a, game_a, 1) == _hand(b, game_b, 1)
    assert _stored(redis_conn, game_b["game"]["id"]).state.seed == seeds.derive(made, 5)


def test_an_all_ai_table_and_a_public_seed_are_dealt_from_the_seed_as_given(client, redis_conn):
    ai_only = create(client, "tiengow", [{"kind": "ai", "engine": "random"}] * 4, seed=3)
    assert _stored(redis_conn, ai_only["game"]["id"]).state.seed == 3
    public = client.post("/v1/games", json={"rules": "tiengow", "seed": 1, "public_seed": True,
                                            "seats": humans(4)})
    assert public.status_code == 201
    offline = engine.new_game("tiengow", players=4, seed=1)
    assert _hand(client, public.get_json(), 0) == offline.view(0)["hand"]
    assert _stored(redis_conn, public.get_json()["game"]["id"]).doc["engine_seed"] == 1


@pytest.mark.parametrize(("body", "field"), [({"public_seed": True}, "public_seed"),
                                             ({"public_seed": 1, "seed": 1}, "public_seed"),
                                             ({"public_seed": "true", "seed": 1}, "public_seed")])
def test_a_public_seed_needs_a_seed_and_a_real_boolean(client, redis_conn, body, field):
    r = client.post("/v1/games", json={"rules": "kozel", "seats": humans(2), **body})
    assert r.status_code == 422 and field in r.get_json()["errors"]
    assert not redis_conn.keys("th:game:*")


def test_no_view_event_job_or_error_shows_the_engine_seed_before_the_end_and_the_replay_does_after(
        app, client, drain, redis_conn):
    bodies: list[tuple[str, bytes]] = []

    @app.after_request
    def keep(resp):
        from flask import request

        bodies.append((f"{request.method} {request.path} {resp.status_code}", resp.get_data()))
        return resp

    seats = [*humans(2), {"kind": "ai", "engine": "greedy"}]
    created = create(client, "kozel", seats, seed=23, options={"target": 20})
    game_id = created["game"]["id"]
    toks = tokens_by_seat(created)
    admin = bearer(created["admin_token"])
    hidden = str(_stored(redis_conn, game_id).doc["engine_seed"])
    assert hidden != "23"
    rng = random.Random(8)
    url = f"/v1/games/{game_id}"
    asked = 0
    for _ in range(2000):
        for h in ({}, admin, bearer(toks[0]), bearer(toks[1])):
            client.get(url, headers=h)
            client.get(f"{url}/events", headers=h)
            client.get(f"{url}/moves", headers=h)
        view = client.get(url).get_json()
        if view["status"] == "finished":
            break
        if view["ai"]["pending"]:
            client.get(f"/v1/jobs/{view['ai']['job']}")
            drain()
            client.get(f"/v1/jobs/{view['ai']['job']}")
            continue
        seat = view["to_move"]
        h = bearer(toks[seat])
        assert client.get(f"{url}/replay").status_code == 409
        assert client.post(f"{url}/moves", json={"move": "play:9-9"}, headers=h).status_code == 422
        assert client.post(f"{url}/moves", json={"move": "draw"}, headers=bearer(toks[1 - seat])).status_code == 403
        assert client.post(f"{url}/moves", json={"move": "draw", "version": 99}, headers=h).status_code == 409
        if asked < 3:
            job = client.post(f"{url}/suggestions", json={"engine": "ismcts", "params": {"iterations": 4}},
                              headers=h).get_json()
            drain()
            assert client.get(f"/v1/jobs/{job['id']}", headers=h).get_json()["status"] == "finished"
            asked += 1
        legal = client.get(f"{url}/moves", headers=h).get_json()
        assert client.post(f"{url}/moves", json={"move": rng.choice(legal)["id"]}, headers=h).status_code == 200
    else:
        pytest.fail("the game did not end")
    assert len(bodies) > 100
    shown = [what for what, body in bodies if hidden.encode() in body]
    assert shown == [], f"the engine seed was shown before the end by {shown[:3]}"
    for job_id in redis_conn.smembers(f"th:game:{{{game_id}}}:jobs"):
        job = Job.fetch(job_id.decode(), connection=redis_conn)
        stored = json.dumps([job.args, job.kwargs, job.meta], default=str) + repr(job.return_value())
        assert hidden not in stored, f"job {job.id} holds the engine seed"
    replay = client.get(f"{url}/replay").get_json()
    assert (replay["seed"], replay["requested_seed"]) == (int(hidden), 23)
