"""Resign / abandon and rematch over HTTP: a defined end for every rule set,
409 problems that change nothing, forfeits on time, replays that still reproduce, and a rematch that is
idempotent, linked both ways, rotates the starting seat and gives each human seat its own token only."""

from __future__ import annotations

import threading

import pytest
from api_support import bearer, cheap_ai, create, humans, tokens_by_seat

import engine
from engine.replay import check
from service import keys
from service import store as store_module

pytest_plugins = ["api_fixtures"]


def _state(conn, game_id: str) -> tuple:
    return ({k: v for k, v in conn.hgetall(store_module.game_key(game_id)).items() if k != b"seen"},
            conn.lrange(store_module.events_key(game_id), 0, -1), sorted(conn.keys("th:game:*")))


def _problem(r, status: int, slug: str) -> dict:
    assert r.status_code == status, r.get_data(as_text=True)
    assert r.headers["Content-Type"].startswith("application/problem+json")
    body = r.get_json(force=True)
    assert body["type"] == f"urn:tilehouse:problem:{slug}", body
    return body


@pytest.mark.parametrize("rules_id", sorted(engine.RULES))
def test_a_seat_resigns_and_the_match_ends_with_its_defined_result(client, rules_id):
    n = engine.RULES[rules_id].default_players
    created = create(client, rules_id, humans(n), seed=4)
    game_id, toks = created["game"]["id"], tokens_by_seat(created)
    r = client.post(f"/v1/games/{game_id}/resign", headers=bearer(toks[1]))
    assert r.status_code == 200
    view = r.get_json()
    assert view["status"] == "finished" and view["you"] == 1 and view["to_move"] is None
    assert view["result"]["reason"] == "resigned" and view["result"]["resigned"] == 1
    assert abs(sum(view["result"]["payoffs"])) < 1e-9 and view["legal_moves"] == []
    events = client.get(f"/v1/games/{game_id}/events").get_json()
    assert [e["type"] for e in events[-2:]] == ["resign", "match_end"] and events[-2]["seat"] == 1
    replay = client.get(f"/v1/games/{game_id}/replay").get_json()
    assert check(replay) == [] and replay["moves"][-1] == {"version": 1, "seat": 1, "move": "resign"}


def test_resigning_twice_or_after_the_end_is_a_409_and_changes_nothing(app, client):
    conn = app.extensions["redis"]
    created = create(client, "kozel", humans(3), seed=2)
    game_id, toks = created["game"]["id"], tokens_by_seat(created)
    assert client.post(f"/v1/games/{game_id}/resign", headers=bearer(toks[0])).status_code == 200
    before = _state(conn, game_id)
    _problem(client.post(f"/v1/games/{game_id}/resign", headers=bearer(toks[0])), 409, "game-over")
    _problem(client.post(f"/v1/games/{game_id}/resign", headers=bearer(toks[2])), 409, "game-over")
    assert _state(conn, game_id) == before


def test_a_resignation_needs_a_seat_token(app, client):
    conn = app.extensions["redis"]
    created = create(client, "kozel", humans(2), seed=2)
    game_id = created["game"]["id"]
    before = _state(conn, game_id)
    _problem(client.post(f"/v1/games/{game_id}/resign"), 401, "unauthorized")
    _problem(client.post(f"/v1/games/{game_id}/resign", headers=bearer(created["admin_token"])), 403, "not-a-seat")
    _problem(client.post("/v1/games/nosuchgame/resign", headers=bearer(created["admin_token"])), 404, "not-found")
    assert _state(conn, game_id) == before


def test_resigning_while_waiting_for_players_ends_the_game_and_leaves_the_lobby(app, client):
    created = create(client, "kozel", [{"kind": "human"}, {"kind": "open"}], seed=2)
    game_id = created["game"]["id"]
    assert [g["id"] for g in client.get("/v1/games").get_json()["games"]] == [game_id]
    r = client.post(f"/v1/games/{game_id}/resign", headers=bearer(tokens_by_seat(created)[0]))
    assert r.status_code == 200 and r.get_json()["status"] == "finished"
    assert client.get("/v1/games").get_json()["games"] == []
    _problem(client.post(f"/v1/games/{game_id}/seats/1/join"), 409, "game-over")


def test_a_forfeit_on_time_ends_the_match_as_a_resignation(app, client, run_due):
    r = client.post("/v1/games", json={"rules": "tiengow", "seed": 3, "seats": humans(4),
                                       "clock": {"initial_ms": 200, "on_timeout": "forfeit"}})
    created = r.get_json()
    game_id, seat = created["game"]["id"], created["game"]["to_move"]
    run_due()
    view = client.get(f"/v1/games/{game_id}").get_json()
    assert view["status"] == "finished" and view["result"]["resigned"] == seat
    assert view["clock"]["running"] is None and view["seats"][seat]["clock_ms"] == 0
    events = client.get(f"/v1/games/{game_id}/events").get_json()
    assert [(e["type"], e["seat"]) for e in events] == [("timeout", seat), ("resign", seat), ("match_end", None)]
    assert events[0]["data"] == {"action": "forfeit"}
    assert check(client.get(f"/v1/games/{game_id}/replay").get_json()) == []


def test_a_resignation_stops_the_clocks(app, client):
    r = client.post("/v1/games", json={"rules": "kozel", "seed": 3, "seats": humans(2),
                                       "clock": {"initial_ms": 60_000}})
    created = r.get_json()
    mover = created["game"]["to_move"]
    view = client.post(f"/v1/games/{created['game']['id']}/resign",
                       headers=bearer(tokens_by_seat(created)[1 - mover])).get_json()
    assert view["clock"]["running"] is None and view["clock"]["deadline_ms"] is None


def _finished(client, seats, rules="kozel", seed=5, **extra) -> dict:
    r = client.post("/v1/games", json={"rules": rules, "seed": seed, "seats": seats, **extra})
    assert r.status_code == 201
    created = r.get_json()
    toks = tokens_by_seat(created)
    resigner = min(toks)
    assert client.post(f"/v1/games/{created['game']['id']}/resign", headers=bearer(toks[resigner])).status_code == 200
    return created


def test_a_rematch_links_both_ways_keeps_seats_and_options_and_rotates_the_starting_seat(app, client, drain):
    seats = [{"kind": "human", "name": "Ann"}, {"kind": "ai", "engine": "greedy"},
             {"kind": "human", "name": "Cy"}]
    created = _finished(client, seats, options={"target": 51}, clock={"initial_ms": 90_000, "increment_ms": 500})
    old_id, toks = created["game"]["id"], tokens_by_seat(created)
    first = created["game"]["to_move"]
    r = client.post(f"/v1/games/{old_id}/rematch", headers=bearer(toks[2]))
    assert r.status_code == 201 and r.headers["Location"] == f"/v1/games/{r.get_json()['game']['id']}"
    body = r.get_json()
    new = body["game"]
    assert body["seat"] == 2 and new["you"] == 2 and new["rematch_of"] == old_id and new["rematch"] is None
    assert new["seats"][2]["last_seen_ms"] is not None and new["seats"][0]["last_seen_ms"] is None
    assert new["options"]["target"] == 51 and new["rules"] == "kozel"
    assert [(s["name"], s["kind"], s["engine"]) for s in new["seats"]] == [("Ann", "human", None),
                                                                         ("seat 1", "ai", "greedy"), ("Cy", "human", None)]
    assert new["clock"]["initial_ms"] == 90_000 and new["clock"]["increment_ms"] == 500
    assert new["to_move"] == (first + 1) % 3  # the seat after the old game's first player starts
    # Ann has not asked for the rematch yet: the game waits for her, and nothing moves
    assert new["status"] == "waiting" and [s["taken"] for s in new["seats"]] == [False, True, True]
    assert client.get(f"/v1/games/{old_id}").get_json()["rematch"] == new["id"]
    assert client.get(f"/v1/games/{old_id}/events").get_json()[-1]["type"] == "rematch"
    ann = client.post(f"/v1/games/{old_id}/rematch", headers=bearer(toks[0]))
    assert ann.status_code == 200 and ann.get_json()["game"]["id"] == new["id"] and ann.get_json()["seat"] == 0
    started = ann.get_json()["game"]
    assert started["status"] == "active" and started["clock"]["running"] in (0, 2, None)
    conn = app.extensions["redis"]
    old_seed = store_module.Store(conn, 60).get(old_id).doc["seed"]
    assert store_module.Store(conn, 60).get(new["id"]).doc["seed"] != old_seed
    drain()
    assert client.get(f"/v1/games/{new['id']}").get_json()["status"] in ("active", "finished")


def test_each_human_seat_gets_its_own_rematch_token_and_nobody_gets_anothers(app, client):
    created = _finished(client, humans(3), seed=8)
    old_id, toks = created["game"]["id"], tokens_by_seat(created)
    answers = {s: client.post(f"/v1/games/{old_id}/rematch", headers=bearer(toks[s])).get_json() for s in range(3)}
    new_id = answers[0]["game"]["id"]
    assert {a["game"]["id"] for a in answers.values()} == {new_id}
    new_tokens = {s: a["token"] for s, a in answers.items()}
    assert len(set(new_tokens.values())) == 3
    for s in range(3):
        assert answers[s]["seat"] == s
        assert client.get(f"/v1/games/{new_id}", headers=bearer(new_tokens[s])).get_json()["you"] == s
        # asking again gives the same token (a lost answer can be asked for again), never another seat's
        again = client.post(f"/v1/games/{old_id}/rematch", headers=bearer(toks[s])).get_json()
        assert again["token"] == new_tokens[s] and again["seat"] == s
    # the old tokens are no tokens of the new game, and a spectator or the admin gets no seat token
    _problem(client.get(f"/v1/games/{new_id}", headers=bearer(toks[0])), 403, "foreign-token")
    _problem(client.post(f"/v1/games/{old_id}/rematch"), 401, "unauthorized")
    _problem(client.post(f"/v1/games/{old_id}/rematch", headers=bearer(created["admin_token"])), 403, "not-a-seat")
    # the admin token of the old game administers the rematch too
    assert client.get(f"/v1/games/{new_id}", headers=bearer(created["admin_token"])).get_json()["you"] is None


def test_concurrent_rematch_calls_create_one_game(app, client):
    created = _finished(client, humans(4), rules="tiengow", seed=9)
    old_id, toks = created["game"]["id"], tokens_by_seat(created)
    barrier = threading.Barrier(8)
    answers: list = []
    lock = threading.Lock()

    def ask(i: int) -> None:
        c = app.test_client()
        barrier.wait()
        r = c.post(f"/v1/games/{old_id}/rematch", headers=bearer(toks[i % 4]))
        with lock:
            answers.append((i % 4, r.status_code, r.get_json()))

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(status in (200, 201) for _, status, _ in answers)
    assert len({body["game"]["id"] for _, _, body in answers}) == 1
    assert sum(status == 201 for _, status, _ in answers) == 1
    for seat in range(4):
        assert len({body["token"] for s, _, body in answers if s == seat}) == 1
    conn = app.extensions["redis"]
    games = [k for k in conn.keys("th:game:{*}") if k.decode().endswith("}")]
    assert len(games) == 2  # the old game and exactly one rematch (a loser's extra game is deleted)
    assert client.get(f"/v1/games/{old_id}").get_json()["rematch"] == answers[0][2]["game"]["id"]
    # and a loser's place among the address's live games is given back: only the rematch holds one
    listed = {m.decode() for m in conn.zrange(keys.client_games_key("ip:127.0.0.1"), 0, -1)}
    assert listed - {old_id} == {answers[0][2]["game"]["id"]}


def test_a_rematch_before_the_end_is_a_409_and_changes_nothing(app, client):
    conn = app.extensions["redis"]
    created = create(client, "kozel", [{"kind": "human"}, cheap_ai("random")], seed=2)
    game_id = created["game"]["id"]
    before = _state(conn, game_id)
    _problem(client.post(f"/v1/games/{game_id}/rematch", headers=bearer(tokens_by_seat(created)[0])), 409,
             "not-over")
    assert _state(conn, game_id) == before


def _games(conn) -> list[bytes]:
    return sorted(k for k in conn.keys("th:game:{*}") if k.decode().endswith("}"))


def test_a_rematch_over_the_live_games_cap_is_a_429_and_creates_nothing(make_app):
    app = make_app(LIVE_GAMES_PER_CLIENT=1)
    client = app.test_client()
    conn = app.extensions["redis"]
    created = _finished(client, humans(2))  # over: its place is free again
    old_id, toks = created["game"]["id"], tokens_by_seat(created)
    create(client, "kozel", humans(2))  # the one live game the address may have
    before, games = _state(conn, old_id), _games(conn)
    refused = client.post(f"/v1/games/{old_id}/rematch", headers=bearer(toks[0]))
    assert _problem(refused, 429, "live-games")["status"] == 429
    assert 1 <= int(refused.headers["Retry-After"]) <= 60
    assert _state(conn, old_id) == before and _games(conn) == games
    assert client.get(f"/v1/games/{old_id}").get_json()["rematch"] is None


def test_a_rematch_counts_in_the_creation_rate_and_a_seat_claiming_it_is_never_refused(make_app):
    app = make_app(GAMES_PER_MINUTE=2)
    client = app.test_client()
    conn = app.extensions["redis"]
    created = _finished(client, humans(2))  # the first game of the minute
    old_id, toks = created["game"]["id"], tokens_by_seat(created)
    first = client.post(f"/v1/games/{old_id}/rematch", headers=bearer(toks[0]))
    assert first.status_code == 201  # the second
    rematch_id = first.get_json()["game"]["id"]
    # the rate is spent, by a creation and a rematch alike: no third game...
    _problem(client.post("/v1/games", json={"rules": "kozel", "seats": humans(2)}), 429, "rate-limited")
    # ...but the other seat claims its place in the rematch made (this creates nothing)
    claim = client.post(f"/v1/games/{old_id}/rematch", headers=bearer(toks[1]))
    assert claim.status_code == 200 and claim.get_json()["game"]["id"] == rematch_id
    assert claim.get_json()["game"]["status"] == "active"
    # the rematch of the rematch would be a third game: refused, nothing created or linked
    assert client.post(f"/v1/games/{rematch_id}/resign",
                       headers=bearer(first.get_json()["token"])).status_code == 200
    before, games = _state(conn, rematch_id), _games(conn)
    refused = client.post(f"/v1/games/{rematch_id}/rematch", headers=bearer(first.get_json()["token"]))
    assert _problem(refused, 429, "rate-limited")["detail"].startswith("at most 2 new games from one client address")
    assert _state(conn, rematch_id) == before and _games(conn) == games
