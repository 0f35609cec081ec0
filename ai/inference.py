"""Inference: worlds weighted by what the other seats have done, for the search to sample from.

A determinization (``state.determinizer(seat)``) is uniform over the worlds the searching seat cannot tell
apart.  But the other seats did not play at random: a seat that discarded face down could, as a rule, not
beat; the tiles a seat put face down were, as a rule, its weakest; a seat leads what it holds best.  The
strongest programs of hidden-information card games (Skat's Kermit, bridge and Hearts engines) weight the
sampled hands by how likely each one makes what the opponents actually did.  This module does that:

1. draw ``K`` candidate worlds of the information set (the rule set's own determinizer, uniform);
2. for each, rebuild the deal's start as that world has it (every seat's hand then: its hand now plus what
   it played, face-down discards included, which the world dealt afresh), replay the deal's moves so far,
   and score every other seat's move under an **opponent model**: the rule set's greedy heuristic with a
   noise rate ``eps``, ``P(move) = (1 - eps) [move plays like greedy's] + eps / legal moves``;
3. hand the search a sampler that draws one of the candidates in proportion to its likelihood (importance
   resampling) and gives a copy of it.

Only what the seat saw is used: the candidates are samples of its information set, the moves replayed are
the deal's history as every candidate world has it (the public moves are the same in all of them; the
tiles of other seats' face-down discards are the candidate's own sample, never the true ones), and the
weights are computed from the candidate alone.  So the sampler, like the determinizer, is a function of the
information set and the generator (``tests/test_ai_inference.py`` checks: two true states with the same
observation history give the same decision).

Which rule sets: those with a replay below (``REPLAYS``): Tien Gow, whose deal starts from four known hand
sizes and no stock, Kozel, whose round the engine rebuilds from its public history and the world's hands
(``engine.kozel.round_replay``: which draw brought which tile is the world's, as its slots allow), and Tiu U,
whose part-1 choices the engine records with the table each was made at (``engine.tiuu.part1_replay``: a
seat's hand then is its hand now plus what it has played since, back to its last draw).  A Tiu U candidate is
weighed for its hands and handed to the search with the stock's order drawn afresh (``REDRAW``).  Elsewhere
``sampler`` returns ``None`` and the search keeps the uniform one.  The
cost (``K`` replays with a greedy call per other seat's move) is paid inside the decision's time budget.  At
Tien Gow the greedy model needs no replay: greedy reads only the mover's hand, its situation and its legal
moves, so each move is scored from the hand the world gives the mover then and the move's public situation
(``_TienGowScorer``, held to the replay move for move by ``tests/test_ai_inference.py``), and the Metropolis
chain walks light worlds (hands and face-down plays) with each seat's part of the likelihood remembered.
"""

from __future__ import annotations

import math
import random
import time
from bisect import bisect_right
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, cast

from ai.heuristics import kozel as kozel_heuristics
from ai.heuristics import tiengow as tiengow_heuristics
from ai.heuristics import tiuu as tiuu_heuristics
from engine.game import Move, Seat, State
from engine.kozel import round_replay
from engine.tiengow import DEAD, GROUPS, LEAD, TienGowState, beats_for, hand_names, leads_for, situations
from engine.tiles import Face
from engine.tiuu import PART1, TiuUState, part1_replay

#: one move of the history as the replay sees it: the state before the move, the mover, and the move
Step = tuple[State, Seat, Move]
#: the candidate world -> the deal's moves so far, each with the state before it (one state, played on: valid
#: until the next step)
Replay = Callable[[State], Iterator[Step]]
#: (state before the move, mover, the move played) -> whether the greedy heuristic plays like that
Agrees = Callable[[State, Seat, Move], bool]


def _tiengow_replay(world: State) -> Iterator[Step]:
    """The deal's moves so far as ``world`` has them: the deal's start rebuilt from every seat's hand now
    plus the tiles it played (face-down discards as ``world`` dealt them), then each play applied."""
    w = cast(TienGowState, world)
    plays = [p for _l, _w, ps in w.tricks for p in ps] + list(w.cur)
    if not plays:
        return
    start = [list(h) for h in w.hands]
    for p, _up, faces in plays:
        start[p].extend(faces)
    state = TienGowState.from_position([hand_names(sorted(h)) for h in start], banker=w.banker,
                                       options=w.options)
    for p, up, faces in plays:
        move = next(m for m in state.legal_moves() if m.code[0] == up and m.code[1] == faces)
        yield state, p, move
        state.apply(move)


def _tiengow_agrees(state: State, seat: Seat, move: Move) -> bool:
    """Whether ``move`` plays like the greedy heuristic's choice: the same group (type, rank and size) face
    up, or face down tiles of the same total power (greedy breaks ties among equals either way, with a
    generator of its own, so that no call depends on an earlier one)."""
    g = tiengow_heuristics.greedy(state, seat, random.Random(0))
    if g is move:
        return True
    if g.code[0] != move.code[0]:
        return False
    if g.code[0]:
        return g.code[2] == move.code[2] and g.code[3] == move.code[3] and len(g.code[1]) == len(move.code[1])
    power = tiengow_heuristics.POWER
    return abs(sum(power[f] for f in g.code[1]) - sum(power[f] for f in move.code[1])) < 1e-9


def _tiengow_arrange(world: State, seat: Seat) -> State:
    """The world with every other seat's face-down discards made its weakest tiles, as the opponent model
    discards: per seat, the tiles the world gave it that ``seat`` has not seen (its hand now and its
    face-down discards) are put, weakest first, into its discards in the order they were played, the rest
    in its hand.  The tiles each seat holds stay the world's uniform sample; only which of them went down
    follows the model."""
    w = cast(TienGowState, world)
    plays = [p for _l, _w, ps in w.tricks for p in ps] + list(w.cur)
    mine: dict[int, list[Face]] = {}
    for p, up, faces in plays:
        if not up and p != seat:
            mine.setdefault(p, list(w.hands[p])).extend(faces)
    if not mine:
        return world
    weakest = {p: sorted(tiles, key=_STRENGTH_AT, reverse=True) for p, tiles in mine.items()}
    face_down = []
    for p, up, faces in plays:
        if up:
            continue
        if p == seat:
            face_down.append(faces)
        else:
            pool = weakest[p]
            face_down.append(tuple(sorted(pool[-len(faces):])))
            del pool[-len(faces):]
    hands = [tuple(sorted(weakest[p])) if p in weakest else h for p, h in enumerate(w.hands)]
    return w.rearranged(hands, face_down)


def _strength(f: Face) -> tuple[float, int]:
    return tiengow_heuristics.POWER[f], f


#: face -> its place in the order of ``_strength`` (power, then face id): the same order, one lookup a tile
_STRENGTH_AT = {f: i for i, f in enumerate(sorted(range(len(tiengow_heuristics.POWER)), key=_strength))}.__getitem__


def _of_best_score(score: Callable[[State, Move], float]) -> Agrees:
    """The agreement test of a greedy heuristic that plays a move of the best ``score`` (drawing among equal
    scores, so any of them is its choice)."""

    def agrees(state: State, seat: Seat, move: Move) -> bool:
        del seat  # the mover is the state's player to move
        return score(state, move) >= max(score(state, m) for m in state.legal_moves())

    return agrees


def _tiuu_score(state: State, move: Move) -> float:
    """The greedy engine's value of a Tiu U move for the seat to move (``ai.heuristics.tiuu.move_value``)."""
    st = cast(TiuUState, state)
    return tiuu_heuristics.move_value(st, st.turn, move)


#: Kozel's greedy score of a move (``ai.heuristics.kozel.score_move``), as a function of any state
_kozel_score = cast(Callable[[State, Move], float], kozel_heuristics.score_move)


#: rule set id -> (replay of the deal so far, the opponent model's agreement test)
REPLAYS: dict[str, tuple[Replay, Agrees]] = {
    "tiengow": (_tiengow_replay, _tiengow_agrees),
    # Kozel: the round's plays, as the world holds the hands (engine.kozel.round_replay)
    "kozel": (cast(Replay, round_replay), _of_best_score(_kozel_score)),
    # Tiu U: the game's part-1 choices, as the world holds the hands (engine.tiuu.part1_replay)
    "tiuu": (cast(Replay, part1_replay), _of_best_score(_tiuu_score)),
}
#: rule set id -> how a candidate world drawn by the sampler is handed to the search (a copy by default).
#: Tiu U's comes with the face-down stock's order drawn afresh: a candidate is weighed for its hands, no move
#: tells of the stock's order, and a few fixed orders would let the search play as if it knew the draws
REDRAW: dict[str, Callable[[State, random.Random], State]] = {
    "tiuu": lambda world, rng: world.restocked(rng),
}
#: rule set id -> the opponent model's placement of a world's hidden tiles (Tien Gow: discards are weakest)
ARRANGE: dict[str, Callable[[State, Seat], State]] = {
    "tiengow": _tiengow_arrange,
}


#: the noise rates a seat's own ``eps`` is integrated over when ``eps`` is 0 (a uniform prior on this grid)
EPS_GRID = (0.02, 0.1, 0.3, 0.6, 0.9)


@dataclass(frozen=True)
class SearchModel:
    """The opponent model of *searching* players (``model="search"``): four chances, fitted by maximum
    likelihood on deals of the search itself (``tilehouse bench inference --fit``), instead of "greedy,
    with noise".  A lead: greedy's lead with chance ``lead``, else uniform over the legal leads.  A follow
    that has a beat: a beat with chance ``beat`` -- the cheapest beat with chance ``cheapest``, else uniform
    over the beats -- or else a face-down discard.  A discard (whether or not a beat was there): the weakest
    tiles with chance ``weakest``, else uniform over the discards.  The search agrees with greedy's lead
    hardly more often than chance, beats when it can about three times in five and discards its weakest
    tiles by choice about a third of the time: so a lead says little of a hand, and a discard where the world
    had a beat costs a world only a factor of 1 / (1 - beat), where the greedy model with small noise rules
    it out."""

    lead: float
    beat: float
    cheapest: float
    weakest: float


#: rule set id -> the fitted model of searching players: ``tilehouse bench inference tiengow --fit --engine
#: ismcts:iterations=1000,time_ms=600000 --sets 40 --seed 1001`` (870 decisions; docs/ai.md, "Inference")
SEARCH_MODELS: dict[str, SearchModel] = {
    "tiengow": SearchModel(lead=0.04, beat=0.63, cheapest=0.47, weakest=0.37),
}

#: a decision of another seat as the search model sees it: (kind, plays like the model's favourite, options,
#: favourites) with kind ``lead``, ``beat``, ``discard`` (a beat was there) or ``forced discard`` (none was);
#: equally good favourites (a tie) share the favourite's chance
Feature = tuple[str, bool, int, int]


def _tiengow_feature(before: State, mover: Seat, move: Move) -> Feature:
    """What the search model weighs of ``move`` (``SearchModel``): its kind, whether it is a favourite of
    that kind (greedy's lead -- any group like it, as ``_tiengow_agrees`` counts --, the cheapest beat, the
    weakest discard), among how many moves of that kind and how many favourites."""
    moves = before.legal_moves()
    if not cast(TienGowState, before).cur:
        g = tiengow_heuristics.greedy(before, mover, random.Random(0))
        like = [m for m in moves if m.code[2] == g.code[2] and m.code[3] == g.code[3]
                and len(m.code[1]) == len(g.code[1])]
        return "lead", move in like, len(moves), len(like)
    power = tiengow_heuristics.power_of
    beats = [m for m in moves if m.code[0]]
    if move.code[0]:
        best = min((m.code[3], power(m.code[1])) for m in beats)
        cheapest = [m for m in beats if (m.code[3], power(m.code[1])) == best]
        return "beat", move in cheapest, len(beats), len(cheapest)
    discards = [m for m in moves if not m.code[0]]
    least = min(power(m.code[1]) for m in discards)
    weakest = [m for m in discards if abs(power(m.code[1]) - least) < 1e-9]
    return ("discard" if beats else "forced discard"), move in weakest, len(discards), len(weakest)


#: rule set id -> the search model's view of a decision (``_tiengow_feature``)
FEATURES: dict[str, Callable[[State, Seat, Move], Feature]] = {
    "tiengow": _tiengow_feature,
}


def search_log_p(model: SearchModel, feature: Feature) -> float:
    """log P(the move | the position) under ``model``, from the move's ``feature``: a favourite of its kind
    has ``chance / favourites + (1 - chance) / options``, any other move of that kind
    ``(1 - chance) / options``, so the chances of a position's moves sum to one."""
    kind, hit, n, k = feature
    if kind == "lead":
        return math.log(model.lead * hit / k + (1.0 - model.lead) / n)
    if kind == "beat":
        return math.log(model.beat) + math.log(model.cheapest * hit / k + (1.0 - model.cheapest) / n)
    p = model.weakest * hit / k + (1.0 - model.weakest) / n
    return math.log(p * (1.0 - model.beat)) if kind == "discard" else math.log(p)


def _choices(world: State, seat: Seat) -> Iterator[tuple[State, Seat, Move, int]]:
    """Every other seat's move of the deal so far with a real choice, as ``world`` has it: the position
    before it, the mover, the move and how many legal moves there were (what every opponent model scores)."""
    for before, mover, move in REPLAYS[world.rules.id][0](world):
        if mover != seat:
            n = len(before.legal_moves())
            if n > 1:
                yield before, mover, move, n


def _scored_moves(world: State, seat: Seat) -> Iterator[tuple[Seat, bool, int]]:
    """:func:`_choices` under the greedy model: the mover, whether the move plays like greedy's, and how
    many legal moves there were."""
    agrees = REPLAYS[world.rules.id][1]
    for before, mover, move, n in _choices(world, seat):
        yield mover, agrees(before, mover, move), n


def _multiset_count(singles: int, pairs: int, k: int) -> int:
    """The coefficient of x^k in (1 + x)^singles (1 + x + x^2)^pairs: how many distinct sets of ``k`` tiles a
    hand of ``singles`` faces held once and ``pairs`` held twice holds."""
    ways = [1] + [0] * k
    for copies in [1] * singles + [2] * pairs:
        ways = [sum(ways[t - c] for c in range(min(copies, t) + 1)) for t in range(k + 1)]
    return ways[k]


_MULTISETS: dict[tuple[int, int, int], int] = {}


def _multisets(hand: tuple[Face, ...], k: int) -> int:
    """How many distinct sets of ``k`` tiles ``hand`` holds (tiles of one face are alike): its distinct
    face-down discards of ``k`` tiles.  A face has at most two copies, so the count depends only on how
    many faces it holds once and twice (cached)."""
    distinct = len(set(hand))
    key = (len(hand), distinct, k)
    n = _MULTISETS.get(key)
    if n is None:
        pairs = len(hand) - distinct
        n = _MULTISETS[key] = _multiset_count(distinct - pairs, pairs, k)
    return n


#: a Tien Gow world as the chain walks it: every hand, and the tiles of every face-down play of the deal in the
#: order played (sorted tuples); a State only for the worlds it keeps (``TienGowState.rearranged``)
Light = tuple[tuple[tuple[Face, ...], ...], tuple[tuple[Face, ...], ...]]


def _light(world: State) -> Light:
    w = cast(TienGowState, world)
    downs = [f for _l, _w, ps in w.tricks for _p, up, f in ps if not up] + [f for _p, up, f in w.cur if not up]
    return tuple(w.hands), tuple(downs)


class _TienGowScorer:
    """The greedy model's log-likelihood of Tien Gow worlds of one information set, without replaying the
    deal: greedy reads only the mover's hand, its situation and its legal moves, so each other seat's move
    is scored from its hand then (as the world has it: its hand now plus every tile it played from that move
    on) and the move's public situation (``engine.tiengow.situations``, computed once).  The likelihood is
    a sum over the other seats, and a seat's part depends only on the tiles the world gives it, so each part
    is remembered by them: a Metropolis proposal exchanges the tiles of at most two seats, and the parts of
    the others are looked up.  The same scores, move for move, as the replay (``_choices``; checked by
    ``tests/test_ai_inference.py``)."""

    def __init__(self, state: State, seat: Seat, eps: float, models: Sequence[str] = ("greedy",)) -> None:
        st = cast(TienGowState, state)
        self.seat = seat
        self.eps = eps
        #: the greedy models a seat may play like (``ai.heuristics.tiengow.MODELS``): with more than one, a
        #: seat's part is the mixture over them, each as likely before the deal
        self.models = tuple(tiengow_heuristics.MODELS[m] for m in models)
        sits = situations(st)
        plays = [pl for _l, _w, ps in st.tricks for pl in ps] + list(st.cur)
        #: per other seat: its plays of the deal in order, ``(play index, situation, face up, tiles face up,
        #: the place of its tiles face down among the deal's face-down plays or -1)``
        self.plays: dict[Seat, list[tuple[int, int, int, tuple[Face, ...], int]]] = {
            p: [] for p in range(len(st.hands)) if p != seat}
        k = 0
        for i, (p, up, faces) in enumerate(plays):
            if p != seat:
                self.plays[p].append((i, sits[i], up, faces, -1) if up else (i, sits[i], up, (), k))
            k += 0 if up else 1
        self.memo: dict[tuple[Seat, tuple[Face, ...], tuple[tuple[Face, ...], ...]], float] = {}
        #: (play index, hand then, tiles played) -> the move's score (``_move_score``)
        self.moves_memo: dict[tuple[int, tuple[Face, ...], tuple[Face, ...]], tuple[tuple[bool, ...], int]] = {}
        #: (seat, its tiles, its face-down tiles, other) -> :meth:`seat_logs`' list for the seat
        self.logs_memo: dict[tuple[Seat, tuple[Face, ...], tuple[tuple[Face, ...], ...], bool | str],
                             list[float]] = {}
        #: (play index, hand then, tiles played) -> the move's log-likelihood under the search model
        self.search_memo: dict[tuple[int, tuple[Face, ...], tuple[Face, ...]], float] = {}

    def _moves_from(self, p: Seat, hand: tuple[Face, ...], downs: tuple[tuple[Face, ...], ...]
                    ) -> list[tuple[tuple[int, int, int, tuple[Face, ...]], tuple[Face, ...]]]:
        """Seat ``p``'s plays of the deal as a world gives them (its ``hand`` now, the tiles of the deal's
        face-down plays ``downs``): each ``(play index, situation, face up, tiles)`` with the hand it held
        before it, built backwards from its hand now."""
        mine = [(i, sit, up, faces if up else downs[k]) for i, sit, up, faces, k in self.plays[p]]
        held = list(hand)
        befores: list[tuple[Face, ...]] = []
        for _i, _sit, _up, faces in reversed(mine):
            held.extend(faces)
            befores.append(tuple(sorted(held)))
        befores.reverse()
        return list(zip(mine, befores, strict=True))

    def _seat_scores(self, p: Seat, hand: tuple[Face, ...], downs: tuple[tuple[Face, ...], ...]
                     ) -> list[tuple[tuple[bool, ...], int]]:
        out = []
        moves_memo = self.moves_memo
        for (i, sit, up, faces), before in self._moves_from(p, hand, downs):
            key = (i, before, faces)
            scored = moves_memo.get(key)
            if scored is None:
                scored = moves_memo[key] = self._move_score(before, sit, up, faces, self.models)
            if scored[1] > 1:
                out.append(scored)
        return out

    def light(self, world: Light) -> float:
        """:meth:`__call__` of a world given as its hands and face-down plays."""
        hands, downs = world
        total = 0.0
        memo = self.memo
        for p, mine in self.plays.items():
            key = (p, hands[p], tuple([downs[k] for _i, _s, up, _f, k in mine if not up]))
            part = memo.get(key)
            if part is None:
                part = memo[key] = self._part(self._seat_scores(p, hands[p], downs))
            total += part
        return total

    def __call__(self, world: State) -> float:
        """log P(what the other seats played | ``world``) under greedy with noise ``eps`` (0: each seat's
        own, integrated over :data:`EPS_GRID`), as :func:`log_likelihood`."""
        return self.light(_light(world))

    def _part(self, scores: list[tuple[tuple[bool, ...], int]]) -> float:
        """A seat's part of the log-likelihood: under the one model, :func:`_seat_log_likelihood`; under
        several, the log of their mean likelihood."""
        if len(self.models) == 1:
            return _seat_log_likelihood([(a[0], n) for a, n in scores], self.eps)
        return _log_mean_exp([_seat_log_likelihood([(a[k], n) for a, n in scores], self.eps)
                              for k in range(len(self.models))])

    def seat_logs(self, world: Light, other: bool | str = False) -> dict[Seat, list[float]]:
        """Per other seat, the log-likelihood of its moves in ``world`` under each model, and with ``other``
        one more: under a player who plays like none of them -- each of its moves one of its legal moves,
        uniformly (``True`` or ``"uniform"``), or as searching players do (``"search"``: the fitted
        :data:`SEARCH_MODELS`, :meth:`_search_log`).  Remembered per seat by the tiles the world gives it,
        as :meth:`light`."""
        hands, downs = world
        out = {}
        memo = self.logs_memo
        for p, mine in self.plays.items():
            key = (p, hands[p], tuple([downs[k] for _i, _s, up, _f, k in mine if not up]), other)
            logs = memo.get(key)
            if logs is None:
                scores = self._seat_scores(p, hands[p], downs)
                logs = [_seat_log_likelihood([(a[k], n) for a, n in scores], self.eps)
                        for k in range(len(self.models))]
                if other == "search":
                    logs.append(self._search_log(p, hands[p], downs))
                elif other:
                    logs.append(-sum(math.log(n) for _a, n in scores))
                memo[key] = logs
            out[p] = logs
        return out

    def _search_log(self, p: Seat, hand: tuple[Face, ...], downs: tuple[tuple[Face, ...], ...]) -> float:
        """The log-likelihood of seat ``p``'s moves with a choice under the fitted model of searching players
        (:class:`SearchModel`, as :func:`search_log_p` scores them from :func:`_tiengow_feature`), from the
        hands the world gives it (:meth:`_moves_from`).  One simplification: a face-down
        discard has one weakest set (two distinct sets of equal total power, which the replay would count as
        two favourites, are rare)."""
        fitted = SEARCH_MODELS["tiengow"]
        total = 0.0
        memo = self.search_memo
        for (i, sit, up, faces), before in self._moves_from(p, hand, downs):
            key = (i, before, faces)
            logp = memo.get(key)
            if logp is None:
                logp = memo[key] = self._search_move_log(fitted, before, sit, up, faces)
            total += logp
        return total

    @staticmethod
    def _search_move_log(fitted: SearchModel, hand: tuple[Face, ...], sit: int, up: int,
                         faces: tuple[Face, ...]) -> float:
        """log P(a move of ``faces`` from ``hand`` in situation ``sit``) under ``fitted``; 0 where the move was
        the one legal move (not scored, as :meth:`_move_score` leaves it out)."""
        power = tiengow_heuristics.power_of
        if sit == DEAD:
            return 0.0
        if sit == LEAD:
            leads = leads_for(hand)
            if len(leads) <= 1:
                return 0.0
            g = tiengow_heuristics.model_choice(hand, None, len(faces), tiengow_heuristics.MODELS["greedy"])
            like = sum(1 for m in leads if m.code[2] == g.code[2] and m.code[3] == g.code[3]
                       and len(m.code[1]) == len(g.code[1]))
            return search_log_p(fitted, ("lead", _plays_like(g, up, faces), len(leads), like))
        beats = beats_for(hand, sit)
        if len(beats) + _multisets(hand, len(faces)) <= 1:
            return 0.0
        if up:
            best = min((m.code[3], power(m.code[1])) for m in beats)
            cheapest = sum(1 for m in beats if (m.code[3], power(m.code[1])) == best)
            return search_log_p(fitted, ("beat", (GROUPS[faces][1], power(faces)) == best, len(beats), cheapest))
        least = power(tiengow_heuristics.weakest(hand, len(faces)).code[1])
        hit = abs(power(faces) - least) < 1e-9
        return search_log_p(fitted, ("discard" if beats else "forced discard", hit, _multisets(hand, len(faces)), 1))

    def posterior(self, world: Light, table: float = 0.0) -> dict[Seat, list[float]]:
        """Per other seat, the chance of each model given its moves in ``world`` (the models as likely as
        each other before the deal).  ``table``: the chance, before the deal, that every other seat plays
        one and the same model (a table of one kind of player), so that one seat's moves tell of the
        others'; 0: the seats are judged apart."""
        logs = self.seat_logs(world)
        apart = {p: _softmax(ls) for p, ls in logs.items()}
        if table <= 0.0 or not logs:
            return apart
        # one model for the whole table: its evidence against each seat's own, each averaged over the models
        joint = [sum(ls[k] for ls in logs.values()) for k in range(len(self.models))]
        one = _log_mean_exp(joint)
        each = sum(_log_mean_exp(ls) for ls in logs.values())
        w = 1.0 / (1.0 + (1.0 - table) / table * math.exp(min(700.0, each - one))) if table < 1.0 else 1.0
        together = _softmax(joint)
        return {p: [w * t + (1.0 - w) * a for t, a in zip(together, ap, strict=True)] for p, ap in apart.items()}

    @staticmethod
    def _move_score(hand: tuple[Face, ...], sit: int, up: int, faces: tuple[Face, ...],
                    models: tuple[tuple[bool, bool], ...]) -> tuple[tuple[bool, ...], int]:
        """Whether a move of ``faces`` (face up or not) from ``hand`` in situation ``sit`` plays like each
        greedy model's, and how many legal moves there were (1: no choice, not scored)."""
        if sit == LEAD:
            n = len(leads_for(hand))
            beats = None
        elif sit == DEAD:
            return (True,) * len(models), 1  # §7: the one move
        else:
            # a follow, counted without listing its discards: the beats and every distinct set of
            # len(faces) tiles
            beats = beats_for(hand, sit)
            n = len(beats) + _multisets(hand, len(faces))
        if n <= 1:
            return (True,) * len(models), n
        return tuple(_plays_like(tiengow_heuristics.model_choice(hand, beats, len(faces), m), up, faces)
                     for m in models), n


def _plays_like(g: Move, up: int, faces: tuple[Face, ...]) -> bool:
    """Whether the move of ``faces`` (face up or not) plays like ``g``: the same group (type, rank and size)
    face up, or face-down tiles of the same total power (``_tiengow_agrees``)."""
    if g.code[0] != up:
        return False
    if up:
        gtype, rank = GROUPS[faces]
        return g.code[2] == gtype and g.code[3] == rank and len(g.code[1]) == len(faces)
    return abs(tiengow_heuristics.power_of(g.code[1]) - tiengow_heuristics.power_of(faces)) < 1e-9


def _softmax(logs: Sequence[float]) -> list[float]:
    top = max(logs)
    weights = [math.exp(x - top) for x in logs]
    total = sum(weights)
    return [x / total for x in weights]


def _log_mean_exp(logs: Sequence[float]) -> float:
    top = max(logs)
    return top + math.log(sum(math.exp(x - top) for x in logs) / len(logs))


def _seat_log_likelihood(scores: list[tuple[bool, int]], eps: float) -> float:
    """One seat's part of :func:`log_likelihood` under the greedy model, from its moves' scores."""
    if eps > 0.0:
        return sum(math.log((1.0 - eps) * a + eps / n) for a, n in scores)
    if not scores:
        return 0.0
    return _log_mean_exp([sum(math.log((1.0 - e) * a + e / n) for a, n in scores) for e in EPS_GRID])


def log_likelihood(world: State, seat: Seat, eps: float, model: str = "greedy") -> float:
    """log P(what the other seats played in this deal | ``world``) under the opponent model: ``model``
    ``"greedy"`` (greedy with noise ``eps``; ``eps`` 0: each other seat has a noise rate of its own,
    unknown, integrated over :data:`EPS_GRID`, so the moves of a seat that has played like greedy all deal
    weigh much, those of one that rarely has, little), ``"search"`` (:data:`SEARCH_MODELS`, ``eps``
    unused) or ``"softmax"`` (:data:`SOFTMAX_MODELS`, ``eps`` unused)."""
    if model == "search":
        return _search_log_likelihood(world, seat)
    if model == "softmax":
        return _softmax_log_likelihood(world, seat)
    if world.rules.id == "tiengow":
        return _TienGowScorer(world, seat, eps)(world)
    if eps > 0.0:
        return sum(math.log((1.0 - eps) * a + eps / n) for _mover, a, n in _scored_moves(world, seat))
    per_seat: dict[Seat, list[float]] = {}
    for mover, a, n in _scored_moves(world, seat):
        logs = per_seat.setdefault(mover, [0.0] * len(EPS_GRID))
        for k, e in enumerate(EPS_GRID):
            logs[k] += math.log((1.0 - e) * a + e / n)
    total = 0.0
    for logs in per_seat.values():
        total += _log_mean_exp(logs)
    return total


def likelihood(state: State, seat: Seat, eps: float, model: str = "greedy",
               models: Sequence[str] = ("greedy",)) -> Callable[[State], float]:
    """:func:`log_likelihood` for the worlds of ``seat``'s information set in ``state``, as one function:
    at Tien Gow under the greedy model a :class:`_TienGowScorer`, which reads the public history once and
    remembers each seat's part (with several ``models``, ``ai.heuristics.tiengow.MODELS``, their mixture)."""
    if model == "greedy" and state.rules.id == "tiengow":
        return _TienGowScorer(state, seat, eps, models)
    return lambda world: log_likelihood(world, seat, eps, model)


def _search_log_likelihood(world: State, seat: Seat) -> float:
    fitted = SEARCH_MODELS[world.rules.id]
    feature = FEATURES[world.rules.id]
    return sum(search_log_p(fitted, feature(before, mover, move)) for before, mover, move, _n in _choices(world, seat))


@dataclass(frozen=True)
class SoftmaxModel:
    """The opponent model ``model="softmax"``: another seat plays each legal move with a chance in proportion
    to ``exp(beta * score(position, move))``, the rule set's greedy score at temperature ``1 / beta``
    (fitted by maximum likelihood on deals of the search itself, ``tilehouse bench inference --fit``).
    Unlike "greedy with noise" it weighs how much better a move it did not play would have looked, so a
    world in which the seat passed over a far better move weighs little, one in which it passed over a
    slightly better one almost as much as one in which it played its best."""

    score: Callable[[State, Move], float]
    beta: float
    #: which positions the model is fitted on and scores (the rule set's replay yields only these)
    scores: Callable[[State], bool] = lambda state: True


#: rule set id -> the fitted softmax model of searching players: ``tilehouse bench inference kozel --fit
#: --engine ismcts:iterations=1000,time_ms=600000 --sets 80 --seed 0`` (846 decisions) fits 0.11 on its 0.01
#: grid; 0.12, the best of a 0.02 grid on the same decisions and the value measured in the arena, is kept;
#: Tiu U's on part-1 choices: ``tilehouse bench inference tiuu --fit --engine ismcts:iterations=800,time_ms=600000
#: --sets 30 --seed 70001`` (325 decisions) fits 0.07 (docs/ai.md, "Inference")
SOFTMAX_MODELS: dict[str, SoftmaxModel] = {
    "kozel": SoftmaxModel(score=_kozel_score, beta=0.12),
    # Tiu U's replay scores part 1's choices alone (engine.tiuu.part1_replay)
    "tiuu": SoftmaxModel(score=_tiuu_score, beta=0.07, scores=lambda state: cast(TiuUState, state).phase == PART1),
}


def log_softmax(scores: Sequence[float], chosen: int, beta: float) -> float:
    """log of the chance of ``scores[chosen]`` when each is chosen in proportion to ``exp(beta * score)``."""
    xs = [beta * x for x in scores]
    top = max(xs)
    return xs[chosen] - top - math.log(sum(math.exp(x - top) for x in xs))


def softmax_log_p(model: SoftmaxModel, before: State, move: Move) -> float:
    """log P(``move`` | the position ``before``) under ``model``: ``beta * score(move)`` less the log of the
    sum of ``exp(beta * score)`` over the legal moves."""
    moves = before.legal_moves()
    return log_softmax([model.score(before, m) for m in moves], moves.index(move), model.beta)


def _softmax_log_likelihood(world: State, seat: Seat) -> float:
    fitted = SOFTMAX_MODELS[world.rules.id]
    return sum(softmax_log_p(fitted, before, move) for before, _mover, move, _n in _choices(world, seat))


#: the opponent models ``log_likelihood`` knows
MODELS = ("greedy", "search", "softmax")


def _tiengow_places(state: State, seat: Seat) -> list[tuple[int, int]]:
    """Where ``seat`` cannot see, as ``(container, index)`` of a :data:`Light` world's containers (the
    hands, then the deal's face-down plays in the order played): every other seat's hand tile and every
    tile of another seat's face-down play.  A proposal keeps every size, so the places never change."""
    w = cast(TienGowState, state)
    nh = len(w.hands)
    downs = [(p, len(f)) for _l, _w, ps in w.tricks for p, up, f in ps if not up]
    downs += [(p, len(f)) for p, up, f in w.cur if not up]
    places = [(p, i) for p in range(nh) if p != seat for i in range(len(w.hands[p]))]
    places += [(nh + k, i) for k, (p, size) in enumerate(downs) if p != seat for i in range(size)]
    return places


def _tiengow_swapped(world: Light, places: list[tuple[int, int]], rng: random.Random) -> Light | None:
    """A Metropolis proposal: ``world`` with two hidden tiles of other seats exchanged (two hands, or a hand
    and a face-down discard, or two discards -- of one seat or of two; ``places``: ``_tiengow_places``), so
    every hand and every discard keeps its size and everything the searching seat saw stays as it is; the
    proposal is symmetric (each pair of places is as likely as its reverse).  ``None`` when the two tiles
    are in one container or of one face."""
    if len(places) < 2:
        return None
    (ca, i), (cb, j) = rng.sample(places, 2)
    hands, downs = world
    nh = len(hands)
    conts = list(hands) + list(downs)
    a, b = conts[ca], conts[cb]
    if ca == cb or a[i] == b[j]:
        return None
    conts[ca] = tuple(sorted((*a[:i], b[j], *a[i + 1:])))
    conts[cb] = tuple(sorted((*b[:j], a[i], *b[j + 1:])))
    return tuple(conts[:nh]), tuple(conts[nh:])


#: rule set id -> (the places a Metropolis proposal exchanges tiles of, the proposal)
PROPOSALS: dict[str, tuple[Callable[[State, Seat], list[tuple[int, int]]],
                           Callable[[Light, list[tuple[int, int]], random.Random], Light | None]]] = {
    "tiengow": (_tiengow_places, _tiengow_swapped),
}


def chain(state: State, seat: Seat, steps: int, eps: float, rng: random.Random,
          chains: int = 4, model: str = "greedy",
          models: Sequence[str] = ("greedy",)) -> tuple[list[State], dict[str, Any]] | None:
    """Worlds of ``seat``'s information set drawn in proportion to their likelihood under the opponent
    model by Metropolis sampling: ``chains`` chains, each from a fresh world arranged as the model plays
    (``ARRANGE``), each ``steps // chains`` steps of :data:`PROPOSALS` accepted with probability
    ``min(1, L(new) / L(old))``; the worlds of the second half of every chain are the pool (burn-in: the
    first half).  The statistics: ``steps``, ``accepted`` (the share of proposals taken), the mean
    log-likelihood of the pool and of the chains' starts.  ``None`` where there is nothing to weigh.

    The chain walks light worlds (:data:`Light`: the hands and the face-down plays) and builds a State only
    for each distinct world the pool keeps; under the greedy model the likelihood reads them directly
    (:class:`_TienGowScorer`), under another a State is built for each proposal.

    Only what ``seat`` saw is used: the starts are samples of its information set, a proposal exchanges
    tiles that ``seat`` has not seen, and the likelihood is computed from the world alone."""
    if state.rules.id not in PROPOSALS or steps < 1:
        return None
    if not any(p != seat for _l, _w, ps in cast(TienGowState, state).tricks for p, _u, _f in ps) and not any(
            p != seat for p, _u, _f in cast(TienGowState, state).cur):
        return None  # no other seat has moved in this deal
    uniform = state.determinizer(seat)
    arrange = ARRANGE[state.rules.id]
    places_of, propose = PROPOSALS[state.rules.id]
    places = places_of(state, seat)
    score = likelihood(state, seat, eps, model, models)
    chains = max(1, chains)
    per = max(2, steps // chains)
    pool: list[State] = []
    pool_ll: list[float] = []
    starts, taken, tried = [], 0, 0
    typed = isinstance(score, _TienGowScorer) and len(models) > 1
    belief: dict[Seat, list[float]] = {}
    chances: dict[Seat, list[float]] = {}
    for _c in range(chains):
        # the chain's start: every world of it is this one with its hidden tiles placed otherwise
        template = cast(TienGowState, arrange(uniform(rng), seat))

        def built(lw: Light, template: TienGowState = template) -> State:
            return template.rearranged(lw[0], lw[1])

        light_score = score.light if isinstance(score, _TienGowScorer) else (lambda lw: score(built(lw)))
        world = _light(template)
        ll = light_score(world)
        starts.append(ll)
        kept: State = template
        kept_of: Light | None = None
        for step in range(per):
            new = propose(world, places, rng)
            if new is not None:
                tried += 1
                new_ll = light_score(new)
                if new_ll >= ll or rng.random() < math.exp(new_ll - ll):
                    world, ll = new, new_ll
                    taken += 1
            if step >= per // 2:
                if world is not kept_of:
                    kept, kept_of = built(world), world
                    if typed:
                        chances = cast(_TienGowScorer, score).posterior(world)
                pool.append(kept)
                pool_ll.append(ll)
                if typed:
                    _add_chances(belief, chances)
    stats: dict[str, Any] = {"steps": float(per * chains), "accepted": round(taken / max(1, tried), 3),
                             "start_loglik": round(sum(starts) / len(starts), 3),
                             "pool_loglik": round(sum(pool_ll) / len(pool_ll), 3)}
    if typed:
        # each other seat's likeliest model over the pool (the mean of its chances in the pool's worlds)
        stats["types"] = {str(p): models[sums.index(max(sums))] for p, sums in sorted(belief.items())}
    return pool, stats


def _add_chances(belief: dict[Seat, list[float]], chances: dict[Seat, list[float]]) -> None:
    """Add each seat's chances of the models to its running sums in ``belief``."""
    for p, cs in chances.items():
        sums = belief.setdefault(p, [0.0] * len(cs))
        for k, c in enumerate(cs):
            sums[k] += c


def others_moved(state: State, seat: Seat) -> bool:
    """Whether another seat than ``seat`` has played in this Tien Gow deal: whether :func:`model_chances` has
    anything to judge (False elsewhere than Tien Gow)."""
    if state.rules.id != "tiengow":
        return False
    st = cast(TienGowState, state)
    return any(p != seat for _l, _w, ps in st.tricks for p, _up, _f in ps) or any(p != seat for p, _up, _f in st.cur)


def model_chances(state: State, seat: Seat, models: Sequence[str], eps: float, rng: random.Random,
                  worlds: int = 16, table: float = 0.0, judge: str = "mean",
                  other: bool | str = False, prior: float | None = None) -> dict[str, list[float]] | None:
    """Each other seat's chance of playing like each greedy model of ``models`` (names of
    ``ai.heuristics.tiengow.MODELS``) given its moves in this deal, judged on ``worlds`` worlds of ``seat``'s
    information set arranged as the model discards; ``None`` where there is nothing to weigh (not Tien Gow,
    or one model).  Only what ``seat`` saw is used, as in :func:`chain`.

    ``judge``: ``"mean"``, the mean of the seat's chances in each world (:meth:`_TienGowScorer.posterior`,
    with its ``table``); or ``"marginal"``, Bayes' rule on the likelihood of the seat's moves under each
    model averaged over the worlds (the models as likely as each other before the deal), so that a model
    that explains the moves in some worlds of the information set outweighs one that explains them in none
    (the worlds are the arranged ones, not weighted back to uniform: so judged, more seats of a mixed table
    were told apart right, docs/ai-history.md, twentieth look).
    ``other`` (with ``"marginal"``): one more chance, last, that the seat plays like none of the models (a
    uniform choice among its legal moves; ``"search"``: as searching players do, the fitted
    :data:`SEARCH_MODELS`), so that a player who fits neither is not pressed into one.
    ``prior`` (with ``"marginal"``): the chance before the deal that a seat plays like anything but the first
    model, shared evenly by the others (``None``: every one as likely)."""
    if state.rules.id != "tiengow" or len(models) < 2:
        return None
    if judge not in ("mean", "marginal"):
        raise ValueError(f"unknown judge {judge!r}")
    score = _TienGowScorer(state, seat, eps, models)
    uniform = state.determinizer(seat)
    if judge == "mean":
        belief: dict[Seat, list[float]] = {}
        for _ in range(worlds):
            _add_chances(belief, score.posterior(_light(_tiengow_arrange(uniform(rng), seat)), table))
        return {str(p): [round(x / worlds, 4) for x in sums] for p, sums in sorted(belief.items())}
    per_world: dict[Seat, list[list[float]]] = {}
    for _ in range(worlds):
        for p, logs in score.seat_logs(_light(_tiengow_arrange(uniform(rng), seat)), other).items():
            per_world.setdefault(p, []).append(logs)
    kinds = len(models) + bool(other)
    logs_prior = [0.0] * kinds if prior is None else [math.log(1.0 - prior)] + [math.log(prior / (kinds - 1))] * (
        kinds - 1)
    return {str(p): [round(x, 4) for x in _softmax([_log_mean_exp([w[k] for w in rows]) + logs_prior[k]
                                                     for k in range(kinds)])]
            for p, rows in sorted(per_world.items())}


def sampler(state: State, seat: Seat, worlds: int, eps: float,
            rng: random.Random, mcmc: int = 0, model: str = "greedy",
            models: Sequence[str] = ("greedy",)) -> tuple[Callable[[random.Random], State], dict[str, Any]] | None:
    """A sampler of ``seat``'s information set weighted by the other seats' moves (importance resampling
    over ``worlds`` candidates drawn with ``rng``), and its statistics (``effective``: the effective number
    of candidates, ``1 / sum of squared normalised weights``; ``elapsed_ms``: the time it took, which the
    search takes off its budget); ``None`` where there is nothing to weigh
    (no replay for the rule set, or no move of another seat yet in this deal)."""
    if state.rules.id not in REPLAYS:
        return None
    t0 = time.perf_counter()
    if mcmc > 0:
        made = chain(state, seat, mcmc, eps, rng, model=model, models=models)
        if made is None:
            return None
        found, stats = made
        last_world = len(found) - 1

        def drawn(r: random.Random) -> State:
            return found[min(int(r.random() * len(found)), last_world)].clone()

        return drawn, {**stats, "elapsed_ms": round((time.perf_counter() - t0) * 1000.0, 3)}
    replay = REPLAYS[state.rules.id][0]
    uniform = state.determinizer(seat)
    arrange = ARRANGE.get(state.rules.id)

    def determinize(r: random.Random) -> State:
        w = uniform(r)
        return w if arrange is None else arrange(w, seat)

    if worlds <= 1:
        # no weighing: every world the model's arrangement of a fresh uniform one
        if arrange is None:
            return None
        return determinize, {"candidates": 0.0, "effective": 0.0,
                             "elapsed_ms": round((time.perf_counter() - t0) * 1000.0, 3)}
    pool = [determinize(rng) for _ in range(worlds)]
    if not any(mover != seat for _b, mover, _m in replay(pool[0])):
        return None
    score = likelihood(state, seat, eps, model)
    logs = [score(w) for w in pool]
    top = max(logs)
    weights = [math.exp(x - top) for x in logs]
    total = sum(weights)
    cumulative = []
    acc = 0.0
    for x in weights:
        acc += x
        cumulative.append(acc)
    effective = total * total / sum(x * x for x in weights)
    last = len(pool) - 1
    redraw = REDRAW.get(state.rules.id)

    def draw(r: random.Random) -> State:
        chosen = pool[min(bisect_right(cumulative, r.random() * total), last)]
        return chosen.clone() if redraw is None else redraw(chosen, r)

    return draw, {"candidates": float(len(pool)), "effective": round(effective, 3),
                  "elapsed_ms": round((time.perf_counter() - t0) * 1000.0, 3)}

