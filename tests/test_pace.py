"""The pace of a table with no person at it (service/queues.py, "The pace"; docs/api.md, "AI"): when every
seat is an AI seat, each AI move after the first waits ``AI_PACE_MS`` after the move before it, through a
scheduled pace job that queues the play job -- carried out by a real RQ worker with its scheduler.  A table
with a person at it is never paced, and the pace leaves no records behind (issue: "Memory").

The suite runs with the pace off (tests/conftest.py); these tests turn it on, at one second."""

from __future__ import annotations

import time

import pytest
from api_support import bearer, cheap_ai, create, tokens_by_seat
from rq import SimpleWorker
from rq.job import Job

from service import config, keys, queues
from service.store import Store

pytest_plugins = ["api_fixtures"]

PACE_MS = 1000


@pytest.fixture
def app(make_app, monkeypatch):
    """The app and the workers (which read their settings from the environment) with the pace on."""
    monkeypatch.setenv("TILEHOUSE_AI_PACE_MS", str(PACE_MS))
    paced = config.load()
    monkeypatch.setattr(queues, "settings", lambda: paced)
    return make_app(AI_PACE_MS=PACE_MS)


def _scheduled(conn) -> list[str]:
    return [raw.decode() for raw in conn.zrange("rq:scheduled:play", 0, -1)]


def _queued(conn) -> list[str]:
    return [raw.decode() for raw in conn.lrange("rq:queue:play", 0, -1)]


def _run_queued(app) -> None:
    """A real worker drains what is queued now, without a scheduler (a pace job stays scheduled)."""
    queues = [app.extensions["queues"][n] for n in ("suggest", "play")]
    SimpleWorker(queues, connection=app.extensions["redis"]).work(burst=True, logging_level="WARNING")


def _all_ai(client, rules: str = "kozel", seed: int = 5) -> dict:
    return create(client, rules, [cheap_ai("greedy"), cheap_ai("greedy")] if rules == "kozel"
                  else [cheap_ai("greedy")] * 4, seed=seed)


def test_rule_the_first_move_of_an_all_ai_table_starts_at_once_and_the_next_waits_for_the_pace(app, client,
                                                                                               run_due):
    conn = app.extensions["redis"]
    game = _all_ai(client)["game"]
    gid = game["id"]
    assert _queued(conn) == [keys.play_job_id(gid, 0)] and _scheduled(conn) == []  # the first: at once
    _run_queued(app)
    view = client.get(f"/v1/games/{gid}").get_json()
    assert view["version"] == 1
    # the second move's play job waits for the pace: scheduled as a pace job, nothing on the queue
    assert _queued(conn) == [] and _scheduled(conn) == [keys.pace_job_id(gid, 1)]
    due = conn.zscore("rq:scheduled:play", keys.pace_job_id(gid, 1))
    assert due >= time.time() + PACE_MS / 1000 - 1.0  # whole seconds, rounded up: never early
    # the view names the play job all along, and the job answers "queued" while its pace job waits
    assert view["ai"] == {"pending": True, "job": keys.play_job_id(gid, 1)}
    r = client.get(f"/v1/jobs/{keys.play_job_id(gid, 1)}")
    assert r.status_code == 200
    assert r.get_json() == {"id": keys.play_job_id(gid, 1), "kind": "play", "game": gid, "version": 1,
                            "status": "queued"}
    # a view in the meantime (the watchdog) queues nothing more
    client.get(f"/v1/games/{gid}")
    assert _queued(conn) == [] and _scheduled(conn) == [keys.pace_job_id(gid, 1)]
    t0 = time.time()
    run_due()  # waits until the pace has passed, then a worker with its scheduler
    assert time.time() - t0 >= 0.5
    assert client.get(f"/v1/games/{gid}").get_json()["version"] == 2
    # the pace job keeps no record once it has run, and the game's job list forgets it
    assert not Job.exists(keys.pace_job_id(gid, 1), connection=conn)
    assert keys.pace_job_id(gid, 1).encode() not in conn.smembers(keys.jobs_key(gid))
    assert _scheduled(conn) == [keys.pace_job_id(gid, 2)]


def test_rule_a_table_with_a_person_at_it_is_never_paced(app, client, drain):
    conn = app.extensions["redis"]
    created = create(client, "tiengow", [{"kind": "human"}, cheap_ai("greedy"), cheap_ai("greedy"),
                                         cheap_ai("greedy")], seed=1, public_seed=True)
    gid, token = created["game"]["id"], tokens_by_seat(created)[0]
    view = client.get(f"/v1/games/{gid}", headers=bearer(token)).get_json()
    assert view["to_move"] == 0  # seed 1, public: the person is the banker and leads
    move = view["legal_moves"][0]["id"]
    r = client.post(f"/v1/games/{gid}/moves", json={"move": move}, headers=bearer(token))
    assert r.status_code == 200, r.get_json()
    assert _queued(conn) == [keys.play_job_id(gid, 1)] and _scheduled(conn) == []
    drain()  # the AI seats answer one after the other until the person is to move again, none of them waits
    after = client.get(f"/v1/games/{gid}").get_json()
    assert after["to_move"] == 0 and after["version"] >= 4  # at least the three answers to the lead
    assert _scheduled(conn) == []


def test_rule_the_pace_off_plays_an_all_ai_table_straight_through(make_app):
    app = make_app(AI_PACE_MS=0)
    client, conn = app.test_client(), app.extensions["redis"]
    gid = _all_ai(client)["game"]["id"]
    _run_queued(app)
    assert Store(conn, 3600).finished([gid])[gid]  # one burst of a worker: the whole match, no pause
    assert _scheduled(conn) == []


def test_delete_during_the_pace_leaves_no_key_of_the_game_or_its_jobs(app, client):
    conn = app.extensions["redis"]
    created = _all_ai(client)
    gid, admin = created["game"]["id"], created["admin_token"]
    _run_queued(app)
    assert _scheduled(conn) == [keys.pace_job_id(gid, 1)]
    assert client.delete(f"/v1/games/{gid}", headers=bearer(admin)).status_code == 204
    assert [k for k in conn.scan_iter(f"*{gid}*")] == []
    assert _scheduled(conn) == []


def test_a_lost_pace_job_is_scheduled_again_by_the_view_so_the_table_never_stalls(app, client, run_due):
    conn = app.extensions["redis"]
    gid = _all_ai(client)["game"]["id"]
    _run_queued(app)
    pace_id = keys.pace_job_id(gid, 1)
    Job.fetch(pace_id, connection=conn).delete()  # Redis lost it
    assert _scheduled(conn) == []
    assert client.get(f"/v1/games/{gid}").get_json()["ai"]["pending"] is True
    assert _scheduled(conn) == [pace_id]  # the watchdog scheduled it anew
    run_due()
    assert client.get(f"/v1/games/{gid}").get_json()["version"] == 2


def test_a_finished_all_ai_game_keeps_no_job_record(make_app):
    """The move that ends a game keeps no RQ record (nobody reads it: the view no longer names the job), so
    a finished game costs only its own keys (docs/deployment.md, "Memory")."""
    app = make_app(AI_PACE_MS=0)
    client, conn = app.test_client(), app.extensions["redis"]
    gid = create(client, "tiengow", [cheap_ai("greedy")] * 4, seed=3, options={"deals": 1})["game"]["id"]
    _run_queued(app)
    assert Store(conn, 3600).finished([gid])[gid]
    left = sorted(k.decode() for k in conn.scan_iter(f"*{gid}*"))
    assert [k for k in left if k.startswith("rq:job:") and not k.endswith(":dependencies")] == []
    assert [k for k in left if k.startswith("rq:results:")] == []
    assert [j for j in conn.smembers(keys.jobs_key(gid)) if j.decode().startswith("play-")] == []
