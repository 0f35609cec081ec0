"""Per-rule-set heuristics (the greedy engine's one-ply choice and cheap playout policies).

Each rule set's heuristics are one record, ``Heuristics``, registered under the rule-set id by the module
``ai/heuristics/<rules_id>.py`` (``register``) and looked up by ``heuristics_for``, which imports that module
the first time.  The record holds ``greedy(state, seat, rng) -> Move`` and ``playout(state, rng) -> Move``
and, where the rule set has them, the search's fast paths and models:

* ``rollout(state, rng)``: ``playout`` played to the end of the deal in one call, with the same moves and
  draws (built from the engine's search kit); ``rollout_draws=False`` says it never draws from its
  generator (the paired root then seeds no generator per playout);
* ``greedy_rollout(state, rng)``: the same fast path for the greedy playout (every seat plays ``greedy``,
  or the record's ``greedy_playout``: ``ismcts:playout=greedy``);
* ``default_playout``: the playout ``ismcts`` plays when none is named (``ismcts:playout=default``):
  ``"heuristic"`` unless the rule set's greedy playout was measured stronger at equal time;
* ``default_opponents``: how ``ismcts`` plays the other seats' moves inside its tree when none is named
  (``ismcts:opponents=default``): ``"tree"`` unless an opponent model (``"greedy"``, or ``"typed"`` over
  ``models``) was measured stronger at equal time;
* ``models``: a library of opponent models, name -> the tree policy of players who play by those rules of
  thumb, the first the record's ``greedy_playout``; ``ismcts:opponents=typed`` plays each other seat by the
  one its moves in the deal make likeliest (``ai.inference.model_chances``);
* ``hidden(state, moves, rng)``: which of several moves that look the same to the searching seat another
  seat plays, and ``observe(state)``, for a node where another seat is to move: the distinct observation
  keys of its legal moves in legal order and the move played for each, as the search's general path
  computes them with ``hidden``;
* ``distinct(state)``: the strategically distinct moves of the seat to move, one per class (a rule set
  with it is searched with the paired root).
"""

from __future__ import annotations

import importlib
import random
from collections.abc import Callable
from dataclasses import dataclass

from engine.game import Move, Seat, State, play_to_deal_end

__all__ = ["Distinct", "Greedy", "Heuristics", "Hidden", "Observe", "Policy", "Rollout", "greedy_policy",
           "heuristics_for", "play_to_deal_end", "register"]

#: the one-ply choice of ``seat`` (which must be to move) from what it may see
Greedy = Callable[[State, Seat, random.Random], Move]
#: a playout policy: the move of the seat to move
Policy = Callable[[State, random.Random], Move]
#: a playout policy played to the end of the deal in one call
Rollout = Callable[[State, random.Random], None]
#: which of several moves that look the same to the searching seat the mover plays, in the sampled world
Hidden = Callable[[State, list[Move], random.Random], Move]
#: another seat's node in one call: the distinct observation keys of its moves and the move played for each
Observe = Callable[[State], tuple[list[int], list[Move]]]
#: the strategically distinct moves of the seat to move, one per class
Distinct = Callable[[State], list[Move]]


def greedy_policy(greedy: Greedy) -> Policy:
    """The playout policy in which whichever seat is to move plays ``greedy`` (``ismcts:playout=greedy``)."""

    def policy(state: State, rng: random.Random) -> Move:
        seat = state.to_move
        assert seat is not None, "a playout policy is only asked where a seat is to move"
        return greedy(state, seat, rng)

    return policy


@dataclass(frozen=True, slots=True)
class Heuristics:
    """One rule set's heuristics (see the module docstring for what each field is)."""

    greedy: Greedy
    playout: Policy
    rollout: Rollout | None = None
    #: whether ``rollout`` ever draws from its generator
    rollout_draws: bool = True
    greedy_rollout: Rollout | None = None
    #: the policy ``ismcts:playout=greedy`` plays (``greedy_rollout`` is its fast path); ``None``: ``greedy``
    #: for whichever seat is to move
    greedy_playout: Policy | None = None
    #: the playout ``ismcts:playout=default`` plays: ``"heuristic"`` or ``"greedy"``
    default_playout: str = "heuristic"
    #: the other seats' tree moves ``ismcts:opponents=default`` plays: ``"tree"``, ``"greedy"`` or ``"typed"``
    default_opponents: str = "tree"
    #: the library of opponent models (``ismcts:opponents=typed``): name -> tree policy, today's greedy first
    models: tuple[tuple[str, Policy], ...] = ()
    hidden: Hidden | None = None
    #: the fast path of another seat's node with ``hidden`` (only used together with it)
    observe: Observe | None = None
    distinct: Distinct | None = None


_REGISTRY: dict[str, Heuristics] = {}


def register(rules_id: str, heuristics: Heuristics) -> Heuristics:
    """Register ``heuristics`` as the rule set ``rules_id``'s (once) and return it."""
    if rules_id in _REGISTRY:
        raise ValueError(f"heuristics for {rules_id!r} are registered already")
    _REGISTRY[rules_id] = heuristics
    return heuristics


def heuristics_for(rules_id: str) -> Heuristics | None:
    """The heuristics registered for ``rules_id``, importing ``ai.heuristics.<rules_id>`` (where they are
    registered) the first time; ``None`` when that rule set has none.  A heuristics module that exists but
    fails to import is a bug and raises."""
    found = _REGISTRY.get(rules_id)
    if found is None:
        name = f"{__name__}.{rules_id}"
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as e:
            if e.name != name:
                raise
        found = _REGISTRY.get(rules_id)
    return found
