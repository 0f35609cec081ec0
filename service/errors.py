"""Every way a use case of the service refuses, as one exception class each (RQ's ``exceptions.py`` habit).

These are plain Python: no Flask, no HTTP status.  A refusal names itself (``slug``, ``title``) and carries
the members a client needs to act on it (``extra``: the current ``version``, the ``open_seats``, ...) and,
where waiting helps, ``retry_after`` seconds.  Only the HTTP layer (:mod:`service.problems`) turns them into
problem documents with a status; the RQ jobs read them as outcomes (a play job that loses the race to a
human move is ``stale``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class ServiceError(Exception):
    """A refusal of the service.  ``slug`` and ``title`` name the kind; ``extra`` and ``retry_after`` are
    what a client needs to act on it."""

    slug = "refused"
    title = "Refused"

    def __init__(self, detail: str, *, extra: Mapping[str, Any] | None = None,
                 retry_after: int | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.extra = dict(extra) if extra else {}
        self.retry_after = retry_after


class GameNotFound(ServiceError, LookupError):
    slug = "not-found"
    title = "Not found"

    def __init__(self, game_id: str) -> None:
        super().__init__(f"no game {game_id!r} (it may have expired or been deleted)")
        self.game_id = game_id


class VersionConflict(ServiceError):
    """The game is not at the version the caller (or the compare-and-set) expected."""

    slug = "stale-version"
    title = "Version conflict"

    def __init__(self, expected: int | None, current: int) -> None:
        super().__init__(f"the game is at version {current}, not {expected}; someone moved first",
                         extra={"version": current})
        self.expected = expected
        self.current = current


class NotStarted(ServiceError):
    """A move while the game still waits for seats to be taken."""

    slug = "not-started"
    title = "Waiting for players"

    def __init__(self, open_seats: list[int]) -> None:
        super().__init__(f"the game has not started: seat(s) {', '.join(map(str, open_seats))} are not taken yet",
                         extra={"open_seats": open_seats})
        self.open_seats = open_seats


class TimeUp(ServiceError):
    """A move that arrives after the mover's clock ran out (the timeout takes over)."""

    slug = "time-up"
    title = "Out of time"

    def __init__(self, seat: int, version: int) -> None:
        super().__init__(f"seat {seat} has run out of time", extra={"version": version})
        self.seat = seat
        self.version = version


class NotYourTurn(ServiceError):
    slug = "out-of-turn"
    title = "Not your turn"

    def __init__(self, seat: int, to_move: int | None) -> None:
        super().__init__("the game is over" if to_move is None else f"seat {seat} is not to move (seat {to_move} is)")
        self.seat = seat
        self.to_move = to_move


class GameOver(ServiceError):
    """A resignation or a join after the end of the match."""

    slug = "game-over"
    title = "Game over"

    def __init__(self) -> None:
        super().__init__("the game is over")


class NotOver(ServiceError):
    """A rematch asked for before the end of the match."""

    slug = "not-over"
    title = "Game not over"

    def __init__(self, version: int) -> None:
        super().__init__("a rematch can be asked for once the game is over", extra={"version": version})


class NoSuchSeat(ServiceError, LookupError):
    slug = "not-found"
    title = "Not found"


class SeatTaken(ServiceError):
    slug = "seat-taken"
    title = "Seat taken"


class AlreadySeated(ServiceError):
    slug = "already-seated"
    title = "Already seated"

    def __init__(self) -> None:
        super().__init__("you already hold a seat of this game")


class RematchGone(ServiceError):
    slug = "rematch-gone"
    title = "Rematch gone"

    def __init__(self) -> None:
        super().__init__("the rematch of this game is gone (deleted or expired)")


class Busy(ServiceError):
    """Every round of the compare-and-set lost to another change: the game changes faster than we can."""

    slug = "unavailable"
    title = "Service unavailable"


class Forbidden(ServiceError):
    """A credential that is valid but not for this (a token or stream ticket of another game)."""

    slug = "forbidden"
    title = "Not allowed"

    def __init__(self, detail: str, slug: str) -> None:
        super().__init__(detail)
        self.slug = slug


class Unauthorized(ServiceError):
    """No token where one is needed, or a token that matches nothing."""

    slug = "unauthorized"
    title = "Missing or unknown token"


class BadTicket(ServiceError):
    """A stream ticket that is unknown or has expired."""

    slug = "bad-ticket"
    title = "Unknown or expired ticket"

    def __init__(self) -> None:
        super().__init__("unknown or expired stream ticket; ask POST /v1/games/{id}/stream-tickets for a new one")


class BudgetSpent(ServiceError):
    """The AI CPU budget of the game or of the client cannot pay for a search (:mod:`.fairplay.budget`)."""

    slug = "ai-budget"
    title = "AI budget spent"


class TooManyLiveGames(ServiceError):
    """A client with as many live games as its cap asks for one more (:mod:`.fairplay.live_games`)."""

    slug = "live-games"
    title = "Too many live games"
