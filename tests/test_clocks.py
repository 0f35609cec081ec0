"""Clocks: Fischer time control of the human seats, shown in every view, timeouts
scheduled with RQ's ``enqueue_at`` and carried out by real RQ workers with their scheduler -- an in-process
``SimpleWorker(...).work(burst=True, with_scheduler=True)`` once the deadline has passed, and a real
``python worker.py`` process -- with clocks of a few hundred milliseconds."""

from __future__ import annotations

import time

import pytest
from api_support import bearer, cheap_ai, create, humans, tokens_by_seat
from rq.job import Job

from service import keys
from service import store as store_module

pytest_plugins = ["api_fixtures"]


def _clocked(client, seats, clock_spec: dict, rules: str = "kozel", seed: int = 3, public_seed: bool = False) -> dict:
    r = client.post("/v1/games", json={"rules": rules, "seed": seed, "seats": seats, "clock": clock_spec,
                                       "public_seed": public_seed})
    assert r.status_code == 201, r.get_json()
    return r.get_json()


def _events(client, game_id: str) -> list[dict]:
    return client.get(f"/v1/games/{game_id}/events").get_json()


@pytest.mark.parametrize("bad", [{"initial_ms": 99}, {"initial_ms": 86_400_001}, {"initial_ms": True},
                                 {"initial_ms": 1000.5}, {"increment_ms": 10}, {"initial_ms": 1000, "increment_ms": -1},
                                 {"initial_ms": 1000, "increment_ms": 3_600_001},
                                 {"initial_ms": 1000, "on_timeout": "abort"}, {"initial_ms": 1000, "x": 1}, 5])
def test_a_clock_out_of_range_is_a_422_and_creates_nothing(app, client, bad):
    conn = app.extensions["redis"]
    r = client.post("/v1/games", json={"rules": "kozel", "seats": humans(2), "clock": bad})
    assert r.status_code == 422 and r.headers["Content-Type"].startswith("application/problem+json")
    assert "clock" in r.get_json()["errors"]
    assert conn.keys("th:*") == [] and conn.keys("rq:*scheduled*") == []


def test_every_view_shows_the_clocks_and_ai_seats_have_none(app, client):
    created = _clocked(client, [{"kind": "human"}, cheap_ai("random"), {"kind": "human"}],
                       {"initial_ms": 60_000, "increment_ms": 2_000})
    game = created["game"]
    assert [s["clock_ms"] for s in game["seats"]] == [60_000, None, 60_000]
    c = game["clock"]
    assert (c["initial_ms"], c["increment_ms"], c["on_timeout"]) == (60_000, 2_000, "move")
    if game["to_move"] == 1:
        assert c["running"] is None and c["deadline_ms"] is None  # the AI thinks on nobody's time
    else:
        assert c["running"] == game["to_move"]
        assert c["deadline_ms"] == c["running_since_ms"] + 60_000
        assert abs(c["server_time_ms"] - time.time() * 1000) < 5_000
    plain = create(client, "kozel", humans(2))
    assert plain["game"]["clock"] is None and [s["clock_ms"] for s in plain["game"]["seats"]] == [None, None]


def test_a_move_takes_the_thinking_time_off_the_movers_clock_and_adds_the_increment(app, client):
    created = _clocked(client, humans(2), {"initial_ms": 60_000, "increment_ms": 1_000})
    game_id, mover = created["game"]["id"], created["game"]["to_move"]
    h = bearer(tokens_by_seat(created)[mover])
    move = client.get(f"/v1/games/{game_id}/moves", headers=h).get_json()[0]["id"]
    time.sleep(0.2)
    after = client.post(f"/v1/games/{game_id}/moves", json={"move": move}, headers=h).get_json()
    left = after["seats"][mover]["clock_ms"]
    assert 60_000 + 1_000 - 5_000 < left <= 60_000 + 1_000 - 200
    nxt = after["to_move"]
    if nxt != mover:
        assert after["clock"]["running"] == nxt and after["seats"][nxt]["clock_ms"] == 60_000
    # the timeout of the new version is scheduled, the old one will find the game moved on
    scheduled = {j.decode() for j in app.extensions["redis"].zrange("rq:scheduled:play", 0, -1)}
    assert keys.timeout_job_id(game_id, after["version"]) in scheduled


def test_on_timeout_the_greedy_engine_moves_for_the_seat_and_a_timeout_event_says_so(app, client, run_due):
    created = _clocked(client, humans(2), {"initial_ms": 300, "increment_ms": 50})
    game_id, seat = created["game"]["id"], created["game"]["to_move"]
    run_due()
    view = client.get(f"/v1/games/{game_id}").get_json()
    assert view["version"] == 1
    events = _events(client, game_id)
    assert events[0]["type"] == "timeout" and events[0]["seat"] == seat
    assert events[0]["data"] == {"action": "move", "engine": "greedy"}
    assert len(events) > 1 and all(e["version"] == 1 for e in events)
    assert view["seats"][seat]["clock_ms"] == 50  # out of time, plus the increment of the move made for it
    job = Job.fetch(keys.timeout_job_id(game_id, 0), connection=app.extensions["redis"])
    assert job.return_value() == {"outcome": "timeout", "version": 1}
    assert client.get(f"/v1/jobs/{job.id}").get_json()["result"] == {"outcome": "timeout", "version": 1}


def test_a_timeout_job_does_nothing_when_the_seat_moved_in_time(app, client, run_due):
    created = _clocked(client, humans(2), {"initial_ms": 400}, seed=5)
    game_id, mover = created["game"]["id"], created["game"]["to_move"]
    h = bearer(tokens_by_seat(created)[mover])
    move = client.get(f"/v1/games/{game_id}/moves", headers=h).get_json()[0]["id"]
    assert client.post(f"/v1/games/{game_id}/moves", json={"move": move}, headers=h).status_code == 200
    # drop the timeout of the new version so that only the stale one runs
    conn = app.extensions["redis"]
    Job.fetch(keys.timeout_job_id(game_id, 1), connection=conn).delete()
    before = conn.hgetall(store_module.game_key(game_id))
    run_due()
    assert Job.fetch(keys.timeout_job_id(game_id, 0), connection=conn).return_value() == {
        "outcome": "stale", "version": 1}
    after = conn.hgetall(store_module.game_key(game_id))
    assert {k: v for k, v in after.items() if k != b"seen"} == {k: v for k, v in before.items() if k != b"seen"}


def test_a_move_after_the_deadline_is_a_409_and_the_timeout_is_carried_out_at_once(app, client):
    created = _clocked(client, humans(2), {"initial_ms": 150}, seed=6)
    game_id, mover = created["game"]["id"], created["game"]["to_move"]
    h = bearer(tokens_by_seat(created)[mover])
    move = client.get(f"/v1/games/{game_id}/moves", headers=h).get_json()[0]["id"]
    time.sleep(0.25)
    r = client.post(f"/v1/games/{game_id}/moves", json={"move": move, "version": 0}, headers=h)
    assert r.status_code == 409 and r.get_json()["type"].endswith("time-up") and r.get_json()["version"] == 1
    events = _events(client, game_id)
    assert events[0]["type"] == "timeout" and events[0]["seat"] == mover
    assert client.get(f"/v1/games/{game_id}").get_json()["version"] == 1


def test_no_clock_runs_while_the_game_waits_for_a_seat(app, client, run_due):
    created = _clocked(client, [{"kind": "human"}, {"kind": "open"}], {"initial_ms": 200})
    game_id = created["game"]["id"]
    assert created["game"]["clock"]["running"] is None
    assert app.extensions["redis"].zcard("rq:scheduled:play") == 0
    time.sleep(0.3)
    joined = client.post(f"/v1/games/{game_id}/seats/1/join").get_json()["game"]
    assert joined["clock"]["running"] == joined["to_move"]
    assert [s["clock_ms"] for s in joined["seats"]] == [200, 200]  # the wait cost nobody anything
    run_due()
    assert _events(client, game_id)[2]["type"] == "timeout"  # after join and start


def test_the_human_seats_clock_starts_when_the_ai_seat_has_moved(app, client, drain):
    for seed in range(1, 40):
        created = _clocked(client, [{"kind": "human"}, cheap_ai("random")], {"initial_ms": 60_000}, seed=seed,
                           public_seed=True)
        if created["game"]["to_move"] == 1:
            break
    else:
        raise AssertionError("no seed lets the AI seat move first")
    game_id = created["game"]["id"]
    assert created["game"]["clock"]["running"] is None
    time.sleep(0.1)
    before = int(time.time() * 1000)
    drain()
    view = client.get(f"/v1/games/{game_id}").get_json()
    if view["to_move"] == 0:
        assert view["clock"]["running"] == 0 and view["clock"]["running_since_ms"] >= before
        assert view["seats"][0]["clock_ms"] == 60_000


@pytest.mark.e2e
def test_a_real_worker_process_with_its_scheduler_times_out_an_absent_player_move_after_move(
        app, client, worker_process):
    created = _clocked(client, [{"kind": "human"}, cheap_ai("greedy")], {"initial_ms": 300}, seed=9)
    game_id = created["game"]["id"]
    deadline = time.monotonic() + 20
    timeouts = 0
    while time.monotonic() < deadline and timeouts < 2:
        assert worker_process.poll() is None
        timeouts = sum(e["type"] == "timeout" for e in _events(client, game_id))
        time.sleep(0.1)
    # seat 0 never moves: its moves are made for it each time its (empty) clock runs out
    assert timeouts >= 2
    assert all(e["seat"] == 0 for e in _events(client, game_id) if e["type"] == "timeout")
