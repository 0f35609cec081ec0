"""Every error the engine raises, in one place.

The split follows python-chess: a move that cannot even be read (``InvalidMove``) is kept apart from a
well-formed move that the rules do not allow now (``IllegalMove``).  The service maps them to HTTP at its
edge (400/422); the engine knows nothing of HTTP.
"""

from __future__ import annotations


class EngineError(Exception):
    """Base class of every engine error."""


class InvalidMove(EngineError, ValueError):
    """The move is malformed: not a move id or move object this rule set can read."""


class IllegalMove(EngineError, ValueError):
    """The move is well formed but not legal in this state (wrong turn, not held, game over ...)."""


class BadOptions(EngineError, ValueError):
    """Options, player count or seed that a rule set does not accept.  ``option`` names the culprit."""

    def __init__(self, message: str, option: str | None = None) -> None:
        super().__init__(message)
        self.option = option


class UnknownRules(EngineError, LookupError):
    """No rule set is registered under that id."""

    def __init__(self, rules_id: str) -> None:
        super().__init__(f"no rule set {rules_id!r}")
        self.rules_id = rules_id


class BadState(EngineError, ValueError):
    """A serialized state that cannot be loaded (wrong rules id, wrong shape, from a newer version)."""
