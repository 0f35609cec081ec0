"""The wall variant's greedy engine (``ai.heuristics.tiengow_wall.greedy``, the search's playout policy) makes
exactly the choices of its plain first version, kept below as ``_reference_greedy`` (the fast
version skips repeated placements, scores from the tops it has and decides which tiles are sure once per
call; ties between equal scores decide the move, so the scores must be the same floats, summed in the same
order).  Compared on thousands of positions of 2, 3 and 4 players reached by random and by greedy play,
for the seat to move, in the real position and in a world sampled for that seat (what the search plays)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from itertools import combinations

import pytest
from positions import walked

import engine
from ai.heuristics import play_to_deal_end
from ai.heuristics import tiengow_wall as heuristics
from engine.game import Move
from engine.tiengow_wall import (
    BEATS,
    CIVIL,
    DECK_COUNTS,
    NAME,
    NUM,
    PAIR,
    STRENGTH,
    TienGowWallState,
    lead_move,
    place_move,
)

# --------------------------------------------------------------------------- the reference (first version)

_VALUE: tuple[float, ...] = tuple(STRENGTH[f] / (11 if CIVIL[f] else 10) for f in range(NUM))
_BEATEN_BY: tuple[tuple[int, ...], ...] = tuple(tuple(g for g in range(NUM) if BEATS[g][f]) for f in range(NUM))
_CHEAPEST: tuple[int, ...] = tuple(sorted(range(NUM), key=lambda g: (_VALUE[g], g)))
_RANK: tuple[int, ...] = tuple(_CHEAPEST.index(f) for f in range(NUM))


def _ref_can_be_beaten(face: int, unseen: list[int]) -> bool:
    return any(unseen[g] for g in _BEATEN_BY[face])


def _ref_higher_pair_possible(rank: int, unseen: list[int]) -> bool:
    for (a, b), r in PAIR.items():
        if r > rank and unseen[a] and unseen[b] and (a != b or unseen[a] >= 2):
            return True
    return False


def _ref_lead(state: TienGowWallState, seat: int) -> Move:
    hand = state.hands[seat]
    unseen = state.unseen_counts(seat)
    sure = [f for f in hand if not _ref_can_be_beaten(f, unseen)]
    if not sure:
        # the middle tile, cheapest first (the self-play-tuned lead of 2026-12-06; before it, the weakest)
        by_cost = sorted(hand, key=lambda f: (_VALUE[f], f))
        return lead_move((by_cost[len(by_cost) // 2],))
    lead = sorted(sure, key=lambda f: (-_VALUE[f], f))[:4]
    if len(lead) == 2:
        rank = PAIR.get((lead[0], lead[1]), 0)
        if rank and _ref_higher_pair_possible(rank, unseen):
            lead = lead[:1]
    return lead_move(tuple(sorted(lead)))


def _ref_settle(state: TienGowWallState, faces: tuple[int, ...]) -> list[bool]:
    cols = state.cols
    if state.pair and len(faces) == 2 and PAIR.get((faces[0], faces[1]), 0) > state.pair:
        return [True, True]
    return [BEATS[f][cols[i][-1] >> 2] for i, f in enumerate(faces)]


def _ref_follow(state: TienGowWallState, seat: int, open_column: float = 50) -> Move:
    hand = state.hands[seat]
    cols = state.cols
    n = len(cols)
    unseen = state.unseen_counts(seat)
    last = (seat + 1) % state.players == state.leader
    tops = [c[-1] >> 2 for c in cols]
    cheapest = sorted(hand, key=_RANK.__getitem__)
    order = sorted(range(n), key=lambda i: -STRENGTH[tops[i]])
    candidates: list[tuple[int, ...]] = []
    for k in range(n + 1):
        for wanted in combinations(order, k):
            rest = cheapest[:]
            chosen: dict[int, int] = {}
            for i in wanted:
                top = tops[i]
                for f in rest:
                    if BEATS[f][top]:
                        break
                else:
                    break
                chosen[i] = f
                rest.remove(f)
            else:
                spare = iter(rest)
                candidates.append(tuple(chosen[i] if i in chosen else next(spare) for i in range(n)))
    if state.pair and n == 2:
        for a, b in combinations(hand, 2):
            if PAIR.get((a, b), 0) > state.pair:
                candidates.append((a, b))
    best: tuple[float, tuple[int, ...]] | None = None
    for faces in candidates:
        won = _ref_settle(state, faces)
        score = -sum(_VALUE[f] for f in faces)
        for i, w in enumerate(won):
            if w:
                score += 100 if last or not _ref_can_be_beaten(faces[i], unseen) else open_column
        if best is None or score > best[0]:
            best = (score, faces)
    assert best is not None
    return place_move(best[1])


def _reference_greedy(state: TienGowWallState, seat: int) -> Move:
    """The greedy engine's choice as first written (``ai/heuristics/tiengow_wall.py`` before its fast paths)."""
    if not state.cols:
        return _ref_lead(state, seat)
    return _ref_follow(state, seat)


# --------------------------------------------------------------------------- positions


def _positions(players: int, games: int, seed: int) -> Iterator[TienGowWallState]:
    """Every position of ``games`` matches, each played to its end by random moves, by the greedy engine or
    by a mix (a pair lead now and then, so that standing pairs are met), and a world sampled for the seat to
    move at each of them."""
    rng = random.Random(f"wall-greedy/{players}/{seed}")
    for g in range(games):
        state = engine.new_game("tiengow_wall", players=players, seed=seed * 1000 + g, options={"games": 2})
        style = g % 3  # 0 random, 1 greedy, 2 mixed
        while not state.finished:
            yield state
            yield state.determinize(state.to_move, rng)
            seat = state.to_move
            if style == 1 or (style == 2 and rng.random() < 0.5):
                move = heuristics.greedy(state, seat, rng)
            else:
                moves = state.legal_moves()
                pairs = [m for m in moves[:200] if len(m.code) == 2 and PAIR.get(m.code)] if not state.cols else []
                move = rng.choice(pairs) if pairs and rng.random() < 0.3 else moves[rng.randrange(len(moves))]
            state.apply(move)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_a_screened_follow_makes_the_reference_choice(players):
    """``greedy_with(open_column=...)`` (screening only, ``bench.variants``): the follow that counts a column
    won that is not sure as 0 or 0.3 instead of 50 makes the plain reference's choice with that weight, its
    one-column shortcut included."""
    for open_column in (0.0, 0.3):
        choose = heuristics.greedy_with(open_column=open_column)[0]
        follows = 0
        for state in _positions(players, 20, 10 + players):
            seat = state.to_move
            assert seat is not None
            if state.cols:
                assert choose(state, seat, random.Random(0)) is _ref_follow(state, seat, open_column), state.to_dict()
                follows += 1
        assert follows > 150


@pytest.mark.parametrize("players", [2, 3, 4])
def test_greedy_makes_the_reference_choice(players):
    checked = follows = pair_follows = 0
    for state in _positions(players, 60, players):
        seat = state.to_move
        assert seat is not None
        got = heuristics.greedy(state, seat, random.Random(0))
        want = _reference_greedy(state, seat)
        assert got is want, f"{players}p: {state.to_dict()} -> {got.id}, reference {want.id}"
        checked += 1
        follows += bool(state.cols)
        pair_follows += bool(state.cols and state.pair)
    assert checked > 1000 and follows > 500 and pair_follows > 10, (checked, follows, pair_follows)


def test_greedy_makes_the_reference_choice_on_standing_pairs():
    """Followers against a standing pair, often with a pair of their own (rare in play): the lead's pair
    and a random deal of the rest, followed by greedy or random moves to the end of the round."""
    rng = random.Random(5)
    pair_leads = [k for k in PAIR if k[0] <= k[1]]
    checked = 0
    while checked < 2000:
        players = rng.choice([2, 3, 4])
        lead = rng.choice(pair_leads)
        pool = [f for f in range(NUM) for _ in range(DECK_COUNTS[players][f])]
        if any(pool.count(f) < lead.count(f) for f in lead):
            continue  # 3 players play without the commanders
        for f in lead:
            pool.remove(f)
        rng.shuffle(pool)
        size = rng.randrange(2, 6)
        hands = [[*lead, *pool[:size - 2]]]
        rest = pool[size - 2:]
        for _ in range(players - 1):
            hand = rest[:size]
            rest = rest[size:]
            hands.append(hand)
        state = TienGowWallState.from_hands([[NAME[f] for f in h] for h in hands], leader=0)
        state.play("lead:" + "+".join(NAME[f] for f in sorted(lead)))
        while state.cols and not state.finished:
            seat = state.to_move
            assert seat is not None
            got = heuristics.greedy(state, seat, rng)
            assert got is _reference_greedy(state, seat), state.to_dict()
            checked += 1
            state.apply(got if rng.random() < 0.5 else rng.choice(state.legal_moves()))


def test_the_rollout_stops_at_the_end_of_the_game_on_a_world_that_does_not_halt():
    """``test_rollouts`` compares the rollout with the playout loop on worlds that halt at the end of the
    deal, as the search's tree sets them; the paired root's copies do not halt (``clone`` does not copy the
    flag), so the rollout must stop by itself when a game of several ends, with the next game dealt."""
    checked = 0
    for seed in range(60):
        state = walked("tiengow_wall", 2 + seed % 3, seed, 8, {"games": 2})
        if state.finished:
            continue
        assert not state.halt_at_deal_end
        fast, slow = state.clone(), state.clone()
        heuristics.rollout(fast, random.Random(seed))
        play_to_deal_end(slow, heuristics.playout, random.Random(seed))
        assert fast.to_dict() == slow.to_dict(), seed
        checked += fast.deals_done == 1 and not fast.finished
    assert checked > 30


def test_without_a_sure_tile_greedy_leads_the_middle_tile_of_its_hand():
    """The greedy lead (``ai.heuristics.tiengow_wall._lead``, tuned by self-play, docs/ai.md "The wall
    game's greedy lead"): when no tile of the hand is sure -- the other seats hold both Heavens (6-6, the
    strongest civil tile) and both commanders (4-2, 2-1), so any tile of either suit can be taken -- the
    leader lays one tile, the middle one of its hand ordered cheapest first, not the weakest."""
    hand = ["1-1", "4-4", "3-1", "5-5", "3-3", "6-3", "5-2", "4-1"]
    deck = [NAME[f] for f in range(NUM) for _ in range(DECK_COUNTS[4][f])]
    for tile in hand:
        deck.remove(tile)
    state = TienGowWallState.from_hands([hand, deck[0:8], deck[8:16], deck[16:24]], leader=0)
    assert {"6-6", "4-2", "2-1"} <= set(deck)  # no tile of the hand is sure
    by_cost = [NAME[f] for f in sorted(state.hands[0], key=lambda f: (_VALUE[f], f))]
    assert by_cost == ["4-1", "3-3", "5-5", "5-2", "3-1", "4-4", "6-3", "1-1"]
    assert heuristics.greedy(state, 0, random.Random(0)).id == "lead:3-1"  # by_cost[4], of eight tiles
