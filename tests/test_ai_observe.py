"""The search's fast path for another seat's tree node (``ai.heuristics.tiengow.observe``) is the
general path: at every node where a seat other than the searching one is to move, SO-ISMCTS keys the
children by what the searching seat observes (Tien Gow's face-down discards are one observation,
"n tiles face down") and, when the descent passes the discard node, plays the discard of the rule set's
hidden model (``hidden``: the weakest tiles).  ``observe`` must give the same distinct keys in the same
order and the same move for each as ``legal_moves`` + ``observed_keys`` + ``_with_observation`` do, from
positions of every Tien Gow variant: leads, follows of singles and of groups, the §7 early death, and
hands whose weakest tiles tie."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from positions import walked

import engine
from ai.heuristics import tiengow as heuristics
from ai.ismcts import _with_observation
from engine import tiengow as rules
from engine.game import Move, State
from engine.tiles import CF_COPIES, FACES


def _general(state: State, seat: int) -> tuple[list[int], list[Move]]:
    """What the search's general path makes of the node (``ai.ismcts.search`` without ``observe``)."""
    moves = state.legal_moves()
    keys = state.observed_keys(moves, seat)
    distinct = list(dict.fromkeys(keys))
    rng = random.Random(0)  # the hidden model draws nothing; a draw would show as a different generator
    played = [_with_observation(state, seat, moves, keys, k, heuristics.playout, rng, heuristics.hidden)
              for k in distinct]
    assert rng.getstate() == random.Random(0).getstate()
    return distinct, played


def _kind(state: rules.TienGowState) -> str:
    t = state.to_move
    hand = state.hands[t]
    if not state.cur:
        return "lead"
    if len(hand) == 1 and not state.columns[t] and state.options["early_death"]:
        return "early death"
    n = len(state.cur[0][2])
    powers = sorted(heuristics.POWER[f] for f in hand)
    tie = len(hand) > n and powers[n - 1] == powers[n]
    return f"follow of {n}" + (", weakest tiles tie" if tie else "")


def _positions(options: dict, count: int):
    for seed in range(count):
        state = walked("tiengow", 4, seed, 70, options)
        if not state.finished:
            yield state


VARIANTS = [{}, *(o for _p, o in engine.RULES["tiengow"].variants)]


@pytest.mark.parametrize("options", VARIANTS, ids=[",".join(f"{k}={v}" for k, v in o.items()) or "default"
                                                  for o in VARIANTS])
def test_observe_gives_the_general_paths_keys_and_moves(options):
    """The observation keys and the hidden model's discard, by the fast path and the general one."""
    kinds: Counter[str] = Counter()
    for state in _positions(options, 600):
        mover = state.to_move
        keys, played = heuristics.observe(state)
        for seat in range(4):
            if seat == mover:
                continue
            want_keys, want_played = _general(state, seat)
            assert keys == want_keys, f"{_kind(state)}: other keys than the general path"
            assert [m.id for m in played] == [m.id for m in want_played], f"{_kind(state)}: other moves"
            assert all(a is b for a, b in zip(played, want_played, strict=True))
        kinds[_kind(state)] += 1
    # the positions reach every case the fast path distinguishes
    assert kinds["lead"] > 50 and kinds["follow of 1"] > 50
    assert kinds["follow of 1, weakest tiles tie"] > 10 and kinds["follow of 2, weakest tiles tie"] > 0
    assert kinds["follow of 2"] > 10 and kinds["follow of 3"] + kinds["follow of 4"] > 0
    if options.get("early_death", True):
        assert kinds["early death"] > 0


def test_weakest_is_the_first_of_the_least_powerful_discards():
    """``weakest`` against every discard listed, on hands that exercise ties between equal powers (two
    copies of a face, the military nines 6-3 and 5-4, a Heaven against a military nine)."""
    walk = random.Random(7)
    deck = [f for f in FACES for _ in range(CF_COPIES[f])]
    checked = 0
    for _ in range(3000):
        hand = tuple(sorted(walk.sample(deck, walk.randint(1, 8))))
        for n in range(1, min(4, len(hand)) + 1):
            discards = [m for m in rules.moves_for(hand, _follow_of(n)) if not m.code[0]]
            if not discards:
                continue
            want = heuristics.hidden(None, discards, walk)
            assert heuristics.weakest(hand, n) is want, (hand, n)
            checked += 1
    assert checked > 5000


def _follow_of(n: int) -> int:
    """A situation facing a group of ``n`` tiles (any: only the discards are compared)."""
    return next(sit for sit, size in rules._SIZE.items() if size == n)
