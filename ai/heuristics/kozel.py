"""Kozel heuristics (rules: ``shared/rules/kozel.md``): a one-ply greedy choice and a cheap playout policy.

Low totals are good in Kozel, so both shed weight: the heavier a tile, the more it costs if it is still in
hand when somebody goes out or the game fishes.  ``greedy`` adds what a player watches at the table:

* going out beats everything;
* doubles first: a double fits only one number and gets stuck more easily than a mixed tile;
* the 0-0 is shed early: it is worth nothing now but 25 if it is the last tile left (or always, with
  ``zero_zero_always_25``);
* keep numbers that can still be matched: prefer moves after which the own hand still fits an end, so the
  next turn is a play and not a trip to the bazaar.

Both use only what ``seat`` may know: its own hand and the public line.
"""

from __future__ import annotations

import random
from typing import cast

from ai.heuristics import Heuristics, play_to_deal_end, register
from engine.game import Move, State, below
from engine.kozel import (
    DOUBLE_PAIR,
    DOUBLES,
    DOUBLES_BASE,
    FIRST,
    FISH,
    LEFT,
    LEFT_PLAYS,
    NUM_TILES,
    OUT,
    RIGHT,
    RIGHT_PLAYS,
    ZERO_ZERO,
    KozelState,
    is_fish,
    pips,
)
from engine.tiles import D_HI, D_LO, D_OTHER, D_PIPS, domino

# What shedding a tile is worth to the playout policy: its pips, doubles a little more (they block easily),
# 0-0 as a middling tile because of its 25-point threat.  Indexed by move code; draw/pass are not scored.
_SHED: dict[int, float] = {}
for _t in range(28):
    _w = 8.0 if _t == ZERO_ZERO else D_PIPS[_t] + (2.0 if D_HI[_t] == D_LO[_t] else 0.0)
    for _e in range(3):
        _SHED[_t * 4 + _e] = _w
for _a in range(7):
    for _b in range(7):
        if _a != _b:
            _SHED[DOUBLES_BASE + _a * 7 + _b] = 2 * _a + 2 * _b + 4.0 + (8.0 if 0 in (_a, _b) else 0.0)


def _after(state: KozelState, move: Move) -> tuple[int, int, int]:
    """The mover's hand and the two ends after ``move`` (a play or the two-doubles move)."""
    code = move.code
    hand = state.hands[state.turn]
    left, right = state.left, state.right
    if code >= DOUBLES_BASE:
        x = code - DOUBLES_BASE
        a, b = x // 7, x % 7
        return hand & ~((1 << domino(a, a)) | (1 << domino(b, b))), left, right
    t, end = code >> 2, code & 3
    hand &= ~(1 << t)
    if end == FIRST:
        return hand, D_HI[t], D_LO[t]
    if end == LEFT:
        return hand, D_OTHER[t][left], right
    return hand, left, D_OTHER[t][right]


def score_move(state: KozelState, move: Move) -> float:
    """How good ``move`` looks to the player to move (higher is better)."""
    if move.code < 0:
        return 0.0
    before = state.hands[state.turn]
    hand, left, right = _after(state, move)
    if not hand:
        return 1000.0
    zz_always = state.zz25
    score = float(pips(before) - pips(hand))
    if before >> ZERO_ZERO & 1 and not hand >> ZERO_ZERO & 1:
        score += 10.0 if not zz_always else 25.0
    if move.code >= DOUBLES_BASE:
        score += 6.0
    elif D_HI[move.code >> 2] == D_LO[move.code >> 2]:
        score += 3.0
    fits = (hand & (NUM_TILES[left] | NUM_TILES[right])).bit_count()
    score += 2.0 * min(fits, 3)
    if not fits:
        score -= 4.0
    return score


def greedy(state: State, seat: int, rng: random.Random) -> Move:
    """The best-looking legal move of ``seat`` by ``score_move``; ties broken by ``rng``."""
    if not isinstance(state, KozelState):
        raise TypeError("the Kozel heuristics need a Kozel state")
    if state.to_move != seat:
        raise ValueError(f"it is not seat {seat}'s turn")
    moves = state.legal_moves()
    if len(moves) == 1:
        return moves[0]
    scored = [(score_move(state, m), m) for m in moves]
    top = max(s for s, _ in scored)
    return rng.choice([m for s, m in scored if s == top])


def playout(state: State, rng: random.Random) -> Move:
    """A cheap policy for playouts: usually the heaviest tile (ties at random), sometimes any move."""
    return _pick(state.legal_moves(), rng)


#: how often the playout policy plays a uniformly random move
_EXPLORE = 0.2


def _pick(moves: list[Move], rng: random.Random) -> Move:
    if len(moves) == 1 or rng.random() < _EXPLORE:
        return moves[below(rng, len(moves))]
    best = -1.0
    pick: list[Move] = []
    shed = _SHED
    for m in moves:
        w = shed[m.code]
        if w > best:
            best, pick = w, [m]
        elif w == best:
            pick.append(m)
    return pick[0] if len(pick) == 1 else pick[below(rng, len(pick))]


def _tops(table: dict[int, list[Move]]) -> dict[int, tuple[float, tuple[Move, ...]]]:
    """Per hand subset of an end's table (``LEFT_PLAYS[n]``, ``RIGHT_PLAYS[n]``): the heaviest ``_SHED``
    weight of its moves (-1 for none) and its moves of that weight in list order."""
    out = {}
    for sub, moves in table.items():
        best = max((_SHED[m.code] for m in moves), default=-1.0)
        out[sub] = (best, tuple(m for m in moves if _SHED[m.code] == best))
    return out


# ``_pick``'s heaviest moves at either end looked up instead of found by a loop over the moves: the
# rollout picks one per play (issue 14)
_LEFT_TOPS = tuple(_tops(table) for table in LEFT_PLAYS)
_RIGHT_TOPS = tuple(_tops(table) for table in RIGHT_PLAYS)


def rollout(state: State, rng: random.Random) -> None:
    """``playout`` move after move until the current round ends, in one call: the same moves and draws as
    the loop of ``playout`` and ``apply`` (``tests/test_rollouts.py`` compares the two from thousands of
    sampled positions).

    Issue 14: the moves of a player who can match an end are built from the engine's tables as
    ``legal_moves`` builds them, and a tile played at an end -- most moves of a round -- is applied here as
    the engine's ``_apply`` does it (hand, table, line, the new end, then going out, fish or the next
    seat); so are the two-doubles move, draws and passes.  The lead (only ever the rollout's first move)
    and the end of the round go through the engine's own ``legal_moves``, ``apply`` and ``_end_round``.

    On a halting world (the search's sample) the rollout does not keep the hand slots (``slots``, the
    public void facts that only ``determinize``, ``view`` and ``_apply``'s own slot bookkeeping read): a
    play does not drop its slot, a draw or pass does not record its void.  The search throws the world
    away after the rollout and reads only its ``running_payoffs`` (totals); ``_end_round`` reads the hands,
    not the slots; the engine's ``apply`` is called only for a lead, before the rollout has changed
    anything.  ``tests/test_rollouts.py`` therefore compares everything but the slots."""
    st = cast(KozelState, state)
    if not st.halt_at_deal_end:
        play_to_deal_end(st, playout, rng)
        return
    hands = st.hands
    line = st.line
    bazaar = st.bazaar
    drawn = st.drawn
    nxt = st.next
    getrandbits = rng.getrandbits
    random_ = rng.random
    if st.turn >= 0 and st.left < 0:
        st.apply(_pick(st.legal_moves(), rng))  # the lead
    s = st.turn
    if s < 0:
        return  # the round is over (before the rollout, or with the lead)
    # the seat to move, the ends, the tiles on the table and the last to play in locals, stored back when
    # the round ends (the loop's only way out)
    left = st.left
    right = st.right
    table = st.table
    last = st.last_player
    reason = OUT
    while True:
        hand = hands[s]
        a = hand & NUM_TILES[left]
        b = hand & NUM_TILES[right]
        if not (a or b):
            # draw or pass: one move, and ``_pick`` still draws its index (``below(rng, 1)`` spelled out)
            while getrandbits(1):
                pass
            if bazaar:
                # a draw, as ``KozelState._apply`` makes it (but for the slots)
                hands[s] = hand | 1 << bazaar.pop()
                drawn[s] += 1
                if not bazaar and is_fish(left, right, table):
                    reason = FISH
                    break
            else:
                s = nxt[s]
            continue
        at_left = LEFT_PLAYS[left][a]
        at_right = RIGHT_PLAYS[right][b]
        n = len(at_left) + len(at_right)
        pair = 0
        doubles = None
        if left != right:
            pair = DOUBLE_PAIR[left][right]
            if hand & pair == pair:
                doubles = DOUBLES[left * 7 + right]
                n += 1
        # ``_pick`` over the legal moves (plays at the left end, at the right end, the two doubles)
        if n == 1:
            # the one move (two doubles are never alone: L-L also plays at the left); ``below(rng, 1)``
            while getrandbits(1):
                pass
            code = (at_left or at_right)[0].code
        elif random_() < _EXPLORE:
            moves = at_left + at_right
            if doubles is not None:
                moves.append(doubles)
            code = moves[below(rng, n)].code
        else:
            # the heaviest of both ends' heaviest, ties in legal order
            w_left, top_left = _LEFT_TOPS[left][a]
            w_right, top_right = _RIGHT_TOPS[right][b]
            if w_left > w_right:
                best, top = w_left, top_left
            elif w_right > w_left:
                best, top = w_right, top_right
            else:
                best, top = w_left, top_left + top_right
            if doubles is not None:
                w = _SHED[doubles.code]
                if w > best:
                    top = (doubles,)
                elif w == best:
                    top += (doubles,)
            code = (top[0] if len(top) == 1 else top[below(rng, len(top))]).code
        # the move as ``KozelState._apply`` plays it (but for the slots)
        if code >= DOUBLES_BASE:
            # the two doubles: the ends show the same numbers as before
            hand ^= pair
            table |= pair
            line.append(domino(left, left) * 4 + LEFT)
            line.append(domino(right, right) * 4 + RIGHT)
        else:
            # a tile at an end
            t = code >> 2
            hand ^= 1 << t
            table |= 1 << t
            line.append(code)
            if code & 3 == LEFT:
                left = D_OTHER[t][left]
            else:
                right = D_OTHER[t][right]
        hands[s] = hand
        last = s
        if not hand:
            break
        if not bazaar and is_fish(left, right, table):
            reason = FISH
            break
        s = nxt[s]
    st.turn = s
    st.left = left
    st.right = right
    st.table = table
    st.last_player = last
    st._end_round(reason, None)


HEURISTICS = register("kozel", Heuristics(greedy=greedy, playout=playout, rollout=rollout))
