"""AI work on RQ (issue 7 "AI on RQ"; shared/API.md "AI").

Two queues: ``suggest`` (a person waits for the answer) and ``play`` (AI seats); workers listen to
``suggest`` first.  Every job function takes the game id and the version it was queued for and does
nothing when the game has moved on (a stale job answers ``{"outcome": "stale"}``).

Play jobs.  After every applied move (and at creation), when the seat to move is an AI seat, exactly one
play job is queued, with the deterministic id ``play-<game>-<version>`` that the store wrote into the game
in the same compare-and-set as the move -- a second enqueue of the same id is refused by RQ.  The job asks
``ai.decide`` for the seat's move and applies it through the same compare-and-set as a human move.  If it
raises or times out, its failure callback queues the next step of the chain: the same engine once more
(``-retry``), then ``greedy`` (``-greedy``), then ``random`` (``-random``), and points the game's
``ai.job`` at it, so a game never stalls.  A work horse killed outright runs no callback; the game view
notices a dead job for the current version and queues the next step itself (:func:`ensure_ai_progress`).
A play job's result is ``{"outcome", "version", "engine"}``: never the move or the search statistics,
which could show the AI seat's hidden tiles.

Suggestion jobs.  ``ai.decide`` for the asking seat (the AI layer replaces everything hidden from that
seat by a sample before the engine sees it).  An ``ismcts`` suggestion with ``workers: k > 1`` is split
into k part jobs with different seeds and ``ceil(iterations / k)`` iterations each, plus one merge job that
depends on all of them (allowing failures) and combines their root statistics with ``ai.merge``.  Job meta
records the game and the seat, so only that seat's token can read the job.

Seeds: a play job's seed is derived from the game's effective engine seed (never the seed a client asked
for, which could let a player foresee the AI's sampling; see ``service.fairplay.seeds``), the version and
the attempt, so a replay of the same game with the same moves makes the same AI decisions.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import math
import secrets
from collections.abc import Mapping
from typing import Any, cast

import redis
from rq import Queue, get_current_job
from rq.exceptions import AbandonedJobError, DuplicateJobError, NoSuchJobError
from rq.job import Callback, Dependency, Job, JobStatus
from rq.timeouts import JobTimeoutException

import ai
from service import config
from service.fairplay import budget
from service.hardening import recovery
from service.live import clock
from service.store import Game, GameNotFound, NotYourTurn, Store, VersionConflict, jobs_key

SUGGEST = "suggest"
PLAY = "play"
#: the order workers serve queues in: a person waiting comes first
QUEUE_ORDER = (SUGGEST, PLAY)

#: attempt -> (job id suffix, engine override or None for the seat's own engine)
CHAIN: tuple[tuple[str, str | None], ...] = (("", None), ("-retry", None), ("-greedy", "greedy"),
                                             ("-random", "random"))
log = logging.getLogger(__name__)

#: hard limit of the cheap fallback engines, in seconds
FALLBACK_TIMEOUT_SECONDS = 30


@functools.lru_cache(maxsize=1)
def settings() -> dict[str, Any]:
    """The worker side reads configuration from the environment, once."""
    return config.load()


def make_queues(conn: redis.Redis) -> dict[str, Queue]:
    return {name: Queue(name, connection=conn) for name in QUEUE_ORDER}


def derive_seed(*parts: object) -> int:
    digest = hashlib.sha256("/".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def _record_ai_job(conn: redis.Redis, engine_id: str, outcome: str) -> None:
    from service import observability

    observability.record_ai_job(conn, engine_id, outcome)


def record_game(conn: redis.Redis, what: str) -> None:
    from service import observability

    observability.record_game(conn, what)


# --------------------------------------------------------------------------- play jobs

def play_attempt_job_id(game_id: str, version: int, attempt: int) -> str:
    return f"play-{game_id}-{version}{CHAIN[attempt][0]}"


def engine_seed(game: Game) -> int:
    """The seed the game was dealt with (``service.fairplay.seeds``); games stored before issue 16 have
    only ``seed``."""
    return int(game.doc.get("engine_seed", game.doc["seed"]))


def _engine_for(game: Game, seat: int, attempt: int) -> tuple[str, dict[str, Any]]:
    override = CHAIN[attempt][1]
    if override is not None:
        return override, {}
    meta = game.seat_meta(seat)
    return meta["engine"], dict(meta.get("params") or {})


def schedule_play(conn: redis.Redis, game: Game, *, attempt: int = 0, request_id: str | None = None,
                  cfg: Mapping[str, Any] | None = None) -> Job | None:
    """Queue the play job for the AI seat to move in ``game`` (none when a human or nobody is to move)."""
    if game.state.finished or not game.ai_to_move:
        return None
    cfg = cfg or settings()
    job_id = play_attempt_job_id(game.id, game.version, attempt)
    timeout = cfg["AI_JOB_TIMEOUT_SECONDS"] if attempt < 2 else min(cfg["AI_JOB_TIMEOUT_SECONDS"],
                                                                    FALLBACK_TIMEOUT_SECONDS)
    queue = Queue(PLAY, connection=conn)
    try:
        job = queue.enqueue_call(
            play_turn, args=(game.id, game.version, attempt), job_id=job_id, unique=True, timeout=timeout,
            result_ttl=cfg["JOB_RESULT_TTL_SECONDS"], failure_ttl=cfg["JOB_FAILURE_TTL_SECONDS"],
            on_failure=Callback(on_play_failure),
            meta={"kind": "play", "game": game.id, "version": game.version, "attempt": attempt,
                  "request_id": request_id})
    except DuplicateJobError:  # someone (another web process, the watchdog) queued this very job already
        return None
    Store(conn, cfg["GAME_TTL_SECONDS"]).add_job(game.id, job_id)
    return job


#: seconds the record of the play job that ended its game is kept (the game's own document keeps the end)
FINISHED_PLAY_RESULT_TTL_SECONDS = 60


def play_turn(game_id: str, version: int, attempt: int = 0) -> dict[str, Any]:
    """The RQ job that moves the AI seat of ``game_id`` at ``version``."""
    job = get_current_job()
    assert job is not None
    conn = job.connection
    store = Store(conn, settings()["GAME_TTL_SECONDS"])
    try:
        game = store.get(game_id)
    except GameNotFound:
        return _gone(job, {"outcome": "stale", "version": None, "engine": None})
    seat = game.state.to_move if game.version == version else None
    if seat is None or not game.is_ai(seat):
        return {"outcome": "stale", "version": game.version, "engine": None}
    engine_id, params = _engine_for(game, seat, attempt)
    job.meta["engine"] = engine_id
    job.save_meta()
    decision = ai.decide(engine_id, game.state, seat, params,
                         derive_seed(engine_seed(game), version, attempt))
    try:
        after, _ = store.apply_move(game_id, seat, decision.move.id, expected_version=version)
    except (VersionConflict, NotYourTurn, GameNotFound):
        _record_ai_job(conn, engine_id, "stale")
        version_now = store.version(game_id)
        stale = {"outcome": "stale", "version": version_now, "engine": engine_id}
        return stale if version_now is not None else _gone(job, stale)
    _record_ai_job(conn, engine_id, "played")
    if after.state.finished:
        record_game(conn, "finished")
        job.result_ttl = min(int(job.result_ttl or FINISHED_PLAY_RESULT_TTL_SECONDS), FINISHED_PLAY_RESULT_TTL_SECONDS)
    schedule_play(conn, after, request_id=job.meta.get("request_id"))
    clock.schedule(conn, after)  # the human seat now to move: its timeout
    forget_earlier_play_jobs(conn, game_id, version)
    return {"outcome": "played", "version": after.version, "engine": engine_id}


def forget_earlier_play_jobs(conn: redis.Redis, game_id: str, version: int) -> None:
    """Delete the records of the game's play jobs for versions before ``version`` (done, stale or failed:
    nobody needs them once a later move is played), so a game keeps at most the records of its last AI
    move and the next one however long it runs, instead of one per AI move for ``JOB_RESULT_TTL_SECONDS``."""
    prefix = f"play-{game_id}-"
    earlier = []
    for raw in cast(set[bytes], conn.smembers(jobs_key(game_id))):
        job_id = raw.decode()
        if job_id.startswith(prefix):
            digits = job_id[len(prefix):].split("-", 1)[0]
            if digits.isdigit() and int(digits) < version:
                earlier.append(job_id)
    if earlier:
        recovery.delete_jobs(conn, earlier)
        conn.srem(jobs_key(game_id), *earlier)


def _gone(job: Job, result: dict[str, Any]) -> dict[str, Any]:
    """The result of a job whose game is gone (deleted or expired): RQ keeps no record of it, since the
    game's deletion has already removed the job's other keys (service.hardening.recovery.delete_jobs).
    RQ deletes a job of ``result_ttl`` 0 by its stored status, so the status is written back first (the
    deletion may have removed the job's hash while it ran)."""
    job.result_ttl = 0
    job.set_status(JobStatus.STARTED)
    return result


def on_play_failure(job: Job, connection: redis.Redis, exc_type: type[BaseException] | None,
                    exc_value: BaseException | None, tb: object) -> None:
    """RQ failure callback of a play job: queue the next step of the fallback chain."""
    outcome = "failed"
    if exc_type is not None and issubclass(exc_type, JobTimeoutException):
        outcome = "timeout"
    elif exc_type is not None and issubclass(exc_type, AbandonedJobError):
        outcome = "abandoned"  # its worker was killed (service.hardening.recovery)
    _record_ai_job(connection, str(job.meta.get("engine") or "unknown"), outcome)
    _next_attempt(connection, job.meta["game"], int(job.meta["version"]), int(job.meta["attempt"]),
                  job.meta.get("request_id"))


def _next_attempt(conn: redis.Redis, game_id: str, version: int, attempt: int,
                  request_id: str | None) -> Job | None:
    store = Store(conn, settings()["GAME_TTL_SECONDS"])
    try:
        game = store.get(game_id)
    except GameNotFound:
        return None
    if game.version != version:
        return None
    nxt = attempt + 1
    if nxt >= len(CHAIN):
        # ``random`` itself failed: that is a bug in a rule set, not bad luck; log it and stop here
        # rather than queue jobs forever
        log.error("game %s version %s: every AI fallback failed", game_id, version)
        return None
    job_id = play_attempt_job_id(game_id, version, nxt)
    if not store.set_ai_job(game_id, version, job_id):
        return None
    game.ai_job = job_id
    return schedule_play(conn, game, attempt=nxt, request_id=request_id)


_DEAD = {JobStatus.FAILED, JobStatus.CANCELED, JobStatus.STOPPED}


def ensure_ai_progress(conn: redis.Redis, game: Game, cfg: Mapping[str, Any] | None = None) -> bool:
    """The watchdog behind "a game never stalls": if the AI is to move but the job for this version is gone,
    dead with no successor (Redis lost it), or started by a worker that stopped beating its heartbeat (the
    worker was killed: service.hardening.recovery), queue the next step.  True when it queued one."""
    if not game.ai_job or game.state.finished or not game.ai_to_move:
        return False
    cfg = cfg or settings()
    try:
        job = Job.fetch(game.ai_job, connection=conn)
        status = job.get_status(refresh=False)
    except NoSuchJobError:
        status = None
    if status == JobStatus.STARTED and recovery.abandoned(job, cfg["ABANDONED_JOB_SECONDS"]):
        # its worker died: RQ's abandoned-job handling runs the failure callback, which queues the next step
        recovery.fail_over(conn, job)
        return True
    attempt = next((i for i, (suffix, _) in enumerate(CHAIN) if suffix and game.ai_job.endswith(suffix)), 0)
    if status is None:
        return schedule_play(conn, game, attempt=attempt, cfg=cfg) is not None
    if status in _DEAD:
        return _next_attempt(conn, game.id, game.version, attempt, None) is not None
    return False


# --------------------------------------------------------------------------- suggestions

def suggest(game_id: str, version: int, seat: int, engine_id: str, params: Mapping[str, Any],
            seed: int, part: bool = False) -> Any:
    """A move suggestion for ``seat``; ``part=True`` returns the raw ``ai.Decision`` for a merge job."""
    job = get_current_job()
    assert job is not None
    store = Store(job.connection, settings()["GAME_TTL_SECONDS"])
    try:
        game = store.get(game_id)
    except GameNotFound:
        return _gone(job, {"outcome": "stale", "version": None})
    if game.version != version or game.state.to_move != seat:
        return {"outcome": "stale", "version": game.version}
    decision = ai.decide(engine_id, game.state, seat, dict(params), seed)
    budget.refund_unused(job.connection, job.meta.get("budget"), float((decision.stats or {}).get("elapsed_ms", 0)))
    _record_ai_job(job.connection, engine_id, "suggested")
    if part:
        return decision
    return decision_json(decision, engine_id)


def merge_suggestion(game_id: str, version: int, engine_id: str, part_ids: list[str]) -> dict[str, Any]:
    """Merge the root statistics of the finished parts of a split suggestion."""
    job = get_current_job()
    assert job is not None
    decisions = []
    stale = None
    for pid in part_ids:
        part = Job.fetch(pid, connection=job.connection)
        value = part.return_value()
        if isinstance(value, dict):
            stale = value
        elif value is not None:
            decisions.append(value)
    if not decisions:
        if stale is not None:
            return stale
        raise RuntimeError("every part of the suggestion failed")
    game = Store(job.connection, settings()["GAME_TTL_SECONDS"]).get(game_id)
    return decision_json(ai.merge(decisions, game.state), engine_id)


def decision_json(decision: Any, engine_id: str) -> dict[str, Any]:
    return {"outcome": "suggested", "move": decision.move.to_dict(), "engine": engine_id,
            "stats": dict(decision.stats or {})}


def enqueue_suggestion(conn: redis.Redis, game: Game, seat: int, engine_id: str, params: dict[str, Any],
                       workers: int, seed: int, request_id: str | None,
                       cfg: Mapping[str, Any] | None = None, charged: Mapping[str, Any] | None = None) -> Job:
    """Queue a suggestion (split into parts for ``workers > 1``).  ``charged``: what the AI budget charged
    each part (``service.fairplay.budget``), kept in the part's meta so that the worker gives back what the
    search did not use."""
    cfg = cfg or settings()
    queue = Queue(SUGGEST, connection=conn)
    base = f"suggest-{game.id}-{secrets.token_hex(8)}"
    meta = {"kind": "suggestion", "game": game.id, "version": game.version, "seat": seat,
            "engine": engine_id, "request_id": request_id, "budget": dict(charged) if charged else None}
    common = {"timeout": cfg["AI_JOB_TIMEOUT_SECONDS"], "result_ttl": cfg["JOB_RESULT_TTL_SECONDS"],
              "failure_ttl": cfg["JOB_FAILURE_TTL_SECONDS"]}
    store = Store(conn, cfg["GAME_TTL_SECONDS"])
    if workers == 1:
        job = queue.enqueue_call(suggest, args=(game.id, game.version, seat, engine_id, params, seed),
                                 job_id=base, meta=meta, **common)
        store.add_job(game.id, base)
        return job
    part_params = dict(params)
    if "iterations" in part_params:
        part_params["iterations"] = max(1, math.ceil(part_params["iterations"] / workers))
    parts = []
    for i in range(workers):
        pid = f"{base}-p{i}"
        parts.append(queue.enqueue_call(
            suggest, args=(game.id, game.version, seat, engine_id, part_params, derive_seed(seed, i), True),
            job_id=pid, meta={**meta, "part_of": base}, **common))
        store.add_job(game.id, pid)
    job = queue.enqueue_call(merge_suggestion, args=(game.id, game.version, engine_id, [p.id for p in parts]),
                             job_id=base, meta={**meta, "parts": [p.id for p in parts]},
                             depends_on=Dependency(jobs=parts, allow_failure=True), at_front=True, **common)
    store.add_job(game.id, base)
    return job
