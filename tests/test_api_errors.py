"""Bad input gets the right 4xx problem document and leaves the stored game unchanged; unknown things are 404,
wrong methods 405, bugs a 500 without a stack trace, an unreachable Redis 503 with Retry-After
(docs/api.md, "Conventions")."""

from __future__ import annotations

import pytest
from api_support import ContractClient, bearer, cheap_ai, create, humans, tokens_by_seat

from service import create_app
from service import store as store_module

pytest_plugins = ["api_fixtures"]

PROBLEM = "application/problem+json"


def _snapshot(conn, game_id: str) -> tuple:
    # ``seen`` (presence) is written by every successful authenticated request, reads included
    return ({k: v for k, v in conn.hgetall(store_module.game_key(game_id)).items() if k != b"seen"}, conn.lrange(store_module.events_key(game_id), 0, -1),
            conn.smembers(store_module.jobs_key(game_id)), conn.llen("rq:queue:suggest"))


def _problem(r, status: int) -> dict:
    assert r.status_code == status, (r.status_code, r.get_data(as_text=True))
    assert r.headers["Content-Type"].startswith(PROBLEM)
    body = r.get_json(force=True)
    assert body["status"] == status and body["type"].startswith("urn:tilehouse:problem:") and body["detail"]
    return body


@pytest.fixture
def game(client):
    created = create(client, "tiengow", humans(4), seed=8)
    to_move = created["game"]["to_move"]
    toks = tokens_by_seat(created)
    return {"id": created["game"]["id"], "to_move": to_move, "mover": bearer(toks[to_move]),
            "waiter": bearer(toks[(to_move + 1) % 4]), "admin": bearer(created["admin_token"])}


def _post_raw(client, url, data, headers, content_type="application/json"):
    return client.post(url, data=data, headers=headers, content_type=content_type)


BAD_MOVE_BODIES = [
    # (body bytes, content type, status, field named in errors or None)
    (b'{"move": "play:1-1"', "application/json", 400, None),
    (b"\xff\xfe not utf-8", "application/json", 400, None),
    (b'{"move": NaN}', "application/json", 400, None),
    (b"move=play:1-1", "application/x-www-form-urlencoded", 415, None),
    (b'{"move": "play:1-1"}', "text/plain", 415, None),
    (b"[]", "application/json", 422, "_schema"),
    (b'{"move": 5}', "application/json", 422, "move"),
    (b'{"move": ["play:1-1"]}', "application/json", 422, "move"),
    (b'{"move": ""}', "application/json", 422, "move"),
    (b'{"version": 0}', "application/json", 422, "move"),
    (b'{"move": "play:1-1", "version": "0"}', "application/json", 422, "version"),
    (b'{"move": "play:1-1", "version": true}', "application/json", 422, "version"),
    (b'{"move": "play:1-1", "version": -1}', "application/json", 422, "version"),
    (b'{"move": "play:1-1", "version": 0.0}', "application/json", 422, "version"),
    (b'{"move": "play:1-1", "colour": "red"}', "application/json", 422, "colour"),
    (b'{"move": "???"}', "application/json", 422, "move"),
    (b'{"move": "play:9-9"}', "application/json", 422, "move"),
    (b'{"move": "fly:1-1"}', "application/json", 422, "move"),
    (b'{"move": {"action": 3}}', "application/json", 422, "move"),
    (b'{"move": {"action": "play", "tiles": "6-6"}}', "application/json", 422, "move"),
]


@pytest.mark.parametrize(("data", "ctype", "status", "field"), BAD_MOVE_BODIES,
                         ids=[f"{s}-{d[:24]!r}" for d, _, s, _ in BAD_MOVE_BODIES])
def test_a_bad_move_body_is_a_problem_and_changes_nothing(app, client, game, data, ctype, status, field):
    conn = app.extensions["redis"]
    before = _snapshot(conn, game["id"])
    r = _post_raw(client, f"/v1/games/{game['id']}/moves", data, game["mover"], ctype)
    body = _problem(r, status)
    if field is not None:
        assert field in body["errors"]
    assert _snapshot(conn, game["id"]) == before


def test_an_illegal_move_is_422_and_changes_nothing(app, client, game):
    conn = app.extensions["redis"]
    before = _snapshot(conn, game["id"])
    legal = {m["id"] for m in client.get(f"/v1/games/{game['id']}/moves", headers=game["mover"]).get_json()}
    for candidate in ("play:6-6", "play:4-2+2-1", "play:5-5+5-5", "play:3-3", "play:1-1+1-1"):
        if candidate not in legal:
            body = _problem(client.post(f"/v1/games/{game['id']}/moves", json={"move": candidate},
                                        headers=game["mover"]), 422)
            assert "move" in body["errors"]
    assert _snapshot(conn, game["id"]) == before


def test_tokens_missing_unknown_foreign_admin_or_out_of_turn_are_refused(app, client, game):
    conn = app.extensions["redis"]
    other = create(client, "tiengow", humans(4), seed=9)
    foreign = bearer(tokens_by_seat(other)[other["game"]["to_move"]])
    move = client.get(f"/v1/games/{game['id']}/moves", headers=game["mover"]).get_json()[0]["id"]
    url = f"/v1/games/{game['id']}/moves"
    before = _snapshot(conn, game["id"])
    _problem(client.post(url, json={"move": move}), 401)
    assert "Bearer" in client.post(url, json={"move": move}).headers["WWW-Authenticate"]
    _problem(client.post(url, json={"move": move}, headers={"Authorization": "Bearer nonsense"}), 401)
    _problem(client.post(url, json={"move": move}, headers={"Authorization": f"Bearer {game['id']}.forged"}), 401)
    _problem(client.post(url, json={"move": move}, headers={"Authorization": "Basic dXNlcjpwYXNz"}), 401)
    assert _problem(client.post(url, json={"move": move}, headers=foreign), 403)["type"].endswith("foreign-token")
    _problem(client.post(url, json={"move": move}, headers=game["admin"]), 403)
    assert _problem(client.post(url, json={"move": move}, headers=game["waiter"]), 403)["type"].endswith(
        "out-of-turn")
    _problem(client.get(f"/v1/games/{game['id']}", headers={"Authorization": "Bearer nonsense"}), 401)
    _problem(client.get(f"/v1/games/{game['id']}/events", headers=foreign), 403)
    _problem(client.delete(f"/v1/games/{game['id']}", headers=foreign), 403)
    assert _snapshot(conn, game["id"]) == before


def test_a_stale_version_is_409_with_the_current_version_and_changes_nothing(app, client, game):
    conn = app.extensions["redis"]
    move = client.get(f"/v1/games/{game['id']}/moves", headers=game["mover"]).get_json()[0]["id"]
    before = _snapshot(conn, game["id"])
    body = _problem(client.post(f"/v1/games/{game['id']}/moves", json={"move": move, "version": 3},
                                headers=game["mover"]), 409)
    assert body["version"] == 0
    assert _snapshot(conn, game["id"]) == before


def test_a_body_over_the_limit_is_413_and_changes_nothing(app, client, game):
    conn = app.extensions["redis"]
    before = _snapshot(conn, game["id"])
    big = b'{"move": "' + b"x" * (app.config["MAX_BODY_BYTES"] + 10) + b'"}'
    _problem(_post_raw(client, f"/v1/games/{game['id']}/moves", big, game["mover"]), 413)
    _problem(_post_raw(client, "/v1/games", big, {}), 413)
    assert _snapshot(conn, game["id"]) == before


BAD_GAMES = [
    ({"seats": [{"kind": "human"}] * 4}, "rules"),
    ({"rules": 5, "seats": [{"kind": "human"}] * 4}, "rules"),
    ({"rules": "chess", "seats": [{"kind": "human"}] * 4}, "rules"),
    ({"rules": "tiengow"}, "seats"),
    ({"rules": "tiengow", "seats": []}, "seats"),
    ({"rules": "tiengow", "seats": "four"}, "seats"),
    ({"rules": "tiengow", "seats": [{"kind": "human"}] * 3}, "seats"),
    ({"rules": "tiengow", "seats": [{"kind": "robot"}] * 4}, "seats"),
    ({"rules": "tiengow", "seats": [{"kind": "ai"}] * 4}, "seats"),
    ({"rules": "tiengow", "seats": [{"kind": "human", "engine": "random"}] * 4}, "seats"),
    ({"rules": "tiengow", "seats": [{"kind": "human", "name": ""}] * 4}, "seats"),
    ({"rules": "tiengow", "seats": [{"kind": "human"}] * 4, "options": {"no_such": 1}}, "options.no_such"),
    ({"rules": "tiengow", "seats": [{"kind": "human"}] * 4, "options": {"deals": "3"}}, "options.deals"),
    ({"rules": "tiengow", "seats": [{"kind": "human"}] * 4, "options": {"deals": 0}}, "options.deals"),
    ({"rules": "tiengow", "seats": [{"kind": "human"}] * 4, "options": {"deals": 101}}, "options.deals"),
    ({"rules": "tiengow", "seats": [{"kind": "human"}] * 4, "options": {"deals": True}}, "options.deals"),
    ({"rules": "tiengow", "seats": [{"kind": "human"}] * 4, "options": []}, "options"),
    ({"rules": "tiengow", "seats": [{"kind": "human"}] * 4, "seed": "12"}, "seed"),
    ({"rules": "tiengow", "seats": [{"kind": "human"}] * 4, "seed": -1}, "seed"),
    ({"rules": "tiengow", "seats": [{"kind": "human"}] * 4, "seed": 2**53}, "seed"),
    ({"rules": "tiengow", "seats": [{"kind": "human"}] * 4, "seed": 1.5}, "seed"),
    ({"rules": "tiengow", "seats": [{"kind": "human"}] * 4, "colour": "red"}, "colour"),
    ({"rules": "tiengow", "seats": [*humans(3), {"kind": "ai", "engine": "deep_blue"}]}, "seats.3.engine"),
    # the arena's reference engine sees every hand: never a served seat
    ({"rules": "tiengow", "seats": [*humans(3), {"kind": "ai", "engine": "perfect"}]}, "seats.3.engine"),
    ({"rules": "tiengow", "seats": [*humans(3), {"kind": "ai", "engine": "ismcts", "params": {"iterations": 0}}]},
     "seats.3.params"),
    ({"rules": "tiengow", "seats": [*humans(3), {"kind": "ai", "engine": "ismcts", "params": {"iterations": "9"}}]},
     "seats.3.params"),
    ({"rules": "tiengow", "seats": [*humans(3), {"kind": "ai", "engine": "ismcts", "params": {"depth": 3}}]},
     "seats.3.params"),
]


@pytest.mark.parametrize(("body", "field"), BAD_GAMES, ids=[f"{i}-{f}" for i, (_, f) in enumerate(BAD_GAMES)])
def test_a_bad_game_is_a_422_naming_the_field_and_stores_nothing(app, client, body, field):
    conn = app.extensions["redis"]
    r = client.post("/v1/games", json=body)
    problem = _problem(r, 422)
    assert field in problem["errors"], problem
    assert conn.keys("th:game:*") == []


def test_malformed_or_non_json_game_bodies_are_400_and_415(app, client):
    conn = app.extensions["redis"]
    _problem(_post_raw(client, "/v1/games", b"{rules:", {}), 400)
    _problem(_post_raw(client, "/v1/games", b"", {}), 400)
    _problem(_post_raw(client, "/v1/games", b"rules=tiengow", {}, "application/x-www-form-urlencoded"), 415)
    _problem(client.post("/v1/games", data=b'{"rules": "tiengow"}'), 415)
    assert conn.keys("th:game:*") == []


BAD_SUGGESTIONS = [
    ({"engine": "deep_blue"}, 422, "engine"),
    ({"engine": "perfect"}, 422, "engine"),
    ({"engine": 3}, 422, "engine"),
    ({"engine": "ismcts", "params": {"iterations": 0}}, 422, "params"),
    ({"engine": "ismcts", "params": {"iterations": 10**9}}, 422, "params"),
    ({"engine": "ismcts", "params": {"uct_c": "high"}}, 422, "params"),
    ({"engine": "ismcts", "workers": 0}, 422, "workers"),
    ({"engine": "ismcts", "workers": 17}, 422, "workers"),
    ({"engine": "ismcts", "workers": "2"}, 422, "workers"),
    ({"engine": "greedy", "workers": 2}, 422, "workers"),
    ({"engine": "ismcts", "seed": -5}, 422, "seed"),
    ({"engine": "ismcts", "version": 7}, 409, None),
]


@pytest.mark.parametrize(("body", "status", "field"), BAD_SUGGESTIONS,
                         ids=[f"{s}-{i}" for i, (_, s, _) in enumerate(BAD_SUGGESTIONS)])
def test_a_bad_suggestion_request_is_refused_and_queues_nothing(app, client, game, body, status, field):
    conn = app.extensions["redis"]
    before = _snapshot(conn, game["id"])
    problem = _problem(client.post(f"/v1/games/{game['id']}/suggestions", json=body, headers=game["mover"]),
                       status)
    if field is not None:
        assert field in problem["errors"]
    assert _snapshot(conn, game["id"]) == before


def test_suggestions_need_the_seat_to_move(app, client, game):
    conn = app.extensions["redis"]
    before = _snapshot(conn, game["id"])
    url = f"/v1/games/{game['id']}/suggestions"
    _problem(client.post(url, json={}), 401)
    _problem(client.post(url, json={}, headers=game["waiter"]), 403)
    _problem(client.post(url, json={}, headers=game["admin"]), 403)
    assert _snapshot(conn, game["id"]) == before


def test_bad_event_queries_are_422(client, game):
    for q in ("after=-1", "after=abc", "before=3"):
        _problem(client.get(f"/v1/games/{game['id']}/events?{q}"), 422)


def test_unknown_things_are_404_problems(client):
    _problem(client.get("/v1/games/0123456789abcdef"), 404)
    _problem(client.get("/v1/games/nope/moves"), 404)
    _problem(client.post("/v1/games/nope/moves", json={"move": "x"}), 404)
    _problem(client.get("/v1/jobs/play-nope-3"), 404)
    _problem(client.get("/v1/jobs/bad.id"), 404)
    _problem(client.get("/v1/rules/chess"), 404)
    _problem(client.get("/v1/engines/deep_blue"), 404)
    _problem(client.get("/no/such/path"), 404)
    _problem(client.delete("/v1/games/nope", headers={"Authorization": "Bearer x"}), 404)


def test_a_wrong_method_is_405_with_allow(client, game):
    r = client.put(f"/v1/games/{game['id']}", json={})
    _problem(r, 405)
    assert set(r.headers["Allow"].replace(" ", "").split(",")) >= {"GET", "DELETE"}
    _problem(client.delete("/v1/rules"), 405)
    _problem(client.post("/v1/jobs/x", json={}), 405)


def test_a_bug_is_a_500_problem_without_a_stack_trace(client, monkeypatch):
    from service.api import rules

    def boom(rs):
        raise RuntimeError("secret internals: 6-6 in seat 2's hand")

    monkeypatch.setattr(rules, "describe", boom)
    r = client.get("/v1/rules")
    assert r.status_code == 500 and r.headers["Content-Type"].startswith(PROBLEM)
    text = r.get_data(as_text=True)
    assert "Traceback" not in text and "secret" not in text and "RuntimeError" not in text
    assert r.get_json()["status"] == 500


def test_redis_unreachable_is_503_with_retry_after(redis_conn):
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    app = create_app({"REDIS_URL": f"redis://127.0.0.1:{port}/0", "REDIS_SOCKET_TIMEOUT_SECONDS": 0.5})
    app.test_client_class = ContractClient
    client = app.test_client()
    for r in (client.get("/v1/games/0123456789abcdef"),
              client.post("/v1/games", json={"rules": "tiuu", "seats": [{"kind": "human"}, cheap_ai("random")]})):
        _problem(r, 503)
        assert int(r.headers["Retry-After"]) > 0
    # the listings need no Redis
    assert client.get("/v1/rules").status_code == 200


def test_too_many_suggestions_from_one_seat_are_429_with_retry_after(app, client, game):
    app.config["SUGGESTIONS_PER_MINUTE"] = 2
    url = f"/v1/games/{game['id']}/suggestions"
    # refused requests do not count (only accepted suggestions do)
    for _ in range(3):
        assert client.post(url, json={"engine": "nope"}, headers=game["mover"]).status_code == 422
    answers = [client.post(url, json={"engine": "random"}, headers=game["mover"]) for _ in range(3)]
    assert [a.status_code for a in answers] == [202, 202, 429]
    r = answers[-1]
    _problem(r, 429)
    assert r.get_json()["type"].endswith(":rate-limited") and "suggestions from one seat" in r.get_json()["detail"]
    assert 0 < int(r.headers["Retry-After"]) <= 60


def _service_errors() -> list[type]:
    import inspect

    from service import errors

    return [c for _, c in inspect.getmembers(errors, inspect.isclass)
            if issubclass(c, errors.ServiceError) and c is not errors.ServiceError]


@pytest.mark.parametrize("kind", _service_errors(), ids=lambda c: c.__name__)
def test_every_refusal_of_the_service_has_a_4xx_or_503_status_at_the_http_edge(kind):
    from service import problems

    assert 400 <= problems.STATUS[kind] < 500 or problems.STATUS[kind] == 503


def test_a_refusal_keeps_its_slug_members_and_retry_after_as_a_problem():
    from service import errors, problems

    problem = problems.from_exception(errors.VersionConflict(3, 5))
    assert (problem.status, problem.slug, problem.extra) == (409, "stale-version", {"version": 5})
    spent = problems.from_exception(errors.BudgetSpent("spent", retry_after=17))
    assert (spent.status, spent.slug, spent.headers["Retry-After"]) == (429, "ai-budget", "17")
    assert problems.from_exception(errors.Unauthorized("who?")).headers["WWW-Authenticate"].startswith("Bearer")
