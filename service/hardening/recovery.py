"""A killed worker's AI job is noticed and run again within seconds.

How RQ notices a job whose worker died.  A job being run sits in its queue's ``StartedJobRegistry`` with a
score = the time its heartbeat expires.  A worker's periodic maintenance (``clean_registries``) takes every
entry past that time, runs the job's failure callback with ``AbandonedJobError`` and moves it to the
``FailedJobRegistry``: for a play job the callback queues the next step of the fallback chain
(``service.jobs.on_play_failure``), so the game moves on; a suggestion job ends ``failed`` and the asker's
poll of ``/v1/jobs/<id>`` says so.  Out of the box that takes minutes: ``SimpleWorker`` (which
``worker.py`` uses, see its docstring) registers a job for its whole timeout plus 60 s (120 + 60 s) and
never heartbeats while it runs, and maintenance runs every 10 minutes -- the 402 s the issue measured.

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

MEASURED (2026-12-01, this 2-core machine shared with other sessions, load average 2.4-6.4): seconds from
SIGKILL of the worker running a play job (ismcts, 2.5 s searches, so each figure includes the 2.5 s re-run)
to the game's version moving on, a second worker alive, three runs each:
  before (SimpleWorker, RQ defaults):                      402 s (the issue's figure: 120 + 60 s entry, 600 s rounds)
  A. heartbeats + 5 s maintenance, nobody reads the game:   12.2, 12.2, 12.1
  B. watchdog on read only (view polled every 0.5 s, maintenance left at RQ's 600 s): 10.1, 10.3, 10.3
Both are kept: A is the guarantee (it needs no client: AI-only tables and a suggestion nobody polls are
recovered too), B is two seconds sooner when someone is watching and costs nothing; either alone meets the
30 s bound with room.  tests/test_recovery.py kills real worker processes and asserts the bound with A alone
(the game is not read) for a play job and through the job poll for a suggestion.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import redis
from rq import Queue, SimpleWorker
from rq.executions import Execution
from rq.intermediate_queue import IntermediateQueue
from rq.job import Job, JobStatus
from rq.registry import StartedJobRegistry
from rq.timeouts import TimerDeathPenalty
from rq.worker import WorkerStatus

from service import config

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


class RecoveringWorker(SimpleWorker):
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
        self.set_state(WorkerStatus.IDLE)

    def _beat(self, job: Job, execution: Execution, done: threading.Event) -> None:
        while not done.wait(self.job_monitoring_interval):
            try:
                self.maintain_heartbeats(job, execution)
            except redis.RedisError as exc:  # the next beat tries again; the job itself goes on
                log.warning("job heartbeat failed", extra={"job": job.id, "error": str(exc)})


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


def stranded(conn: redis.Redis, job: Job, after: float, now: datetime | None = None) -> bool:
    """Is ``job`` ``queued`` for longer than ``after`` seconds but in its queue no more, only in RQ's
    intermediate queue?  A worker moves a job from the queue to the intermediate queue (``BLMOVE``), then
    marks it started; a Redis failover between the two (the move replicated, the mark lost) strands it
    there, and RQ's own cleanup fails such a job only after a minute."""
    if job.get_status(refresh=False) != JobStatus.QUEUED or job.enqueued_at is None:
        return False
    enqueued = job.enqueued_at if job.enqueued_at.tzinfo else job.enqueued_at.replace(tzinfo=UTC)
    if ((now or datetime.now(UTC)) - enqueued).total_seconds() <= after:
        return False
    queue = Queue(job.origin, connection=conn)
    if conn.lpos(queue.key, job.id) is not None:
        return False  # still waiting for a worker: not stranded
    return conn.lpos(IntermediateQueue(queue.key, conn).key, job.id) is not None


def requeue_stranded(conn: redis.Redis, job: Job) -> None:
    """Put a :func:`stranded` job back at the front of its queue (out of the intermediate queue)."""
    queue = Queue(job.origin, connection=conn)
    pipe = conn.pipeline()
    pipe.lrem(IntermediateQueue(queue.key, conn).key, 1, job.id)
    pipe.lpush(queue.key, job.id)
    pipe.execute()

