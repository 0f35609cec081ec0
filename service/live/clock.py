"""Chess-style clocks for the human seats of a game (issue 11, acceptance 3).

Settings, chosen at creation: ``clock: {"initial_ms", "increment_ms", "on_timeout"}`` (Fischer: every move
of a seat adds ``increment_ms`` to its clock after its thinking time is taken off).  Human seats -- also open
seats and the seats that joined them -- have a clock; AI seats have none (``null``).  Stored in the game doc:
``doc["clock"]`` (the settings) and ``doc["clocks"]`` = ``{"remaining": [ms or None per seat], "running": seat
or None, "since": epoch ms or None}``: the remaining time of every seat as of ``since``, when the running
seat's clock started.  They change only with a commit of the game (:meth:`service.store.Store.commit`).

When the clocks run.  Only while the game is active (not waiting for seats, not over) and only the clock of
the seat to move.  A seat's clock starts when it becomes the seat to move (the commit of the move, join or
AI move before), so the AI's thinking time and a waiting lobby cost nobody anything.

Timeouts.  Every commit that leaves a clocked seat to move schedules one RQ job, ``clock-<game>-<version>``,
for the moment its time runs out (``Queue.enqueue_at``; RQ's scheduler, started by ``worker.py`` with the
workers, moves it to the ``play`` queue when due -- RQ checks once a second, so a flag falls up to about a
second late; a move arriving after the deadline but before the job ran is refused with 409 ``time-up`` and
the timeout is carried out at once by that request).  The job does nothing when the game has moved on.
Otherwise, by ``on_timeout``:

* ``"move"`` (default): the ``greedy`` engine makes the seat's move, from what the seat may see (the AI never
  peeks); a ``timeout`` event with ``{"action": "move", "engine": "greedy"}`` comes before the move's own
  events.  The seat's clock is then at zero plus the increment (Fischer), so with no increment every further
  move of that seat is made the same way as soon as it is due: the table never stalls on an absent player.
* ``"forfeit"``: the seat resigns (``State.resign``, the per-rule-set result of docs/rules/*.md): a
  ``timeout`` event with ``{"action": "forfeit"}``, then the engine's ``resign`` and ``match_end`` events.

Where the issue is silent: the increment is also added to a move made for the seat on timeout; a seat that
joins late does not lose time before the game starts; the remaining times are whole milliseconds.
"""

from __future__ import annotations

import copy
import logging
import math
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import redis
    from rq.job import Job

    from engine.game import State
    from service.store import Game

#: bounds of the settings (milliseconds): 0.1 s to 24 h to start with, at most 1 h added per move
MIN_INITIAL_MS = 100
MAX_INITIAL_MS = 24 * 3600 * 1000
MAX_INCREMENT_MS = 3600 * 1000
ON_TIMEOUT = ("move", "forfeit")
#: the engine that moves for a seat whose time ran out
TIMEOUT_ENGINE = "greedy"
#: a timeout job that finds its deadline this close (ms) waits for it rather than giving up
EARLY_WAIT_MS = 2000
#: hard limit of one timeout job, in seconds (a greedy move takes milliseconds)
TIMEOUT_JOB_SECONDS = 30

log = logging.getLogger(__name__)


# --------------------------------------------------------------------------- pure clock arithmetic

def clocked(meta: dict[str, Any]) -> bool:
    """Human seats (and open seats, which become human) have a clock; AI seats do not."""
    return bool(meta["kind"] != "ai")


def initial(settings: dict[str, Any] | None, seats: list[dict[str, Any]]) -> dict[str, Any] | None:
    """``doc["clocks"]`` of a new game (nothing runs yet)."""
    if settings is None:
        return None
    return {"remaining": [settings["initial_ms"] if clocked(m) else None for m in seats], "running": None,
            "since": None}


def deadline(doc: dict[str, Any]) -> int | None:
    """Epoch ms at which the running clock reaches zero, or None when no clock runs."""
    c = doc.get("clocks")
    if not c or c["running"] is None:
        return None
    return int(c["since"] + c["remaining"][c["running"]])


def expired(doc: dict[str, Any], seat: int, now: int) -> bool:
    c = doc.get("clocks")
    return bool(c and c["running"] == seat and now >= c["since"] + c["remaining"][seat])


def restart(doc: dict[str, Any], to_move: int | None, now: int, active: bool) -> None:
    """Start the clock of ``to_move`` (when it has one and the game is active); stop every other."""
    c = doc.get("clocks")
    if not c:
        return
    c = doc["clocks"] = copy.deepcopy(c)
    if active and to_move is not None and c["remaining"][to_move] is not None:
        c["running"], c["since"] = to_move, now
    else:
        c["running"], c["since"] = None, None


def charge(doc: dict[str, Any], seat: int, now: int) -> None:
    """Take ``seat``'s thinking time off its clock (never below zero) and add the increment."""
    c = doc.get("clocks")
    if not c or c["running"] != seat:
        return
    c = doc["clocks"] = copy.deepcopy(c)
    left = max(0, c["remaining"][seat] - (now - c["since"]))
    c["remaining"][seat] = left + int(doc["clock"]["increment_ms"])
    c["running"], c["since"] = None, None


def after_move(doc: dict[str, Any], seat: int, state: State, now: int) -> None:
    """The clocks after ``seat`` moved: charge it, start the next seat's clock."""
    charge(doc, seat, now)
    restart(doc, state.to_move, now, not state.finished)


def view(doc: dict[str, Any], now: int) -> tuple[dict[str, Any] | None, list[int | None]]:
    """The ``clock`` object of a view and the remaining ms per seat (as of ``running_since`` for the seat
    to move, exactly for the others)."""
    settings, c = doc.get("clock"), doc.get("clocks")
    if not settings or not c:
        return None, [None] * len(doc["seats"])
    return ({"initial_ms": settings["initial_ms"], "increment_ms": settings["increment_ms"],
             "on_timeout": settings["on_timeout"], "running": c["running"], "running_since_ms": c["since"],
             "deadline_ms": deadline(doc), "server_time_ms": now}, list(c["remaining"]))


# --------------------------------------------------------------------------- timeouts on RQ

def schedule(conn: redis.Redis, game: Game, cfg: dict[str, Any] | None = None) -> Job | None:
    """Schedule the timeout job of ``game``'s running clock (none when no clock runs)."""
    from rq import Queue
    from rq.exceptions import DuplicateJobError

    from service import jobs
    from service.keys import timeout_job_id
    from service.store import Store

    due = deadline(game.doc)
    if due is None or game.state.finished:
        return None
    cfg = cfg or jobs.settings()
    job_id = timeout_job_id(game.id, game.version)
    # RQ's scheduled registry counts whole seconds (rounding down): round up, so that it is never early
    due_s = math.ceil(due / 1000)
    try:
        # ``ttl``: a job whose game moved on before it was due still expires (with its result's time, after it)
        job = Queue(jobs.PLAY, connection=conn).enqueue_at(
            datetime.fromtimestamp(due_s, UTC), timeout, game.id, game.version, job_id=job_id, unique=True,
            ttl=max(1, due_s - int(time.time())) + int(cfg["JOB_RESULT_TTL_SECONDS"]),
            job_timeout=TIMEOUT_JOB_SECONDS, result_ttl=cfg["JOB_RESULT_TTL_SECONDS"],
            failure_ttl=cfg["JOB_FAILURE_TTL_SECONDS"],
            meta={"kind": "clock", "game": game.id, "version": game.version})
    except DuplicateJobError:
        return None
    Store(conn, cfg["GAME_TTL_SECONDS"]).add_job(game.id, job_id)
    return job


def timeout(game_id: str, version: int) -> dict[str, Any]:
    """The RQ job: carry out the timeout of the seat to move at ``version`` (nothing if it moved meanwhile)."""
    from rq import get_current_job

    from service import jobs
    from service.store import Store

    job = get_current_job()
    assert job is not None
    store = Store(job.connection, jobs.settings()["GAME_TTL_SECONDS"])
    return run_timeout(store, game_id, version)


def run_timeout(store: Any, game_id: str, version: int, cfg: dict[str, Any] | None = None) -> dict[str, Any]:
    """Carry out a due timeout through the store's compare-and-set; answers ``{"outcome", "version"}``:
    ``timeout`` (done), ``stale`` (the game moved on, or someone else did it) or ``early`` (rescheduled)."""
    import ai
    from engine.game import event
    from service import jobs
    from service.errors import GameNotFound, VersionConflict
    from service.store import now_ms

    try:
        game = store.get(game_id)
    except GameNotFound:
        return {"outcome": "stale", "version": None}
    due = deadline(game.doc)
    if game.version != version or due is None or game.state.finished:
        return {"outcome": "stale", "version": game.version}
    now = now_ms()
    if now < due:  # a scheduler on a machine whose clock runs ahead: wait for the deadline (it is close)
        if due - now > EARLY_WAIT_MS:
            return {"outcome": "early", "version": game.version}
        time.sleep((due - now) / 1000)
        now = now_ms()
    seat = game.doc["clocks"]["running"]
    action = game.doc["clock"]["on_timeout"]
    state = game.state.clone()
    doc = dict(game.doc)
    if action == "forfeit":
        move = "resign"
        events = [event("timeout", seat, action="forfeit"), *state.resign(seat)]
        doc["clocks"] = {**copy.deepcopy(doc["clocks"]), "running": None, "since": None}
        doc["clocks"]["remaining"][seat] = 0
    else:
        decision = ai.decide(TIMEOUT_ENGINE, game.state, seat, {},
                             jobs.derive_seed(jobs.engine_seed(game), version, "timeout"))
        move = decision.move.id
        events = [event("timeout", seat, action="move", engine=TIMEOUT_ENGINE), *state.play(decision.move)]
        doc["last_move"] = {"seat": None, "move": decision.move.id, "version": version}
        after_move(doc, seat, state, max(now, due))
        doc["clocks"]["remaining"][seat] = int(doc["clock"]["increment_ms"])
    try:
        after = store.commit(game, doc, state, events, move=move, mover=seat)
    except (VersionConflict, GameNotFound):
        return {"outcome": "stale", "version": store.version(game_id)}
    after_commit(store.conn, game, after, cfg)
    return {"outcome": "timeout", "version": after.version}


def after_commit(conn: redis.Redis, before: Game, after: Game, cfg: dict[str, Any] | None = None,
                 request_id: str | None = None) -> None:
    """What follows any commit that is not a plain move: the AI seat's play job, the next timeout, and the
    finished-games metric."""
    from service import jobs

    if after.state.finished and not before.state.finished:
        jobs.record_game(conn, "finished")
    jobs.schedule_play(conn, after, request_id=request_id, cfg=cfg)
    schedule(conn, after, cfg)
