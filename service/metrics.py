"""The service's counters kept in Redis: AI job outcomes and games created and finished.

They are counted by whichever process does the work -- API processes and RQ workers, possibly on other
machines -- so they live in Redis hashes (:data:`service.keys.AI_JOBS_METRIC_KEY`,
:data:`service.keys.GAMES_METRIC_KEY`), one key each so HINCRBY stays atomic across all of them; the
metrics endpoint (:mod:`service.observability`) reads them at scrape time.  No Flask: workers count too.
"""

from __future__ import annotations

import logging

import redis

from service.keys import AI_JOBS_METRIC_KEY, GAMES_METRIC_KEY

GAME_EVENTS = ("created", "finished")

_metrics_log = logging.getLogger("tilehouse.metrics")


def record_ai_job(conn: redis.Redis, engine_id: str, outcome: str) -> None:
    """Count one AI job of ``engine_id`` that ended with ``outcome`` (e.g. ``played``, ``failed``).

    A Redis error is logged, not raised: a lost count must never fail the move it describes."""
    if "|" in engine_id or "|" in outcome:
        raise ValueError("engine id and outcome must not contain '|'")
    try:
        conn.hincrby(AI_JOBS_METRIC_KEY, f"{engine_id}|{outcome}", 1)
    except redis.RedisError as exc:
        _metrics_log.warning("could not count AI job", extra={"engine": engine_id, "outcome": outcome,
                                                              "error": str(exc)})


def record_game(conn: redis.Redis, event: str) -> None:
    """Count a game ``created`` or ``finished``. A Redis error is logged, not raised."""
    if event not in GAME_EVENTS:
        raise ValueError(f"game event must be one of {GAME_EVENTS}, not {event!r}")
    try:
        conn.hincrby(GAMES_METRIC_KEY, event, 1)
    except redis.RedisError as exc:
        _metrics_log.warning("could not count game", extra={"event": event, "error": str(exc)})
