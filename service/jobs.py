"""The RQ job functions: the entry points the workers run, each a thin call into a use case
(:mod:`service.tables`) or the AI (suggestions).  Which job goes on which queue, with which id, is
:mod:`service.queues`.

Every job takes the game id and the version it was queued for and does nothing when the game has moved on
(a stale job answers ``{"outcome": "stale"}``).  A play job's result is ``{"outcome", "version",
"engine"}``: never the move or the search statistics, which could show the AI seat's hidden tiles.

Suggestion jobs.  ``ai.decide`` for the asking seat (the AI layer replaces everything hidden from that seat
by a sample before the engine sees it); the parts of a split suggestion return the raw ``ai.Decision`` and
the merge job combines their root statistics with ``ai.merge``.

Seeds: a play job's seed is derived from the game's effective engine seed (never the seed a client asked
for, which could let a player foresee the AI's sampling; see ``service.fairplay.seeds``), the version and
the attempt, so a replay of the same game with the same moves makes the same AI decisions.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import redis
from rq import get_current_job
from rq.exceptions import AbandonedJobError
from rq.job import Job, JobStatus
from rq.timeouts import JobTimeoutException

from service import metrics, queues, tables
from service.fairplay import budget
from service.store import Store


def _job() -> Job:
    job = get_current_job()
    assert job is not None
    return job


def _context(job: Job) -> tables.Context:
    cfg = queues.settings()
    rid = job.meta.get("request_id")
    return tables.Context(Store(job.connection, cfg["GAME_TTL_SECONDS"]), cfg,
                          rid if isinstance(rid, str) else None)


def play_turn(game_id: str, version: int, attempt: int = 0) -> dict[str, Any]:
    """The AI seat of ``game_id`` at ``version`` moves (step ``attempt`` of the fallback chain)."""
    job = _job()

    def started(engine_id: str) -> None:
        job.meta["engine"] = engine_id
        job.save_meta()

    def searched(elapsed_ms: float) -> None:
        budget.refund_unused(job.connection, job.meta.get("budget"), elapsed_ms)

    ctx = _context(job)
    result = tables.ai_turn(ctx, game_id, version, attempt, started, searched)
    if result["version"] is None:
        return _gone(job, result)
    if result["outcome"] == "played":
        if ctx.store.finished([game_id]).get(game_id):
            # the move that ended the game: its record would outlive everything anyone reads of it (the
            # game's own document holds the end, and the view no longer names the job), so RQ keeps none,
            # and the game's job list forgets it
            job.result_ttl = 0
            ctx.store.forget_job(game_id, job.id)
        queues.forget_earlier_play_jobs(job.connection, game_id, version)
    return result


def release_play(game_id: str, version: int) -> dict[str, Any]:
    """The pace job of a table with no person at it (:func:`service.queues.schedule_pace`): the pace has
    passed, so the play job of ``game_id`` at ``version`` is queued now."""
    job = _job()
    queued = queues.release_play(job.connection, game_id, version)
    return {"outcome": "released" if queued is not None else "stale", "version": version}


def _gone(job: Job, result: dict[str, Any]) -> dict[str, Any]:
    """The result of a job whose game is gone (deleted or expired): RQ keeps no record of it, since the
    game's deletion has already removed the job's other keys (``queues.delete_jobs``).  RQ deletes a job of
    ``result_ttl`` 0 by its stored status, so the status is written back first (the deletion may have
    removed the job's hash while it ran)."""
    job.result_ttl = 0
    job.set_status(JobStatus.STARTED)
    return result


def on_play_failure(job: Job, connection: redis.Redis, exc_type: type[BaseException] | None,
                    exc_value: BaseException | None, tb: object) -> None:
    """RQ failure callback of a play job: count the failure and queue the next step of the fallback chain."""
    outcome = "failed"
    if exc_type is not None and issubclass(exc_type, JobTimeoutException):
        outcome = "timeout"
    elif exc_type is not None and issubclass(exc_type, AbandonedJobError):
        outcome = "abandoned"  # its worker was killed (service.hardening.recovery)
    metrics.record_ai_job(connection, str(job.meta.get("engine") or "unknown"), outcome)
    queues.next_attempt(connection, job.meta["game"], int(job.meta["version"]), int(job.meta["attempt"]),
                        job.meta.get("request_id"))


def timeout(game_id: str, version: int) -> dict[str, Any]:
    """The scheduled job of a clock: carry out the timeout of the seat to move at ``version``."""
    return tables.time_out(_context(_job()), game_id, version)


def suggest(game_id: str, version: int, seat: int, engine_id: str, params: Mapping[str, Any],
            seed: int, part: bool = False) -> Any:
    """A move suggestion for ``seat``; ``part=True`` returns the raw ``ai.Decision`` for a merge job."""
    job = _job()
    found = tables.suggestion(_context(job), game_id, version, seat, engine_id, params, seed, job.meta.get("budget"))
    return found if part or isinstance(found, dict) else tables.decision_json(found, engine_id)


def merge_suggestion(game_id: str, version: int, engine_id: str, part_ids: list[str]) -> dict[str, Any]:
    """Merge the root statistics of the finished parts of a split suggestion."""
    job = _job()
    return tables.merged_suggestion(_context(job), game_id, engine_id, queues.results(job.connection, part_ids))
