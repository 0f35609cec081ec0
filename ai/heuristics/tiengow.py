"""Tien Gow heuristics (rules: ``docs/rules/tiengow.md``, engine: ``engine/tiengow.py``).

* ``greedy(state, seat, rng)``: one-ply common sense.  The strongest single tile of the hand is *reserved* for
  the last trick (only the last trick settles the deal, §8–§9), so it is not led before then.  Leading: the
  largest group not using the reserved tile (a big group earns many columns), the weakest of that size
  first.  Following: beat with the cheapest (lowest ranked) winning group, or, when none, discard the
  weakest ``n`` tiles face down.  Tuned by self-play (docs/ai.md, "Tien Gow's greedy engine"): before
  2026-12-06 it led the strongest group of the largest size and did not beat with the reserved tile
  before the last trick; the engine of now beats that one by +1.9 points a deal (``greedy_with``).
* ``playout(state, rng)``: a policy for ISMCTS playouts that costs barely more than a uniform choice.  A
  leader lays greedy's lead (``greedy_lead``, cached per hand; until the sixteenth look, 2026-12-06, any
  lead, uniformly: ``uniform_playout``, measured weaker at equal time in docs/ai.md, "Tien Gow's playout
  lead"); a follower's legal move list is already ordered (beats strongest first, then discards in
  combination order), so it beats with the cheapest beat most of the time and otherwise discards the tail
  of the hand.
  ``rollout(state, rng)`` plays it to the end of the deal in one call (the search's fast path, built by
  the engine's search kit, ``engine.tiengow.rollout_of``).
* ``hidden(state, moves, rng)``: the search's model of which face-down discard another seat plays (the
  weakest tiles).  ``observe(state)`` is the search's fast path for another seat's tree node: the
  distinct observations of its moves and, for each, the move it plays (``hidden``'s for the discards;
  ``engine.tiengow.observer``).

Both look only at the moves of the player to move, that player's hand and the public trick (never at other
seats' hands or face-down discards).
"""

from __future__ import annotations

import random
from itertools import combinations

from ai.heuristics import Greedy, Heuristics, Policy, Rollout, register
from engine.game import Move, Seat, State, below
from engine.tiengow import DISCARD1, TienGowState, discard_of, follow_of, leads_for, observer, rollout_of
from engine.tiles import CF_CIVIL, CF_MILITARY_CLASS, CF_STRENGTH, FACES, Face

#: one comparable power per face across both suits (0..10): a Heaven and a nine head their suits;
#: civil strengths 11..1 and military classes 9..3 are spread over the same scale
POWER: tuple[float, ...] = tuple(
    CF_STRENGTH[f] * 10 / 11 if CF_CIVIL[f] else {9: 10.0, 8: 8.5, 7: 7.0, 6: 5.5, 5: 4.0, 3: 1.0}[
        CF_MILITARY_CLASS[f]]
    for f in FACES)


class _Powers(dict[tuple[Face, ...], float]):
    """faces -> the sum of their powers, summed once (in face order, so every float is the one the sum gives)
    and then looked up: the search asks it for every face-down discard another seat could make (``hidden``).
    Bounded by the few thousand multisets of 1-4 faces."""

    def __missing__(self, faces: tuple[Face, ...]) -> float:
        p = self[faces] = sum(POWER[f] for f in faces)
        return p


_power_of = _Powers().__getitem__
#: faces -> the sum of their powers, cached (``_Powers``): for ``ai.inference``'s opponent models
power_of = _power_of


def _power(move: Move) -> float:
    return _power_of(move.code[1])


def _reserve(hand: tuple[Face, ...]) -> Face | None:
    return max(hand, key=_POWER_AT) if len(hand) > 1 else None


_POWER_AT = POWER.__getitem__


def _unreserved(moves: list[Move], reserve: Face | None) -> list[Move]:
    """The moves that keep ``reserve`` back, or all of them when none does (or there is no reserve)."""
    return [m for m in moves if reserve not in m.code[1]] or moves


def greedy(state: State, seat: Seat, rng: random.Random) -> Move:
    """The heuristic choice of ``seat`` (which must be to move) from what it can see."""
    return _greedy(state, seat, rng, False, False)


def greedy_with(*, strongest_lead: bool = False, reserve_beats: bool = False) -> Greedy:
    """``greedy`` with the rules of before 2026-12-06, for screening by self-play (``bench.variants``:
    ``greedy_tiengow``): ``strongest_lead`` leads the strongest group of the largest size instead of the
    weakest, ``reserve_beats`` does not beat with the reserved tile before the last trick.  Both true is the
    greedy engine of before."""

    def choose(state: State, seat: Seat, rng: random.Random) -> Move:
        return _greedy(state, seat, rng, strongest_lead, reserve_beats)

    return choose


def _greedy(state: State, seat: Seat, rng: random.Random, strongest_lead: bool, reserve_beats: bool) -> Move:
    assert isinstance(state, TienGowState) and state.to_move == seat
    return _greedy_choice(state.legal_moves(), state.hands[seat], not state.cur, rng, strongest_lead,
                          reserve_beats)


def _greedy_choice(moves: list[Move], hand: tuple[Face, ...], leading: bool, rng: random.Random,
                   strongest_lead: bool, reserve_beats: bool) -> Move:
    if len(moves) == 1:
        return moves[0]
    reserve = _reserve(hand)
    if leading:
        keep = _unreserved(moves, reserve)
        # many tiles first, then the weakest group of that size (tuned by self-play; ``strongest_lead``: the
        # strongest); ties broken by the seeded rng
        sign = 1 if strongest_lead else -1
        return max(keep, key=lambda m: (len(m.code[1]), sign * m.code[3], rng.random()))
    beats = [m for m in moves if m.code[0]]
    if beats:
        last_trick = len(hand) == len(beats[0].code[1])  # this trick empties every hand
        keep = beats if last_trick or not reserve_beats else [m for m in beats if reserve not in m.code[1]]
        if keep:
            return min(keep, key=_beat_order)
    discards = [m for m in moves if not m.code[0]]
    return min(discards, key=_power)


def greedy_playout(state: State, rng: random.Random) -> Move:
    """``greedy`` for whichever seat is to move, with the same move and the same draws, at a search's cost:
    a follow takes the cheapest beat, else the weakest discard (``weakest``), without listing every discard
    of the hand (``engine.tiengow.follow_of``); a lead is ``greedy``'s own.  The search's opponent model
    (``ismcts:opponents=greedy``, Tien Gow's default) and ``ismcts:playout=greedy`` play it
    (``Heuristics.greedy_playout``; ``tests/test_heuristics.py`` holds it to ``greedy``)."""
    return _playout_with(state, rng, False, False)


def greedy_playout_with(*, strongest_lead: bool = False, reserve_beats: bool = False) -> Policy:
    """``greedy_with(strongest_lead=, reserve_beats=)`` for whichever seat is to move, at a search's cost, as
    ``greedy_playout`` is ``greedy``'s (the same move and the same draws): an opponent model of players who
    follow those rules of thumb (``MODELS``)."""

    def playout(state: State, rng: random.Random) -> Move:
        return _playout_with(state, rng, strongest_lead, reserve_beats)

    return playout


def _playout_with(state: State, rng: random.Random, strongest_lead: bool, reserve_beats: bool) -> Move:
    follow = follow_of(state)
    if follow is None:
        seat = state.to_move
        assert seat is not None, "a playout policy is only asked where a seat is to move"
        return _greedy(state, seat, rng, strongest_lead, reserve_beats)
    beats, hand, n = follow
    return _follow(hand, beats, n, reserve_beats)


def _follow(hand: tuple[Face, ...], beats: list[Move], n: int, reserve_beats: bool) -> Move:
    """``_greedy_choice``'s follow from the hand's ``beats`` and the trick's size ``n``, without listing the
    hand's face-down discards: the cheapest beat (with ``reserve_beats``, before the last trick, one that
    keeps the reserved tile back), else the weakest ``n`` tiles face down."""
    if beats:
        keep = beats
        if reserve_beats and len(hand) != n:
            reserve = _reserve(hand)
            keep = [m for m in beats if reserve not in m.code[1]]
        if keep:
            return min(keep, key=_beat_order)
    return weakest(hand, n)


def model_choice(hand: tuple[Face, ...], beats: list[Move] | None, n: int, model: tuple[bool, bool]) -> Move:
    """The move of a greedy model ``(strongest_lead, reserve_beats)`` (``MODELS``) from what it reads: its
    ``hand`` and, on a follow, the hand's ``beats`` of the high group and the trick's size ``n`` (``beats``
    ``None``: a lead, whose ties are broken by ``Random(0)``) -- for ``ai.inference``, which scores the
    other seats' past moves from the hands a world gives them."""
    strongest_lead, reserve_beats = model
    if beats is None:
        return _greedy_choice(leads_for(hand), hand, True, random.Random(0), strongest_lead, reserve_beats)
    return _follow(hand, beats, n, reserve_beats)


#: the greedy engines an opponent may play like, by name: ``(strongest_lead, reserve_beats)`` of
#: ``greedy_with`` (today's ``greedy`` and the engine of before 2026-12-06)
MODELS: dict[str, tuple[bool, bool]] = {"greedy": (False, False), "greedy_before": (True, True)}


def _beat_order(m: Move) -> tuple[int, float]:
    """``greedy``'s order of beats, cheapest first: the lowest rank, then the least power."""
    return m.code[3], _power_of(m.code[1])


def hidden(state: State, moves: list[Move], rng: random.Random) -> Move:
    """Which of several face-down discards (they look the same to the other seats) the mover plays, for a
    search that keys them as one observation: the weakest tiles, as ``greedy`` discards (the first of equally
    weak ones, as ``min`` picks)."""
    powers = [_power_of(m.code[1]) for m in moves]
    return moves[powers.index(min(powers))]


def weakest(hand: tuple[Face, ...], n: int) -> Move:
    """``hidden``'s choice among every face-down discard of ``n`` tiles of ``hand``: the first, in legal
    order (combinations of the hand, sorted by face id), of those with the least power.  Without listing
    them all: a weakest discard holds only tiles no stronger than the hand's ``n``-th weakest (a stronger
    one swapped for a weaker unused tile would lower the sum by at least the smallest gap between two
    powers, 1/22, far above any rounding of a sum of four), so only the combinations of those tiles are
    summed, in the same order and with the same sums (``_power_of``)."""
    if n == 1:
        return DISCARD1[min(hand, key=POWER.__getitem__)]
    cut = sorted(map(POWER.__getitem__, hand))[n - 1]
    weak = tuple([f for f in hand if POWER[f] <= cut])
    if len(weak) == n:
        return discard_of(weak)
    best = weak[:n]
    least = _power_of(best)
    for faces in combinations(weak, n):
        p = _power_of(faces)
        if p < least:
            best, least = faces, p
    return discard_of(best)


#: the playout's chance of the cheapest beat on a follow that has one
CHEAPEST_BEAT = 0.75
#: the playout's chance, when it does not beat, of the last discard listed (the weakest tiles)
LAST_DISCARD = 0.5


def greedy_lead(hand: tuple[Face, ...]) -> Move:
    """``greedy``'s lead of ``hand`` with its ties broken in legal order instead of by a draw: the largest
    group not using the reserved tile (the strongest single, kept for the last trick), the weakest of that
    size; the first such in legal order (``leads_for``).  No draw, so it is fixed per hand (``_Leads``)."""
    keep = _unreserved(leads_for(hand), _reserve(hand))
    # (size, -rank) as one int per move, looked up by the move's int key: no tuple built per lead; the first
    # of the greatest, as ``max`` picks
    order = [_LEAD_ORDER[m.key] for m in keep]
    return keep[order.index(max(order))]


def _lead_order() -> dict[int, int]:
    """lead move key -> ``size * 1000 - rank``, which orders leads as ``(size, -rank)`` does, for every lead
    of the set (the leads of a hand of two tiles of every face)."""
    every = leads_for(tuple(sorted(FACES * 2)))
    assert all(0 <= m.code[3] < 1000 for m in every)
    return {m.key: len(m.code[1]) * 1000 - m.code[3] for m in every}


_LEAD_ORDER = _lead_order()


class _Leads(dict[tuple[Face, ...], Move]):
    """hand -> ``greedy_lead(hand)``, computed once: a search's playouts lead from the same few hands again
    and again.  Bounded: cleared when full (sampled worlds deal hands without end)."""

    def __missing__(self, hand: tuple[Face, ...]) -> Move:
        if len(self) >= _LEADS_LIMIT:
            self.clear()
        m = self[hand] = greedy_lead(hand)
        return m


_LEADS_LIMIT = 100_000
_lead_of = _Leads().__getitem__


def playout(state: State, rng: random.Random) -> Move:
    """A cheap playout policy: a leader lays ``greedy``'s lead (``greedy_lead``: the weakest group of the
    largest size without the strongest tile, no draw); a follower mostly beats with the cheapest beat when
    one exists, else mostly discards its weakest tiles.  Until the sixteenth look (2026-12-06) it led
    uniformly (``uniform_playout``); the greedy lead is ahead of that at equal time (docs/ai.md, "Tien Gow's
    playout lead")."""
    return _lead_pick(state, rng, CHEAPEST_BEAT, LAST_DISCARD)


def uniform_playout(state: State, rng: random.Random) -> Move:
    """The playout of before the sixteenth look (2026-12-06): as ``playout``, but any lead, uniformly
    (``ismcts_tiengow_playout:lead=uniform`` in ``bench.variants`` searches with it)."""
    return _pick(state.legal_moves(), rng, CHEAPEST_BEAT, LAST_DISCARD)


def _pick(moves: list[Move], rng: random.Random, cheapest_beat: float, last_discard: float) -> Move:
    last = moves[-1]
    if last.code[0]:  # only face-up plays: a lead
        return moves[below(rng, len(moves))]
    if moves[0].code[0] and rng.random() < cheapest_beat:
        k = 1
        while moves[k].code[0]:
            k += 1
        return moves[k - 1]
    # discards come in combination order of the hand sorted strongest face first: the tail is weakest
    return last if rng.random() < last_discard else moves[below(rng, len(moves))]


def _lead_pick(state: State, rng: random.Random, cheapest_beat: float, last_discard: float) -> Move:
    moves = state.legal_moves()
    if moves[-1].code[0]:  # only face-up plays: a lead
        assert isinstance(state, TienGowState) and state.to_move is not None
        return _lead_of(state.hands[state.to_move])
    return _pick(moves, rng, cheapest_beat, last_discard)


#: ``observe(state)``, the search's fast path for another seat's tree node: the distinct observation keys
#: of its legal moves, in legal order, and for each key the move the seat plays -- the only move with that
#: key, or among the face-down discards (all observed as one) ``hidden``'s choice, the weakest
#: (``weakest``).  The same keys and moves as the search's general path (``legal_moves``,
#: ``observed_keys``, ``hidden``; ``tests/test_ai_observe.py`` compares them).
observe = observer(weakest)

#: ``rollout(state, rng)``: ``playout`` to the end of the deal in one call, with the same moves and draws,
#: its leads cached per hand (``engine.tiengow.rollout_of``; ``tests/test_rollouts.py`` plays both from
#: thousands of sampled positions and compares states and generators)
rollout = rollout_of(playout, cheapest_beat=CHEAPEST_BEAT, last_discard=LAST_DISCARD, lead=_lead_of)
#: ``uniform_playout`` to the end of the deal in one call (the fast path of before the sixteenth look)
uniform_rollout = rollout_of(uniform_playout, cheapest_beat=CHEAPEST_BEAT, last_discard=LAST_DISCARD)


def playout_with(*, lead: str, cheapest_beat: float, last_discard: float) -> tuple[Policy, Rollout]:
    """The heuristic playout and its fast path with other settings, for screening (``bench.variants``:
    ``ismcts_tiengow_playout``): ``lead`` ``"greedy"`` (``playout``'s leads) or ``"uniform"``
    (``uniform_playout``'s), and the follows' two chances."""
    if lead == "greedy":
        def policy(state: State, rng: random.Random) -> Move:
            return _lead_pick(state, rng, cheapest_beat, last_discard)

        return policy, rollout_of(policy, cheapest_beat=cheapest_beat, last_discard=last_discard, lead=_lead_of)

    def uniform(state: State, rng: random.Random) -> Move:
        return _pick(state.legal_moves(), rng, cheapest_beat, last_discard)

    return uniform, rollout_of(uniform, cheapest_beat=cheapest_beat, last_discard=last_discard)


#: Tien Gow's search plays each other seat's tree moves as the model of ``MODELS`` its moves in the deal make
#: likeliest would from its sampled hand (``Heuristics.default_opponents``, ``ismcts:opponents=typed``).  The
#: greedy engine alone as the model (``"greedy"``), together with the worlds arranged as that engine discards
#: (``ismcts:inference=true``, ``ai.inference.ARRANGE``), beat the search of before at equal time, at 100 ms
#: and at 1,000 ms (docs/ai-history.md, seventeenth and eighteenth looks); the library judged from the seats'
#: moves gains over that against players of the other model (twentieth look), and judged beside a searching
#: player (``ai.ismcts.SEARCHER``) is level with it head to head (twenty-first look)
DEFAULT_OPPONENTS = "typed"

HEURISTICS = register("tiengow", Heuristics(
    greedy=greedy, playout=playout, rollout=rollout, hidden=hidden, observe=observe, greedy_playout=greedy_playout,
    default_opponents=DEFAULT_OPPONENTS,
    models=tuple((name, greedy_playout if name == "greedy" else greedy_playout_with(strongest_lead=lead,
                                                                                     reserve_beats=reserve))
                 for name, (lead, reserve) in MODELS.items())))
