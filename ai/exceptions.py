"""Every error the AI package raises, in one place.

The service maps them to HTTP at its edge: ``UnknownEngine`` (``ArenaOnly`` is one) is a 404 on a path and
a 422 in a request body, ``BadParams`` and ``NotToMove`` are 422s, ``EngineFailure`` (an engine, usually a third-party plugin, broke its contract) is a server fault.
"""

from __future__ import annotations


class AIError(Exception):
    """Base class of every AI error."""


class UnknownEngine(AIError, LookupError):
    """No engine is registered under that id."""

    def __init__(self, engine_id: str) -> None:
        super().__init__(f"no AI engine {engine_id!r}")
        self.engine_id = engine_id


class ArenaOnly(UnknownEngine):
    """A reference engine that sees every hand (``ai.REFERENCE_ENGINES``) was asked to decide for a served
    seat: only the arena may call it, on the true state and explicitly (``ai.decide_on_true_state``)."""

    def __init__(self, engine_id: str) -> None:
        AIError.__init__(self, f"AI engine {engine_id!r} sees every hand: it plays only in the arena, never "
                               "for a served seat")
        self.engine_id = engine_id


class BadParams(AIError, ValueError):
    """Engine parameters that the engine's schema refuses.  ``param`` names the culprit."""

    def __init__(self, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.param = param


class NotToMove(AIError, ValueError):
    """A decision was asked for a seat that is not to move (or for a finished game)."""


class EngineFailure(AIError, RuntimeError):
    """An engine returned something that is not a legal move of the state it was given."""
