"""AI work charged to its creator and served fairly across clients (``service.fairplay.ai_share``,
``service.fairplay.budget.charge_play``).  Real HTTP (Flask test client), a real Redis and real RQ workers
(``SimpleWorker`` bursts) draining real queues."""

from __future__ import annotations

import time

import redis
from api_support import bearer, create, humans, tokens_by_seat
from rq import Queue, SimpleWorker
from rq.job import Job, JobStatus

from service import keys, queues
from service.fairplay import ai_share, budget
from service.hardening import recovery
from service.keys import play_job_id
from service.store import Store

pytest_plugins = ["api_fixtures"]

GREEDY_ONLY = [{"kind": "ai", "engine": "greedy"}] * 4


def _ai_game(client, address: str, seats=GREEDY_ONLY) -> str:
    r = client.post("/v1/games", json={"rules": "tiengow", "seats": seats}, environ_base={"REMOTE_ADDR": address})
    assert r.status_code == 201, r.get_json()
    return r.get_json()["game"]["id"]


def _status(conn, job_id: str) -> str:
    return Job.fetch(job_id, connection=conn).get_status()


def test_one_clients_ai_jobs_wait_in_a_chain_while_anothers_go_straight_to_the_queue(app, client, redis_conn):
    mine = [_ai_game(client, "10.3.0.1") for _ in range(3)]
    theirs = _ai_game(client, "10.3.0.2")
    play = Queue("play", connection=redis_conn)
    assert set(play.job_ids) == {play_job_id(mine[0], 0), play_job_id(theirs, 0)}
    assert [_status(redis_conn, play_job_id(g, 0)) for g in mine[1:]] == [JobStatus.DEFERRED] * 2
    # one job of each client at a time: the first client's next move waits for its other games' moves
    SimpleWorker([play], connection=redis_conn).work(burst=True, max_jobs=2)
    queued = set(play.job_ids)
    assert play_job_id(mine[1], 0) in queued and play_job_id(theirs, 1) in queued
    assert _status(redis_conn, play_job_id(mine[2], 0)) == JobStatus.DEFERRED
    assert sum(1 for j in queued if any(g in j for g in mine)) == 1


def test_a_suggestion_flood_from_many_tokens_of_one_address_is_one_client(app, client, redis_conn):
    games = [create(client, "kozel", humans(2)) for _ in range(3)]
    asked = []
    for g in games:
        seat = g["game"]["to_move"]
        r = client.post(f"/v1/games/{g['game']['id']}/suggestions", json={"engine": "greedy"},
                        headers=bearer(tokens_by_seat(g)[seat]), environ_base={"REMOTE_ADDR": "10.4.0.1"})
        assert r.status_code == 202
        asked.append(r.get_json()["id"])
    bystander = games[0]
    seat = bystander["game"]["to_move"]
    r = client.post(f"/v1/games/{bystander['game']['id']}/suggestions", json={"engine": "greedy"},
                    headers=bearer(tokens_by_seat(bystander)[seat]), environ_base={"REMOTE_ADDR": "10.4.0.9"})
    suggest = Queue("suggest", connection=redis_conn)
    assert set(suggest.job_ids) == {asked[0], r.get_json()["id"]}
    assert [_status(redis_conn, j) for j in asked[1:]] == [JobStatus.DEFERRED] * 2
    SimpleWorker([suggest], connection=redis_conn).work(burst=True)
    assert [_status(redis_conn, j) for j in asked] == [JobStatus.FINISHED] * 3


def test_the_parts_of_a_split_suggestion_run_one_after_another_so_one_client_holds_one_worker(
        app, client, redis_conn):
    """Fair share: a client address holds at most one worker at a time, a split search's parts included
    (they ran side by side before, and held every worker for a part's search while a bystander waited)."""
    g = create(client, "kozel", humans(2))
    gid, seat = g["game"]["id"], g["game"]["to_move"]
    r = client.post(f"/v1/games/{gid}/suggestions",
                    json={"engine": "ismcts", "params": {"iterations": 30}, "workers": 3},
                    headers=bearer(tokens_by_seat(g)[seat]), environ_base={"REMOTE_ADDR": "10.5.0.1"})
    assert r.status_code == 202
    merge = Job.fetch(r.get_json()["id"], connection=redis_conn)
    parts = merge.meta["parts"]
    suggest = Queue("suggest", connection=redis_conn)
    assert suggest.job_ids == [parts[0]]  # only the first part is on the queue
    assert [_status(redis_conn, p) for p in parts[1:]] == [JobStatus.DEFERRED] * 2
    assert [Job.fetch(p, connection=redis_conn).dependency_ids for p in parts[1:]] == [[parts[0]], [parts[1]]]
    # a bystander's suggestion goes straight to the queue, beside the one part
    b = create(client, "kozel", humans(2))
    rb = client.post(f"/v1/games/{b['game']['id']}/suggestions", json={"engine": "greedy"},
                     headers=bearer(tokens_by_seat(b)[b["game"]["to_move"]]), environ_base={"REMOTE_ADDR": "10.5.0.9"})
    assert set(suggest.job_ids) == {parts[0], rb.get_json()["id"]}
    for _ in range(3):
        SimpleWorker([suggest], connection=redis_conn).work(burst=True, max_jobs=1)
        on_queue = [j for j in suggest.job_ids if j in parts]
        assert len(on_queue) <= 1, on_queue  # never two parts waiting for workers at once
    SimpleWorker([suggest], connection=redis_conn).work(burst=True)
    job = Job.fetch(merge.id, connection=redis_conn)
    assert job.get_status() == JobStatus.FINISHED
    assert job.return_value()["stats"]["searches"] == 3  # every part ran, and the merge took them all


def test_ai_seats_searches_are_charged_to_their_creator_and_past_its_budget_the_seat_moves_greedy(
        make_app, redis_conn):
    app = make_app(AI_CPU_MS_PER_MINUTE_PER_CLIENT=1000)
    client = app.test_client()
    searching = [{"kind": "ai", "engine": "ismcts", "params": {"iterations": 5, "time_ms": 600}}] * 4
    first = _ai_game(client, "10.5.0.1", searching)
    second = _ai_game(client, "10.5.0.1", searching)  # 600 + 600 > 1000: this seat's search is not paid for
    elsewhere = _ai_game(client, "10.5.0.2", searching)
    assert client.get(f"/v1/games/{first}").get_json()["ai"]["job"] == play_job_id(first, 0)
    assert client.get(f"/v1/games/{second}").get_json()["ai"]["job"] == play_job_id(second, 0, "-greedy")
    assert client.get(f"/v1/games/{elsewhere}").get_json()["ai"]["job"] == play_job_id(elsewhere, 0)
    SimpleWorker([Queue("play", connection=redis_conn)], connection=redis_conn).work(burst=True, max_jobs=3)
    assert client.get(f"/v1/games/{second}").get_json()["version"] >= 1  # the game goes on


def test_deleting_a_game_releases_the_next_ai_job_of_its_creator(app, client, redis_conn):
    r = client.post("/v1/games", json={"rules": "tiengow", "seats": GREEDY_ONLY},
                    environ_base={"REMOTE_ADDR": "10.6.0.1"})
    first, admin = r.get_json()["game"]["id"], r.get_json()["admin_token"]
    second = _ai_game(client, "10.6.0.1")
    assert _status(redis_conn, play_job_id(second, 0)) == JobStatus.DEFERRED
    assert client.delete(f"/v1/games/{first}", headers=bearer(admin)).status_code == 204
    assert _status(redis_conn, play_job_id(second, 0)) == JobStatus.QUEUED
    assert Queue("play", connection=redis_conn).job_ids == [play_job_id(second, 0)]


def test_a_job_left_deferred_behind_a_job_that_vanished_is_queued_by_the_watchdog(app, client, redis_conn):
    first = _ai_game(client, "10.7.0.1")
    second = _ai_game(client, "10.7.0.1")
    assert _status(redis_conn, play_job_id(second, 0)) == JobStatus.DEFERRED
    redis_conn.delete(f"rq:job:{play_job_id(first, 0)}")  # lost without releasing what waits on it
    assert client.get(f"/v1/games/{second}").status_code == 200  # the view's watchdog looks at its AI job
    assert _status(redis_conn, play_job_id(second, 0)) == JobStatus.QUEUED


class _DeletesAfterReading(redis.Redis):
    """A connection on which every job record read whole (``Job.fetch``) is deleted right after: what a
    concurrent game deletion or RQ's expiry does between two reads of another process."""

    def hgetall(self, name):
        found = super().hgetall(name)
        if str(name).startswith("rq:job:"):
            self.delete(name)
        return found


def test_a_chain_whose_last_job_vanishes_while_it_is_read_links_nothing_and_answers(redis_url):
    """The client's chain tail names a job whose record disappears while the next AI job is linked: the
    status is read in one command, so the new job is queued at once instead of the read raising (a 500 of
    the view or move that queued it)."""
    conn = _DeletesAfterReading.from_url(redis_url)
    conn.flushdb()
    try:
        previous = Queue("play", connection=conn).enqueue("service.jobs.timeout", "g", 0, job_id="prev")
        assert previous.get_status() == JobStatus.QUEUED
        cfg = {"AI_JOB_TIMEOUT_SECONDS": 30}
        assert ai_share.link(conn, cfg, "10.9.0.1", "first") is None  # an empty chain: nothing to wait for
        conn.set(keys.ai_share_key("10.9.0.1"), "prev")
        assert ai_share.link(conn, cfg, "10.9.0.1", "next") is not None  # still queued: wait for it
        conn.set(keys.ai_share_key("10.9.0.1"), "prev")
        Job.fetch("prev", connection=conn)  # the record is read whole and, meanwhile, deleted
        assert ai_share.link(conn, cfg, "10.9.0.1", "after") is None
    finally:
        conn.flushdb()
        conn.close()


def test_deleting_the_jobs_of_a_game_whose_record_vanishes_meanwhile_leaves_no_key(redis_url):
    """``recovery.delete_jobs`` (a game's deletion) reads a job, whose record then expires or is deleted by
    another process before RQ's own delete reads its status again: the rest of its keys go all the same,
    instead of the deletion raising (a 500 of ``DELETE``)."""
    conn = _DeletesAfterReading.from_url(redis_url)
    conn.flushdb()
    try:
        job = Queue("play", connection=conn).enqueue("service.jobs.timeout", "g", 0, job_id="gone-soon")
        conn.sadd(job.dependents_key, "other")
        recovery.delete_jobs(conn, ["gone-soon"])
        assert not conn.exists(job.key, job.dependents_key, job.dependencies_key)
    finally:
        conn.flushdb()
        conn.close()


def _spent(conn, address: str) -> int:
    minute = int(time.time() // 60)
    return int(conn.get(keys.budget_client_key(address, minute)) or 0)


def test_a_play_job_that_finds_its_game_moved_on_gives_its_whole_charge_back(make_app, redis_conn):
    """An AI seat's search is charged to its creator when its job is queued; a job that finds nothing to
    search for (the game moved on: here its human resigned first) searched nothing, so all of it goes back."""
    app = make_app()
    client = app.test_client()
    seats = [{"kind": "human"}, {"kind": "ai", "engine": "ismcts", "params": {"iterations": 5, "time_ms": 700}}]
    for seed in range(1, 60):
        r = client.post("/v1/games", json={"rules": "kozel", "seats": seats, "seed": seed, "public_seed": True},
                        environ_base={"REMOTE_ADDR": "10.6.0.1"})
        created = r.get_json()
        if created["game"]["to_move"] == 1:
            break
        client.delete(f"/v1/games/{created['game']['id']}", headers=bearer(tokens_by_seat(created)[0]))
    else:
        raise AssertionError("no seed lets the AI open")
    assert _spent(redis_conn, "ip:10.6.0.1") == 700
    game_id = created["game"]["id"]
    assert client.post(f"/v1/games/{game_id}/resign", headers=bearer(tokens_by_seat(created)[0])).status_code == 200
    SimpleWorker([Queue("play", connection=redis_conn)], connection=redis_conn).work(burst=True)
    assert Job.fetch(play_job_id(game_id, 0), connection=redis_conn).return_value()["outcome"] == "stale"
    assert _spent(redis_conn, "ip:10.6.0.1") == 0


def test_a_charge_is_given_back_once_however_often_it_is_asked(redis_conn):
    """A job that runs twice, or a refund asked for twice, never gives back more than was charged."""
    cfg = {"AI_CPU_MS_PER_MINUTE_PER_CLIENT": 10_000}
    charged = budget.charge_play(redis_conn, cfg, "ip:10.6.0.2", {"time_ms": 900})
    assert _spent(redis_conn, "ip:10.6.0.2") == 900
    budget.refund_unused(redis_conn, charged, 100.0)
    budget.refund_unused(redis_conn, charged, 0.0)
    assert _spent(redis_conn, "ip:10.6.0.2") == 100


def test_a_play_job_queued_twice_by_racing_processes_keeps_one_charge(app, client, redis_conn, monkeypatch):
    """Two processes that both find no play job for a version and both charge for it: the one whose job
    RQ refuses as a duplicate gives its charge back."""
    seats = [{"kind": "ai", "engine": "ismcts", "params": {"iterations": 5, "time_ms": 400}}] * 4
    game_id = _ai_game(client, "10.6.0.3", seats)
    assert _spent(redis_conn, "ip:10.6.0.3") == 400
    game = Store(redis_conn, 60).get(game_id)
    monkeypatch.setattr(Job, "exists", classmethod(lambda cls, *a, **k: False))  # the race: both saw none
    assert queues.schedule_play(redis_conn, game, cfg=app.config) is None
    assert _spent(redis_conn, "ip:10.6.0.3") == 400
