"""The AI protocol: what an engine is (:class:`Engine`), what it answers (:class:`Decision`), and how it
declares its parameters (:class:`Param`) and strength presets (:class:`Preset`).  The registry and the one
way in (``ai.decide``) are the package's; the engine modules import only this, so that the package may
import them to register them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from random import Random
from typing import Any, ClassVar

from ai.exceptions import BadParams
from engine.game import Field, Move, Seat, State


@dataclass(frozen=True)
class Param(Field):
    """One engine parameter (the schema is shared with rule options); a bad value is ``BadParams``
    naming it."""

    kind: ClassVar[str] = "parameter"

    def error(self, message: str) -> Exception:
        return BadParams(message, self.name)


@dataclass(frozen=True)
class Preset:
    """A named strength of an engine: parameter values that a frontend offers as one choice
    ("engine + strength preset").  ``default`` marks the one a frontend picks first."""

    name: str
    label: str
    params: Mapping[str, Any]
    default: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "label": self.label, "params": dict(self.params), "default": self.default}


@dataclass(frozen=True)
class Decision:
    """An engine's answer: the move and JSON-ready statistics (``iterations``, ``elapsed_ms``,
    ``candidates``: ``[{"move": id, "visits": int, "mean_reward": float | None, "mean_payoff": float |
    None}, ...]`` -- ``mean_reward`` on the search's own [0, 1] scale, ``mean_payoff`` in the rule set's
    unit -- and any engine-specific facts).  ``moves`` holds the legal moves the decision was taken
    among, so that :func:`merge` can name a winner that no single part chose."""

    move: Move
    stats: dict[str, Any]
    moves: tuple[Move, ...] = field(default=(), repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        return {"move": self.move.to_dict(), "stats": self.stats}


class Engine(ABC):
    """An AI player.  Stateless between calls: everything comes in through ``choose``'s arguments."""

    id: ClassVar[str]
    description: ClassVar[str]
    params: ClassVar[tuple[Param, ...]] = ()
    #: named strengths; an engine without any is offered with its defaults
    presets: ClassVar[tuple[Preset, ...]] = ()

    def validate(self, params: Mapping[str, Any] | None) -> dict[str, Any]:
        """``params`` completed with defaults; ``BadParams`` naming the parameter for anything wrong."""
        if params is None:
            params = {}
        if not isinstance(params, Mapping):
            raise BadParams("params must be an object mapping parameter names to values")
        index = {p.name: p for p in self.params}
        unknown = sorted(str(k) for k in set(params) - set(index))
        if unknown:
            raise BadParams(f"engine {self.id!r} has no parameter {unknown[0]!r}", unknown[0])
        return {p.name: p.validate(params[p.name]) if p.name in params else p.default for p in self.params}

    @abstractmethod
    def choose(self, state: State, seat: Seat, params: dict[str, Any], rng: Random) -> Decision:
        """A move for ``seat`` (who is to move) in ``state``.  ``state`` is already a determinization of
        ``seat``'s information set and ``params`` are validated; ``rng`` is the only source of chance."""

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "description": self.description, "params": [p.to_dict() for p in self.params],
                "presets": [p.to_dict() for p in self.presets]}
