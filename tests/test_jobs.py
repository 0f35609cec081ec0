"""AI work on RQ with a real Redis and a real in-process RQ worker: stale jobs do
nothing, exactly one play job per AI turn with a deterministic id, the retry -> greedy -> random fallback
for failures and timeouts, the watchdog, split ismcts suggestions merged with ``ai.merge``, and what a
job result may show."""

from __future__ import annotations

import time

import pytest
from api_support import bearer, cheap_ai, create, humans, tokens_by_seat
from rq import Queue, SimpleWorker
from rq.job import Job

import ai
import engine
from service import jobs, keys, queues
from service.store import Store, play_job_id

pytest_plugins = ["api_fixtures"]


def _ai_first_game(client, engine_id: str = "ismcts") -> dict:
    """A Kozel game where seat 1 (AI) is to move, with seat 0 human."""
    for seed in range(1, 50):
        created = create(client, "kozel", [{"kind": "human"}, cheap_ai(engine_id)], seed=seed, public_seed=True)
        if created["game"]["to_move"] == 1:
            return created
    raise AssertionError("no seed lets the AI open")


def _play_queue_ids(app) -> list[str]:
    return app.extensions["queues"]["play"].get_job_ids()


def test_exactly_one_play_job_with_a_deterministic_id_is_queued_per_ai_turn(app, client):
    created = _ai_first_game(client)
    game_id = created["game"]["id"]
    assert _play_queue_ids(app) == [play_job_id(game_id, 0)]
    assert created["game"]["ai"] == {"pending": True, "job": play_job_id(game_id, 0)}
    game = Store(app.extensions["redis"], 60).get(game_id)
    # queuing again (a second web process, a watchdog) cannot add a second job
    assert queues.schedule_play(app.extensions["redis"], game, cfg=app.config) is None
    client.get(f"/v1/games/{game_id}")
    assert _play_queue_ids(app) == [play_job_id(game_id, 0)]


def test_a_stale_play_job_does_nothing(app, client, drain):
    created = _ai_first_game(client)
    game_id = created["game"]["id"]
    conn = app.extensions["redis"]
    stale = Queue("play", connection=conn).enqueue_call(jobs.play_turn, args=(game_id, 5, 0), job_id="stale-job",
                                                        at_front=True, meta={"kind": "play", "game": game_id,
                                                                             "version": 5, "attempt": 0})
    before = conn.hgetall(f"th:game:{{{game_id}}}")
    SimpleWorker([Queue("play", connection=conn)], connection=conn).work(burst=True, max_jobs=1)
    assert Job.fetch("stale-job", connection=conn).return_value() == {"outcome": "stale", "version": 0,
                                                                        "engine": None}
    assert conn.hgetall(f"th:game:{{{game_id}}}") == before
    drain()
    assert client.get(f"/v1/games/{game_id}").get_json()["version"] >= 1
    assert stale.get_status() == "finished"


def test_a_play_job_result_shows_no_move_and_no_statistics(app, client, drain):
    created = _ai_first_game(client)
    job_id = created["game"]["ai"]["job"]
    queued = client.get(f"/v1/jobs/{job_id}").get_json()
    assert queued["status"] == "queued" and queued["kind"] == "play"
    drain()
    done = client.get(f"/v1/jobs/{job_id}").get_json()
    assert done["status"] == "finished"
    assert set(done["result"]) == {"outcome", "version", "engine"}
    assert done["result"]["outcome"] == "played" and done["result"]["engine"] == "ismcts"


def test_the_request_id_travels_into_the_jobs_it_queues(app, client):
    created = client.post("/v1/games", headers={"X-Request-ID": "trace-123"},
                          json={"rules": "kozel", "seed": 3, "seats": [cheap_ai("random"), cheap_ai("random")]})
    job = Job.fetch(created.get_json()["game"]["ai"]["job"], connection=app.extensions["redis"])
    assert job.meta["request_id"] == "trace-123"


def _failing_decide(failing: set[str], real=ai.decide, sleep: float = 0.0):
    def decide(engine_id, state, seat, params=None, seed=0):
        if engine_id in failing:
            if sleep:
                time.sleep(sleep)
            raise RuntimeError(f"{engine_id} broke")
        return real(engine_id, state, seat, params, seed)

    return decide


def test_a_failing_ai_is_retried_once_then_replaced_by_greedy(app, client, drain, monkeypatch):
    monkeypatch.setattr(ai, "decide", _failing_decide({"ismcts"}))
    created = _ai_first_game(client)
    game_id = created["game"]["id"]
    conn = app.extensions["redis"]
    play = [app.extensions["queues"]["play"]]
    SimpleWorker(play, connection=conn).work(burst=True, max_jobs=1)
    view = client.get(f"/v1/games/{game_id}").get_json()
    assert view["version"] == 0 and view["ai"] == {"pending": True, "job": f"{play_job_id(game_id, 0)}-retry"}
    failed = client.get(f"/v1/jobs/{play_job_id(game_id, 0)}").get_json()
    assert failed["status"] == "failed" and "broke" not in str(failed["problem"])
    SimpleWorker(play, connection=conn).work(burst=True, max_jobs=1)
    assert client.get(f"/v1/games/{game_id}").get_json()["ai"]["job"] == f"{play_job_id(game_id, 0)}-greedy"
    SimpleWorker(play, connection=conn).work(burst=True, max_jobs=1)
    greedy = client.get(f"/v1/jobs/{play_job_id(game_id, 0)}-greedy").get_json()
    assert greedy["result"] == {"outcome": "played", "version": 1, "engine": "greedy"}
    assert client.get(f"/v1/games/{game_id}").get_json()["version"] >= 1


def test_when_greedy_fails_too_random_plays_and_the_game_never_stalls(app, client, drain, monkeypatch):
    monkeypatch.setattr(ai, "decide", _failing_decide({"ismcts", "greedy"}))
    created = create(client, "tiuu", [cheap_ai("ismcts"), cheap_ai("ismcts")], seed=2)
    game_id = created["game"]["id"]
    conn = app.extensions["redis"]
    SimpleWorker([app.extensions["queues"]["play"]], connection=conn).work(burst=True, max_jobs=4)  # version 0
    assert client.get(f"/v1/jobs/{play_job_id(game_id, 0)}-random").get_json()["result"]["engine"] == "random"
    drain()
    view = client.get(f"/v1/games/{game_id}").get_json()
    assert view["status"] == "finished"


def test_a_timed_out_ai_job_is_replaced(app, client, monkeypatch):
    # one-second jobs; the engine takes longer than that
    fast = {**queues.settings(), "AI_JOB_TIMEOUT_SECONDS": 1}
    monkeypatch.setattr(queues, "settings", lambda: fast)
    app.config["AI_JOB_TIMEOUT_SECONDS"] = 1
    monkeypatch.setattr(ai, "decide", _failing_decide({"ismcts"}, sleep=3.0))
    created = _ai_first_game(client)
    game_id = created["game"]["id"]
    conn = app.extensions["redis"]
    SimpleWorker([app.extensions["queues"]["play"]], connection=conn).work(burst=True, max_jobs=3)
    assert Job.fetch(play_job_id(game_id, 0), connection=conn).get_status() == "failed"
    assert Job.fetch(f"{play_job_id(game_id, 0)}-retry", connection=conn).get_status() == "failed"
    assert client.get(f"/v1/games/{game_id}").get_json()["version"] == 1
    counts = conn.hgetall(keys.AI_JOBS_METRIC_KEY)
    assert int(counts[b"ismcts|timeout"]) == 2 and int(counts[b"greedy|played"]) == 1


def test_a_lost_play_job_is_requeued_by_the_watchdog(app, client, drain):
    created = _ai_first_game(client)
    game_id = created["game"]["id"]
    conn = app.extensions["redis"]
    Job.fetch(play_job_id(game_id, 0), connection=conn).delete()  # as if Redis or a dead worker lost it
    assert _play_queue_ids(app) == []
    client.get(f"/v1/games/{game_id}")
    assert _play_queue_ids(app) == [play_job_id(game_id, 0)]
    drain()
    assert client.get(f"/v1/games/{game_id}").get_json()["version"] >= 1


def _watched(conn) -> dict[str, float]:
    return {k.decode(): v for k, v in conn.zrange(keys.AI_WATCH_KEY, 0, -1, withscores=True)}


def test_the_ai_watch_requeues_a_lost_play_job_and_leaves_a_waiting_one_alone(app, client, drain):
    """Rule (service.queues, "The AI watch"): a watched AI turn unseen for ABANDONED_JOB_SECONDS whose job
    is gone gets it again; one whose job waits keeps that one job.  The lost job heads its client's chain,
    and the game after it waits on its id: queued again, it must not wait behind that game (a cycle)."""
    conn = app.extensions["redis"]
    lost, waiting = (_ai_first_game(client)["game"]["id"] for _ in range(2))
    assert set(_watched(conn)) == {lost, waiting}
    Job.fetch(play_job_id(lost, 0), connection=conn).delete()  # as if Redis lost it
    Queue("play", connection=conn).remove(play_job_id(lost, 0))
    later = int(time.time() * 1000) + app.config["ABANDONED_JOB_SECONDS"] * 1000 + 1000
    assert queues.sweep_ai_games(conn, app.config, later - 2000 * app.config["ABANDONED_JOB_SECONDS"],
                                 lock=False) == 0  # not stale yet: nothing looked at
    waiting_job = Job.fetch(play_job_id(waiting, 0), connection=conn)
    assert queues.sweep_ai_games(conn, app.config, later, lock=False) == 1
    assert conn.hget(keys.AI_JOBS_METRIC_KEY, "ismcts|lost") == b"1"  # counted for the operators
    # the lost turn has its job again (queued, or deferred behind the client's other AI job: fairplay.ai_share)
    assert Job.fetch(play_job_id(lost, 0), connection=conn).get_status() in ("queued", "deferred")
    assert Job.fetch(play_job_id(waiting, 0), connection=conn).enqueued_at == waiting_job.enqueued_at
    assert _watched(conn) == {lost: later, waiting: later}  # both marked seen
    drain()
    # the job waiting in the client's chain behind the lost one (fairplay.ai_share) waited on the lost one's
    # id: the next round finds what it waits on over and releases it
    assert queues.sweep_ai_games(conn, app.config, later + 10_000, lock=False) == 1
    drain()
    assert Store(conn, 60).version(lost) >= 1 and Store(conn, 60).version(waiting) >= 1


def test_the_ai_watch_drops_games_whose_ai_turn_is_over_or_that_are_gone(app, client, drain):
    """Rule (service.queues, "The AI watch"): the sweep forgets a game once a person is to move, or once the
    game is deleted, and queues nothing for it."""
    conn = app.extensions["redis"]
    moved = _ai_first_game(client)
    deleted = _ai_first_game(client)
    drain()  # the AI seats move: a person is to move in both
    r = client.delete(f"/v1/games/{deleted['game']['id']}", headers=bearer(deleted["admin_token"]))
    assert r.status_code == 204
    assert set(_watched(conn)) == {moved["game"]["id"], deleted["game"]["id"]}
    later = int(time.time() * 1000) + app.config["ABANDONED_JOB_SECONDS"] * 1000 + 1000
    assert queues.sweep_ai_games(conn, app.config, later, lock=False) == 0
    assert _watched(conn) == {} and _play_queue_ids(app) == []


def test_one_worker_sweeps_the_ai_watch_per_maintenance_round(app, client):
    """Rule (service.queues): the round's lock lets one sweep through; the others do nothing."""
    conn = app.extensions["redis"]
    assert queues.sweep_ai_games(conn, app.config) == 0
    assert conn.pttl(keys.AI_WATCH_LOCK_KEY) > 0
    game_id = _ai_first_game(client)["game"]["id"]
    Job.fetch(play_job_id(game_id, 0), connection=conn).delete()
    Queue("play", connection=conn).remove(play_job_id(game_id, 0))
    later = int(time.time() * 1000) + app.config["ABANDONED_JOB_SECONDS"] * 1000 + 1000
    assert queues.sweep_ai_games(conn, app.config, later) == 0  # the lock is held: another worker's round
    assert _play_queue_ids(app) == []
    conn.delete(keys.AI_WATCH_LOCK_KEY)
    assert queues.sweep_ai_games(conn, app.config, later) == 1


def _human_to_move(client):
    created = create(client, "tiengow", humans(4), seed=31)
    seat = created["game"]["to_move"]
    return created, seat, bearer(tokens_by_seat(created)[seat])


def test_a_suggestion_is_a_legal_move_for_the_asking_seat(app, client, drain):
    created, _seat, h = _human_to_move(client)
    game_id = created["game"]["id"]
    r = client.post(f"/v1/games/{game_id}/suggestions",
                    json={"engine": "ismcts", "params": {"iterations": 30}, "seed": 4}, headers=h)
    assert r.status_code == 202 and r.headers["Location"] == f"/v1/jobs/{r.get_json()['id']}"
    assert r.get_json()["status"] == "queued" and r.get_json()["kind"] == "suggestion"
    drain()
    job = client.get(r.headers["Location"], headers=h).get_json()
    legal = {m["id"] for m in client.get(f"/v1/games/{game_id}/moves", headers=h).get_json()}
    assert job["status"] == "finished" and job["result"]["move"]["id"] in legal
    stats = job["result"]["stats"]
    assert stats["iterations"] == 30 and sum(c["visits"] for c in stats["candidates"]) > 0
    # the suggestion changed nothing
    assert client.get(f"/v1/games/{game_id}").get_json()["version"] == 0


def test_an_ismcts_suggestion_split_over_workers_merges_the_root_statistics(app, client, drain):
    created, seat, h = _human_to_move(client)
    game_id = created["game"]["id"]
    r = client.post(f"/v1/games/{game_id}/suggestions",
                    json={"engine": "ismcts", "params": {"iterations": 30}, "workers": 3, "seed": 9}, headers=h)
    job_id = r.get_json()["id"]
    conn = app.extensions["redis"]
    parts = Job.fetch(job_id, connection=conn).meta["parts"]
    assert len(parts) == 3
    drain()
    merged = client.get(f"/v1/jobs/{job_id}", headers=h).get_json()
    assert merged["status"] == "finished"
    part_results = [Job.fetch(p, connection=conn).return_value() for p in parts]
    assert all(p.stats["iterations"] == 10 for p in part_results)
    # different seeds, so the parts are independent searches
    assert len({str(p.stats["candidates"]) for p in part_results}) > 1
    stats = merged["result"]["stats"]
    assert stats["iterations"] == 30 and stats["searches"] == 3
    want = {}
    for p in part_results:
        for c in p.stats["candidates"]:
            want[c["move"]] = want.get(c["move"], 0) + c["visits"]
    assert {c["move"]: c["visits"] for c in stats["candidates"]} == want
    # a part is as private as the whole
    other = bearer(tokens_by_seat(created)[(seat + 1) % 4])
    assert client.get(f"/v1/jobs/{parts[0]}", headers=other).status_code == 403
    assert client.get(f"/v1/jobs/{parts[0]}", headers=h).get_json()["status"] == "finished"


def test_a_suggestion_for_a_version_that_moved_on_fails_as_stale(app, client, drain):
    created, _seat, h = _human_to_move(client)
    game_id = created["game"]["id"]
    r = client.post(f"/v1/games/{game_id}/suggestions", json={"engine": "random"}, headers=h)
    move = client.get(f"/v1/games/{game_id}/moves", headers=h).get_json()[0]["id"]
    assert client.post(f"/v1/games/{game_id}/moves", json={"move": move}, headers=h).status_code == 200
    drain()
    job = client.get(r.headers["Location"], headers=h).get_json()
    assert job["status"] == "failed" and job["problem"]["status"] == 409


@pytest.mark.parametrize("engine_id", sorted(ai.ENGINES))
def test_every_engine_can_suggest(client, drain, engine_id):
    created, _seat, h = _human_to_move(client)
    params = {"iterations": 5} if engine_id == "ismcts" else {}
    r = client.post(f"/v1/games/{created['game']['id']}/suggestions", json={"engine": engine_id, "params": params},
                    headers=h)
    drain()
    assert client.get(r.headers["Location"], headers=h).get_json()["result"]["engine"] == engine_id


def test_a_play_job_that_died_without_its_callback_is_followed_by_the_next_step(app, client, drain):
    created = _ai_first_game(client)
    game_id = created["game"]["id"]
    conn = app.extensions["redis"]
    job = Job.fetch(play_job_id(game_id, 0), connection=conn)
    # what RQ's registry cleanup leaves behind when a work horse is killed: failed, no callback run
    app.extensions["queues"]["play"].remove(job)
    job.set_status("failed")
    view = client.get(f"/v1/games/{game_id}").get_json()
    assert view["ai"] == {"pending": True, "job": f"{play_job_id(game_id, 0)}-retry"}
    assert _play_queue_ids(app) == [f"{play_job_id(game_id, 0)}-retry"]
    drain()
    assert client.get(f"/v1/games/{game_id}").get_json()["version"] >= 1



@pytest.mark.parametrize("rules_id", sorted(engine.RULES))
def test_a_hint_values_each_move_in_the_games_own_unit(client, drain, rules_id):
    """Each searched candidate of a suggestion carries ``mean_payoff``, the mean change of the asking seat's
    payoff (points a deal, columns a game, pips a round): null exactly for a move never tried, and the same
    sums as its ``mean_reward``, which is that payoff scaled by the one search's bounds -- so across the
    candidates of one search the two are one affine map (common bounds), the payoff unscaled.  A split
    search's payoff is the visit-weighted mean of its parts'."""
    players = engine.get_rules(rules_id).players[0]
    created = create(client, rules_id, humans(players), seed=5, public_seed=True)
    game_id = created["game"]["id"]
    tokens = tokens_by_seat(created)
    while True:  # to a decision with a choice (Kozel's opening tile is forced)
        seat = client.get(f"/v1/games/{game_id}").get_json()["to_move"]
        h = bearer(tokens[seat])
        legal = client.get(f"/v1/games/{game_id}/moves", headers=h).get_json()
        if len(legal) > 1:
            break
        assert client.post(f"/v1/games/{game_id}/moves", json={"move": legal[0]["id"]}, headers=h).status_code == 200
    r = client.post(f"/v1/games/{game_id}/suggestions",
                    json={"engine": "ismcts", "params": {"iterations": 120}, "workers": 2, "seed": 3}, headers=h)
    assert r.status_code == 202
    job_id = r.get_json()["id"]
    parts = Job.fetch(job_id, connection=client.application.extensions["redis"]).meta["parts"]
    drain()
    cands = client.get(f"/v1/jobs/{job_id}", headers=h).get_json()["result"]["stats"]["candidates"]
    for c in cands:
        assert (c["mean_payoff"] is None) == (c["visits"] == 0), c
    conn = client.application.extensions["redis"]
    part_stats = [Job.fetch(p, connection=conn).return_value().stats for p in parts]
    for stats in part_stats:
        visited = [c for c in stats["candidates"] if c["visits"]]
        assert visited
        rewards = {c["mean_reward"] for c in visited}
        if len(rewards) > 1:
            lo = min(visited, key=lambda c: c["mean_reward"])
            hi = max(visited, key=lambda c: c["mean_reward"])
            assert hi["mean_payoff"] > lo["mean_payoff"]
            slope = (hi["mean_reward"] - lo["mean_reward"]) / (hi["mean_payoff"] - lo["mean_payoff"])
            for c in visited:
                predicted = lo["mean_reward"] + slope * (c["mean_payoff"] - lo["mean_payoff"])
                assert c["mean_reward"] == pytest.approx(predicted, abs=1e-3), c
            # unscaled: a payoff of this unit is not squeezed into [0, 1] like the reward
            assert slope != pytest.approx(1.0)
    for c in (c for c in cands if c["visits"]):
        pieces = [pc for stats in part_stats for pc in stats["candidates"] if pc["move"] == c["move"] and pc["visits"]]
        want = sum(pc["mean_payoff"] * pc["visits"] for pc in pieces) / sum(pc["visits"] for pc in pieces)
        assert c["mean_payoff"] == pytest.approx(want, abs=1e-3)
