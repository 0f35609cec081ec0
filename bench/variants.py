"""``tilehouse bench variants``: the arena, with screening variants of the shipped engines beside them.

A variant is an idea measured before it earns a parameter of a served engine.  It is registered here, in
this process only (the service and the workers never import this module), so ``GET /v1/engines`` does not
list it and no game or suggestion can name it, while a row screened with it stays reproducible from a
checkout.  The arguments are the arena's (``tilehouse arena --help``); every engine id below may be seated
beside the shipped ones.

* ``ismcts_greedy_tiebreak`` (parameter ``tiebreak``, a share of the search's reward scale, default 0.02):
  ``ismcts``, except that it plays the greedy engine's move instead of the search's choice when greedy's
  move has a mean reward within ``tiebreak`` of the best one and at least a tenth of its visits.  The idea:
  where the search cannot tell two moves apart, trust the rule that reserves the strongest tile.  Measured
  (docs/ai-history.md, 2026-12-04, fourth look): it loses to plain ``ismcts`` at Tien Gow, so the search's
  near-ties are better than greedy's choice.
* ``ismcts_soft_discards`` (parameter ``weakest``, default 0.5): ``ismcts``, except that inside its tree
  another seat's face-down discard is its weakest tiles only with chance ``weakest``, else any of its
  discards at random (``ismcts`` always takes the weakest, ``ai.heuristics.tiengow.hidden``).  The idea:
  searching players discard their weakest tiles far less often than greedy does (``tilehouse bench
  inference --fit``: 37% of the time), so the tree's worlds keep hands that are too strong after a discard.
  Tien Gow only (the rule set with a ``hidden`` model); elsewhere it is ``ismcts``.  It changes only the
  tree's own play of the other seats: name ``opponents=tree``, since Tien Gow's default plays them by the
  greedy model (2026-12-07).
* ``ismcts_paired_root``: ``ismcts`` with the wall game's paired root at every rule set: sequential halving
  over every legal move with common determinizations and common playout streams (``ai.ismcts.paired_search``,
  every legal move its own class), instead of UCB over a tree.  The idea: at Kozel a round's outcome varies
  by tens of points between worlds while the root's moves differ by a few (docs/ai-history.md, the UCB
  diagnostic of 2026-12-04), so the search is limited by noise that pairing cancels.  Measured
  (docs/ai-history.md, 2026-12-04, sixth look): it loses to plain ``ismcts`` at Kozel at 100 ms, -11.2
  [-19.9, -2.4] over 100 sets, so the tree's lookahead is worth more there than the noise pairing saves.
* ``ismcts_kozel_playout`` (parameters ``block``, ``fit``, ``stuck``, ``double``, ``doubles``, ``zero_zero``,
  ``shut``, ``scarce``): ``ismcts:playout=greedy`` at Kozel, its greedy playouts scored by other weights
  (``engine.kozel.GreedyScore``; the defaults are ``ai.heuristics.kozel.PLAYOUT_SCORE``'s, with which it is
  ``ismcts:playout=greedy`` itself; ``shut=0,scarce=0`` is the greedy playout of before 2026-12-06).  ``block`` rewards a playout move after which the next seat cannot
  match either end: the playout sees that seat's hand in the sampled world, which a player may not, so it
  exists for playouts only.  ``shut`` and ``scarce`` are the greedy engine's ``TableSense`` terms as the
  mover sees them, without the voids (``ai.heuristics.kozel.unvoided_greedy``, the playouts' policy then).  The idea: at Kozel the playout policy is what the search's strength follows
  (greedy playouts beat the cheap ones), so its weights are worth tuning by self-play.  Elsewhere it is
  ``ismcts``.
* ``greedy_kozel`` (parameters ``shut`` and ``scarce``): the ``greedy`` engine at Kozel with other
  ``ai.heuristics.kozel.TableSense`` weights (the defaults are ``SENSE``'s, with which it is ``greedy``
  itself; both at 0 it is the shedding greedy engine of before 2026-12-06).  Elsewhere it is ``greedy``.
  It reproduces the self-play tuning of those weights (docs/ai-history.md, eleventh look).
* ``pimc`` (parameter ``pimc_worlds``, default 10): perfect-information Monte Carlo, as bridge and Skat
  programs play: ``pimc_worlds`` worlds of the seat's information set (the search's own sampler, so with
  ``inference`` the weighted one), on each the search that sees that world's hands, with the stock's order
  redrawn every iteration (``State.restocked``, as ``perfect:sees=hands``), the budget split evenly, root
  visits summed, the most visited move played.  The idea: at Kozel the hands alone are worth +43 points a
  match (``perfect:sees=hands``), and in one world the tree plays the other seat from its own hand.
  Measured in docs/ai-history.md, ninth look.
* ``ismcts_paired_tree``: every root move searched by ``ismcts`` below it (a tree of its own), all of them
  on the same sampled worlds with the same playout stream, an equal share of the budget each; the move of
  the best mean payoff change is played.  The idea: the root's moves differ by less than a world's luck
  (the UCB diagnostic), and unlike ``ismcts_paired_root`` this keeps the lookahead below the root.
  Measured in docs/ai-history.md, ninth look.
* ``ismcts_kozel_value`` (parameter ``value_mix``, default 0): ``ismcts`` at two-player Kozel with the leaf
  of each iteration valued by ``bench.kozel_value.value`` (a linear function of the position in the sampled
  world, fitted to the cheap playout's outcomes) instead of played out; a share ``value_mix`` of the leaves
  is still played out.  The idea: the playout is a third of an iteration's time and its outcome is noisier
  (about 56 squared points) than the fitted value is biased (about 12), and Kozel is the rule set where
  more search pays.  Elsewhere (and at a lead, or with three or four players) it is ``ismcts``.  Measured
  in docs/ai-history.md, tenth look.
* ``greedy_wall`` (parameters ``middle``, ``open_column``): the ``greedy`` engine in the wall game with
  another lead or follow (``ai.heuristics.tiengow_wall.greedy_with``): ``middle=false`` leads the weakest
  single when no tile is sure, ``open_column`` is what a column won that a later follower could still take
  counts (a sure one 100, a tile spent at most 1).  The defaults are the engine's own; ``middle=false`` is
  the greedy engine of before 2026-12-06; ``open_column=0`` won in self-play and was level against the search.
  Elsewhere it is ``greedy``.  It reproduces the self-play tuning of both (docs/ai-history.md, fifteenth
  look).
* ``greedy_tiengow`` (parameters ``strongest_lead``, ``reserve_beats``): the ``greedy`` engine at Tien Gow with
  the rules of before 2026-12-06 (``ai.heuristics.tiengow.greedy_with``): ``strongest_lead`` leads the
  strongest group of the largest size instead of the weakest, ``reserve_beats`` keeps the strongest tile
  from beats before the last trick.  Both false (the defaults) it is ``greedy``; both true, the greedy
  engine of before.  Elsewhere it is ``greedy``.  It reproduces the self-play tuning (docs/ai-history.md,
  fifteenth look).
* ``ismcts_wall_playout`` (the same two parameters as ``greedy_wall``, and ``explore``): ``ismcts`` with the
  wall game's playouts played by that greedy engine, with a share ``explore`` of random moves
  (``ai.heuristics.tiengow_wall.PLAYOUT_EXPLORE`` by default); ``middle=false,explore=0`` is the search of
  before 2026-12-06 and ``explore=0`` the search of before 2026-12-07, decision for decision.  Elsewhere it
  is ``ismcts``.
* ``ismcts_tiengow_playout`` (parameters ``lead``, ``cheapest_beat``, ``last_discard``): ``ismcts`` at Tien Gow
  with the heuristic playout's leads chosen as ``greedy`` leads (``lead=greedy``, the default:
  ``ai.heuristics.tiengow.playout``, the shipped one) or uniformly (``lead=uniform``: ``uniform_playout``,
  the search of before the sixteenth look (2026-12-06), decision for decision), and its follows' two chances
  (``ai.heuristics.tiengow.playout_with``).  The idea: the playout's follows were already a player's (mostly
  the cheapest beat, else the weakest discard), its leads were not.  Elsewhere it is ``ismcts``.
* ``ismcts_tiuu_playout`` (parameters ``explore``, ``growth``, ``growth_stock``): ``ismcts`` at Tiu U with the
  heuristic playout at other weights (``ai.heuristics.tiuu.playout_with``; the defaults are the shipped
  ``PLAYOUT_EXPLORE``, ``PLAYOUT_GROWTH`` and ``PLAYOUT_GROWTH_STOCK``, with which it is ``ismcts`` itself).
  The idea: at Tien Gow and Kozel a playout closer to a player's own choices made the search stronger at
  equal time, and Tiu U's hand-set weights had never been screened.  Measured (docs/ai-history.md,
  seventeenth look): ``explore=0.1`` is level with ``ismcts`` at 100 ms over 800 fresh sets.  Elsewhere it is
  ``ismcts``.
* ``ismcts_tiuu_before``: ``ismcts`` at Tiu U at the cost of f020eca, before the twenty-fifth look: that
  commit's rollout (part 1's move list built by ``part1_moves``, every move applied by ``apply``) and the unseen
  tiles counted again for every world.  The same moves and draws as ``ismcts``, so at equal time it differs by
  its cost alone (the root's moves, worked out once a search since, are not taken back: about 2% cheaper than
  f020eca was).  Point 5's bar at Tiu U (docs/ai-history.md, twenty-fifth look).  Elsewhere it is ``ismcts``.
* ``ismcts_typed`` (parameters ``models``, default ``greedy,greedy_before``; ``types``, ``likeliest`` or
  ``drawn``; ``table``, the prior chance that the other seats all play one model, default 0): ``ismcts`` at Tien Gow that finds, per other seat, which greedy engine it plays like (a library
  of opponent models, ``ai.heuristics.tiengow.MODELS``: today's ``greedy`` and the engine of before, which
  leads its strongest group and keeps its reserved tile back from beats) and plays each seat in its tree by
  that model (``greedy_playout_with``) instead of today's.  A seat's chances are the mean of its posterior
  over 16 arranged worlds of the information set (``ai.inference.model_chances``: each model with the noise
  ``inference_eps``, as likely as the other before the deal; about 5 ms, taken off ``time_ms``); with
  ``inference_mcmc`` the chain weighs worlds under the mixture and names the likeliest.  ``drawn`` plays a
  seat, in each iteration's world, by a model drawn from its chances.  With one model every other seat is
  played by it: ``models=greedy`` is ``ismcts:opponents=greedy`` (the search of before the twentieth look),
  ``models=greedy_before`` the exact model of the engine of before.  ``judge=marginal`` judges a seat by
  Bayes' rule on its likelihood averaged over the worlds instead of the mean of its chances in each;
  ``other`` adds a player like none of the models (played as today's greedy) and ``prior`` the chance before
  the deal of a model other than today's; ``searcher`` makes that player the fitted model of searching
  players (``ai.inference.SEARCH_MODELS``) instead of a uniform one, and ``confidence`` plays a seat by its
  likeliest model only at that chance or above.  The idea: the greedy model in the tree is Tien Gow's
  strength, and against the greedy engine of before (point 5's bar) the exact model of it is worth +1.6 a
  deal (docs/ai-history.md, nineteenth look).  ``judge=marginal,other=true,searcher=true,inference_eps=0.1``
  is what the served ``ismcts:opponents=typed``, Tien Gow's default, does since the twenty-first look
  (without ``searcher`` since the twentieth; the variant leaves ``ismcts``'s own judging out and judges its
  way).
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import replace
from functools import partial
from typing import Any, ClassVar, cast

import ai
from ai import inference
from ai.greedy import GreedyEngine
from ai.heuristics import Greedy, Heuristics, Policy, Rollout, greedy_policy, tiengow, tiuu
from ai.heuristics import tiengow_wall as wall
from ai.heuristics.kozel import (
    PLAYOUT_SCORE,
    SENSE,
    TableSense,
    greedy_with,
    unvoided_greedy,
)
from ai.ismcts import IsmctsEngine, SearchKit, Worlds, likeliest_types, search, search_kit
from ai.protocol import Decision, Param
from bench import kozel_value
from engine.game import Move, Seat, State, below, play_to_deal_end
from engine.kozel import GreedyScore, KozelState, rollout_of
from engine.tiuu import CAPTURE, FISH, FLIP, FLIP_MOVE, FOURTH, OVER, PART1, TiuUState, part1_moves


def _ismcts_and(extra: Param) -> tuple[Param, ...]:
    """``ismcts``'s parameters and a variant's own."""
    return (*IsmctsEngine.params, extra)


class GreedyTiebreak(IsmctsEngine):
    """``ismcts`` that defers to greedy's move in a near-tie (module docstring)."""

    id = "ismcts_greedy_tiebreak"
    description = "ismcts, playing greedy's move where the search rates it within `tiebreak` of its best"
    params: ClassVar[tuple[Param, ...]] = _ismcts_and(Param(
        "tiebreak", float, 0.02, "greedy's move is played when its mean reward is at least the best's minus this "
        "(rewards are in [0, 1])", minimum=0.0, maximum=1.0))

    def choose(self, state: State, seat: Seat, params: dict[str, Any], rng: random.Random) -> Decision:
        decision = super().choose(state, seat, params, rng)
        heuristics = ai.greedy.heuristics_for(state.rules.id)
        candidates = decision.stats.get("candidates") or []
        if heuristics is None or len(candidates) < 2:
            return decision
        best = candidates[0]
        # greedy's own choice, with a generator of its own so that the search's draws are not disturbed
        move = heuristics.greedy(state, seat, random.Random(0))
        theirs = next((c for c in candidates if c["move"] == move.id), None)
        if (theirs is None or theirs is best or theirs["mean_reward"] is None or best["mean_reward"] is None
                or theirs["visits"] * 10 < best["visits"]):
            return decision
        if theirs["mean_reward"] >= best["mean_reward"] - params["tiebreak"]:
            return Decision(move, {**decision.stats, "tiebreak": True}, decision.moves)
        return decision


class SoftDiscards(IsmctsEngine):
    """``ismcts`` whose tree lets other seats discard other than their weakest tiles (module docstring)."""

    id = "ismcts_soft_discards"
    description = "ismcts, other seats' face-down discards in its tree the weakest tiles only with chance `weakest`"
    params: ClassVar[tuple[Param, ...]] = _ismcts_and(Param(
        "weakest", float, 0.5, "the chance that another seat's face-down discard in the tree is its weakest "
        "tiles (else any of its discards, uniformly)", minimum=0.0, maximum=1.0))

    def heuristics(self, state: State, params: dict[str, Any]) -> Heuristics | None:
        # the search's own heuristics with another ``hidden`` and no ``observe`` (its fast path is written for
        # the weakest discard): another seat's node then takes the general path with this model
        found = super().heuristics(state, params)
        if found is None or found.hidden is None:
            return found
        weakest_hidden = found.hidden
        share = params["weakest"]

        def soft(world: State, moves: list[Move], r: random.Random) -> Move:
            if share >= 1.0 or r.random() < share:  # no draw at 1: then the very search of ismcts
                return weakest_hidden(world, moves, r)
            return moves[int(r.random() * len(moves))]

        return replace(found, hidden=soft, observe=None)


class PairedRoot(IsmctsEngine):
    """``ismcts`` searching every rule set with the paired root (module docstring)."""

    id = "ismcts_paired_root"
    description = "ismcts, with sequential halving over every legal move on common worlds at the root"
    params: ClassVar[tuple[Param, ...]] = IsmctsEngine.params

    def heuristics(self, state: State, params: dict[str, Any]) -> Heuristics | None:
        found = super().heuristics(state, params)
        if found is None or found.distinct is not None:
            return found
        return replace(found, distinct=lambda s: s.legal_moves())


#: the greedy score's weights that ``ismcts_kozel_playout`` takes as parameters, with their defaults
_WEIGHTS = ("block", "fit", "stuck", "double", "doubles", "zero_zero", "shut", "scarce")


class KozelPlayout(IsmctsEngine):
    """``ismcts:playout=greedy`` with other greedy weights in Kozel's playouts (module docstring)."""

    id = "ismcts_kozel_playout"
    description = "ismcts with greedy playouts at Kozel, scored by the given weights (block: the next seat is stuck)"
    params: ClassVar[tuple[Param, ...]] = (
        *IsmctsEngine.params,
        *(Param(name, float, float(getattr(PLAYOUT_SCORE, name)), f"engine.kozel.GreedyScore.{name} in the playouts",
                minimum=-1000.0, maximum=1000.0) for name in _WEIGHTS))

    def __init__(self) -> None:
        self._rollouts: dict[GreedyScore, tuple[Policy, Rollout]] = {}

    def heuristics(self, state: State, params: dict[str, Any]) -> Heuristics | None:
        found = super().heuristics(state, params)
        if found is None or state.rules.id != "kozel":
            return found
        score = PLAYOUT_SCORE._replace(**{name: params[name] for name in _WEIGHTS})
        found_rollout = self._rollouts.get(score)
        if found_rollout is None:
            # the policy (a lead, a state that does not halt) scores as the rollout does
            policy = greedy_policy(unvoided_greedy(TableSense(shut=score.shut, scarce=score.scarce)))
            found_rollout = self._rollouts[score] = (policy, rollout_of(policy, greedy=score))
        policy, rollout = found_rollout
        return replace(found, greedy_playout=policy, greedy_rollout=rollout)

    def choose(self, state: State, seat: Seat, params: dict[str, Any], rng: random.Random) -> Decision:
        if state.rules.id == "kozel":
            params = {**params, "playout": "greedy"}
        return super().choose(state, seat, params, rng)


class _GreedyOf(GreedyEngine):
    """``greedy`` with other rules or weights at one rule set (``rules_id``: the choice ``greedy_for`` builds
    from the variant's parameters), and ``greedy`` itself elsewhere."""

    rules_id: ClassVar[str]

    def greedy_for(self, params: dict[str, Any]) -> Greedy:
        raise NotImplementedError

    def choose(self, state: State, seat: Seat, params: dict[str, Any], rng: random.Random) -> Decision:
        if state.rules.id != self.rules_id:
            return super().choose(state, seat, params, rng)
        t0 = time.perf_counter()
        move = self.greedy_for(params)(state, seat, rng)
        return Decision(move, {"iterations": 0, "candidates": [], "policy": "heuristic",
                               "elapsed_ms": (time.perf_counter() - t0) * 1000.0})


class GreedyKozel(_GreedyOf):
    """``greedy`` with other ``TableSense`` weights at Kozel (module docstring)."""

    id = "greedy_kozel"
    rules_id = "kozel"
    description = "greedy, at Kozel with other weights for the ends it leaves the next player"
    params: ClassVar[tuple[Param, ...]] = tuple(
        Param(name, float, float(getattr(SENSE, name)), f"ai.heuristics.kozel.TableSense.{name}",
              minimum=-1000.0, maximum=1000.0) for name in TableSense._fields)

    def greedy_for(self, params: dict[str, Any]) -> Greedy:
        sense = TableSense(**{name: params[name] for name in TableSense._fields})

        def choose(state: State, seat: Seat, rng: random.Random) -> Move:
            return greedy_with(state, seat, rng, sense)

        return choose


class _SearchesPerRoot(IsmctsEngine):
    """A variant that runs several ``search`` calls for one decision."""

    def choose(self, state: State, seat: Seat, params: dict[str, Any], rng: random.Random) -> Decision:
        """As ``IsmctsEngine.choose`` sets up its search (the worlds' sampler, the information set's own
        unless inference weighs them; the time left for searching; statistics to add; the playout), then
        ``decide``; ``ismcts`` itself with one legal move, or where the rule set has no heuristics or a
        paired root of its own."""
        moves = state.legal_moves()
        heuristics = self.heuristics(state, params)
        if len(moves) == 1 or heuristics is None or heuristics.distinct is not None:
            return super().choose(state, seat, params, rng)
        kit, used = search_kit(heuristics, state, params["playout"])
        sample, time_ms, extra = self._budget(state, seat, params, rng)
        return self.decide(state, seat, params, rng, moves, sample or state.determinizer(seat), time_ms, extra,
                           used, kit)

    def decide(self, state: State, seat: Seat, params: dict[str, Any], rng: random.Random, moves: list[Move],
               sample: Worlds, time_ms: float, extra: dict[str, Any], used: str, kit: SearchKit) -> Decision:
        """The decision among ``moves`` (at least two), from worlds drawn by ``sample``."""
        raise NotImplementedError


class Pimc(_SearchesPerRoot):
    """Perfect-information Monte Carlo over the seat's information set (module docstring)."""

    id = "pimc"
    description = ("PIMC: `pimc_worlds` worlds of the seat's information set, on each the search that sees "
                   "that world's hands (stock redrawn per iteration), root visits summed")
    params: ClassVar[tuple[Param, ...]] = _ismcts_and(Param(
        "pimc_worlds", int, 10, "sampled worlds; the budget (iterations and time_ms) is split evenly among them",
        minimum=1, maximum=1000))

    def decide(self, state: State, seat: Seat, params: dict[str, Any], rng: random.Random, moves: list[Move],
               sample: Worlds, time_ms: float, extra: dict[str, Any], used: str, kit: SearchKit) -> Decision:
        k = params["pimc_worlds"]
        t0 = time.perf_counter()
        per_iterations = max(1, params["iterations"] // k)
        deadline = t0 + time_ms / 1000.0
        visits = [0] * len(moves)
        totals = [0.0] * len(moves)
        done = 0
        for i in range(k):
            left_ms = (deadline - time.perf_counter()) * 1000.0
            if i and left_ms <= 0:
                break
            world = sample(rng)
            found = search(state, seat, iterations=per_iterations, time_ms=max(0.0, left_ms) / (k - i),
                           uct_c=params["uct_c"], rng=rng, worlds=world.restocked, **kit._asdict())
            done += found.iterations
            for j, m in enumerate(moves):
                ch = found.tree.child(0, m.key)
                if ch is not None:
                    visits[j] += ch[0]
                    totals[j] += ch[2]
        order = sorted(range(len(moves)),
                       key=lambda j: (-visits[j], -(totals[j] / visits[j]) if visits[j] else math.inf, j))
        candidates = [{"move": moves[j].id, "visits": visits[j],
                       "mean_payoff": round(totals[j] / visits[j], 3) if visits[j] else None} for j in order]
        return Decision(moves[order[0]], {"iterations": done, "playout": used, "search": "pimc",
                                          "elapsed_ms": round((time.perf_counter() - t0) * 1000.0, 3),
                                          "candidates": candidates, **extra}, tuple(moves))


class PairedTree(_SearchesPerRoot):
    """Every root move searched on the same sampled worlds, each with a tree of its own (module docstring)."""

    id = "ismcts_paired_tree"
    description = ("ismcts below every root move, all root moves on common worlds and common playout streams; "
                   "the move of the best mean payoff change is played")
    params: ClassVar[tuple[Param, ...]] = IsmctsEngine.params

    def decide(self, state: State, seat: Seat, params: dict[str, Any], rng: random.Random, moves: list[Move],
               sample: Worlds, time_ms: float, extra: dict[str, Any], used: str, kit: SearchKit) -> Decision:
        base = state.running_payoffs()[seat]
        # the common worlds, sampled once each as the first move's search asks for them
        common: list[State] = []
        k = len(moves)
        totals = [0.0] * k
        counts = [0] * k
        stream = rng.getrandbits(64)
        budget = max(1, params["iterations"] // k)
        t0 = time.perf_counter()
        for j, m in enumerate(moves):
            played: list[State] = []

            def worlds(r: random.Random, m: Move = m, played: list[State] = played) -> State:
                t = len(played)
                if t == len(common):
                    common.append(sample(rng))
                w = common[t].clone()
                # halted before the move: a move that ends the deal leaves nothing to search in the world
                w.stop_after_deal()
                w.apply(m)
                played.append(w)
                return w

            # the first move's search sets how many common worlds there are; the others play each of them
            # (within what is left of the time, shared among the moves still to search)
            left_ms = time_ms - (time.perf_counter() - t0) * 1000.0
            iterations, limit = (budget, time_ms / k) if j == 0 else (len(common), max(1.0, left_ms / (k - j)))
            root = state.clone()
            root.stop_after_deal()
            root.apply(m)
            search(root, seat, iterations=iterations, time_ms=limit, uct_c=params["uct_c"],
                   rng=random.Random(stream), worlds=worlds, **kit._asdict())
            for w in played:
                totals[j] += w.running_payoffs()[seat] - base
            counts[j] = len(played)
        order = sorted(range(k), key=lambda j: (-(totals[j] / counts[j]) if counts[j] else math.inf, j))
        candidates = [{"move": moves[j].id, "visits": counts[j],
                       "mean_payoff": round(totals[j] / counts[j], 3) if counts[j] else None} for j in order]
        return Decision(moves[order[0]], {"iterations": sum(counts), "playout": used, "search": "paired_tree",
                                          "elapsed_ms": round((time.perf_counter() - t0) * 1000.0, 3),
                                          "candidates": candidates, **extra}, tuple(moves))


class KozelValue(IsmctsEngine):
    """``ismcts`` with the fitted value of the leaf instead of a playout at two-player Kozel (module
    docstring)."""

    id = "ismcts_kozel_value"
    description = "ismcts with a fitted value at the leaf instead of a playout at two-player Kozel"
    params: ClassVar[tuple[Param, ...]] = _ismcts_and(
        Param("value_mix", float, 0.0, "share of the leaves still played out", minimum=0.0, maximum=1.0))

    def heuristics(self, state: State, params: dict[str, Any]) -> Heuristics | None:
        found = super().heuristics(state, params)
        if found is None or found.rollout is None or state.rules.id != "kozel":
            return found
        playout_rollout = found.rollout
        mix = params["value_mix"]
        coefficients = kozel_value.COEFFICIENTS

        def leaf(world: State, rng: random.Random) -> None:
            st = cast(KozelState, world)
            # no draw for the mix at its ends: value_mix=1 is ismcts's own stream
            if mix < 1.0 and st.halt_at_deal_end and kozel_value.applies(st) and (mix <= 0.0 or rng.random() >= mix):
                kozel_value.settle(st, kozel_value.value(st, coefficients))
            else:
                playout_rollout(st, rng)

        # the value stands in for the cheap playout it was fitted to, which is this variant's default playout
        return replace(found, rollout=leaf, default_playout="heuristic")


_WALL_PARAMS = (
    Param("middle", bool, True, "without a sure tile, lead the middle single of the hand (else the weakest)"),
    Param("open_column", float, float(wall.OPEN_COLUMN), "what a column won counts in a follow when a later "
          "follower could still take it (a sure column counts 100, a tile spent at most 1)",
          minimum=0.0, maximum=1000.0),
)


class GreedyWall(_GreedyOf):
    """``greedy`` with another lead or follow in the wall game (module docstring)."""

    id = "greedy_wall"
    rules_id = "tiengow_wall"
    description = "greedy, in the wall game with another lead (middle) or worth of an open column (open_column)"
    params: ClassVar[tuple[Param, ...]] = _WALL_PARAMS

    def greedy_for(self, params: dict[str, Any]) -> Greedy:
        return wall.greedy_with(middle=params["middle"], open_column=params["open_column"])[0]


class GreedyTienGow(_GreedyOf):
    """``greedy`` with Tien Gow's rules of before 2026-12-06, either or both (module docstring)."""

    id = "greedy_tiengow"
    rules_id = "tiengow"
    description = "greedy, at Tien Gow with the lead (strongest_lead) or the beats (reserve_beats) of before"
    params: ClassVar[tuple[Param, ...]] = (
        Param("strongest_lead", bool, False, "lead the strongest group of the largest size (else the weakest)"),
        Param("reserve_beats", bool, False, "keep the hand's strongest tile from beats before the last trick"),
    )

    def greedy_for(self, params: dict[str, Any]) -> Greedy:
        return tiengow.greedy_with(strongest_lead=params["strongest_lead"], reserve_beats=params["reserve_beats"])


class _PlayoutVariant(IsmctsEngine):
    """``ismcts`` whose heuristic playout and its fast path, at one rule set, are built from the variant's own
    parameters (those after ``ismcts``'s, in their order, handed to ``build``); each setting is built once.
    Elsewhere it is ``ismcts``."""

    #: the rule set whose playout the variant replaces
    rules_id: ClassVar[str]

    def __init__(self) -> None:
        self._kits: dict[tuple[Any, ...], tuple[Policy, Rollout]] = {}

    def build(self, *values: Any) -> tuple[Policy, Rollout]:
        """The playout policy and its fast path at these parameter values."""
        raise NotImplementedError

    def draws(self, *values: Any) -> bool | None:
        """Whether the fast path built at these values draws from its generator (``Heuristics.rollout_draws``);
        ``None``: as the rule set's own rollout."""
        return None

    def heuristics(self, state: State, params: dict[str, Any]) -> Heuristics | None:
        found = super().heuristics(state, params)
        if found is None or state.rules.id != self.rules_id:
            return found
        key = tuple(params[p.name] for p in self.params[len(IsmctsEngine.params):])
        kit = self._kits.get(key)
        if kit is None:
            kit = self._kits[key] = self.build(*key)
        draws = self.draws(*key)
        return replace(found, playout=kit[0], rollout=kit[1],
                       rollout_draws=found.rollout_draws if draws is None else draws)


class WallPlayout(_PlayoutVariant):
    """``ismcts`` with the wall game's playouts played by another greedy engine (module docstring)."""

    id = "ismcts_wall_playout"
    description = "ismcts, in the wall game with playouts by greedy_wall's lead and follow"
    params: ClassVar[tuple[Param, ...]] = (
        *IsmctsEngine.params, *_WALL_PARAMS,
        Param("explore", float, wall.PLAYOUT_EXPLORE, "the playouts' share of random moves "
              "(ai.heuristics.tiengow_wall.PLAYOUT_EXPLORE; 0: every playout move the greedy engine's)",
              minimum=0.0, maximum=1.0),
    )

    rules_id = "tiengow_wall"

    def build(self, middle: bool, open_column: float, explore: float) -> tuple[Policy, Rollout]:
        _, policy, rollout = wall.greedy_with(middle=middle, open_column=open_column, explore=explore)
        return policy, rollout

    def draws(self, middle: bool, open_column: float, explore: float) -> bool:
        # a rollout that explores draws (the paired root then seeds a generator per playout); one that does not,
        # never (the search of before, with its no-draws guard)
        return explore > 0.0


class TienGowPlayout(_PlayoutVariant):
    """``ismcts`` with Tien Gow's playout leading as ``greedy`` does or uniformly (module docstring)."""

    id = "ismcts_tiengow_playout"
    description = "ismcts, at Tien Gow with the playout's leads greedy's (lead=greedy) or uniform (lead=uniform)"
    params: ClassVar[tuple[Param, ...]] = (
        *IsmctsEngine.params,
        Param("lead", str, "greedy", "how the heuristic playout leads: 'greedy' (greedy's lead of the hand, "
              "ai.heuristics.tiengow.playout, the shipped one) or 'uniform' (any lead, the playout of before "
              "the sixteenth look, ai.heuristics.tiengow.uniform_playout)",
              choices=("greedy", "uniform")),
        Param("cheapest_beat", float, tiengow.CHEAPEST_BEAT, "the playout's chance of the cheapest beat on a "
              "follow that has one", minimum=0.0, maximum=1.0),
        Param("last_discard", float, tiengow.LAST_DISCARD, "the playout's chance, when it does not beat, of the "
              "weakest discard (else a uniform move)", minimum=0.0, maximum=1.0),
    )

    rules_id = "tiengow"

    def build(self, lead: str, cheapest_beat: float, last_discard: float) -> tuple[Policy, Rollout]:
        return tiengow.playout_with(lead=lead, cheapest_beat=cheapest_beat, last_discard=last_discard)


class TiuUPlayout(_PlayoutVariant):
    """``ismcts`` with Tiu U's heuristic playout at other weights (module docstring)."""

    id = "ismcts_tiuu_playout"
    description = "ismcts, at Tiu U with the heuristic playout's exploration and growth values as given"
    params: ClassVar[tuple[Param, ...]] = (
        *IsmctsEngine.params,
        Param("explore", float, tiuu.PLAYOUT_EXPLORE, "the playout's chance of a uniform move",
              minimum=0.0, maximum=1.0),
        Param("growth", int, tiuu.PLAYOUT_GROWTH, "what tripling or the seed's fourth tile is worth to the "
              "playout while the stock is large (a capture is worth its fish)", minimum=0, maximum=100),
        Param("growth_stock", int, tiuu.PLAYOUT_GROWTH_STOCK, "the stock size above which growth counts "
              "(else it is worth 1)", minimum=0, maximum=100),
    )

    rules_id = "tiuu"

    def build(self, explore: float, growth: int, growth_stock: int) -> tuple[Policy, Rollout]:
        return tiuu.playout_with(explore=explore, growth=growth, growth_stock=growth_stock)


def _tiuu_rollout_before(state: State, rng: random.Random) -> None:
    """Tiu U's rollout as f020eca had it (``engine.tiuu.rollout_of`` then, at the shipped weights): the same
    moves and draws as today's, at the cost of before -- part 1's move list built by ``part1_moves`` and every
    move applied by ``apply`` (``ismcts_tiuu_before``)."""
    st = cast(TiuUState, state)
    if not st.halt_at_deal_end:
        play_to_deal_end(st, tiuu.playout, rng)
        return
    apply = st.apply
    random_ = rng.random
    classic = st.classic
    hands = st.hands
    while True:  # halting at the game's end sets the phase to OVER
        phase = st.phase
        if phase != PART1:
            if phase == OVER:
                return
            apply(tiuu.playout(st, rng))
            continue
        moves = part1_moves(st, hands[st.turn])
        n = len(moves)
        if n == 1:
            move = moves[0]
        elif random_() < tiuu.PLAYOUT_EXPLORE:
            move = moves[below(rng, n)]
        else:
            # the first move of the highest value, in list order
            grow = tiuu.PLAYOUT_GROWTH if st.nstock > tiuu.PLAYOUT_GROWTH_STOCK else 1
            move = FLIP_MOVE
            best_value = -1
            for m in moves:
                kind, a, b = m.code
                if kind == CAPTURE:
                    v = FISH[a] + FISH[b]
                elif kind == FLIP:
                    v = 0
                elif kind == FOURTH and classic:
                    v = 4 * FISH[a]
                else:
                    v = grow
                if v > best_value:
                    move, best_value = m, v
        apply(move)


class TiuUBefore(IsmctsEngine):
    """``ismcts`` with Tiu U's search at the cost of f020eca (module docstring)."""

    id = "ismcts_tiuu_before"
    description = "ismcts, at Tiu U with the rollout and the determinization of before the twenty-fifth look"

    def heuristics(self, state: State, params: dict[str, Any]) -> Heuristics | None:
        found = super().heuristics(state, params)
        if found is None or state.rules.id != "tiuu" or params["playout"] not in ("default", "heuristic"):
            return found
        return replace(found, rollout=_tiuu_rollout_before)

    def worlds(self, state: State, seat: Seat, params: dict[str, Any],
               rng: random.Random) -> tuple[Worlds | None, dict[str, float] | None]:
        sampled, stats = super().worlds(state, seat, params, rng)
        if sampled is None and state.rules.id == "tiuu":
            # the unseen tiles counted again for every world, as ``determinize`` did before
            sampled = partial(state.determinize, seat)
        return sampled, stats


#: the variants this bench seats, by id
class TypedOpponents(IsmctsEngine):
    """``ismcts`` that infers, per other seat, which greedy engine it plays like (module docstring)."""

    id = "ismcts_typed"
    description = ("ismcts at Tien Gow with each other seat's greedy model inferred from its moves: the chain "
                   "weighs worlds under the mixture of `models`, and the tree plays each seat by its likeliest")
    params: ClassVar[tuple[Param, ...]] = (*IsmctsEngine.params, Param(
        "models", str, "greedy,greedy_before", "the greedy models another seat may play like, names of "
        "ai.heuristics.tiengow.MODELS separated by commas (elsewhere than Tien Gow: ismcts)"), Param(
        "types", str, "likeliest", "how the tree plays another seat: by its likeliest model ('likeliest') or, "
        "in each iteration's world, by a model drawn from its chances ('drawn')", choices=("likeliest", "drawn")),
        Param("table", float, 0.0, "the chance, before the deal, that every other seat plays one and the same "
              "model, so that one seat's moves tell of the others' (ai.inference.model_chances); 0: each seat "
              "judged apart", minimum=0.0, maximum=1.0),
        Param("judge", str, "mean", "how a seat's chances are judged from the worlds (ai.inference.model_chances): "
              "the mean of its chances in each ('mean') or Bayes' rule on its likelihood averaged over them "
              "('marginal')", choices=("mean", "marginal")),
        Param("other", bool, False, "with judge=marginal: a seat may also play like none of the models (a uniform "
              "choice among its legal moves), and is then played by today's greedy"),
        Param("prior", float, 0.0, "with judge=marginal: the chance before the deal that a seat plays like anything "
              "but the first model, shared evenly by the others; 0: every one as likely", minimum=0.0,
              maximum=0.99),
        Param("searcher", bool, False, "with other: the player like none of the models plays as searching players "
              "do (ai.inference.SEARCH_MODELS, fitted on the search's own moves) instead of uniformly"),
        Param("confidence", float, 0.0, "with types=likeliest: a seat is played by its likeliest model only where "
              "that model's chance is at least this, else by today's greedy; 0: always its likeliest",
              minimum=0.0, maximum=1.0))

    def _base(self, heuristics: Heuristics | None, params: dict[str, Any]) -> dict[str, Any]:
        """The parameters ``ismcts``'s own steps get: where they would judge the seats themselves
        (``opponents=typed``, Tien Gow's default), today's greedy model, the variant judging them its way."""
        return {**params, "opponents": "greedy"} if self._opponents(heuristics, params) == "typed" else params

    def _models(self, params: dict[str, Any]) -> tuple[str, ...]:
        names = tuple(params["models"].split(","))
        unknown = [n for n in names if n not in tiengow.MODELS]
        if unknown or not names:
            raise ai.BadParams(f"parameter 'models' names no model of ai.heuristics.tiengow.MODELS: {unknown}",
                               "models")
        return names

    def worlds(self, state: State, seat: Seat, params: dict[str, Any],
               rng: random.Random) -> tuple[Worlds | None, dict[str, Any] | None]:
        models = self._models(params)
        if params["judge"] == "marginal" and params["table"] > 0.0:
            raise ai.BadParams("parameter 'table' is a prior of judge=mean only", "table")
        if params["other"] and params["judge"] != "marginal":
            raise ai.BadParams("parameter 'other' needs judge=marginal", "other")
        if params["searcher"] and not params["other"]:
            raise ai.BadParams("parameter 'searcher' needs other=true", "searcher")
        if params["prior"] and params["judge"] != "marginal":
            raise ai.BadParams("parameter 'prior' needs judge=marginal", "prior")
        params = self._base(self.heuristics(state, params), params)
        if not params["inference"] or state.rules.id != "tiengow" or len(models) < 2:
            return super().worlds(state, seat, params, rng)
        if params["inference_mcmc"] > 0:
            made = inference.sampler(state, seat, params["inference_worlds"], params["inference_eps"], rng,
                                     mcmc=params["inference_mcmc"], model=params["inference_model"],
                                     models=models)
            return (None, None) if made is None else made
        # without the chain: the worlds of ismcts, and each seat's model judged on a few arranged worlds
        t0 = time.perf_counter()
        chances = inference.model_chances(state, seat, models, params["inference_eps"],
                                          random.Random(rng.random()), table=params["table"],
                                          judge=params["judge"],
                                          other="search" if params["searcher"] else params["other"],
                                          prior=params["prior"] or None)
        spent = (time.perf_counter() - t0) * 1000.0
        sampled, stats = super().worlds(state, seat, params, rng)
        if chances is None:
            return sampled, stats
        out: dict[str, Any] = dict(stats or {"elapsed_ms": 0.0})
        # the likeliest model of each seat (a seat with no move that tells them apart: today's greedy; one
        # that plays like none of them, with `other`: "other", played by today's greedy)
        out["types"] = likeliest_types(chances, models, params["confidence"])
        out["chances"] = chances
        out["elapsed_ms"] = round(out["elapsed_ms"] + spent, 3)
        return sampled, out

    def _model(self, heuristics: Heuristics | None, params: dict[str, Any],
               inferred: dict[str, Any] | None = None) -> tuple[Policy | None, str]:
        policy, name = super()._model(heuristics, self._base(heuristics, params), inferred)
        models = self._models(params)
        if policy is None or heuristics is None or heuristics is not ai.greedy.heuristics_for("tiengow"):
            return policy, name
        policies = [tiengow.greedy_playout_with(strongest_lead=tiengow.MODELS[m][0],
                                                reserve_beats=tiengow.MODELS[m][1]) for m in models]
        if len(models) == 1:
            # one model: every other seat is played by it (today's greedy: ismcts itself)
            return policies[0], name if models[0] == "greedy" else models[0]
        types = (inferred or {}).get("types")
        if not types:
            return policy, name
        if params["types"] == "likeliest":
            by_seat = {int(p): policies[models.index(m)] for p, m in types.items() if m in models}

            def likeliest(world: State, r: random.Random) -> Move:
                mover = world.to_move
                return by_seat[mover](world, r) if mover in by_seat else policy(world, r)

            return likeliest, "typed"
        # "drawn": each iteration's world plays every seat by a model drawn from its chances
        chances = {int(p): cs for p, cs in (inferred or {}).get("chances", {}).items()}
        drawn: dict[str, Any] = {"world": None, "by_seat": {}}

        def sampled(world: State, r: random.Random) -> Move:
            if drawn["world"] is not world:
                by_seat = {}
                for p, cs in chances.items():
                    x, k = r.random(), 0
                    while k < len(cs) - 1 and x >= cs[k]:
                        x -= cs[k]
                        k += 1
                    by_seat[p] = policies[k] if k < len(policies) else policy
                drawn["world"], drawn["by_seat"] = world, by_seat
            mover = world.to_move
            play = drawn["by_seat"].get(mover)
            return play(world, r) if play is not None else policy(world, r)

        return sampled, "typed"


VARIANTS = (GreedyTiebreak(), SoftDiscards(), PairedRoot(), KozelPlayout(), GreedyKozel(), Pimc(), PairedTree(),
            KozelValue(), GreedyWall(), WallPlayout(), GreedyTienGow(), TienGowPlayout(), TiuUPlayout(),
            TypedOpponents(), TiuUBefore())


def register() -> None:
    """Register every variant in this process (once)."""
    for variant in VARIANTS:
        if variant.id not in ai.ENGINES:
            ai.register(variant)


def main(argv: list[str] | None = None) -> int:
    register()
    from ai import arena_cli

    return arena_cli.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
