"""The service's RQ queues (an adapter): which job goes on which queue, with which id, limits and meta.

Two queues: ``suggest`` (a person waits for the answer) and ``play`` (AI seats and clock timeouts); workers
listen to ``suggest`` first.  The job functions themselves are the entry points of :mod:`service.jobs`,
named here by their dotted path (RQ imports them in the worker), so that this module never imports the
use cases that call it.

Play jobs.  When the seat to move is an AI seat, exactly one play job is queued, with the deterministic id
``play-<game>-<version>`` (:func:`service.keys.play_job_id`) that the store wrote into the game in the same
compare-and-set as the change -- a second enqueue of the same id is refused by RQ.  If it raises or times
out, its failure callback queues the next step of the chain (:data:`CHAIN`): the same engine once more
(``-retry``), then ``greedy`` (``-greedy``), then ``random`` (``-random``), and points the game's ``ai.job``
at it, so a game never stalls.  A work horse killed outright runs no callback; the game view notices a dead
job for the current version and queues the next step itself (:func:`ensure_ai_progress`).

The AI watch.  Nobody may be reading an all-AI table, and a job can be lost where no callback runs: a play
job that commits its move just as Redis goes away (the next job's enqueue never reaches Redis, and the
abandoned job's failure callback then finds the game moved on), or a job released by a chain whose
predecessor's end Redis never recorded.  So every scheduled AI turn puts its game on the watch
(:data:`service.keys.AI_WATCH_KEY`, scored by the time), and each maintenance round of the workers (one
worker a round, under :data:`service.keys.AI_WATCH_LOCK_KEY`) runs the game view's watchdog,
:func:`ensure_ai_progress`, for the games whose AI turn was last seen more than ``ABANDONED_JOB_SECONDS``
ago (:func:`sweep_ai_games`; ``tilehouse_ai_jobs_total{outcome="lost"}`` counts the turns it moves again),
and drops the games whose AI turn is over.

The pace of a table with no person at it.  When every seat is an AI seat, the play job of a move after
the first is not queued at once: a scheduled *pace job*, ``pace-<game>-<version>``
(:func:`service.keys.pace_job_id`), queues it ``AI_PACE_MS`` later (default 4 s; 0: no pause), through
the same :func:`schedule_play` as any other, so it is charged and shared like every AI job.  Such a table
then plays at the pace of people rather than of the workers: a spectator can follow it, and one all-AI
table costs a bounded share of the workers and a bounded number of Redis bytes an hour (docs/deployment.md,
"Memory").  The game's ``ai.job`` names the play job all along; ``GET /v1/jobs`` answers ``queued`` for it
while its pace job waits.

Clock timeouts.  Every change that leaves a clocked seat to move schedules one job, ``clock-<game>-<version>``,
for the moment its time runs out (``Queue.enqueue_at``; RQ's scheduler, started by ``worker.py``, moves it
to the ``play`` queue when due, checking once a second).

Suggestion jobs.  An ``ismcts`` suggestion with ``workers: k > 1`` is split into k part jobs with different
seeds and ``ceil(iterations / k)`` iterations each, plus one merge job that depends on all of them
(allowing failures).  The parts run one after another, each behind the one before, so that one client's
AI work never holds more than one worker (``service.fairplay.ai_share``): k independent searches merged,
not a faster one.  Job meta records the game and the seat, so only that seat's token can read the job.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import math
import secrets
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, cast

import redis
from rq import Queue
from rq.exceptions import DuplicateJobError, NoSuchJobError
from rq.job import Callback, Dependency, Job, JobStatus

from service import config, metrics
from service.errors import GameNotFound
from service.fairplay import ai_share, budget
from service.hardening import recovery
from service.keys import (
    AI_WATCH_KEY,
    AI_WATCH_LOCK_KEY,
    jobs_key,
    pace_job_id,
    play_job_id,
    suggestion_job_id,
    timeout_job_id,
)
from service.live import clock
from service.store import Game, Store

SUGGEST = "suggest"
PLAY = "play"
#: the order workers serve queues in: a person waiting comes first
QUEUE_ORDER = (SUGGEST, PLAY)

#: attempt -> (job id suffix, engine override or None for the seat's own engine)
CHAIN: tuple[tuple[str, str | None], ...] = (("", None), ("-retry", None), ("-greedy", "greedy"),
                                             ("-random", "random"))
#: hard limit of the cheap fallback engines, in seconds
FALLBACK_TIMEOUT_SECONDS = 30
#: the step of CHAIN an AI seat moves with while its creator's AI budget is spent
GREEDY_ATTEMPT = 2
#: hard limit of one timeout job, in seconds (a greedy move takes milliseconds)
TIMEOUT_JOB_SECONDS = 30

#: the job functions (service/jobs.py), by name: RQ imports them where the job runs
PLAY_TURN = "service.jobs.play_turn"
RELEASE_PLAY = "service.jobs.release_play"
ON_PLAY_FAILURE = "service.jobs.on_play_failure"
TIMEOUT = "service.jobs.timeout"
SUGGEST_JOB = "service.jobs.suggest"
MERGE_SUGGESTION = "service.jobs.merge_suggestion"

log = logging.getLogger(__name__)


@functools.lru_cache(maxsize=1)
def settings() -> dict[str, Any]:
    """The worker side reads configuration from the environment, once."""
    return config.load()


def make_queues(conn: redis.Redis) -> dict[str, Queue]:
    return {name: Queue(name, connection=conn) for name in QUEUE_ORDER}


def derive_seed(*parts: object) -> int:
    """A seed made from ``parts``, below 2^53 like every seed the server makes (an exact JSON number anywhere)."""
    digest = hashlib.sha256("/".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 11


def engine_seed(game: Game) -> int:
    """The seed the game was dealt with (``service.fairplay.seeds``); games stored before the effective seed
    existed have only ``seed``."""
    return int(game.doc.get("engine_seed", game.doc["seed"]))


def play_attempt_job_id(game_id: str, version: int, attempt: int) -> str:
    return play_job_id(game_id, version, CHAIN[attempt][0])


def engine_for(game: Game, seat: int, attempt: int) -> tuple[str, dict[str, Any]]:
    """The engine and parameters of ``attempt`` of the chain for ``seat``."""
    override = CHAIN[attempt][1]
    if override is not None:
        return override, {}
    meta = game.seat_meta(seat)
    return meta["engine"], dict(meta.get("params") or {})


def paced(game: Game, cfg: Mapping[str, Any]) -> bool:
    """Whether the AI seat to move waits for the table's pace: every seat is an AI seat, the pace is on,
    and a move has been played (the first move of a game starts at once)."""
    return (int(cfg.get("AI_PACE_MS") or 0) > 0 and game.doc.get("last_move") is not None
            and all(meta["kind"] == "ai" for meta in game.doc["seats"]))


def schedule_play(conn: redis.Redis, game: Game, *, attempt: int = 0, request_id: str | None = None,
                  cfg: Mapping[str, Any] | None = None, released: bool = False) -> Job | None:
    """Queue the play job for the AI seat to move in ``game`` (none when a human or nobody is to move).
    At a paced table (:func:`paced`) the first step is the pace job instead, which calls this again with
    ``released`` when the pace has passed."""
    if game.state.finished or not game.ai_to_move:
        return None
    cfg = cfg or settings()
    watch(conn, game.id, cfg)
    creator = ai_share.creator_of(game.doc, game.id)
    seat = game.state.to_move
    assert seat is not None  # ai_to_move
    steps = [attempt, GREEDY_ATTEMPT] if attempt == 0 else [attempt]
    if any(Job.exists(play_attempt_job_id(game.id, game.version, a), connection=conn) for a in steps):
        return None  # queued already (another web process, the watchdog)
    if attempt == 0 and not released and paced(game, cfg):
        return schedule_pace(conn, game, cfg)
    cheap, charged = False, None
    if attempt == 0:
        charged = budget.charge_play(conn, cfg, creator, game.seat_meta(seat).get("params") or {})
        if charged is None:
            attempt, cheap = GREEDY_ATTEMPT, True  # the creator's AI budget of this minute is spent
    job_id = play_attempt_job_id(game.id, game.version, attempt)
    timeout = cfg["AI_JOB_TIMEOUT_SECONDS"] if attempt < 2 else min(cfg["AI_JOB_TIMEOUT_SECONDS"],
                                                                    FALLBACK_TIMEOUT_SECONDS)
    queue = Queue(PLAY, connection=conn)
    after = ai_share.link(conn, cfg, creator, job_id)
    try:
        # RQ refuses unique=True with a dependency; the check above and the job's own version check (a
        # second run of the same move finds it stale) stand in for it then
        job = queue.enqueue_call(
            PLAY_TURN, args=(game.id, game.version, attempt), job_id=job_id, unique=after is None, timeout=timeout,
            result_ttl=cfg["JOB_RESULT_TTL_SECONDS"], failure_ttl=cfg["JOB_FAILURE_TTL_SECONDS"],
            on_failure=Callback(ON_PLAY_FAILURE), depends_on=after,
            meta={"kind": "play", "game": game.id, "version": game.version, "attempt": attempt,
                  "request_id": request_id, "budget": charged})
    except DuplicateJobError:  # someone (another web process, the watchdog) queued this very job already
        budget.refund_unused(conn, charged, 0.0)  # that job carries its own charge: this one goes back
        return None
    store = Store(conn, cfg["GAME_TTL_SECONDS"])
    store.add_job(game.id, job_id)
    if cheap:
        store.set_ai_job(game.id, game.version, job_id)
        game.ai_job = job_id
    return job


def schedule_pace(conn: redis.Redis, game: Game, cfg: Mapping[str, Any]) -> Job | None:
    """Schedule the pace job that queues ``game``'s play job ``AI_PACE_MS`` from now (none when it is
    scheduled already).  It keeps no record once it has run (``result_ttl`` 0): the play job it queues is
    the one clients follow."""
    job_id = pace_job_id(game.id, game.version)
    # RQ's scheduled registry counts whole seconds (rounding down): round up, so that it is never early
    due_s = math.ceil(time.time() + int(cfg["AI_PACE_MS"]) / 1000)
    try:
        # ``ttl``: a pace job nobody ran (no scheduler) expires, and the game view's watchdog schedules anew
        job = Queue(PLAY, connection=conn).enqueue_at(
            datetime.fromtimestamp(due_s, UTC), RELEASE_PLAY, game.id, game.version, job_id=job_id, unique=True,
            ttl=max(1, due_s - int(time.time())) + int(cfg["ABANDONED_JOB_SECONDS"]) * 4,
            job_timeout=TIMEOUT_JOB_SECONDS, result_ttl=0, failure_ttl=cfg["JOB_FAILURE_TTL_SECONDS"],
            meta={"kind": "play", "game": game.id, "version": game.version, "attempt": 0, "pace": True})
    except DuplicateJobError:
        return None
    Store(conn, cfg["GAME_TTL_SECONDS"]).add_job(game.id, job_id)
    return job


def release_play(conn: redis.Redis, game_id: str, version: int, cfg: Mapping[str, Any] | None = None) -> Job | None:
    """The pace job's work: queue the play job of ``game_id`` at ``version`` (nothing when the game moved
    on, is gone, or the play job is queued already)."""
    cfg = cfg or settings()
    try:
        game = Store(conn, cfg["GAME_TTL_SECONDS"]).get(game_id)
    except GameNotFound:
        return None
    if game.version != version:
        return None
    try:
        return schedule_play(conn, game, cfg=cfg, released=True)
    finally:
        # the pace job keeps no record once it has run: the game's job list forgets it too
        conn.srem(jobs_key(game_id), pace_job_id(game_id, version))


def next_attempt(conn: redis.Redis, game_id: str, version: int, attempt: int, request_id: str | None,
                 cfg: Mapping[str, Any] | None = None) -> Job | None:
    """Queue the step of the chain after ``attempt`` for ``game_id`` at ``version`` (nothing when the game
    moved on or the chain is spent)."""
    cfg = cfg or settings()
    store = Store(conn, cfg["GAME_TTL_SECONDS"])
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
    return schedule_play(conn, game, attempt=nxt, request_id=request_id, cfg=cfg)


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
    if status == JobStatus.QUEUED and recovery.stranded(conn, job, cfg["ABANDONED_JOB_SECONDS"]):
        # taken off its queue by a worker that a Redis failover cut off before it started the job
        recovery.requeue_stranded(conn, job)
        return True
    if status == JobStatus.DEFERRED:
        return ai_share.release_if_orphaned(conn, job)  # waits in its creator's chain, unless orphaned
    if status == JobStatus.READY_TO_ENQUEUE:
        return recovery.enqueue_if_ready(conn, job)  # released by its chain, left off the queue by RQ
    attempt = next((i for i, (suffix, _) in enumerate(CHAIN) if suffix and game.ai_job.endswith(suffix)), 0)
    if status is None:
        return schedule_play(conn, game, attempt=attempt, cfg=cfg) is not None
    if status in _DEAD:
        return next_attempt(conn, game.id, game.version, attempt, None, cfg) is not None
    return False


def watch(conn: redis.Redis, game_id: str, cfg: Mapping[str, Any], now_ms: int | None = None) -> None:
    """Put ``game_id`` on the AI watch (or mark it seen now), for :func:`sweep_ai_games`."""
    stamp = int(time.time() * 1000) if now_ms is None else now_ms
    with conn.pipeline(transaction=False) as pipe:
        pipe.zadd(AI_WATCH_KEY, {game_id: stamp})
        pipe.expire(AI_WATCH_KEY, int(cfg["GAME_TTL_SECONDS"]))
        pipe.execute()


#: KEYS: the AI watch.  ARGV: game id, the score it was read with.  Takes the game off the watch unless a
#: new AI turn put it back meanwhile (its score then differs)
UNWATCH_LUA = """
if redis.call('ZSCORE', KEYS[1], ARGV[1]) == ARGV[2] then
  return redis.call('ZREM', KEYS[1], ARGV[1])
end
return 0
"""

#: the most games one maintenance round looks at (the longest unseen first; the rest wait a round)
SWEEP_BATCH = 200


def sweep_ai_games(conn: redis.Redis, cfg: Mapping[str, Any] | None = None, now_ms: int | None = None,
                   lock: bool = True) -> int:
    """One round of the AI watch (module docstring): for every watched game whose AI turn was last seen
    more than ``ABANDONED_JOB_SECONDS`` ago, :func:`ensure_ai_progress` (and the game marked seen), or the
    game dropped from the watch when its AI turn is over or it is gone.  ``lock``: only the worker that
    takes this round's lock sweeps.  The number of games it queued a job for."""
    cfg = cfg or settings()
    if lock and not conn.set(AI_WATCH_LOCK_KEY, "1", nx=True,
                             px=max(500, int(cfg["WORKER_MAINTENANCE_SECONDS"]) * 1000 - 500)):
        return 0
    now = int(time.time() * 1000) if now_ms is None else now_ms
    stale = now - int(float(cfg["ABANDONED_JOB_SECONDS"]) * 1000)
    entries = cast(list[tuple[bytes, float]], conn.zrangebyscore(AI_WATCH_KEY, "-inf", stale, start=0,
                                                                 num=SWEEP_BATCH, withscores=True))
    store = Store(conn, cfg["GAME_TTL_SECONDS"])
    unwatch = conn.register_script(UNWATCH_LUA)
    queued = 0
    for raw, score in entries:
        game_id = raw.decode()
        try:
            game = store.get(game_id)
        except GameNotFound:
            game = None
        if game is None or game.state.finished or not game.ai_to_move:
            unwatch(keys=[AI_WATCH_KEY], args=[game_id, int(score)])
            continue
        if ensure_ai_progress(conn, game, cfg):
            queued += 1
            seat = game.state.to_move
            engine_id = game.seat_meta(seat).get("engine") if seat is not None else None
            metrics.record_ai_job(conn, str(engine_id or "unknown"), "lost")
            log.warning("an AI turn had no live job: queued its next step",
                        extra={"game": game_id, "version": game.version})
        conn.zadd(AI_WATCH_KEY, {game_id: now}, xx=True, gt=True)
    return queued


def schedule_timeout(conn: redis.Redis, game: Game, cfg: Mapping[str, Any] | None = None) -> Job | None:
    """Schedule the timeout job of ``game``'s running clock (none when no clock runs)."""
    due = clock.deadline(game.doc)
    if due is None or game.state.finished:
        return None
    cfg = cfg or settings()
    job_id = timeout_job_id(game.id, game.version)
    # RQ's scheduled registry counts whole seconds (rounding down): round up, so that it is never early
    due_s = math.ceil(due / 1000)
    try:
        # ``ttl``: a job whose game moved on before it was due still expires (with its result's time, after it)
        job = Queue(PLAY, connection=conn).enqueue_at(
            datetime.fromtimestamp(due_s, UTC), TIMEOUT, game.id, game.version, job_id=job_id, unique=True,
            ttl=max(1, due_s - int(time.time())) + int(cfg["JOB_RESULT_TTL_SECONDS"]),
            job_timeout=TIMEOUT_JOB_SECONDS, result_ttl=cfg["JOB_RESULT_TTL_SECONDS"],
            failure_ttl=cfg["JOB_FAILURE_TTL_SECONDS"],
            meta={"kind": "clock", "game": game.id, "version": game.version})
    except DuplicateJobError:
        return None
    Store(conn, cfg["GAME_TTL_SECONDS"]).add_job(game.id, job_id)
    return job


def enqueue_suggestion(conn: redis.Redis, game: Game, seat: int, engine_id: str, params: dict[str, Any],
                       workers: int, seed: int, request_id: str | None,
                       cfg: Mapping[str, Any] | None = None, charged: Mapping[str, Any] | None = None,
                       share: str | None = None) -> Job:
    """Queue a suggestion (split into parts for ``workers > 1``).  ``charged``: what the AI budget charged
    each part (``service.fairplay.budget``), kept in the part's meta so that the worker gives back what the
    search did not use.  ``share``: the client whose share of the AI work it is (``service.fairplay.ai_share``;
    the parts of a split search run one after another, after the client's job before them)."""
    cfg = cfg or settings()
    queue = Queue(SUGGEST, connection=conn)
    nonce = secrets.token_hex(8)
    base = suggestion_job_id(game.id, nonce)
    after = ai_share.link(conn, cfg, share, base) if share else None
    meta = {"kind": "suggestion", "game": game.id, "version": game.version, "seat": seat,
            "engine": engine_id, "request_id": request_id, "budget": dict(charged) if charged else None}
    common = {"timeout": cfg["AI_JOB_TIMEOUT_SECONDS"], "result_ttl": cfg["JOB_RESULT_TTL_SECONDS"],
              "failure_ttl": cfg["JOB_FAILURE_TTL_SECONDS"]}
    store = Store(conn, cfg["GAME_TTL_SECONDS"])
    if workers == 1:
        job = queue.enqueue_call(SUGGEST_JOB, args=(game.id, game.version, seat, engine_id, params, seed),
                                 job_id=base, meta=meta, depends_on=after, **common)
        store.add_job(game.id, base)
        return job
    part_params = dict(params)
    if "iterations" in part_params:
        part_params["iterations"] = max(1, math.ceil(part_params["iterations"] / workers))
    parts: list[Job] = []
    for i in range(workers):
        pid = suggestion_job_id(game.id, nonce, i)
        # one after another, each behind the part before it: a client's AI work holds one worker at a time
        # (service.fairplay.ai_share), however many parts it asks for
        before = Dependency(jobs=[parts[-1]], allow_failure=True) if parts else after
        parts.append(queue.enqueue_call(
            SUGGEST_JOB, args=(game.id, game.version, seat, engine_id, part_params, derive_seed(seed, i), True),
            job_id=pid, meta={**meta, "part_of": base}, depends_on=before, **common))
        store.add_job(game.id, pid)
    job = queue.enqueue_call(MERGE_SUGGESTION, args=(game.id, game.version, engine_id, [p.id for p in parts]),
                             job_id=base, meta={**meta, "parts": [p.id for p in parts]},
                             depends_on=Dependency(jobs=parts, allow_failure=True), at_front=True, **common)
    store.add_job(game.id, base)
    return job


def results(conn: redis.Redis, job_ids: list[str]) -> list[Any]:
    """The return values of the given jobs (None for a job that failed or has none)."""
    return [Job.fetch(job_id, connection=conn).return_value() for job_id in job_ids]


def delete_jobs(conn: redis.Redis, job_ids: list[str]) -> None:
    """Remove every record of the given RQ jobs (those that still exist), abandoned ones included."""
    recovery.delete_jobs(conn, job_ids)


def forget_earlier_play_jobs(conn: redis.Redis, game_id: str, version: int) -> None:
    """Delete the records of the game's play jobs for versions before ``version`` (done, stale or failed:
    nobody needs them once a later move is played), so a game keeps the records of its last AI move and the
    next one however long it runs, instead of one per AI move for ``JOB_RESULT_TTL_SECONDS``."""
    prefix = play_job_id(game_id, 0)[:-1]
    earlier = []
    for raw in cast(set[bytes], conn.smembers(jobs_key(game_id))):
        job_id = raw.decode()
        if job_id.startswith(prefix):
            digits = job_id[len(prefix):].split("-", 1)[0]
            if digits.isdigit() and int(digits) < version:
                earlier.append(job_id)
    if earlier:
        delete_jobs(conn, earlier)
        conn.srem(jobs_key(game_id), *earlier)
