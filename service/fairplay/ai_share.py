"""AI work served fairly across clients: at most one AI job of a client address in the queues at a time.

The queues are first come, first served, so a client that queues much AI work -- twenty all-AI games at
the largest budgets, a suggestion flood from many tokens -- would have every worker busy with its jobs
while a bystander's job waited behind all of them.  Here each client address has a *chain*: every AI job
queued for it (its games' play jobs -- the client of an AI seat is the address that created the game --
and its suggestions) depends on the one queued for it before (RQ's own job dependencies, with
``allow_failure``: a failed or abandoned job releases the next as a finished one does).  RQ keeps the
rest *deferred*, off the queues, and queues the next when one ends.  So

* one client's jobs run one at a time, in the order they were asked for, on one worker at most, however
  many it queues; its own games share its one place (its cost, not anyone else's);
* another client's job waits at most for the one job of each other client that is ahead of it in the
  queue, never for a client's whole backlog.

Chosen over per-client queues (workers would have to learn a set of queues that changes with the clients)
and over weighted round-robin (a dispatcher process of our own): a dependency is RQ's machinery, it
survives worker restarts, and the cap is exact because the chain is.  The tail of each chain is the key
``service.keys.ai_share_key(<address>)``, set with ``SET ... GET`` in one step, so concurrent API processes
and workers extend one chain.  The link is made only to a job still waiting or running (RQ queues a job
at once whose dependency is done, failed or gone).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import redis
from rq import Queue
from rq.job import Dependency, Job, JobStatus
from rq.registry import DeferredJobRegistry

from service.keys import ai_share_key

#: statuses of a job that no longer holds its client's place
_OVER = {JobStatus.FINISHED, JobStatus.FAILED, JobStatus.CANCELED, JobStatus.STOPPED}


def _status(conn: redis.Redis, job_id: str) -> str | None:
    """A job's stored status in one command, None when its record is gone.  Not ``Job.fetch`` then
    ``get_status``: a game's deletion (or RQ's expiry) may remove the record between the two reads, and
    ``get_status`` then raises instead of saying it is gone."""
    raw = conn.hget(Job.key_for(job_id), "status")
    if raw is None:
        return None
    return raw.decode() if isinstance(raw, bytes) else str(raw)


def link(conn: redis.Redis, cfg: Mapping[str, Any], client: str, job_id: str) -> Dependency | None:
    """Make ``job_id`` the tail of ``client``'s chain: the dependency on the job before it while that one
    still waits or runs, else None (``job_id`` may be queued at once)."""
    ttl = int(cfg["AI_JOB_TIMEOUT_SECONDS"]) * 4 + 60
    previous = conn.set(ai_share_key(client), job_id, ex=ttl, get=True)
    if previous is None:
        return None
    prev_id = previous.decode() if isinstance(previous, bytes) else str(previous)
    if prev_id == job_id:
        return None
    status = _status(conn, prev_id)
    if status is None or status in _OVER or waits_on(conn, prev_id, job_id):
        return None
    return Dependency(jobs=[prev_id], allow_failure=True)


#: how far back along a chain :func:`waits_on` looks (a client holds one job in the queues, so its chain is
#: as long as the AI work it has asked for and not yet had done)
CHAIN_LOOKBACK = 64


def waits_on(conn: redis.Redis, job_id: str, target: str, limit: int = CHAIN_LOOKBACK) -> bool:
    """Does ``job_id`` wait on ``target``, directly or through the jobs before it in its chain?  A job queued
    again under the id of one that Redis lost (the watchdog's ``schedule_play``: a play job's id is its game
    and version) may still have the chain's later jobs waiting on that id: linked behind the chain's tail,
    it would wait on a job that waits on it, and neither would ever run."""
    current = job_id
    for _ in range(limit):
        # RQ's own key of a job's dependencies (``Job.dependencies_key``), without building a Job
        deps = conn.smembers(f"{Job.redis_job_namespace_prefix}:{current}:dependencies")
        names = {d.decode() if isinstance(d, bytes) else str(d) for d in deps}
        if target in names:
            return True
        if not names:
            return False
        current = min(names)
    return False


def release_if_orphaned(conn: redis.Redis, job: Job) -> bool:
    """Queue ``job`` now if it is deferred but nothing it waits for is still waiting or running (its
    dependency ended, or is gone, without releasing it): the watchdog's guard that a chain never stalls.
    True when it queued the job."""
    if job.get_status(refresh=False) != JobStatus.DEFERRED:
        return False
    for dep_id in job.dependency_ids:
        status = _status(conn, dep_id)
        if status is not None and status not in _OVER:
            return False
    # RQ re-checks a job's dependencies when it is queued (a vanished one counts as pending) and queues
    # only a job that is not deferred: drop them, and take it out of the deferred registry
    conn.delete(job.dependencies_key)
    job._dependency_ids = []
    DeferredJobRegistry(job.origin, connection=conn).remove(job)
    job.set_status(JobStatus.QUEUED)
    Queue(job.origin, connection=conn).enqueue_job(job)
    return True


def creator_of(doc: Mapping[str, Any], game_id: str) -> str:
    """The client whose AI work a game's AI seats are: its creator's address (a game stored before games
    kept their creator is a client of its own)."""
    creator = doc.get("creator")
    return str(creator) if creator else f"game:{game_id}"
