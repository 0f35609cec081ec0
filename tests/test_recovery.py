"""Recovery: a worker killed with SIGKILL in the middle of an AI job.  Real ``python worker.py``
processes run the jobs; the test kills the one running the job and watches what follows
(service.hardening.recovery).

- a play job: the game moves on within 30 s, found by the surviving worker's maintenance alone (nobody
  reads the game meanwhile, so the read-side watchdog plays no part);
- a suggestion job: the asker's poll of the job turns ``failed`` with a problem document within 30 s;
- a play job that Redis lost (no job left for the AI turn, so no failure callback ever runs): the workers'
  AI watch moves the game within 30 s, nobody reading it (service.queues, "The AI watch").
"""

from __future__ import annotations

import json
import logging
import secrets
import signal
import subprocess
import sys
import time

import pytest
from api_support import ROOT, bearer, create, humans, tokens_by_seat
from processes import environment, start_worker, stop
from rq import Queue
from rq.job import Job, JobStatus

from service import config
from service.hardening.recovery import QuietMaintenance, delete_jobs
from service.queues import PLAY
from service.store import Store

pytestmark = pytest.mark.e2e
pytest_plugins = ["api_fixtures"]

#: the required bound
RECOVERY_SECONDS = 30
#: an ismcts search that runs this long (the server's iteration cap is out of its reach in that time) is
#: surely killed mid-job
SEARCH_MS = 2500
SLOW_AI = {"kind": "ai", "engine": "ismcts",
           "params": {"iterations": config.DEFAULT_AI_MAX_ITERATIONS, "time_ms": SEARCH_MS}}


@pytest.fixture
def workers(redis_conn, redis_url, tmp_path):
    """Two worker processes, by name."""
    env = environment(redis_url)
    names = [f"recovery-{i}-{secrets.token_hex(3)}" for i in range(2)]
    procs = {name: start_worker(env, tmp_path / "worker.log", name=name) for name in names}
    yield procs
    stop(list(procs.values()))


def _started(conn, workers, job_id: str, timeout: float = 30.0) -> Job:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert all(p.poll() is None for p in workers.values()), "a worker process exited"
        try:
            job = Job.fetch(job_id, connection=conn)
        except Exception:
            job = None
        if job is not None and job.get_status() == JobStatus.STARTED and job.worker_name:
            return job
        time.sleep(0.05)
    raise AssertionError(f"job {job_id} was not started by a worker")


def _kill(workers, job: Job) -> float:
    proc = workers[job.worker_name]
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    return time.monotonic()


def test_a_play_job_of_a_killed_worker_is_rerun_and_the_game_moves_on_within_30_s(app, workers, redis_conn):
    created = create(app.test_client(), "tiengow", [SLOW_AI] * 4)
    game_id, first_job = created["game"]["id"], created["game"]["ai"]["job"]
    job = _started(redis_conn, workers, first_job)
    killed_at = _kill(workers, job)
    store = Store(redis_conn, 3600)
    while store.version(game_id) == 0:
        assert time.monotonic() - killed_at < RECOVERY_SECONDS, "the game did not move on within 30 s"
        time.sleep(0.1)
    elapsed = time.monotonic() - killed_at
    assert Job.fetch(first_job, connection=redis_conn).get_status() == JobStatus.FAILED
    retry = Job.fetch(f"{first_job}-retry", connection=redis_conn)
    deadline = time.monotonic() + 10  # the move is stored a moment before the job records its result
    while retry.get_status() != JobStatus.FINISHED and time.monotonic() < deadline:
        time.sleep(0.05)
    assert retry.return_value()["outcome"] == "played"
    assert retry.return_value()["version"] == 1
    assert elapsed < RECOVERY_SECONDS


def test_an_ai_turn_whose_job_redis_lost_moves_within_30_s_though_nobody_reads_the_game(app, redis_conn, redis_url,
                                                                                       tmp_path):
    """Rule: a game never stalls, read or not (service.queues, "The AI watch").  A play job that commits its
    move just as Redis goes away never queues the next one, and the failure callback of the job that did
    that finds the game moved on: the AI is to move and no job exists.  That is the state made here, before
    any worker runs; then two real workers start, and nobody reads the game."""
    created = create(app.test_client(), "tiengow", [{"kind": "ai", "engine": "greedy"}] * 4)
    game_id, job_id = created["game"]["id"], created["game"]["ai"]["job"]
    Queue(PLAY, connection=redis_conn).remove(job_id)
    delete_jobs(redis_conn, [job_id])
    assert not Job.exists(job_id, connection=redis_conn)
    store = Store(redis_conn, 3600)
    env = environment(redis_url)
    log = tmp_path / "worker.log"
    procs = [start_worker(env, log) for _ in range(2)]
    try:
        started = time.monotonic()
        while store.version(game_id) == 0:
            assert all(p.poll() is None for p in procs), "a worker process exited"
            assert time.monotonic() - started < RECOVERY_SECONDS, "the game did not move within 30 s"
            time.sleep(0.1)
    finally:
        stop(procs)
    assert any(line["msg"] == "an AI turn had no live job: queued its next step" and line.get("game") == game_id
               for line in _log_lines(log))


def test_a_suggestion_job_of_a_killed_worker_ends_failed_for_the_asker_within_30_s(app, workers, redis_conn):
    client = app.test_client()
    created = create(client, "tiengow", humans(4))
    game_id = created["game"]["id"]
    token = tokens_by_seat(created)[created["game"]["to_move"]]
    r = client.post(f"/v1/games/{game_id}/suggestions", json={"engine": "ismcts", "params": SLOW_AI["params"]},
                    headers=bearer(token))
    assert r.status_code == 202
    job_id = r.get_json()["id"]
    killed_at = _kill(workers, _started(redis_conn, workers, job_id))
    while True:
        body = client.get(f"/v1/jobs/{job_id}", headers=bearer(token)).get_json()
        if body["status"] != "started":
            break
        assert time.monotonic() - killed_at < RECOVERY_SECONDS, "the asker waited more than 30 s"
        time.sleep(0.2)
    assert body["status"] == "failed"
    assert body["problem"]["type"].endswith(":job-failed") and "ask again" in body["problem"]["detail"]
    # and the seat may ask again: the surviving worker answers
    again = client.post(f"/v1/games/{game_id}/suggestions",
                        json={"engine": "ismcts", "params": {"iterations": 5}}, headers=bearer(token))
    assert again.status_code == 202
    deadline = time.monotonic() + 30
    while (body := client.get(f"/v1/jobs/{again.get_json()['id']}", headers=bearer(token)).get_json())[
            "status"] in ("queued", "started"):
        assert time.monotonic() < deadline
        time.sleep(0.1)
    assert body["status"] == "finished"


def _log_lines(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.startswith("{")]


def _maintenance(line: dict) -> bool:
    return "cleaning registries" in line["msg"] or "cleaning group registries" in line["msg"]


def _burst_worker(env, log):
    """``python worker.py --burst`` run to its end, its log in ``log``."""
    with open(log, "ab") as out:
        proc = subprocess.Popen([sys.executable, "worker.py", "--burst", "--no-scheduler"], cwd=ROOT, env=dict(env),
                                stdout=subprocess.DEVNULL, stderr=out)
    proc.wait(timeout=60)
    return proc


def test_a_workers_maintenance_rounds_write_no_info_lines_while_its_jobs_lines_stay(app, redis_conn, redis_url,
                                                                                    tmp_path):
    """RQ's three INFO lines per maintenance round are demoted to DEBUG (recovery.quiet_maintenance_logs);
    a real worker with one round a second plays an AI table through and logs every job, but no round."""
    client = app.test_client()
    game_id = create(client, "kozel", [{"kind": "ai", "engine": "random"}, {"kind": "ai", "engine": "greedy"}],
                     options={"target": 10})["game"]["id"]
    env = environment(redis_url, {"TILEHOUSE_LOG_LEVEL": "INFO", "TILEHOUSE_WORKER_MAINTENANCE_SECONDS": "1"})
    log = tmp_path / "quiet.log"
    proc = start_worker(env, log)
    try:
        started = time.monotonic()
        # several rounds (one a second) while the table plays to its end
        while client.get(f"/v1/games/{game_id}").get_json()["status"] != "finished" \
                or time.monotonic() - started < 4:
            assert proc.poll() is None, "the worker exited"
            assert time.monotonic() - started < 60, "the AI table did not finish within 60 s"
            time.sleep(0.2)
    finally:
        stop([proc])
    lines = _log_lines(log)
    assert not [line for line in lines if _maintenance(line)]
    ok = [line for line in lines if "Job OK" in line["msg"] and line["job_id"].startswith(f"play-{game_id}-")]
    assert len(ok) > 5 and all(line["level"] == "info" for line in ok)
    assert any(line["msg"].startswith("*** Listening on") for line in lines)
    # the rounds are only demoted: a worker at DEBUG writes them, as debug lines
    debug_log = tmp_path / "debug.log"
    _burst_worker(environment(redis_url, {"TILEHOUSE_LOG_LEVEL": "DEBUG"}), debug_log)
    rounds = [line for line in _log_lines(debug_log) if _maintenance(line)]
    assert rounds and {line["level"] for line in rounds} == {"debug"}


def test_the_maintenance_filter_passes_every_other_rq_line_untouched():
    quiet = QuietMaintenance()

    # a logger of the test's own at INFO stands for rq.worker (the filter asks the record's logger)
    logging.getLogger("tests.quiet-maintenance").setLevel(logging.INFO)

    def record(level: int, msg: str, *args) -> logging.LogRecord:
        return logging.LogRecord("tests.quiet-maintenance", level, __file__, 1, msg, args, None)

    job = record(logging.INFO, "Worker %s: %s: %s", "w", "play", "play-x-1")
    warning = record(logging.WARNING, "Worker %s: cleaning registries for queue: %s", "w", "play")
    assert quiet.filter(job) and job.levelno == logging.INFO
    assert quiet.filter(warning) and warning.levelno == logging.WARNING
    round_line = record(logging.INFO, "Worker %s: cleaning registries for queue: %s", "w", "play")
    assert not quiet.filter(round_line) and round_line.levelno == logging.DEBUG


@pytest.mark.parametrize("reader", ["view", "job poll"])
def test_a_play_job_a_failover_left_in_no_queue_is_queued_again_by_a_read(make_app, redis_conn, reader):
    """A worker of several queues (``worker.py``'s default) pops a job (``BLPOP``: it is then in no list),
    then marks it started; a Redis failover between the two leaves it ``queued`` in no queue, and RQ never
    looks at it again.  The next view of its game, or poll of the job, puts it back on its queue."""
    app = make_app(ABANDONED_JOB_SECONDS=1)
    client = app.test_client()
    created = create(client, "kozel", [{"kind": "ai", "engine": "greedy"}, {"kind": "ai", "engine": "greedy"}])
    game_id = created["game"]["id"]
    queue = app.extensions["queues"]["play"]
    (job_id,) = queue.job_ids
    assert redis_conn.lpop(queue.key) == job_id.encode()  # what the cut-off worker did
    url = f"/v1/games/{game_id}" if reader == "view" else f"/v1/jobs/{job_id}"
    assert client.get(url).status_code == 200
    assert queue.job_ids == [], "a job queued less than ABANDONED_JOB_SECONDS ago is left alone"
    time.sleep(1.1)
    assert client.get(url).status_code == 200
    assert queue.job_ids == [job_id]
    assert Job.fetch(job_id, connection=redis_conn).get_status() == JobStatus.QUEUED


def test_a_job_in_no_queue_that_a_live_worker_starts_meanwhile_is_not_stranded(redis_conn):
    """A job in no list may be one a live worker has just popped: it is left to that worker if it is
    started within the recheck."""
    from datetime import UTC, datetime, timedelta

    from rq import Queue

    from service.hardening import recovery

    redis_conn.flushdb()
    queue = Queue("play", connection=redis_conn)
    job = queue.enqueue("builtins.len", "x")
    redis_conn.lpop(queue.key)
    later = datetime.now(UTC) + timedelta(seconds=10)
    assert recovery.stranded(redis_conn, job, 1, now=later, sleep=lambda _: None)
    job.get_status(refresh=True)
    assert not recovery.stranded(redis_conn, job, 1, now=later,
                                 sleep=lambda _: job.set_status(JobStatus.STARTED))


# --------------------------------------------------------------------------- jobs RQ left ready

def _leave_ready(conn, job_id: str) -> None:
    """What RQ 3 does when it gives up queueing a released dependent (a contended ``ReadyJobRegistry``):
    the job is ``ready_to_enqueue`` in the registry, on no queue, until the next maintenance round."""
    from rq.registry import ReadyJobRegistry

    job = Job.fetch(job_id, connection=conn)
    conn.lrem(f"rq:queue:{job.origin}", 0, job_id)
    job.set_status(JobStatus.READY_TO_ENQUEUE)
    ReadyJobRegistry(job.origin, connection=conn).add(job)


@pytest.mark.parametrize("reader", ["view", "job poll"])
def test_a_play_job_rq_left_ready_is_queued_by_the_next_read_not_the_next_maintenance_round(app, redis_conn,
                                                                                           reader):
    """Fair share's chain (service.fairplay.ai_share) must never stand still: a play job whose dependency
    ended but that RQ left ready, on no queue, is queued by the next view of its game or poll of the job."""
    client = app.test_client()
    created = create(client, "kozel", [{"kind": "ai", "engine": "greedy"}, {"kind": "ai", "engine": "greedy"}])
    game_id = created["game"]["id"]
    queue = app.extensions["queues"]["play"]
    (job_id,) = queue.job_ids
    _leave_ready(redis_conn, job_id)
    assert queue.job_ids == []
    url = f"/v1/games/{game_id}" if reader == "view" else f"/v1/jobs/{job_id}"
    assert client.get(url).status_code == 200
    assert queue.job_ids == [job_id]
    assert Job.fetch(job_id, connection=redis_conn).get_status() == JobStatus.QUEUED
    assert client.get(url).status_code == 200
    assert queue.job_ids == [job_id], "queued once, never twice"


def _release_behind(dependency_id: str) -> None:
    """A job that ends ``dependency_id`` and moves its dependents to ready without queueing them, as a
    worker that lost the race for the ready registry does."""
    from rq import get_current_job
    from rq.queue import Queue

    job = get_current_job()
    assert job is not None
    done = Job.fetch(dependency_id, connection=job.connection)
    done.set_status(JobStatus.FINISHED)
    Queue(done.origin, connection=job.connection).move_dependents_to_ready(done)


def test_a_worker_queues_the_jobs_rq_left_ready_after_each_job(redis_conn):
    """After each job a worker queues what RQ left ready (recovery.enqueue_ready): the dependent runs in
    the same burst, instead of waiting for a maintenance round (which a burst worker never reaches again)."""
    from rq import Queue

    from worker import TilehouseWorker

    queue = Queue("play", connection=redis_conn)
    dependency = queue.enqueue_call("builtins.len", args=("d",), job_id="test-dependency")
    redis_conn.lrem(queue.key, 0, dependency.id)  # taken by nobody: the test ends it by hand
    dependent = queue.enqueue_call("builtins.len", args=("abc",), job_id="test-dependent", depends_on=dependency)
    assert dependent.get_status() == JobStatus.DEFERRED
    queue.enqueue_call(_release_behind, args=(dependency.id,), job_id="test-releaser")
    TilehouseWorker(["play"], connection=redis_conn).work(burst=True, with_scheduler=False)
    assert Job.fetch("test-releaser", connection=redis_conn).get_status() == JobStatus.FINISHED
    dependent = Job.fetch("test-dependent", connection=redis_conn)
    assert dependent.get_status() == JobStatus.FINISHED and dependent.return_value() == 3
