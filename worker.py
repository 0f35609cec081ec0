"""``tilehouse worker`` / ``python worker.py``: one RQ worker on the ``suggest`` queue, then ``play``.

``--queues play,suggest`` makes a worker reserved for AI seats: it serves ``play`` first and takes a
suggestion only when no AI seat's move waits, so a flood of suggestions never queues ahead of an AI seat's
move there (it waits at most for the one job the worker is running), while a small suggestion is not left
waiting for the other workers when all of them run another client's long searches (each client address
has one AI job in the queues at a time: ``service.fairplay.ai_share``).  ``tilehouse serve --workers N``
(N >= 2), docker-compose.yml and the Kubernetes manifests start one such worker; ``--queues play`` alone
makes one that never takes a suggestion.
Every log line a worker writes about a job carries the job's ``job_id`` and the ``request_id`` of the
request that queued it, RQ's own lines included (``logs.JobLogContext``).

The rule sets and AI engines are imported once, here, at start-up, so no job pays for an import.

Worker class: chosen by measurement (``bench/http.py`` prints the figures again; see WORKER_CLASS below).
RQ's default ``Worker`` forks a work horse per job; ``SimpleWorker`` runs the job in the worker process.
A play job is a few milliseconds of Redis and engine work, so a fork per job costs more than the job.
The job timeout still holds in-process (``SimpleWorker`` uses the same SIGALRM death penalty), and a job
that raises does not hurt the worker; what ``SimpleWorker`` gives up is isolation from a job that crashes
the interpreter or leaks memory -- the engines are pure Python with no native code, and a supervisor
(``tilehouse serve``, compose's restart policy) restarts a dead worker.  A killed worker's job is failed
over within seconds by the other workers (``service.hardening.recovery.RecoveringWorker``, a
``SimpleWorker`` that beats the job's heartbeat while it runs).  ``--fork`` restores the forking
worker.

Faults: a lost Redis does not end the process -- the worker waits for Redis with backoff and starts its
work loop again -- and RQ's scheduler child stops with the worker, even one killed with SIGKILL
(``service.hardening.recovery``: ``run_until_stopped``, ``BoundScheduler``).
"""

from __future__ import annotations

import argparse
import os
import sys
import uuid

from rq import Worker
from rq.worker import BaseWorker

import ai  # noqa: F401 - the AI engines, imported once for every job
import engine  # noqa: F401 - the rule sets, imported once for every job
from ai.ismcts import settle_gc
from service import config, connections, jobs, logs, queues  # noqa: F401 - jobs: the job functions, imported once
from service.hardening import redact
from service.hardening.recovery import (
    RecoveringWorker,
    ResilientWorker,
    quiet_maintenance_logs,
    run_until_stopped,
    worker_options,
)
from service.queues import QUEUE_ORDER


# MEASURED (2026-11-30, this 2-core shared machine): 60 suggestion jobs (ismcts, 1 iteration, Tien Gow
# opening), queued then drained by one burst worker, three alternating rounds each:
#   SimpleWorker (in process): 3.4-3.7 ms per job once warm (20 ms in the first round, which pays the
#                              engines' first-use tables -- a cost a forked horse pays on every job it
#                              touches a table its parent has not);
#   Worker (fork per job):     16.0-16.4 ms per job.
# A fork costs ~12 ms, about four times the job itself, and the AI-job overhead target is 20 ms p50, so
# the worker runs jobs in process.
class TilehouseWorker(logs.JobLogContext, RecoveringWorker):
    """``SimpleWorker`` whose every log line about a job carries the job's id and request id, with
    heartbeats while a job runs, so that a killed worker's job is failed over within seconds
    (``RecoveringWorker``, service.hardening.recovery), and the AI watch in every maintenance round (an AI
    turn whose job was lost moves again though nobody reads its game: ``service.queues.sweep_ai_games``)."""

    maintenance_tasks = (queues.sweep_ai_games,)


class ForkingWorker(logs.JobLogContext, ResilientWorker, Worker):
    """RQ's forking ``Worker`` (``--fork``), with the same log context and maintenance."""

    maintenance_tasks = (queues.sweep_ai_games,)


WORKER_CLASS: type[TilehouseWorker] = TilehouseWorker


def queue_names(spec: str) -> list[str]:
    """``"suggest,play"`` -> the queues in the order given; only tilehouse's queues."""
    names = [n.strip() for n in spec.split(",") if n.strip()]
    unknown = sorted(set(names) - set(QUEUE_ORDER))
    if not names or unknown or len(set(names)) != len(names):
        raise ValueError(f"--queues takes a comma-separated list of {', '.join(QUEUE_ORDER)}, not {spec!r}")
    return names


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="tilehouse worker", description=__doc__.split("\n\n")[0])
    p.add_argument("--url", default=None, help="Redis URL (default: TILEHOUSE_REDIS_URL or the config default)")
    p.add_argument("--burst", action="store_true", help="exit when the queues are empty")
    p.add_argument("--name", default=None, help="worker name (default: RQ's)")
    p.add_argument("--fork", action="store_true", help="fork a work horse per job (RQ's Worker)")
    p.add_argument("--queues", default=",".join(QUEUE_ORDER),
                   help="queues to serve, in order (default: suggest,play; 'play,suggest' is the worker "
                        "reserved for AI seats, 'play' alone one that never takes a suggestion)")
    p.add_argument("--no-scheduler", action="store_true",
                   help="do not run RQ's scheduler (which queues the clocks' timeouts when they are due)")
    args = p.parse_args(sys.argv[1:] if argv is None else argv)
    try:
        names = queue_names(args.queues)
    except ValueError as e:
        p.error(str(e))
    cfg = config.load({"REDIS_URL": args.url} if args.url else None)
    logs.configure_logging(os.environ.get("TILEHOUSE_LOG_LEVEL", config.DEFAULT_LOG_LEVEL))
    redact.install()  # no token or ticket in any line
    # RQ's three lines per maintenance round (every WORKER_MAINTENANCE_SECONDS) only at DEBUG
    quiet_maintenance_logs()
    # the engines' tables are built (imported above): freeze them and keep full collections out of the
    # searches
    settle_gc()
    # the configured Redis, or the master the sentinels name (REDIS_SENTINELS), as the API finds it
    conn = connections.client(cfg)
    queues = [logs.TracingQueue(name, connection=conn) for name in names]
    options = worker_options(cfg)
    name = args.name or uuid.uuid4().hex  # kept by the worker that starts again after a lost Redis

    def make_worker() -> BaseWorker:
        if args.fork:
            return ForkingWorker(queues, connection=conn, name=name, **options)
        return WORKER_CLASS(queues, connection=conn, name=name, abandoned_after=cfg["ABANDONED_JOB_SECONDS"],
                            **options)

    # RQ's scheduler (one per Redis, the others stand by) moves due clock timeouts onto the play queue; a
    # lost Redis ends RQ's work loop, and run_until_stopped starts it again once Redis answers
    run_until_stopped(make_worker, conn, burst=args.burst, with_scheduler=not args.no_scheduler,
                      logging_level=os.environ.get("TILEHOUSE_LOG_LEVEL", config.DEFAULT_LOG_LEVEL))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
