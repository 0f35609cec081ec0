"""Seeds that do not reveal hands (``service.fairplay.seeds``).  Every table is dealt from its requested seed
mixed with the server's secret and fresh randomness of its own, so no other table's replay reveals it; the
seed is used as given only with ``public_seed``; the effective seed is stored and shown by nothing but the
replay of the finished match.
Real HTTP (Flask test client, every answer validated against openapi.yaml), a real Redis, a real RQ worker."""

from __future__ import annotations

import json
import random

import pytest
from api_support import bearer, create, humans, tokens_by_seat
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


def _two_players(rules: str) -> int:
    return engine.get_rules(rules).players.start


def test_every_table_is_dealt_from_fresh_randomness_not_from_the_requested_seed(client, redis_conn):
    created = [create(client, "tiengow", humans(4), seed=1) for _ in range(2)]
    offline = engine.new_game("tiengow", players=4, seed=1, options=created[0]["game"]["options"])
    first, again = (_stored(redis_conn, c["game"]["id"]) for c in created)
    assert _hand(client, created[0], 0) != offline.view(0)["hand"]
    assert _hand(client, created[0], 0) != _hand(client, created[1], 0)
    assert first.doc["seed"] == again.doc["seed"] == 1
    assert first.doc["engine_seed"] == first.state.seed != again.doc["engine_seed"]
    dealt = engine.new_game("tiengow", players=4, seed=first.doc["engine_seed"], options=created[0]["game"]["options"])
    assert _hand(client, created[0], 0) == dealt.view(0)["hand"]


@pytest.mark.parametrize("rules", sorted(engine.RULES))
def test_a_throw_away_table_of_the_same_seed_resigned_at_once_reveals_no_hand_of_the_real_table(
        client, redis_conn, rules):
    players = _two_players(rules)
    real = create(client, rules, humans(players), seed=4242)
    throw_away = create(client, rules, humans(players), seed=4242)
    gid = throw_away["game"]["id"]
    resigner = throw_away["game"]["to_move"]
    r = client.post(f"/v1/games/{gid}/resign", headers=bearer(tokens_by_seat(throw_away)[resigner]))
    assert r.status_code == 200 and r.get_json()["status"] == "finished"
    replay = client.get(f"/v1/games/{gid}/replay").get_json()
    assert replay["requested_seed"] == 4242
    revealed = engine.new_game(rules, players=players, seed=replay["seed"], options=replay["options"])
    assert revealed.to_dict() == replay["initial_state"]  # the replay reproduces the throw-away ...
    real_state = _stored(redis_conn, real["game"]["id"]).state
    assert real_state.to_dict() != replay["initial_state"]  # ... and not the real table, bazaar or wall included
    for seat in range(players):
        assert _hand(client, real, seat) != revealed.view(seat)["hand"], f"seat {seat}'s hand is revealed"


def test_without_a_configured_secret_one_is_made_once_in_redis_and_shared_by_every_api_process(
        make_app, redis_conn):
    a, b = make_app(SEED_SECRET="").test_client(), make_app(SEED_SECRET="").test_client()
    assert redis_conn.get(keys.SEED_SECRET_KEY) is None
    create(a, "tiuu", humans(2), seed=5)
    made = redis_conn.get(keys.SEED_SECRET_KEY)
    assert made and len(made) == 2 * seeds.SECRET_BYTES
    create(b, "tiuu", humans(2), seed=5)
    assert redis_conn.get(keys.SEED_SECRET_KEY) == made


def test_an_all_ai_table_is_dealt_fresh_too_and_only_a_public_seed_is_dealt_as_given(client, redis_conn):
    ai_only = create(client, "tiengow", [{"kind": "ai", "engine": "random"}] * 4, seed=3)
    assert _stored(redis_conn, ai_only["game"]["id"]).state.seed != 3
    public = client.post("/v1/games", json={"rules": "tiengow", "seed": 1, "public_seed": True,
                                            "seats": humans(4)})
    assert public.status_code == 201
    offline = engine.new_game("tiengow", players=4, seed=1)
    assert _hand(client, public.get_json(), 0) == offline.view(0)["hand"]
    assert _stored(redis_conn, public.get_json()["game"]["id"]).doc["engine_seed"] == 1


def test_every_seed_the_server_draws_or_derives_is_a_javascript_safe_integer(client, redis_conn):
    games = [client.post("/v1/games", json={"rules": "kozel", "seats": humans(2)}).get_json() for _ in range(8)]
    for created in games:
        doc = _stored(redis_conn, created["game"]["id"]).doc
        assert 0 <= doc["seed"] <= seeds.MAX_SEED and 0 <= doc["engine_seed"] <= seeds.MAX_SEED
    assert max(seeds.derive(b"k", n, b"n") for n in range(2000)) > seeds.MAX_SEED // 2  # all 53 bits are used
    assert max(seeds.new_seed() for _ in range(2000)) > seeds.MAX_SEED // 2
    assert seeds.MAX_SEED == 2**53 - 1


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
    # each viewer reads the events it has not read yet (every event is still shown to every viewer once:
    # reading the whole log every round made the test quadratic in the game's length, which is random
    # because every game is dealt with a fresh nonce -- 6 s to 160 s a run)
    viewers = [{}, admin, bearer(toks[0]), bearer(toks[1])]
    read = [0] * len(viewers)
    for _ in range(2000):
        for i, h in enumerate(viewers):
            client.get(url, headers=h)
            events = client.get(f"{url}/events?after={read[i]}", headers=h).get_json()
            read[i] = events[-1]["n"] if events else read[i]
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
        some_move = client.get(f"{url}/moves", headers=h).get_json()[0]["id"]
        # a version the game is not at (the next one: a fixed number could be the current one of a long game)
        stale = {"move": some_move, "version": view["version"] + 1}
        assert client.post(f"{url}/moves", json=stale, headers=h).status_code == 409
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
    assert read == [redis_conn.llen(f"th:game:{{{game_id}}}:events")] * len(viewers)  # each read every event
    assert len(bodies) > 100
    shown = [what for what, body in bodies if hidden.encode() in body]
    assert shown == [], f"the engine seed was shown before the end by {shown[:3]}"
    for job_id in redis_conn.smembers(f"th:game:{{{game_id}}}:jobs"):
        job = Job.fetch(job_id.decode(), connection=redis_conn)
        stored = json.dumps([job.args, job.kwargs, job.meta], default=str) + repr(job.return_value())
        assert hidden not in stored, f"job {job.id} holds the engine seed"
    replay = client.get(f"{url}/replay").get_json()
    assert (replay["seed"], replay["requested_seed"]) == (int(hidden), 23)
