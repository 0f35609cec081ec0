"""Chess-style clocks for the human seats of a game: the pure arithmetic (no Redis, no RQ).

Settings, chosen at creation: ``clock: {"initial_ms", "increment_ms", "on_timeout"}`` (Fischer: every move
of a seat adds ``increment_ms`` to its clock after its thinking time is taken off).  Human seats -- also open
seats and the seats that joined them -- have a clock; AI seats have none (``null``).  Stored in the game doc:
``doc["clock"]`` (the settings) and ``doc["clocks"]`` = ``{"remaining": [ms or None per seat], "running": seat
or None, "since": epoch ms or None}``: the remaining time of every seat as of ``since``, when the running
seat's clock started.  They change only with a commit of the game (:meth:`service.store.Store.commit`).

When the clocks run.  Only while the game is active (not waiting for seats, not over) and only the clock of
the seat to move.  A seat's clock starts when it becomes the seat to move (the commit of the move, join or
AI move before), so the AI's thinking time and a waiting lobby cost nobody anything.

Timeouts.  Every change that leaves a clocked seat to move schedules one RQ job for the moment its time
runs out (:func:`service.queues.schedule_timeout`; RQ's scheduler checks once a second, so a flag falls up to
about a second late; a move arriving after the deadline but before the job ran is refused with 409
``time-up`` and the timeout is carried out at once by that request).  The job
(:func:`service.tables.time_out`) does nothing when the game has moved on.  Otherwise, by ``on_timeout``:

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
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from engine.game import State

#: bounds of the settings (milliseconds): 0.1 s to 24 h to start with, at most 1 h added per move
MIN_INITIAL_MS = 100
MAX_INITIAL_MS = 24 * 3600 * 1000
MAX_INCREMENT_MS = 3600 * 1000
ON_TIMEOUT = ("move", "forfeit")


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
