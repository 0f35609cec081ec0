"""ISMCTS finds the one winning move in a constructed endgame of every rule set.

Each endgame is built with its rule set's own test helper (``from_position`` / ``from_layout`` /
``from_hands``) plus, where needed, a few public moves to reach the decision.  The test first proves that
exactly one move wins: over many determinizations of the deciding seat's information set and over every
continuation line to the end of the deal, the winning move's worst payoff change for that seat is
strictly better than every other move's best.  Only then does it ask ISMCTS, through ``ai.decide``.
(The positions were found by a brute-force scan of small random endgames with this same criterion.)
"""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

import ai
import engine
from engine.game import Seat, State


def _after(state: State, *move_ids: str) -> State:
    for mid in move_ids:
        state.play(mid)
    return state


def tiengow() -> State:
    from engine.tiengow import TienGowState

    # Seat 2 (banker) leads 6-1 in the second-last trick, seat 3 throws 4-2 face down, seat 0 plays 2-2:
    # seat 1 wins the trick, and with it the last one, only with its 1-1.
    start = TienGowState.from_position([["6-3", "2-2"], ["3-2", "1-1"], ["6-1", "4-4"], ["4-2", "4-4"]],
                                       banker=2, leader=2)
    return _after(start, "play:6-1", "discard:4-2", "play:2-2")


def tiuu() -> State:
    from engine.tiuu import TiuUState

    start = TiuUState.from_layout(2, hands=[["3-3", "6-3"], ["5-5", "6-5"]], pool=["6-4", "6-3", "1-1", "5-4"],
                                  stock=["1-1", "6-5", "2-2"], turn=0)
    return _after(start, "capture:6-3+6-3")


def kozel() -> State:
    from engine.kozel import KozelState

    # bazaar empty, 23 tiles laid: seat 0 must keep the ends open for its own tiles and shut out 3-3
    line = [("6-6", "first"), ("6-3", "left"), ("3-1", "left"), ("6-4", "right"), ("5-1", "left"),
            ("5-5", "left"), ("5-0", "left"), ("2-0", "left"), ("2-2", "left"), ("5-4", "right"),
            ("3-2", "left"), ("5-2", "right"), ("5-3", "left"), ("4-2", "right"), ("4-0", "right"),
            ("0-0", "right"), ("6-0", "right"), ("6-2", "right"), ("6-5", "left"), ("2-1", "right"),
            ("6-1", "left"), ("1-0", "left"), ("3-0", "left")]
    return KozelState.from_position([["4-4", "4-3", "4-1", "1-1"], ["3-3"]], bazaar=[], line=line, to_move=0)


def tiengow_wall() -> State:
    from engine.tiengow_wall import TienGowWallState

    start = TienGowWallState.from_hands([["4-4", "5-1"], ["6-5", "6-3"]], leader=0)
    return _after(start, "lead:4-4")


#: rules id -> (endgame builder, the one winning move)
ENDGAMES: dict[str, tuple[Callable[[], State], str]] = {
    "tiengow": (tiengow, "play:1-1"),
    "tiuu": (tiuu, "capture:6-5+6-5"),
    "kozel": (kozel, "play:4-3@left"),
    "tiengow_wall": (tiengow_wall, "place:6-3>0"),
}


def _payoff_range(state: State, seat: Seat, deal: int, base: float, cap: int = 20_000) -> tuple[float, float]:
    """Smallest and largest change of ``seat``'s payoff over every line to the end of the deal."""
    lo, hi, stack, seen = float("inf"), float("-inf"), [state], 0
    while stack:
        s = stack.pop()
        if s.to_move is None or s.deals_done != deal:
            v = s.running_payoffs()[seat] - base
            lo, hi = min(lo, v), max(hi, v)
            continue
        seen += 1
        assert seen < cap, "the endgame is too large to enumerate"
        for m in s.legal_moves():
            child = s.clone()
            child.apply(m)
            stack.append(child)
    return lo, hi


def exactly_one_winning_move(state: State, worlds: int = 30) -> str | None:
    seat = state.to_move
    assert seat is not None
    ranges: dict[str, tuple[float, float]] = {}
    for k in range(worlds):
        world = state.determinize(seat, random.Random(k))
        deal, base = world.deals_done, world.running_payoffs()[seat]
        for m in world.legal_moves():
            child = world.clone()
            child.apply(m)
            lo, hi = _payoff_range(child, seat, deal, base)
            old = ranges.get(m.id, (lo, hi))
            ranges[m.id] = (min(old[0], lo), max(old[1], hi))
    winners = [mid for mid, (lo, _) in ranges.items()
               if all(lo > hi for other, (_, hi) in ranges.items() if other != mid)]
    return winners[0] if len(ranges) > 1 and winners else None


def test_every_rule_set_has_a_constructed_endgame():
    assert set(engine.RULES) <= set(ENDGAMES), f"no endgame for {sorted(set(engine.RULES) - set(ENDGAMES))}"


CASES = sorted(set(engine.RULES) & set(ENDGAMES))


@pytest.mark.parametrize("rules_id", CASES)
def test_the_constructed_endgame_has_exactly_one_winning_move(rules_id):
    build, winner = ENDGAMES[rules_id]
    assert exactly_one_winning_move(build()) == winner


@pytest.mark.parametrize("rules_id", CASES)
@pytest.mark.parametrize("playout", ["random", "heuristic", "greedy"])
def test_ismcts_finds_the_one_winning_move(rules_id, playout):
    build, winner = ENDGAMES[rules_id]
    state = build()
    for seed in (1, 2, 3):
        d = ai.decide("ismcts", state, state.to_move,
                      {"iterations": 300, "time_ms": 600_000, "playout": playout}, seed=seed)
        assert d.move.id == winner, d.stats["candidates"]
