"""Faults with real processes (``service.hardening.recovery``, ``worker.py``): a Redis restart under running
workers, a worker killed with SIGKILL (its scheduler child and the scheduler locks), and the deletion of a
game whose AI job was abandoned by a killed worker.  Each runs real ``python worker.py`` processes against a
private ``redis-server`` of its own (so that it can be stopped and started again)."""

from __future__ import annotations

import secrets
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import redis
from api_support import bearer, create
from processes import environment, start_worker, stop
from rq import Queue, get_current_job
from rq.job import Job, JobStatus
from rq.scheduler import RQScheduler

from service import create_app, queues, tables
from service.redis_local import free_port, ping, redis_server_binary
from service.store import Store
from worker import TilehouseWorker

pytestmark = pytest.mark.e2e

#: the required bound for AI games to move again once Redis is back
BACK_SECONDS = 30
#: an AI seat whose every move takes a visible while (so the game is still running across a restart)
PACED_AI = {"kind": "ai", "engine": "ismcts", "params": {"iterations": 50000, "time_ms": 300}}
SLOW_AI = {"kind": "ai", "engine": "ismcts", "params": {"iterations": 50000, "time_ms": 4000}}
LOCKS = [RQScheduler.get_locking_key(name) for name in ("suggest", "play")]


class PrivateRedis:
    """A redis-server on a free port with its append-only file in ``where``: stopped and started again,
    it comes back with its data, as a restarted production Redis does."""

    def __init__(self, where: Path) -> None:
        self.where, self.port = where, free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        binary, _ = redis_server_binary()
        self.proc = subprocess.Popen([binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.where),
                                      "--appendonly", "yes", "--appendfsync", "always", "--save", ""],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while not ping(self.url):
            assert time.monotonic() < deadline, "the private redis-server did not start"
            time.sleep(0.05)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=10)


@contextmanager
def private_redis(tmp_path: Path) -> Iterator[PrivateRedis]:
    server = PrivateRedis(tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def server(tmp_path):
    with private_redis(tmp_path) as s:
        yield s


@pytest.fixture
def api(server):
    app = create_app({"REDIS_URL": server.url, "SEED_SECRET": "faults"})
    yield app
    app.extensions["redis"].close()
    app.extensions["redis_streams"].close()


def _children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def _wait(what: str, done, timeout: float, step: float = 0.1) -> float:
    start = time.monotonic()
    while not done():
        assert time.monotonic() - start < timeout, f"{what} within {timeout} s"
        time.sleep(step)
    return time.monotonic() - start


def _started(conn: redis.Redis, job_id: str) -> Job:
    found: list[Job] = []

    def started() -> bool:
        try:
            job = Job.fetch(job_id, connection=conn)
        except Exception:
            return False
        found[:] = [job]
        return job.get_status() == JobStatus.STARTED and bool(job.worker_name)

    _wait(f"job {job_id} started", started, 30, 0.05)
    return found[0]


def test_deleting_a_game_whose_ai_job_was_abandoned_answers_204_and_leaves_no_key(api, server, tmp_path):
    conn = redis.Redis.from_url(server.url)
    env = environment(server.url)
    workers = {name: start_worker(env, tmp_path / "worker.log", name=name)
               for name in (f"faults-{i}-{secrets.token_hex(3)}" for i in range(2))}
    try:
        client = api.test_client()
        created = create(client, "tiengow", [SLOW_AI] * 4)
        game_id, first = created["game"]["id"], created["game"]["ai"]["job"]
        job = _started(conn, first)
        killed = workers.pop(job.worker_name)
        killed.send_signal(signal.SIGKILL)
        killed.wait(timeout=10)
        # the survivor fails the abandoned job over and runs the next step of the chain
        _started(conn, f"{first}-retry")
        r = client.delete(f"/v1/games/{game_id}", headers=bearer(created["admin_token"]))
        assert r.status_code == 204, r.get_data(as_text=True)
        # the running search ends meanwhile (its time budget, longer on a loaded machine): then nothing is left

        def left() -> list[str]:
            return [k.decode() for k in conn.scan_iter(count=1000) if game_id in k.decode()]

        time.sleep(SLOW_AI["params"]["time_ms"] / 1000)
        try:
            _wait("no key of the game or its jobs left", lambda: not left(), 30, 0.25)
        except AssertionError:
            raise AssertionError([(k, conn.type(k), conn.ttl(k)) for k in left()]) from None
        listed = [k.decode() for k in conn.scan_iter("rq:*", count=1000) if conn.type(k) == b"zset"
                  and any(game_id in m.decode() for m in conn.zrange(k, 0, -1))]
        assert listed == []
    finally:
        stop(list(workers.values()))


def _delete_the_game_then(outcome: str) -> str:
    """A job during which its game is deleted (as by a ``DELETE`` racing it), then ends with ``outcome``."""
    job = get_current_job()
    assert job is not None
    conn = job.connection
    tables.delete(tables.Context(Store(conn, 3600), queues.settings(), None), job.meta["game"])
    if outcome == "fail":
        raise RuntimeError("the job fails after its game was deleted")
    return outcome


@pytest.mark.parametrize("outcome", ["succeed", "fail"])
def test_a_job_whose_game_is_deleted_while_it_runs_keeps_no_record_however_it_ends(api, server, outcome):
    """The deletion removes the running job's records, and RQ writes them again as the job ends (its result
    or its failure, kept for a day): the worker deletes them once the job is over."""
    conn = redis.Redis.from_url(server.url)
    created = create(api.test_client(), "tiengow", [{"kind": "human"}] * 4)
    game_id = created["game"]["id"]
    queue = Queue("play", connection=conn)
    job = queue.enqueue(_delete_the_game_then, outcome, meta={"game": game_id}, result_ttl=3600,
                        failure_ttl=86400, job_id=f"test-{game_id}-{outcome}")
    Store(conn, 3600).add_job(game_id, job.id)
    TilehouseWorker(["play"], connection=conn).work(burst=True, with_scheduler=False)
    left = [k.decode() for k in conn.scan_iter(count=1000) if game_id in k.decode()]
    assert left == [], [(k, conn.type(k), conn.ttl(k)) for k in left]


def test_a_worker_killed_with_sigkill_leaves_no_orphan_process_and_no_scheduler_lock(server, tmp_path):
    conn = redis.Redis.from_url(server.url)
    env = environment(server.url)
    worker = start_worker(env, tmp_path / "worker.log")
    try:
        _wait("the scheduler took its locks", lambda: all(conn.exists(k) for k in LOCKS), 30)
        # RQ takes the locks in the worker, then starts the scheduler's process: it may not be there yet
        _wait("the worker runs its scheduler in a child process", lambda: _children(worker.pid), 30)
        children = _children(worker.pid)
        worker.send_signal(signal.SIGKILL)
        worker.wait(timeout=10)
        _wait("the scheduler child ended", lambda: not any(_running(pid) for pid in children), 10)
        assert not any(conn.exists(k) for k in LOCKS), "a scheduler lock outlived its scheduler"
        # and the next worker schedules at once (a stale lock would keep it standing by for a minute)
        successor = start_worker(env, tmp_path / "worker.log")
        try:
            _wait("the next worker took the scheduler locks", lambda: all(conn.exists(k) for k in LOCKS), 15)
        finally:
            stop([successor])
    finally:
        stop([worker])


def test_workers_ride_out_a_redis_restart_and_ai_games_move_again_within_30_s(api, server, tmp_path):
    conn = redis.Redis.from_url(server.url)
    env = environment(server.url)
    workers = [start_worker(env, tmp_path / "worker.log") for _ in range(2)]
    try:
        created = create(api.test_client(), "kozel", [PACED_AI] * 2, options={"target": 101})
        game_id = created["game"]["id"]
        store = Store(conn, 3600)
        _wait("the game moved", lambda: (store.version(game_id) or 0) >= 2, 30)
        server.stop()
        time.sleep(4)  # the workers meet the dead connection: mid-job, in maintenance, waiting for a job
        server.start()
        back = store.version(game_id) or 0
        took = _wait("an AI move after Redis came back",
                     lambda: (store.version(game_id) or 0) > back or store.finished([game_id])[game_id], BACK_SECONDS)
        assert all(w.poll() is None for w in workers), "a worker process ended"
        assert took < BACK_SECONDS
    finally:
        stop(workers)
