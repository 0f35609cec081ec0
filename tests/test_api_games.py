"""The game resource through real HTTP (Flask test client), a real Redis and a real RQ worker: whole games of
every rule set with AI seats, ETags, idempotent retries, concurrent moves, deletion (docs/api.md)."""

from __future__ import annotations

import random
import threading

import pytest
from api_support import bearer, cheap_ai, create, humans, tokens_by_seat

import engine

pytest_plugins = ["api_fixtures"]

RULES = sorted(engine.RULES)


def _mixed_seats(n: int) -> list[dict]:
    """Seat 0 human, the others AI with each engine in turn."""
    engines = ["ismcts", "greedy", "random"]
    return [{"kind": "human", "name": "Ann"}] + [cheap_ai(engines[i % 3]) for i in range(n - 1)]


@pytest.mark.parametrize("rules_id", RULES)
def test_a_whole_game_with_ai_seats_is_played_through_http(client, drain, rules_id):
    rs = engine.RULES[rules_id]
    created = create(client, rules_id, _mixed_seats(rs.default_players), seed=11)
    game_id = created["game"]["id"]
    h = bearer(tokens_by_seat(created)[0])
    rng = random.Random(3)
    human_moves = 0
    for _ in range(5000):
        view = client.get(f"/v1/games/{game_id}", headers=h).get_json()
        if view["status"] == "finished":
            break
        if view["ai"]["pending"]:
            assert view["to_move"] != 0 and view["legal_moves"] == []
            drain()
            continue
        assert view["to_move"] == 0 and view["legal_moves"]
        moves = client.get(f"/v1/games/{game_id}/moves", headers=h).get_json()
        assert moves == view["legal_moves"]
        move = rng.choice(moves)["id"]
        r = client.post(f"/v1/games/{game_id}/moves", json={"move": move, "version": view["version"]}, headers=h)
        assert r.status_code == 200, r.get_json()
        assert r.get_json()["version"] == view["version"] + 1
        human_moves += 1
    else:
        pytest.fail("the game did not end")
    assert human_moves > 0
    result = view["result"]
    assert result["reason"] and sorted(result["ranking"]) == list(range(rs.default_players))
    assert abs(sum(result["payoffs"])) < 1e-9
    assert view["ai"] == {"pending": False, "job": None} and view["legal_moves"] == []
    # a finished game keeps answering, to spectators too
    spectator = client.get(f"/v1/games/{game_id}").get_json()
    assert spectator["result"] == result and spectator["hand"] is None


def test_a_game_of_ai_seats_only_plays_itself_to_the_end_with_one_worker_run(client, drain):
    created = create(client, "kozel", [cheap_ai("ismcts"), cheap_ai("greedy")], seed=5, options={"target": 30})
    game_id = created["game"]["id"]
    assert created["game"]["ai"]["pending"] and created["seats"] == []
    drain()
    view = client.get(f"/v1/games/{game_id}").get_json()
    assert view["status"] == "finished" and view["ai"]["pending"] is False
    events = client.get(f"/v1/games/{game_id}/events").get_json()
    assert [e["n"] for e in events] == list(range(1, len(events) + 1))
    assert events[-1]["version"] == view["version"]


def test_create_answers_201_with_location_tokens_and_a_spectator_view(client):
    created = client.post("/v1/games", json={"rules": "tiengow", "seats": [*humans(3), cheap_ai("random")]})
    assert created.status_code == 201
    body = created.get_json()
    game = body["game"]
    assert created.headers["Location"] == f"/v1/games/{game['id']}"
    assert game["you"] is None and game["hand"] is None and game["version"] == 0
    assert [s["seat"] for s in body["seats"]] == [0, 1, 2]
    assert len({s["token"] for s in body["seats"]} | {body["admin_token"]}) == 4
    assert "seed" not in game and "seed" not in game["options"]
    assert [s["kind"] for s in game["seats"]] == ["human"] * 3 + ["ai"]


def test_the_same_public_seed_and_moves_give_the_same_game(client):
    a, b = (client.post("/v1/games", json={"rules": "tiuu", "seed": 99, "public_seed": True,
                                           "seats": humans(2)}).get_json() for _ in range(2))
    for created in (a, b):
        seat = created["game"]["to_move"]
        h = bearer(tokens_by_seat(created)[seat])
        moves = client.get(f"/v1/games/{created['game']['id']}/moves", headers=h).get_json()
        client.post(f"/v1/games/{created['game']['id']}/moves", json={"move": moves[0]["id"]}, headers=h)
    va = client.get(f"/v1/games/{a['game']['id']}").get_json()
    vb = client.get(f"/v1/games/{b['game']['id']}").get_json()
    for k in ("table", "version", "to_move"):
        assert va[k] == vb[k]
    # presence (when each seat was last seen) is the only thing that may differ between the two
    assert [{**s, "last_seen_ms": None} for s in va["seats"]] == [{**s, "last_seen_ms": None} for s in vb["seats"]]


def test_etag_is_the_version_and_if_none_match_answers_304(client):
    created = create(client, "tiengow", humans(4))
    game_id = created["game"]["id"]
    seat = created["game"]["to_move"]
    h = bearer(tokens_by_seat(created)[seat])
    r = client.get(f"/v1/games/{game_id}", headers=h)
    assert r.headers["ETag"] == '"0"'
    again = client.get(f"/v1/games/{game_id}", headers={**h, "If-None-Match": '"0"'})
    assert again.status_code == 304 and again.get_data() == b"" and again.headers["ETag"] == '"0"'
    assert client.get(f"/v1/games/{game_id}/moves", headers={**h, "If-None-Match": '"0"'}).status_code == 304
    move = r.get_json()["legal_moves"][0]["id"]
    assert client.post(f"/v1/games/{game_id}/moves", json={"move": move}, headers=h).headers["ETag"] == '"1"'
    stale = client.get(f"/v1/games/{game_id}", headers={**h, "If-None-Match": '"0"'})
    assert stale.status_code == 200 and stale.headers["ETag"] == '"1"'


def test_a_retry_of_the_last_move_is_idempotent(client):
    created = create(client, "tiengow", humans(4))
    game_id = created["game"]["id"]
    seat = created["game"]["to_move"]
    h = bearer(tokens_by_seat(created)[seat])
    legal = client.get(f"/v1/games/{game_id}/moves", headers=h).get_json()
    move = legal[0]
    first = client.post(f"/v1/games/{game_id}/moves", json={"move": move["id"], "version": 0}, headers=h)
    assert first.status_code == 200 and first.get_json()["version"] == 1
    for again in ({"move": move["id"], "version": 0}, {"move": move, "version": 0}):
        retry = client.post(f"/v1/games/{game_id}/moves", json=again, headers=h)
        assert retry.status_code == 200 and retry.get_json() == first.get_json()
    events = client.get(f"/v1/games/{game_id}/events").get_json()
    assert {e["version"] for e in events} == {1}
    # a different move at the old version is a conflict, not a retry
    other = client.post(f"/v1/games/{game_id}/moves", json={"move": legal[1]["id"], "version": 0}, headers=h)
    assert other.status_code == 409 and other.get_json()["version"] == 1


def test_twenty_concurrent_moves_at_one_version_land_exactly_once(app, client):
    created = create(client, "tiengow", humans(4), seed=21)
    game_id = created["game"]["id"]
    seat = created["game"]["to_move"]
    h = bearer(tokens_by_seat(created)[seat])
    moves = [m["id"] for m in client.get(f"/v1/games/{game_id}/moves", headers=h).get_json()]
    barrier = threading.Barrier(20)
    answers: list[tuple[str, int]] = []
    lock = threading.Lock()

    def post(i: int) -> None:
        c = app.test_client()
        move = moves[i % len(moves)]
        barrier.wait()
        r = c.post(f"/v1/games/{game_id}/moves", json={"move": move, "version": 0}, headers=h)
        with lock:
            answers.append((move, r.status_code))

    threads = [threading.Thread(target=post, args=(i,)) for i in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    view = client.get(f"/v1/games/{game_id}").get_json()
    assert view["version"] == 1
    events = client.get(f"/v1/games/{game_id}/events").get_json()
    landed = {e["data"].get("move") for e in events} - {None}
    winners = [m for m, status in answers if status == 200]
    assert len(answers) == 20 and set(s for _, s in answers) <= {200, 409}
    # every 200 is the move that landed (the first, or an idempotent retry of that very move);
    # every other move got 409 and changed nothing
    assert len(set(winners)) == 1
    assert all(status == 409 for m, status in answers if m != winners[0])
    assert landed <= {winners[0]}


def test_delete_needs_the_admin_token_and_removes_every_key(app, client, drain, redis_conn):
    created = create(client, "kozel", [{"kind": "human"}, cheap_ai("random")], seed=4)
    game_id = created["game"]["id"]
    seat_h = bearer(tokens_by_seat(created)[0])
    if created["game"]["to_move"] == 0:
        move = client.get(f"/v1/games/{game_id}/moves", headers=seat_h).get_json()[0]["id"]
        client.post(f"/v1/games/{game_id}/moves", json={"move": move}, headers=seat_h)
    assert redis_conn.keys(f"*{{{game_id}}}*")
    assert client.delete(f"/v1/games/{game_id}").status_code == 401
    assert client.delete(f"/v1/games/{game_id}", headers=seat_h).status_code == 403
    assert client.delete(f"/v1/games/{game_id}", headers=bearer(created["admin_token"])).status_code == 204
    assert redis_conn.keys(f"*{{{game_id}}}*") == []
    assert [k for k in redis_conn.keys("rq:job:*") if game_id.encode() in k] == []
    assert client.get(f"/v1/games/{game_id}").status_code == 404
    drain()  # nothing left to play, and nothing recreates the game
    assert redis_conn.keys(f"*{{{game_id}}}*") == []


def test_every_key_of_a_game_shares_its_hash_tag_and_expires(app, client, redis_conn):
    created = create(client, "tiengow", [*humans(3), cheap_ai("random")])
    game_id = created["game"]["id"]
    keys = [k.decode() for k in redis_conn.keys("th:game:*")]
    assert keys and all(f"{{{game_id}}}" in k for k in keys)
    assert all(0 < redis_conn.ttl(k) <= app.config["GAME_TTL_SECONDS"] for k in keys)
