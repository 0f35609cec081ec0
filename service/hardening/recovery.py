"""A killed worker's AI job is noticed and run again within seconds.

How RQ notices a job whose worker died.  A job being run sits in its queue's ``StartedJobRegistry`` with a
score = the time its heartbeat expires.  A worker's periodic maintenance (``clean_registries``) takes every
entry past that time, runs the job's failure callback with ``AbandonedJobError`` and moves it to the
``FailedJobRegistry``: for a play job the callback queues the next step of the fallback chain
(``service.jobs.on_play_failure``), so the game moves on; a suggestion job ends ``failed`` and the asker's
poll of ``/v1/jobs/<id>`` says so.  Out of the box that takes minutes: ``SimpleWorker`` (which
``worker.py`` uses, see its docstring) registers a job for its whole timeout plus 60 s (120 + 60 s) and
never heartbeats while it runs, and maintenance runs every 10 minutes -- the 402 s measured before this module.

What :class:`RecoveringWorker` changes, all with RQ's own machinery:

* while a job runs, a thread beats its heartbeat every ``JOB_HEARTBEAT_SECONDS`` (2 s) with RQ's
  ``maintain_heartbeats``, and each beat extends the registry entry by only ``ABANDONED_JOB_SECONDS``
  (8 s): a job whose worker was killed is past its time 8 s after the last beat at most, while a long
  search that is alive keeps its entry however long it runs (its own timeout still bounds it);
* maintenance (which takes a lock in Redis, so one worker does it per round) runs every
  ``WORKER_MAINTENANCE_SECONDS`` (5 s), and an idle worker wakes from its blocking dequeue that often
  (``worker_ttl`` is set so that RQ's dequeue timeout equals the maintenance interval).

A killed worker's play job is then failed over by any other worker within 8 + 5 s plus one round, and the
next step of the chain runs at once on a free worker.  If every worker is gone, the first one to come back
(compose's restart policy) does it on start-up.

Quiet rounds.  RQ writes three INFO lines per maintenance round ("cleaning registries for queue: suggest",
"... play", "cleaning group registries"): every 5 s instead of every 10 minutes, they would bury the log.
:func:`quiet_maintenance_logs` (called by ``worker.py``) demotes exactly those lines to DEBUG with a filter
on RQ's ``rq.worker`` logger: they show with ``TILEHOUSE_LOG_LEVEL=DEBUG``, and every other line -- a job's,
a warning, an abandoned job failed over -- is untouched.

The read-side watchdog.  :func:`abandoned` tells whether a job is ``started`` but its heartbeat is older
than ``ABANDONED_JOB_SECONDS``; the game view (``service.queues.ensure_ai_progress``) and the job status
(``GET /v1/jobs/<id>``) then run the same registry cleanup at once instead of waiting for a worker's next
maintenance round.  It costs nothing on the common path (the job hash it reads is read anyway).

Faults of the worker's own.  RQ runs its scheduler (which moves due clock timeouts onto the play queue) in
a forked child that holds the scheduler locks in Redis.  A worker killed with SIGKILL used to leave that
child running as an orphan, keeping the locks.  :class:`BoundScheduler` ties the child to its parent: on
Linux the kernel sends it SIGTERM when the parent dies (``prctl(PR_SET_PDEATHSIG)``), and on every system
each scheduler round first checks that its parent is the one that started it; either way it stops as RQ's
scheduler stops on SIGTERM, releasing its locks, so the next worker to start takes them at once.

Games nobody reads.  A job can also be lost where no failure callback runs (a play job that commits its
move just as Redis goes away never queues the next one, and its abandoned-job callback then finds the game
moved on): the workers' maintenance round runs ``maintenance_tasks`` after RQ's own cleanup, and
``worker.py`` gives it the AI watch (``service.queues.sweep_ai_games``), the game view's watchdog for every
game whose AI turn has gone unseen for ``ABANDONED_JOB_SECONDS``.

A Redis restart used to end every worker: RQ retries a lost connection only while it waits for a job, and
anything else that meets the dead connection (maintenance, a heartbeat, the end of a job, the worker's own
teardown) ends the work loop.  :func:`run_until_stopped` runs the work loop again after such an end: it
waits for Redis with exponential backoff (:data:`RECONNECT_FIRST_SECONDS` doubling up to
:data:`RECONNECT_MAX_SECONDS`), marks the old registration dead and starts a fresh worker of the same
name, so AI games move again a few seconds after Redis is back (a job that was running when Redis went
away is failed over as an abandoned job, above).  Only a stop request (SIGTERM, SIGINT) or the end of a
burst ends the loop.

Deleting a game's jobs.  RQ's ``Job.delete`` reads every execution the job's execution registry lists, and
the execution of a job whose worker was killed has expired meanwhile: RQ then raises ``ValueError``
("Execution ... not found"), which made ``DELETE`` of such a game a 500 that left its job records.
:func:`delete_jobs` drops the expired executions from the registries first, then deletes the job.  A job
that is still running when its game is deleted finds the game gone and keeps no record of its own
(``service.jobs``: its ``result_ttl`` becomes 0), and whatever RQ writes back as such a job ends (its
heartbeats, a result, a failure) the worker deletes once the job is over (:func:`forget_if_game_gone`).

MEASURED (2026-12-01, this 2-core machine shared with other sessions, load average 2.4-6.4): seconds from
SIGKILL of the worker running a play job (ismcts, 2.5 s searches, so each figure includes the 2.5 s re-run)
to the game's version moving on, a second worker alive, three runs each:
  before (SimpleWorker, RQ defaults):                      402 s (the figure measured then: 120 + 60 s entry, 600 s rounds)
  A. heartbeats + 5 s maintenance, nobody reads the game:   12.2, 12.2, 12.1
  B. watchdog on read only (view polled every 0.5 s, maintenance left at RQ's 600 s): 10.1, 10.3, 10.3
Both are kept: A is the guarantee (it needs no client: AI-only tables and a suggestion nobody polls are
recovered too), B is two seconds sooner when someone is watching and costs nothing; either alone meets the
30 s bound with room.  tests/test_recovery.py kills real worker processes and asserts the bound with A alone
(the game is not read) for a play job and through the job poll for a suggestion.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import signal
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any, ClassVar, cast

import redis
from rq import Queue, SimpleWorker
from rq.exceptions import InvalidJobOperation, NoSuchJobError
from rq.executions import Execution, ExecutionRegistry
from rq.intermediate_queue import IntermediateQueue
from rq.job import Job, JobStatus
from rq.registry import ReadyJobRegistry, StartedJobRegistry
from rq.results import Result
from rq.scheduler import RQScheduler
from rq.timeouts import TimerDeathPenalty
from rq.worker import BaseWorker, WorkerStatus

from service import config
from service.keys import game_key

log = logging.getLogger(__name__)

#: RQ's dequeue timeout is worker_ttl - 15 s: this makes it equal to the maintenance interval
_RQ_DEQUEUE_MARGIN = 15


#: the format strings of RQ's per-round maintenance lines (``BaseWorker.clean_registries`` and
#: ``clean_group_registries``, RQ 3); a record is matched by its unformatted message, so nothing else is
MAINTENANCE_MESSAGES = frozenset({"Worker %s: cleaning registries for queue: %s",
                                  "Worker %s: cleaning group registries"})


class QuietMaintenance(logging.Filter):
    """Demotes RQ's maintenance-round INFO lines to DEBUG (kept only when the logger is at DEBUG)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno != logging.INFO or record.msg not in MAINTENANCE_MESSAGES:
            return True
        record.levelno, record.levelname = logging.DEBUG, logging.getLevelName(logging.DEBUG)
        return logging.getLogger(record.name).isEnabledFor(logging.DEBUG)


def quiet_maintenance_logs() -> None:
    """Put :class:`QuietMaintenance` on RQ's worker logger (once)."""
    rq_log = logging.getLogger("rq.worker")
    if not any(isinstance(f, QuietMaintenance) for f in rq_log.filters):
        rq_log.addFilter(QuietMaintenance())


def worker_options(cfg: Mapping[str, Any]) -> dict[str, Any]:
    """The keyword arguments of an RQ worker for the configured recovery times."""
    maintenance = int(cfg["WORKER_MAINTENANCE_SECONDS"])
    return {"maintenance_interval": maintenance, "worker_ttl": maintenance + _RQ_DEQUEUE_MARGIN,
            "job_monitoring_interval": int(cfg["JOB_HEARTBEAT_SECONDS"])}


def enqueue_ready(conn: redis.Redis, queue_names: Iterable[str], attempts: int = 3) -> int:
    """Queue every job that RQ left *ready* on the given queues; the number queued.

    RQ 3 releases a finished job's dependents in two steps: inside the job's own transaction it marks them
    ``ready_to_enqueue`` in the queue's ``ReadyJobRegistry``, then it moves them onto the queue one by one,
    each under a WATCH of that registry -- and gives up on one whose WATCH fails, leaving it to the next
    maintenance round's cleanup.  Two workers that finish jobs at the same moment both write the registry,
    so one of them gives up: the AI work chained behind that job (``service.fairplay.ai_share``) stood
    still for up to ``WORKER_MAINTENANCE_SECONDS`` (2-8 s measured under ``bench fairness --attack``).  So
    every worker runs this after each job, and the read-side watchdogs for a ready job they meet; RQ's
    ``enqueue_jobs`` never queues a job twice, and a job another caller queues first is skipped."""
    queued = 0
    for name in queue_names:
        registry = ReadyJobRegistry(name, connection=conn)
        for _ in range(attempts):
            if not conn.zcard(registry.key):
                break
            queued += len(registry.cleanup())
    return queued


def enqueue_if_ready(conn: redis.Redis, job: Job) -> bool:
    """Queue ``job`` now if RQ left it ready (its dependencies done) but not queued (:func:`enqueue_ready`).
    True when it queued it."""
    if job.get_status(refresh=False) != JobStatus.READY_TO_ENQUEUE:
        return False
    return bool(ReadyJobRegistry(job.origin, connection=conn).enqueue_jobs([job.id]))


class ResilientWorker(BaseWorker):
    """An RQ worker whose scheduler child is a :class:`BoundScheduler` and which remembers a stop request
    (``stopping``), for :func:`run_until_stopped`.  Mixed in ahead of RQ's worker classes."""

    #: set once a stop was asked for (SIGTERM, SIGINT): the work loop then ends for good
    stopping = False
    #: more work for every maintenance round, after RQ's own, each called with the worker's connection
    #: (``worker.py``: the AI watch, ``service.queues.sweep_ai_games``); a task that fails is logged and
    #: tried again next round
    maintenance_tasks: ClassVar[tuple[Callable[[redis.Redis], object], ...]] = ()

    def clean_registries(self) -> None:
        super().clean_registries()
        for task in self.maintenance_tasks:
            try:
                task(self.connection)
            except redis.RedisError as exc:
                log.warning("a maintenance task failed", extra={"task": getattr(task, "__name__", str(task)),
                                                                "error": str(exc)})

    def request_stop(self, signum: Any = None, frame: Any = None) -> None:
        self.stopping = True
        super().request_stop(signum, frame)

    def execute_job(self, job: Job, queue: Queue) -> None:
        super().execute_job(job, queue)
        self.after_job(job)

    def after_job(self, job: Job) -> None:
        """What every worker does once a job has ended: forget the job if its game is gone, and queue the
        dependents RQ marked ready but did not queue (:func:`enqueue_ready`), now and not at the next
        maintenance round."""
        forget_if_game_gone(self.connection, job)
        enqueue_ready(self.connection, self.queue_names())

    def _start_scheduler(self, burst: bool = False, logging_level: str | None = "INFO", *args: Any,
                         **kwargs: Any) -> None:
        # RQ's own start-up (BaseWorker._start_scheduler) with the scheduler bound to this process
        self.scheduler = BoundScheduler(self.queues, connection=self.connection,
                                        logging_level=logging_level if logging_level is not None else self.log.level,
                                        serializer=self.serializer)
        self.scheduler.acquire_locks()
        if not self.scheduler.acquired_locks:
            return
        if burst:
            try:
                self.scheduler.register_birth()
                self.scheduler.enqueue_scheduled_jobs()
            finally:
                self.scheduler.release_locks()
                self.scheduler.register_death()
        else:
            self.scheduler.start()


class RecoveringWorker(ResilientWorker, SimpleWorker):
    """RQ's ``SimpleWorker`` (jobs run in the worker process) with heartbeats while a job runs and a short
    time after which a job whose heartbeat stopped is abandoned.  ``job_monitoring_interval`` is the
    heartbeat period; ``abandoned_after`` the registry time each beat grants."""

    def __init__(self, *args: Any, abandoned_after: int = config.DEFAULT_ABANDONED_JOB_SECONDS, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.abandoned_after = int(abandoned_after)

    def get_heartbeat_ttl(self, job: Job, working_time: float = 0.0) -> int:
        return self.abandoned_after

    def execute_job(self, job: Job, queue: Queue) -> None:
        execution = self.prepare_execution(job)
        done = threading.Event()
        beat = threading.Thread(target=self._beat, args=(job, execution, done), daemon=True,
                                name=f"heartbeat {job.id}")
        beat.start()
        try:
            self.perform_job(job, queue, execution)
        finally:
            done.set()
            beat.join()
        self.after_job(job)  # after the last heartbeat
        self.set_state(WorkerStatus.IDLE)

    def _beat(self, job: Job, execution: Execution, done: threading.Event) -> None:
        while not done.wait(self.job_monitoring_interval):
            try:
                self.maintain_heartbeats(job, execution)
            except redis.RedisError as exc:  # the next beat tries again; the job itself goes on
                log.warning("job heartbeat failed", extra={"job": job.id, "error": str(exc)})


def forget_if_game_gone(conn: redis.Redis, job: Job) -> bool:
    """Delete every record of ``job`` once it has ended if its game is gone (True when it did).

    A game deleted while one of its jobs runs loses that job's records at once (:func:`delete_jobs`), but
    RQ writes them again as the job ends: its heartbeats, its result or its failure (a success whose
    ``result_ttl`` is 0 deletes the job through its execution registry, which the deletion has emptied, and
    RQ records that error as the job's failure).  So the worker looks again once RQ is done with the job.
    No deletion can slip between the two: the game's keys go before its jobs' (``service.tables.delete``),
    so a game still there at this check is deleted later, and its deletion then finds these records."""
    game_id = job.meta.get("game") if isinstance(job.meta, dict) else None
    if not isinstance(game_id, str):
        return False
    try:
        if conn.exists(game_key(game_id)):
            return False
        delete_jobs(conn, [job.id])
    except (redis.RedisError, NoSuchJobError, ValueError) as exc:  # the records expire with their TTL
        log.warning("could not delete the records of a job whose game is gone", extra={"job": job.id, "error": str(exc)})
        return False
    return True


def abandoned(job: Job, abandoned_after: float, now: datetime | None = None) -> bool:
    """Is ``job`` started but silent for longer than ``abandoned_after`` seconds (its worker died)?"""
    if job.get_status(refresh=False) != JobStatus.STARTED:
        return False
    last = job.last_heartbeat or job.started_at
    if last is None:
        return False
    if last.tzinfo is None:
        last = last.replace(tzinfo=UTC)
    return ((now or datetime.now(UTC)) - last).total_seconds() > abandoned_after


def fail_over(conn: redis.Redis, job: Job) -> None:
    """Run RQ's abandoned-job handling for the queue of ``job`` now (failure callbacks, failed registry)."""
    # the timer death penalty: a failure callback run from an API thread cannot use SIGALRM
    StartedJobRegistry(job.origin, connection=conn, death_penalty_class=TimerDeathPenalty).cleanup()


#: seconds a job found in no queue gets before it counts as stranded (a live worker that has just taken it
#: marks it started within milliseconds)
STRANDED_RECHECK_SECONDS = 0.2


def stranded(conn: redis.Redis, job: Job, after: float, now: datetime | None = None,
             recheck: float = STRANDED_RECHECK_SECONDS, sleep: Callable[[float], object] = time.sleep) -> bool:
    """Is ``job`` ``queued`` for longer than ``after`` seconds but in its queue no more, and not started?

    A worker takes a job off its queue, then marks it started: two steps.  A worker of one queue moves the
    job to RQ's intermediate queue (``BLMOVE``); a worker of several (``worker.py``'s default: suggest and
    play) pops it (``BLPOP``) and holds it in memory only.  A Redis failover between the two steps (the
    take replicated, the mark lost) leaves the job ``queued`` in the intermediate queue, which RQ's own
    cleanup fails only after a minute, or in no list at all, which nothing in RQ ever looks at again.  A
    job in no list may also be one a live worker took this instant: it counts only if it is still
    ``queued`` and in no list ``recheck`` seconds later."""
    if job.get_status(refresh=False) != JobStatus.QUEUED or job.enqueued_at is None:
        return False
    enqueued = job.enqueued_at if job.enqueued_at.tzinfo else job.enqueued_at.replace(tzinfo=UTC)
    if ((now or datetime.now(UTC)) - enqueued).total_seconds() <= after:
        return False
    queue = Queue(job.origin, connection=conn)
    if conn.lpos(queue.key, job.id) is not None:
        return False  # still waiting for a worker: not stranded
    if conn.lpos(IntermediateQueue(queue.key, conn).key, job.id) is not None:
        return True
    sleep(recheck)
    return job.get_status(refresh=True) == JobStatus.QUEUED and conn.lpos(queue.key, job.id) is None


def requeue_stranded(conn: redis.Redis, job: Job) -> None:
    """Put a :func:`stranded` job back at the front of its queue (out of the intermediate queue, if there)."""
    queue = Queue(job.origin, connection=conn)
    pipe = conn.pipeline()
    pipe.lrem(IntermediateQueue(queue.key, conn).key, 1, job.id)
    pipe.lpush(queue.key, job.id)
    pipe.execute()


#: the first wait before asking a lost Redis again, in seconds (doubled after each failed try)
RECONNECT_FIRST_SECONDS = 0.5
#: the longest wait between two tries to reach a lost Redis, in seconds
RECONNECT_MAX_SECONDS = 5.0
#: ``prctl`` option: the signal a process gets when its parent dies (linux/prctl.h)
_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """Ask the kernel for SIGTERM when the parent dies (Linux); elsewhere the scheduler's rounds check."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError):
        return
    prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


class BoundScheduler(RQScheduler):
    """RQ's scheduler, whose forked process stops (releasing its locks) as soon as its worker is gone."""

    _parent_pid: int | None = None

    def start(self) -> Any:
        self._parent_pid = os.getpid()
        return super().start()

    def work(self) -> None:
        # the stop handler first, so the parent's death signal always finds it in place
        self._install_signal_handlers()
        _die_with_parent()
        self._check_parent()
        super().work()

    def heartbeat(self) -> None:
        self._check_parent()
        if not self._stop_requested:
            super().heartbeat()

    def _check_parent(self) -> None:
        if self._parent_pid is not None and os.getppid() != self._parent_pid and not self._stop_requested:
            self.log.warning("Scheduler: its worker (PID %s) is gone; stopping", self._parent_pid)
            self.request_stop()


def wait_for_redis(conn: redis.Redis, stopping: Callable[[], bool],
                   sleep: Callable[[float], object] = time.sleep) -> bool:
    """Ping ``conn`` with exponential backoff until it answers (True) or ``stopping()`` (False)."""
    delay = RECONNECT_FIRST_SECONDS
    while not stopping():
        try:
            conn.ping()
            return True
        except (redis.ConnectionError, redis.TimeoutError) as exc:
            log.warning("Redis is unreachable; trying again", extra={"error": str(exc), "retry_in_s": delay})
        sleep(delay)
        delay = min(RECONNECT_MAX_SECONDS, delay * 2)
    return False


def run_until_stopped(make_worker: Callable[[], BaseWorker], conn: redis.Redis, *, burst: bool = False,
                      **work_options: Any) -> None:
    """Run ``make_worker()``'s work loop, and a fresh worker's again whenever the loop ends for any reason
    but a stop request or the end of a burst (a lost Redis, an error RQ gave up on)."""
    stop = threading.Event()
    while True:
        worker = make_worker()
        try:
            worker.work(burst=burst, **work_options)
        except (redis.ConnectionError, redis.TimeoutError) as exc:  # met in RQ's teardown
            log.warning("the worker lost Redis", extra={"worker": worker.name, "error": str(exc)})
        if burst or getattr(worker, "stopping", False):
            return
        # RQ restores its own signal handlers only inside work(): a stop while waiting ends the loop
        signal.signal(signal.SIGTERM, lambda *_: stop.set())
        signal.signal(signal.SIGINT, lambda *_: stop.set())
        if not wait_for_redis(conn, stop.is_set, sleep=stop.wait):
            return
        try:
            worker.register_death()  # so that a worker of the same name may register
        except redis.RedisError:
            continue
        log.warning("Redis is back: the worker starts again", extra={"worker": worker.name})


def delete_jobs(conn: redis.Redis, job_ids: list[str]) -> None:
    """Delete every record of the jobs ``job_ids`` (gone ones are skipped), abandoned ones included."""
    for job_id in job_ids:
        try:
            job = Job.fetch(job_id, connection=conn)
        except NoSuchJobError:
            continue
        registry = ExecutionRegistry(job_id=job_id, connection=conn)
        listed = cast(list[bytes], conn.zrange(registry.key, 0, -1))
        expired = [Execution(raw.decode(), job_id, conn) for raw in listed]
        expired = [e for e in expired if not conn.exists(e.key)]
        if expired:
            with conn.pipeline() as pipe:
                for execution in expired:
                    job.started_job_registry.remove_execution(execution, pipeline=pipe)
                    pipe.zrem(registry.key, execution.id)
                pipe.execute()
        # a job of another game may wait on this one (service.fairplay.ai_share: a client's AI jobs form one
        # chain): it is released now, as if this one had ended
        with contextlib.suppress(redis.RedisError, NoSuchJobError):
            Queue(job.origin, connection=conn).enqueue_dependents(job, refresh_job_status=False)
        try:
            job.delete()
        except InvalidJobOperation:
            # its record vanished since it was read (it expired, or another process deleted it): RQ's
            # delete reads the status first and gives up; what may be left of its keys goes all the same
            conn.delete(job.key, job.dependents_key, job.dependencies_key, Result.get_key(job.id))
