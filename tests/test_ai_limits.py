"""Bounded AI work -- server caps on engine parameters (a 422, never a silent clamp).  Real
HTTP (Flask test client validating every answer against openapi.yaml), a real Redis, real RQ queues."""

from __future__ import annotations

import pytest
from api_support import bearer, create, humans, tokens_by_seat

from service.store import Store

pytest_plugins = ["api_fixtures"]


def _human_to_move(client) -> tuple[str, dict[str, str]]:
    created = create(client, "tiengow", humans(4))
    game_id = created["game"]["id"]
    return game_id, bearer(tokens_by_seat(created)[created["game"]["to_move"]])


def _queued(app) -> int:
    return sum(len(q) for q in app.extensions["queues"].values())


def test_the_engine_listing_shows_each_capped_parameter_with_its_cap(make_app):
    client = make_app(AI_MAX_TIME_MS=500, AI_MAX_ITERATIONS=2000).test_client()
    params = {p["name"]: p for p in client.get("/v1/engines/ismcts").get_json()["params"]}
    assert (params["time_ms"]["cap"], params["time_ms"]["maximum"], params["time_ms"]["default"]) == (500, 500, 500)
    assert (params["iterations"]["cap"], params["iterations"]["maximum"]) == (2000, 2000)
    assert "cap" not in params["uct_c"]
    listed = {e["id"]: e for e in client.get("/v1/engines").get_json()}
    assert listed["ismcts"]["params"] == list(params.values())


def test_the_engine_listing_shows_the_workers_a_suggestion_may_ask_for(make_app):
    listed = {e["id"]: e for e in make_app(AI_MAX_WORKERS=3).test_client().get("/v1/engines").get_json()}
    assert listed["ismcts"]["workers"] == {"default": 1, "minimum": 1, "maximum": 3, "cap": 3}
    assert listed["greedy"]["workers"]["maximum"] == 1 and listed["random"]["workers"]["maximum"] == 1


@pytest.mark.parametrize(("body", "field"), [
    ({"params": {"time_ms": 600_000, "iterations": 100}}, "params"),
    ({"params": {"iterations": 1_000_000}}, "params"),
    ({"params": {"iterations": 100}, "workers": 16}, "workers"),
])
def test_a_suggestion_over_a_default_cap_is_a_422_and_queues_nothing(app, client, body, field):
    game_id, h = _human_to_move(client)
    r = client.post(f"/v1/games/{game_id}/suggestions", json={"engine": "ismcts", **body}, headers=h)
    assert r.status_code == 422, r.get_json()
    assert list(r.get_json()["errors"]) == [field] and "cap" in r.get_json()["detail"]
    assert _queued(app) == 0


def test_caps_are_configurable_and_a_value_at_the_cap_is_accepted(make_app):
    app = make_app(AI_MAX_TIME_MS=300, AI_MAX_ITERATIONS=50, AI_MAX_WORKERS=2)
    client = app.test_client()
    game_id, h = _human_to_move(client)
    url = f"/v1/games/{game_id}/suggestions"
    for over in ({"params": {"time_ms": 301}}, {"params": {"iterations": 51}}, {"workers": 3}):
        assert client.post(url, json=over, headers=h).status_code == 422
    assert _queued(app) == 0
    ok = client.post(url, json={"params": {"time_ms": 300, "iterations": 50}, "workers": 2}, headers=h)
    assert ok.status_code == 202
    # two parts, one after another (fair share: a client holds one worker at a time); the merge waits for both
    assert _queued(app) == 1


def test_an_ai_seat_over_a_cap_is_a_422_on_its_params_and_an_engine_default_runs_at_the_cap(make_app, redis_conn):
    client = make_app(AI_MAX_TIME_MS=400).test_client()
    seats = [*humans(3), {"kind": "ai", "engine": "ismcts", "params": {"time_ms": 401}}]
    r = client.post("/v1/games", json={"rules": "tiengow", "seats": seats})
    assert r.status_code == 422 and list(r.get_json()["errors"]) == ["seats.3.params"]
    assert not redis_conn.keys("th:game:*")
    created = create(client, "tiengow", [*humans(3), {"kind": "ai", "engine": "ismcts"}])
    stored = Store(redis_conn, 60).get(created["game"]["id"])
    assert stored.seat_meta(3)["params"]["time_ms"] == 400
