"""tilehouse's AI players: one protocol, one registry, one way in.

* ``ENGINES``: engine id -> :class:`Engine` (an ``id``, a ``description`` and a parameter schema of
  :class:`Param`).  The built-in engines are ``random``, ``greedy`` and ``ismcts``; third-party engines
  plug in through the entry-point group ``tilehouse.engines`` (an entry point names an :class:`Engine`
  instance, an :class:`Engine` subclass, or a zero-argument factory).  Plugins are loaded at import; one
  that fails to load or clashes with a registered id is logged and skipped, never fatal.
* :func:`decide` is the only way in.  It validates the parameters, then replaces everything hidden from
  ``seat`` by a sample (``state.determinize(seat, Random(seed))``) *before* the engine sees the
  state, so no engine -- built-in or plugin -- can peek at a hidden tile: whatever it computes is a
  function of the seat's information set, the parameters and the seed.
* ``REFERENCE_ENGINES``: engines that see every hand (``perfect``: search on the true state), kept apart
  from ``ENGINES`` so that no server lists, validates or runs them.  They measure what hidden information
  costs, in the arena only: :func:`decide` refuses them (``ArenaOnly``) and the arena calls
  :func:`decide_on_true_state`, which hands them the true state, explicitly.
* :func:`merge` combines the decisions of several independent searches of the same decision (root
  parallelism): visits per move are summed, the most visited move wins.

See ``docs/ai.md`` and ``docs/developing.md``.
"""

from __future__ import annotations

import importlib.metadata
import logging
import math
from collections.abc import Iterable, Mapping

# ``from random import Random``, not ``import random``: the submodule ai.random is bound to the name
# ``random`` in this package's namespace once it is imported.
from random import Random
from typing import Any

from ai.exceptions import AIError, ArenaOnly, BadParams, EngineFailure, NotToMove, UnknownEngine
from ai.protocol import Decision, Engine, Param, Preset
from engine.game import Move, Seat, State

log = logging.getLogger(__name__)

#: the entry-point group third-party engines register under
ENTRY_POINT_GROUP = "tilehouse.engines"

#: the registry: engine id -> engine
ENGINES: dict[str, Engine] = {}


#: engines that see every hand: the arena's reference players, never served (``decide`` refuses them)
REFERENCE_ENGINES: dict[str, Engine] = {}


def register(engine: Engine, *, reference: bool = False) -> Engine:
    if engine.id in ENGINES or engine.id in REFERENCE_ENGINES:
        raise ValueError(f"AI engine {engine.id!r} registered twice")
    (REFERENCE_ENGINES if reference else ENGINES)[engine.id] = engine
    return engine


def get_engine(engine_id: str) -> Engine:
    """A served engine (``ENGINES``); ``UnknownEngine`` otherwise, ``ArenaOnly`` for a reference engine."""
    try:
        return ENGINES[engine_id]
    except (KeyError, TypeError):
        if isinstance(engine_id, str) and engine_id in REFERENCE_ENGINES:
            raise ArenaOnly(engine_id) from None
        raise UnknownEngine(str(engine_id)) from None


def arena_engine(engine_id: str) -> Engine:
    """Any engine the arena can seat: a served one or a reference engine."""
    found = REFERENCE_ENGINES.get(engine_id) if isinstance(engine_id, str) else None
    return found if found is not None else get_engine(engine_id)


def _as_engine(obj: Any) -> Engine:
    if isinstance(obj, Engine):
        return obj
    if callable(obj):
        made = obj()
        if isinstance(made, Engine):
            return made
    raise TypeError(f"{obj!r} is neither an ai.Engine nor a class or factory that makes one")


def load_plugins(entry_points: Iterable[importlib.metadata.EntryPoint] | None = None) -> list[str]:
    """Register the engines named by ``entry_points`` (default: the installed distributions' entry
    points in the ``tilehouse.engines`` group); returns the ids registered.  A plugin that fails to
    import, is not an engine, or reuses a registered id is logged and skipped: a broken third-party
    package must not take the built-in engines down with it."""
    if entry_points is None:
        entry_points = importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)
    added: list[str] = []
    for ep in entry_points:
        try:
            plugin = _as_engine(ep.load())
            if not isinstance(getattr(plugin, "id", None), str) or not plugin.id:
                raise TypeError("the engine has no id")
            plugin.to_dict()  # the schema must describe itself, or the API listing would break later
            register(plugin)
        except Exception:
            log.exception("skipping AI engine plugin %r (%s)", ep.name, ep.value)
            continue
        added.append(plugin.id)
    return added


def decide(engine_id: str, state: State, seat: Seat, params: Mapping[str, Any] | None = None,
           seed: int = 0) -> Decision:
    """``engine_id``'s move for ``seat`` in ``state``, fairly: the engine sees only a determinization of
    ``seat``'s information set.  The same information set, parameters and seed give the same decision
    (time budgets aside).  The returned move is the real state's own legal ``Move``."""
    engine = get_engine(engine_id)
    checked = _checked(engine, state, seat, params, seed)
    world = state.determinize(seat, Random(seed))
    # A stream of its own, so the engine's chance does not depend on how much determinize consumed.
    return _answer(engine_id, state, engine.choose(world, seat, checked, Random(f"ai/{seed}")))


def decide_on_true_state(engine_id: str, state: State, seat: Seat, params: Mapping[str, Any] | None = None,
                         seed: int = 0) -> Decision:
    """A reference engine's move for ``seat``, computed on ``state`` itself: it sees every hand (and what the
    rules leave to chance inside the state, such as the order of a stock).  For the arena only, which
    measures with it what hidden information costs; no served seat ever gets here (``decide`` refuses a
    reference engine, and the service knows only ``ENGINES``).  A served engine is refused: it must not
    see the true state."""
    engine = REFERENCE_ENGINES.get(engine_id) if isinstance(engine_id, str) else None
    if engine is None:
        raise UnknownEngine(str(engine_id))
    checked = _checked(engine, state, seat, params, seed)
    return _answer(engine_id, state, engine.choose(state.clone(), seat, checked, Random(f"ai/{seed}")))


def _checked(engine: Engine, state: State, seat: Seat, params: Mapping[str, Any] | None,
             seed: int) -> dict[str, Any]:
    checked = engine.validate(params)
    if type(seed) is not int:
        raise BadParams(f"seed must be an integer, not {seed!r}", "seed")
    if state.finished:
        raise NotToMove("the game is over")
    if state.to_move != seat:
        raise NotToMove(f"seat {seat!r} is not to move (seat {state.to_move} is)")
    return checked


def _answer(engine_id: str, state: State, decision: Decision) -> Decision:
    legal = state.legal_moves()
    by_id = {m.id: m for m in legal}
    chosen = getattr(decision, "move", None)
    if not isinstance(chosen, Move) or chosen.id not in by_id:
        raise EngineFailure(f"engine {engine_id!r} returned {chosen!r}, not a legal move")
    return Decision(by_id[chosen.id], decision.stats, tuple(legal))


def merge(decisions: Iterable[Decision], state: State | None = None) -> Decision:
    """One decision from several independent searches of the same decision (root parallelism):
    ``iterations``, ``elapsed_ms`` (total compute time) and per-move ``visits`` are summed; a move's
    ``mean_reward`` and ``mean_payoff`` are the visit-weighted means of its parts; the most visited move
    wins (ties: the higher mean reward, then the first part's order), or where every part's root tried its
    moves in turn (``stats["root"] == "uniform"``) the move of the highest mean payoff.  ``state`` is only needed when the winner is a
    move that none of the parts carries."""
    parts = list(decisions)
    if not parts:
        raise ValueError("merge needs at least one decision")
    order: list[str] = []
    visits: dict[str, int] = {}
    reward_sum: dict[str, float] = {}
    payoff_sum: dict[str, float] = {}
    payoff_visits: dict[str, int] = {}
    known: dict[str, Move] = {}
    for d in parts:
        for m in (d.move, *d.moves):
            known.setdefault(m.id, m)
        for c in d.stats.get("candidates", ()):
            mid = c["move"]
            if mid not in visits:
                order.append(mid)
                visits[mid] = 0
                reward_sum[mid] = 0.0
                payoff_sum[mid] = 0.0
                payoff_visits[mid] = 0
            visits[mid] += c["visits"]
            if c["visits"] and c.get("mean_reward") is not None:
                reward_sum[mid] += c["mean_reward"] * c["visits"]
            if c["visits"] and c.get("mean_payoff") is not None:
                payoff_sum[mid] += c["mean_payoff"] * c["visits"]
                payoff_visits[mid] += c["visits"]
    means: dict[str, float | None] = {mid: reward_sum[mid] / visits[mid] if visits[mid] else None
                                      for mid in order}
    rank = {mid: i for i, mid in enumerate(order)}
    # searches whose root tried its moves in turn (``ismcts:root=uniform``) play the best mean, not the
    # most visited: their parts are ranked by mean payoff (the rule set's unit, the same in every part,
    # where each part scales its rewards by its own bounds)
    by_mean = all(d.stats.get("root") == "uniform" for d in parts)

    def key(mid: str) -> tuple[float, float, int]:
        # the order ai.ismcts reports: most visited, then higher mean reward, then first seen (with a uniform
        # root: higher mean payoff, then most visited, then first seen)
        mean = means[mid]
        if by_mean:
            payoff = payoff_sum[mid] / payoff_visits[mid] if payoff_visits[mid] else -math.inf
            return -payoff, -visits[mid], rank[mid]
        return -visits[mid], -(mean if mean is not None else -1.0), rank[mid]

    order.sort(key=key)
    candidates = [{"move": mid, "visits": visits[mid], "mean_reward": means[mid],
                   "mean_payoff": round(payoff_sum[mid] / payoff_visits[mid], 3) if payoff_visits[mid] else None}
                  for mid in order]
    stats: dict[str, Any] = {
        "iterations": sum(int(d.stats.get("iterations", 0)) for d in parts),
        "elapsed_ms": sum(float(d.stats.get("elapsed_ms", 0.0)) for d in parts),
        "candidates": candidates,
        "searches": len(parts),
        **({"root": "uniform"} if by_mean else {}),
    }
    # without statistics to merge (e.g. a heuristic engine) the first part's choice stands
    best_id = order[0] if order and visits[order[0]] > 0 else parts[0].move.id
    if best_id in known:
        best = known[best_id]
    elif state is not None:
        best = state.find_move(best_id)
    else:
        raise ValueError(f"the merged winner {best_id!r} is not among the parts' moves; pass the state")
    return Decision(best, stats, tuple(known[mid] for mid in order if mid in known))


def _register_builtins() -> None:
    from ai.greedy import GreedyEngine
    from ai.ismcts import IsmctsEngine
    from ai.perfect import PerfectEngine
    from ai.random import RandomEngine

    for cls in (RandomEngine, GreedyEngine, IsmctsEngine):
        register(cls())
    register(PerfectEngine(), reference=True)


_register_builtins()
load_plugins()

__all__ = [
    "ENGINES", "ENTRY_POINT_GROUP", "REFERENCE_ENGINES", "AIError", "ArenaOnly", "BadParams", "Decision", "Engine",
    "EngineFailure", "NotToMove", "Param", "Preset", "UnknownEngine", "arena_engine", "decide",
    "decide_on_true_state", "get_engine", "load_plugins", "merge", "register",
]
