"""The ``ismcts`` engine: single-observer Information Set Monte Carlo Tree Search.

Algorithm: SO-ISMCTS of Cowling, Powley and Whitehouse, "Information Set Monte Carlo Tree Search",
IEEE Trans. Computational Intelligence and AI in Games 4(2), 2012, Algorithm 3:

* one tree for the searching seat's information set; each iteration samples a fresh determinization of
  the root (``world = root.determinize(seat, rng)``, through ``root.determinizer(seat)``, which a rule set
  may prepare once per search) and descends the tree only through moves legal in that world;
* nodes are keyed by what the searching seat observes: its own moves by the move
  (``Move.key``), every other seat's moves by the observation the searching seat gets of them
  (``State.observed_keys``: the public part of the move's event).  A Tien Gow face-down discard by
  another seat is one node, "discard, face down, n tiles", whatever tiles the iteration's world gives
  that seat; when the descent passes such a node, the move applied is one of the sampled world's moves
  with that observation: the only one, or among several the rule set's model of that hidden choice
  (``hidden`` in its ``ai.heuristics.Heuristics``; Tien Gow: the weakest tiles go face down), else the
  playout policy's choice if it is one of them, else one at random.  The requirements leave the choice open; a
  uniform draw (the published SO-ISMCTS) made opponents throw away strong tiles in the samples, and at
  equal time the search then lost to the greedy engine at Tien Gow (docs/ai.md).  A rule set with such a
  model may also give another seat's node in one call (its ``observe``: the distinct keys and the move
  played for each, the same as this general path computes; Tien Gow does).  Moves that hide nothing
  (every move of Kozel, Tiu U and the wall variant, Tien Gow's face-up plays) observe as themselves, and
  Kozel's and Tiu U's hidden draws are chance inside ``apply``: the ``draw`` move is one node and each
  world draws its own tile;
* selection is UCB1 with *availability* counts: a child's exploration term uses ``log(availability)``,
  where availability counts the iterations in which the child's move was legal when its parent was
  visited, instead of the parent's visit count (moves that are rarely legal are not over-explored);
* expansion adds one untried legal move chosen uniformly at random;
* every acting player maximises its own reward: a child's statistics are the rewards of the seat that
  chose its move;
* the move played is the most visited child of the root (ties: higher mean reward, then legal order);
  with ``root="uniform"`` the root's moves are tried in turn instead, the least visited first, and the one
  of the highest mean reward is played (``stats["root"]`` says so, and ``ai.merge`` then ranks by mean).

Horizon and reward (see ``docs/ai.md``).  A playout runs from the expanded node to the end of the current
deal -- ``state.deals_done`` increases or the match ends -- and is scored with the change of
``state.running_payoffs()`` over the iteration.  The same horizon is used for every rule set:

* ``tiengow`` / ``tiengow_wall``: one deal (wall: one game).  Match payoffs are the sum of deal payments,
  so the deal's payments are exactly its contribution to the match payoff; what a deal passes on to the
  next (the banker, the opener) is symmetric enough to ignore at the price of a whole further deal.
* ``tiuu``: one game; points are cumulative, same argument.
* ``kozel``: one round.  Payoffs are the mean-centred penalty totals negated, a linear function of the
  recorded round penalties, so the round's change of payoffs is exactly its contribution; the target
  (101) only decides when the match stops.
* any other rule set: the same, by the protocol's definition of ``deals_done`` and ``running_payoffs``.

Rewards are scaled to [0, 1] per search with min-max normalisation: ``(delta - lo) / (hi - lo)`` where
``lo``/``hi`` are the smallest and largest per-seat payoff changes seen so far in this search (all seats
pooled; before two different values have been seen every reward is 0.5).  Nodes store raw payoff sums, so
the scaling is applied exactly, with the current bounds, at selection and in the reported statistics.
The scale adapts to each rule set's payment sizes without a table of bounds; it depends only on the
search's own random stream, so it keeps the information-set invariance of ``ai.decide``.

Playout policy (``playout``): ``random`` (uniform over legal moves), ``heuristic`` (the rule set's cheap
``playout`` of its ``Heuristics``), ``greedy`` (every seat in the playout plays a greedy one-ply choice from
its own hand in the sampled world: the record's ``greedy_playout``, else the greedy engine's ``greedy``) or
``default`` (the default: the rule set's ``default_playout``, ``greedy`` at Kozel and ``heuristic``
elsewhere).  Informed playouts make 1,000 iterations markedly stronger: with random playouts ISMCTS did not
beat the greedy engine at Tien Gow in our arena runs, with heuristic or greedy playouts it did, by the same
margin; the heuristic policy is the cheaper of the two there (figures in ``docs/ai.md``).  At Kozel the
greedy playout reads the ends a move leaves the next player (``ai.heuristics.kozel``) and beats the
heuristic one at equal time (docs/ai-history.md, twelfth look), so it is Kozel's default.  A rule set
without heuristics gets random playouts, and ``stats["playout"]`` names the policy used.

Budget: ``iterations`` and ``time_ms``, whichever ends first; at least one iteration always runs.

Paired root.  A rule set whose heuristics define ``distinct(state)`` -- the moves of the seat to
move, one per strategic class (``ai.heuristics.tiengow_wall``: placements that differ only in which losing
tile lies under which column are one class) -- is searched differently at the root: ``paired_search`` runs
sequential halving over those moves with common determinizations (every surviving move is played in the
same sampled worlds, each followed by a playout with the same random stream, and the worse half is
dropped after each round), and the best survivor by mean payoff change is played.  ``iterations`` then
counts playouts, ``uct_c`` is not used, and ``stats["search"]`` is ``"paired"``.  Why: the wall variant's
root is wide and flat (up to 162 leads, 1,680 placements), moves differ by hundredths of a column while a
playout's outcome varies by one or two, and UCB's unpaired samples could not tell them apart at 1,000
iterations (it tied the greedy engine); pairing cancels the world's luck out of each comparison
(``docs/ai.md``, "The wall variant").  Rule sets without ``distinct`` -- Kozel, Tiu U, Tien Gow -- are
searched exactly as described above.

Worlds.  Every iteration's world comes from ``root.determinizer(seat)`` unless the engine supplies another
sampler (``IsmctsEngine.worlds``): with ``inference``, ``ai.inference.sampler``, worlds shaped by an opponent
model of the other seats' moves so far, its cost taken off ``time_ms``; for the arena's reference engine
(``ai.perfect``), copies of the true state.  ``inference`` is on by default; with its other defaults (one
world, no chain) only Tien Gow's worlds change: each is arranged as the greedy engine discards.

Other seats inside the tree (``opponents``).  ``tree``: UCB over the tree's statistics, as Cowling et al.;
``greedy``: the greedy engine's choice from that seat's hand in the sampled world (``search``'s ``model``);
``default`` (the default): the rule set's ``Heuristics.default_opponents``, ``typed`` at Tien Gow since the
twentieth look (docs/ai-history.md; ``greedy`` there since the eighteenth, where the model and the arranged
worlds together beat the search of before at equal time), ``tree`` elsewhere; ``typed``: each other seat
by the model of the rule set's library (``Heuristics.models``: at Tien Gow today's greedy engine and the one
of before) that its moves in the deal make likeliest, judged by Bayes' rule over arranged worlds of the
information set beside a searching player (the fitted model of the search's own moves, ``ai.inference.SEARCH_MODELS``;
such a seat is played by today's greedy) since the twenty-first look (``ai.inference.model_chances``;
``stats["inference"]`` has each seat's ``chances`` and ``types``, the time taken off ``time_ms``).  ``stats["opponents"]`` names the one used; the searches of before are
``opponents=greedy`` (the eighteenth look's) and ``opponents=tree,inference=false``.

Memory: the tree is kept in flat lists (``Tree``) that the garbage collector does not track,
and processes that search call ``settle_gc`` once the engines are imported.
"""

from __future__ import annotations

import gc
import math
import random
import time
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, NamedTuple, cast

import ai.greedy
from ai import inference
from ai.heuristics import Heuristics, Hidden, Observe, Policy, Rollout, greedy_policy
from ai.protocol import Decision, Engine, Param, Preset
from engine.game import Move, Seat, State, play_to_deal_end

#: default ``uct_c``: Cowling et al. use 0.7 (about 1/sqrt(2), the UCB1 constant for rewards in [0, 1])
DEFAULT_UCT_C = 0.7
#: ``opponents=typed``: each model's noise when judging which one another seat plays like (the chance of a
#: uniform legal move instead of the model's), the value of the variant measured (docs/ai-history.md,
#: twentieth look)
TYPE_EPS = 0.1
#: ``opponents=typed``'s player like none of the library's models (``ai.inference.model_chances``'s ``other``):
#: the fitted model of searching players since the twenty-first look (a uniform one before, ``True``), which
#: took searching seats for the greedy engine of before a third of the time (a fifth with it; docs/ai-history.md)
SEARCHER = "search"


#: collector thresholds for processes that search (young, middle, old generation); see ``settle_gc``
GC_THRESHOLDS = (1_000, 10, 1_000)


def settle_gc() -> None:
    """Garbage-collector settings for a process that runs searches (the RQ worker, the arena's processes,
    the benchmarks): collect once, ``gc.freeze()`` what exists by then (the imported modules and the
    engines' tables, which the collector would otherwise rescan on every full collection) and raise the
    old-generation threshold.  The collector counts surviving container objects: the search tree holds
    none (``Tree``), but the engines' bounded move caches (Tien Gow's up to 200,000 lists) do, and with the
    default thresholds they set off a full collection every few thousand entries, each rescanning every
    cache (measured: 24 pauses of up to 260 ms in 12 s of search).  With these thresholds a full
    collection needs about 10 million net surviving allocations, so none lands in a search; the young and
    middle generations keep near-default sizes, so their collections stay short and still free short-lived
    cycles as before.  What the settled process gives up: cyclic garbage that has reached the old
    generation waits longer to be freed (``tilehouse bench ai --rss`` measures a worker's memory)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


class Tree:
    """The search tree as parallel lists indexed by node number (0 is the root): the statistics of the
    move (or observation) that leads to each node and its children by int key.  Lists of ints and floats
    and dicts of int to int hold no objects the garbage collector tracks, so a large tree costs the
    collector nothing."""

    __slots__ = ("avail", "kids", "total", "visits")

    def __init__(self) -> None:
        #: node -> {move key or observation key: child node}
        self.kids: list[dict[int, int]] = [{}]
        self.visits: list[int] = [0]
        #: iterations in which this node's move (observation) was legal when its parent was visited
        self.avail: list[int] = [0]
        #: sum of the raw payoff changes of the seat that chose this node's move
        self.total: list[float] = [0.0]

    def add(self, node: int, key: int) -> int:
        """A new child of ``node`` reached by ``key`` (availability 1, no visits yet); its number.  The
        search's own expansion spells this out in its loop (a call fewer per iteration)."""
        c = len(self.visits)
        self.kids[node][key] = c
        self.kids.append({})
        self.visits.append(0)
        self.avail.append(1)
        self.total.append(0.0)
        return c

    def child(self, node: int, key: int) -> tuple[int, int, float] | None:
        """``(visits, availability, total)`` of ``node``'s child reached by ``key``, or ``None``."""
        c = self.kids[node].get(key)
        return None if c is None else (self.visits[c], self.avail[c], self.total[c])


#: a sampler of the worlds a search plays in, one per call (default: ``root.determinizer(seat)``)
Worlds = Callable[[random.Random], State]


class SearchResult(NamedTuple):
    """What ``search`` returns."""

    #: the search tree (node 0 is the root)
    tree: Tree
    #: iterations done
    iterations: int
    #: elapsed wall-clock seconds
    elapsed: float
    #: the smallest and largest per-seat payoff change seen: the bounds of the min-max reward scaling
    lo: float
    hi: float


class PairedResult(NamedTuple):
    """What ``paired_search`` returns."""

    #: per root move, the playouts it got
    visits: list[int]
    #: per root move, the sum of the searching seat's payoff changes over its playouts
    totals: list[float]
    #: the index of the move played: the survivor with the best mean (ties: legal order)
    winner: int
    #: playouts done
    playouts: int
    #: elapsed wall-clock seconds
    elapsed: float
    #: the smallest and largest payoff change of any seat seen
    lo: float
    hi: float


def search(root: State, seat: Seat, *, iterations: int, time_ms: float, uct_c: float,
           policy: Policy | None, rng: random.Random,
           rollout: Rollout | None = None, hidden: Hidden | None = None,
           observe: Observe | None = None, worlds: Worlds | None = None,
           model: Policy | None = None, model_eps: float = 0.0, root_uniform: bool = False) -> SearchResult:
    """Run SO-ISMCTS from ``root`` for ``seat`` (``SearchResult``: the tree, the iterations done, the
    elapsed seconds and the reward bounds ``lo``/``hi`` of the min-max scaling).  ``policy`` is the playout
    policy (``None``: uniformly random); ``rollout``, when given, plays ``policy`` to the end of the deal
    in one call (the heuristics' fast path, with the same moves and draws); ``hidden`` models which of
    several moves that look the same to ``seat`` another seat plays (``_with_observation``); ``observe``,
    when given, is the fast path of another seat's node with that ``hidden`` (its distinct observation keys
    and the move played for each, in one call), used only for a rule set that hides moves.  ``worlds``, when
    given, samples the worlds instead of ``root.determinizer(seat)`` (a sampler weighted by inference, or
    the reference engine's true state).  ``model``, when given, plays every other seat's move inside the tree
    from that seat's hand in the sampled world (an opponent model: ``ismcts:opponents=greedy``), except a
    share ``model_eps`` of them that the tree's UCB chooses as usual; the child is keyed by what ``seat``
    observes of the model's move.  ``root_uniform``: the root's moves are tried in turn, the least visited
    first, instead of by UCB (the tree below them is UCB's as ever)."""
    tree = Tree()
    kids = tree.kids
    visits = tree.visits
    avail = tree.avail
    total = tree.total
    log = math.log
    sqrt = math.sqrt
    inf = math.inf
    clock = time.perf_counter
    # ``rng.choice(seq)`` spelled out (``seq[_randbelow(len(seq))]`` with the same draws from
    # ``getrandbits``): the search and the random playout make one per move, and two Python calls fewer
    # each are a measurable share of an iteration
    getrandbits = rng.getrandbits
    # the root's information set, sampled once per iteration (``State.determinizer``)
    determinize = worlds if worlds is not None else root.determinizer(seat)
    #: whether any move of this rule set can look like another to a seat (``State.hides_moves``)
    hides = root.hides_moves
    # the protocol's own ``observed_keys`` is spelled out in the loop (a method call fewer per tree level)
    # unless the rule set overrides it
    own_keys = type(root).observed_keys is not State.observed_keys
    lo = inf
    hi = -inf
    # the payoffs so far are public: every sampled world starts from the root's (a protocol invariant the
    # conformance test checks), so an iteration's reward is measured from these
    base = root.running_payoffs()
    # the root's moves and their keys: the same in every sampled world (a seat's legal moves follow from what
    # it knows, a protocol invariant the conformance test checks), so worked out once, not once an iteration
    root_moves: list[Move] | None = None
    root_keys: list[int] = []
    if root.to_move == seat:
        root_moves = root.legal_moves()
        root_keys = root.observed_keys(root_moves, seat) if own_keys else [m.key for m in root_moves]
    t0 = clock()
    deadline = t0 + time_ms / 1000.0
    done = 0
    while done < iterations:
        if done and clock() >= deadline:
            break
        world = determinize(rng)
        # nothing after the deal counts: the world need not deal the next one
        world.stop_after_deal()
        deal = world.deals_done
        # the exploitation term scaled with the current bounds; -lo/(hi-lo) is the same for every sibling
        # and so is left out of the comparison
        inv = 1.0 / (hi - lo) if hi > lo else 0.0
        node = 0
        path: list[tuple[int, Seat]] = []
        # --- selection and expansion
        while True:
            player = world.to_move
            if player is None or world.deals_done != deal:
                break
            children = kids[node]
            shared = False
            if model is not None and player != seat and (model_eps <= 0.0 or rng.random() >= model_eps):
                # the opponent model plays another seat's move from its hand in this world: one child per
                # observation it leads to, no choice by the tree's statistics
                m = model(world, rng)
                k = world.observed_keys((m,), seat)[0] if own_keys else m.seen_key
                c = children.get(k)
                if c is None:
                    c = tree.add(node, k)
                path.append((c, player))
                world.apply(m)
                node = c
                continue
            if observe is not None and player != seat:
                # the rule set's fast path: the distinct keys and the move played for each, in one call
                keys, moves = observe(world)
            elif not node and root_moves is not None:
                moves = root_moves
                keys = root_keys
            else:
                moves = world.legal_moves()
                if own_keys:
                    keys = world.observed_keys(moves, seat)
                elif player == seat:
                    keys = [m.key for m in moves]
                else:
                    keys = [m.seen_key for m in moves]
                observed = keys
                # the distinct keys in order: a key that several moves share (another seat's face-down
                # discard) is one child, counted once; only a rule set that hides moves can have such keys
                if hides and player != seat:
                    distinct = dict.fromkeys(keys)
                    if len(distinct) < len(keys):
                        shared = True
                        keys = list(distinct)
            if not children:
                # a node's first visit: every key is untried, none has availability to count
                n = len(keys)
                cs: list[int | None] = []
                untried: Sequence[int] = range(n)
            else:
                # the children of this visit's keys (None: untried), looked up in C
                cs = list(map(children.get, keys))
                untried = ()
            if not cs or None in cs:
                # expansion: count availability of the tried keys, add one untried key at random
                if cs:
                    untried = [i for i, c in enumerate(cs) if c is None]
                    if len(children) * 4 < len(cs):
                        # few tried keys among many (a follow of hundreds of placements): walk the children
                        present = set(keys)
                        for k, ch in children.items():
                            if k in present:
                                avail[ch] += 1
                    elif len(untried) < len(cs):
                        for c in cs:
                            if c is not None:
                                avail[c] += 1
                n = len(untried)
                b = n.bit_length()
                r = getrandbits(b)
                while r >= n:
                    r = getrandbits(b)
                best_i = untried[r]
                best = len(visits)
                children[keys[best_i]] = best
                kids.append({})
                visits.append(0)
                avail.append(1)
                total.append(0.0)
                expanded = True
            elif root_uniform and not node:
                # the root's moves in turn: the least visited first (the first of equal counts)
                best = -1
                fewest = inf
                for c in cast("list[int]", cs):
                    avail[c] += 1
                    if visits[c] < fewest:
                        fewest = visits[c]
                        best = c
                best_i = cs.index(best)
                expanded = False
            else:
                # selection: UCB with availability counts; the first of equal values wins
                best = -1
                best_value = -inf
                for c in cast("list[int]", cs):
                    a = avail[c] + 1
                    avail[c] = a
                    n = visits[c]
                    value = total[c] / n * inv + uct_c * sqrt(log(a) / n)
                    if value > best_value:
                        best_value = value
                        best = c
                best_i = cs.index(best)
                expanded = False
            path.append((best, player))
            if shared:
                world.apply(_with_observation(world, seat, moves, observed, keys[best_i], policy, rng, hidden))
            else:
                world.apply(moves[best_i])
            if expanded:
                break
            node = best
        # --- playout to the end of the deal
        if policy is None:
            # bound methods hoisted out of the loop: the playout is most of an iteration's moves
            apply = world.apply
            legal = world.legal_moves
            while world.to_move is not None and world.deals_done == deal:
                ms = legal()
                n = len(ms)
                b = n.bit_length()
                r = getrandbits(b)
                while r >= n:
                    r = getrandbits(b)
                apply(ms[r])
        elif rollout is not None:
            rollout(world, rng)
        else:
            play_to_deal_end(world, policy, rng)
        # --- backpropagation
        end = world.running_payoffs()
        delta = [e - b for e, b in zip(end, base, strict=True)]
        d_lo = min(delta)
        d_hi = max(delta)
        if d_lo < lo:
            lo = d_lo
        if d_hi > hi:
            hi = d_hi
        for c, player in path:
            visits[c] += 1
            total[c] += delta[player]
        done += 1
    return SearchResult(tree, done, clock() - t0, lo, hi)


def _with_observation(world: State, seat: Seat, moves: list[Move], keys: list[int], key: int,
                      policy: Policy | None, rng: random.Random, hidden: Hidden | None = None) -> Move:
    """The move of the sampled world that another seat plays when the searching seat observes ``key``:
    the only one, or among several that look the same (Tien Gow's face-down discards) the rule set's
    model of that choice (its heuristics' ``hidden``: Tien Gow discards its weakest tiles), else the
    playout policy's choice when it is one of them, else one uniformly at random."""
    i = keys.index(key)
    if keys.count(key) == 1:
        return moves[i]
    same = [m for m, k in zip(moves, keys, strict=True) if k == key]
    if hidden is not None:
        return hidden(world, same, rng)
    if policy is not None:
        m = policy(world, rng)
        if world.observed_keys((m,), seat)[0] == key:
            return m
    return rng.choice(same)


class _NoDraws(random.Random):
    """The generator handed to a rollout that declares it never draws (``rollout_draws=False`` in its
    heuristics, ``ROLLOUT_DRAWS``): seeding a fresh one per playout would cost a twentieth of a wall-game
    playout, and a draw after all fails loudly instead of going unnoticed."""

    def random(self) -> float:
        raise AssertionError("this rule set's rollout declares that it never draws (ROLLOUT_DRAWS)")

    def getrandbits(self, k: int) -> int:
        raise AssertionError("this rule set's rollout declares that it never draws (ROLLOUT_DRAWS)")


_NO_DRAWS = _NoDraws(0)


def paired_search(root: State, seat: Seat, moves: list[Move], *, iterations: int, time_ms: float,
                  policy: Policy | None, rng: random.Random, rollout: Rollout | None = None,
                  rollout_draws: bool = True, worlds: Worlds | None = None) -> PairedResult:
    """The paired root of a rule set that opts in (the ``distinct`` of its heuristics): sequential
    halving over ``moves`` (the root's strategically distinct moves) with *common determinizations*.  Each
    round samples worlds of ``seat``'s information set (``root.determinize``) and plays every surviving
    move in every one of them, each followed by a playout to the end of the deal (``policy``, or
    ``rollout``, its fast path; ``rollout_draws=False``: a rollout that never draws, given no generator of
    its own) that draws from the same random stream for every move of that world; then
    the better half of the survivors, by mean payoff change of ``seat`` over the worlds they all met, goes
    on.  Survivors are always compared on the same worlds, so a world's luck -- most of a playout's
    variance -- cancels out of every comparison.

    Budget: ``iterations`` playouts, exactly, split evenly over the ``ceil(log2(survivors))`` rounds still
    to play (a round plays at least one world, and halves early when what is left cannot pay for a whole
    world); what is left after the last halving goes to the winner.  The first world plays the moves in a
    random order, so a budget smaller than the moves plays it for a random subset of them.  ``time_ms`` is
    checked before every playout after the first; a world cut short by it is not counted (but for the
    first world: at least one playout counts), so survivors are always compared on the same worlds.

    Returns a ``PairedResult``: per move, the playouts it got and the sum of ``seat``'s payoff changes; the
    winner is the survivor with the best mean (ties: legal order); ``lo``/``hi`` bound every seat's change
    seen.  ``worlds``: as for ``search``."""
    clock = time.perf_counter
    t0 = clock()
    deadline = t0 + time_ms / 1000.0
    visits = [0] * len(moves)
    totals = [0.0] * len(moves)
    alive = list(range(len(moves)))
    determinize = worlds if worlds is not None else root.determinizer(seat)
    base = root.running_payoffs()  # public: the same in every sampled world
    done = 0
    lo = math.inf
    hi = -math.inf
    stop = False
    while not stop and done < iterations:
        rounds = max(1, (len(alive) - 1).bit_length())  # ceil(log2(survivors)), 1 for the winner alone
        for _ in range(max(1, (iterations - done) // rounds // len(alive))):
            left = iterations - done
            if done and len(alive) > left:
                break  # not enough for a whole world: halve first
            # the first world in a random order: a budget smaller than the moves, or time running out
            # inside it, leaves a random subset played, not the first moves in legal order
            order = alive if done else rng.sample(alive, min(left, len(alive)))
            world = determinize(rng)
            world.stop_after_deal()
            deal = world.deals_done
            stream = rng.getrandbits(64)
            # a world counts only once every survivor has played it (time may run out inside it)
            results: list[tuple[int, float]] = []
            w_lo = lo
            w_hi = hi
            for i in order:
                if (done or results) and clock() >= deadline:
                    stop = True
                    break
                w = world.clone()
                w.apply(moves[i])
                # every move of this world plays from the same stream (unless the rollout never draws)
                r = random.Random(stream) if rollout is None or rollout_draws else _NO_DRAWS
                if rollout is not None:
                    rollout(w, r)
                elif policy is not None:
                    play_to_deal_end(w, policy, r)
                else:
                    while w.to_move is not None and w.deals_done == deal:
                        ms = w.legal_moves()
                        w.apply(ms[r.randrange(len(ms))])
                delta = [e - b for e, b in zip(w.running_payoffs(), base, strict=True)]
                w_lo = min(w_lo, *delta)
                w_hi = max(w_hi, *delta)
                results.append((i, delta[seat]))
            if stop and done:
                break  # the first world counts even when cut short: at least one playout is played
            for i, d in results:
                visits[i] += 1
                totals[i] += d
            done += len(results)
            lo = w_lo
            hi = w_hi
            if stop or done >= iterations:
                break
        if not stop and len(alive) > 1 and done < iterations:
            # the better half by mean over the worlds every survivor met (ties: legal order)
            alive.sort(key=lambda i: (-totals[i] / visits[i], i))
            alive = sorted(alive[:(len(alive) + 1) // 2])
    played = [i for i in alive if visits[i]] or [i for i in range(len(moves)) if visits[i]]
    winner = min(played, key=lambda i: (-totals[i] / visits[i], i))
    return PairedResult(visits, totals, winner, done, clock() - t0, lo, hi)


def _untried(move: Move) -> dict[str, Any]:
    """A root candidate no search tried."""
    return {"move": move.id, "visits": 0, "mean_reward": None, "mean_payoff": None}


def root_statistics(tree: Tree, moves: list[Move], lo: float, hi: float,
                    by_mean: bool = False) -> list[dict[str, Any]]:
    """The root's candidates, most visited first (ties: higher mean reward, then legal order; with
    ``by_mean``, highest mean reward first, then most visited, then legal order), with
    mean rewards scaled to [0, 1] by the search's final bounds and mean payoffs in the rule set's own unit
    (the mean change of the deciding seat's payoff over the search's horizon; both ``None`` for an
    unvisited move)."""
    span = hi - lo
    out: list[tuple[tuple[float, float, int], dict[str, Any]]] = []
    for i, m in enumerate(moves):
        ch = tree.child(0, m.key)
        visits = ch[0] if ch is not None else 0
        payoff: float | None = None
        if visits == 0 or ch is None:
            mean: float | None = None
        else:
            payoff = round(ch[2] / visits, 3)
            mean = round((ch[2] / visits - lo) / span, 6) if span > 0 else 0.5
        key = -(mean if mean is not None else -1.0)
        out.append(((key, -visits, i) if by_mean else (-visits, key, i),
                    {"move": m.id, "visits": visits, "mean_reward": mean, "mean_payoff": payoff}))
    out.sort(key=lambda t: t[0])
    return [t[1] for t in out]


def playout_policy(found: Heuristics | None, name: str) -> tuple[Policy | None, str]:
    """The playout policy called ``name`` from a rule set's heuristics (``"default"``: the one the rule set
    names, ``Heuristics.default_playout``), and the name of the one actually used (``None``/``"random"``
    where the rule set has no heuristics)."""
    if found is not None:
        if name == "default":
            name = found.default_playout
        if name == "heuristic":
            return found.playout, "heuristic"
        if name == "greedy":
            return found.greedy_playout or greedy_policy(found.greedy), "greedy"
    return None, "random"


class SearchKit(NamedTuple):
    """The parts of a rule set's heuristics that ``search`` plays with: its keyword arguments of the same
    names."""

    policy: Policy | None
    rollout: Rollout | None
    hidden: Hidden | None
    observe: Observe | None


def search_kit(found: Heuristics | None, state: State, playout: str) -> tuple[SearchKit, str]:
    """What ``search`` plays ``state``'s rule set with, for the playout policy called ``playout``, and the
    name of the policy actually used (``playout_policy``)."""
    policy, used = playout_policy(found, playout)
    if found is None:
        return SearchKit(policy, None, None, None), used
    # the playout policy's whole-playout fast path, where the rule set has one
    rollout = found.rollout if used == "heuristic" else found.greedy_rollout if used == "greedy" else None
    # another seat's node in one call: only with the hidden model it was written for, where moves hide
    observe = found.observe if found.hidden is not None and state.hides_moves else None
    return SearchKit(policy, rollout, found.hidden, observe), used


def likeliest_types(chances: dict[str, list[float]], names: Sequence[str],
                    confidence: float = 0.0) -> dict[str, str]:
    """Each seat's likeliest model of ``names`` from its chances (``ai.inference.model_chances``; a chance
    past the last name is a player like none of them, ``"other"``); a seat whose chances are all equal, or
    whose likeliest has a chance below ``confidence``, is the first model's."""
    named = (*names, "other")
    return {p: named[cs.index(max(cs))] if max(cs) > min(cs) and max(cs) >= confidence else names[0]
            for p, cs in chances.items()}


class IsmctsEngine(Engine):
    id = "ismcts"
    description = ("Single-observer Information Set MCTS (Cowling, Powley & Whitehouse 2012): a fresh "
                   "determinization per iteration, UCB with availability counts, playouts to the end of the "
                   "deal scored by each seat's payoff change scaled to [0, 1].")
    params: ClassVar[tuple[Param, ...]] = (
        Param("iterations", int, 800, "search iterations (the search stops at iterations or time_ms, "
              "whichever comes first)", minimum=1, maximum=1_000_000),
        Param("time_ms", int, 10_000, "wall-clock budget in milliseconds", minimum=1, maximum=600_000),
        Param("uct_c", float, DEFAULT_UCT_C, "UCB exploration constant (rewards are in [0, 1])",
              minimum=0.0, maximum=10.0),
        Param("root", str, "ucb", "how the root's moves share the iterations: 'ucb' (as every node of the tree; "
              "the most visited is played) or 'uniform' (in turn, least visited first; the best mean is played)",
              choices=("ucb", "uniform")),
        Param("playout", str, "default", "playout policy: 'random' (uniform), 'heuristic' (the rule set's cheap "
              "playout policy, ai.heuristics.<rules>.playout), 'greedy' (every seat plays a greedy one-ply "
              "choice: Kozel's reads the ends a move leaves the next player, as its greedy engine does) or "
              "'default' (the rule set's measured best: greedy at Kozel, heuristic elsewhere); random where a "
              "rule set has no heuristics", choices=("default", "random", "heuristic", "greedy")),
        Param("inference", bool, True, "shape the sampled worlds by the other seats' moves in this deal under an "
              "opponent model (ai.inference; rule sets with a replay only: tiengow, kozel, tiuu); its cost is paid inside "
              "time_ms. With inference_worlds 1 and no inference_mcmc (the defaults) only Tien Gow's worlds change: "
              "each is arranged as the opponent model plays (face-down discards are the weakest tiles); false: "
              "uniform worlds, the search of before 2026-12-07"),
        Param("inference_worlds", int, 1, "candidate worlds the inference weighs by the other seats' moves "
              "(importance resampling); 1: none, every sampled world only arranged as the opponent model plays "
              "(Tien Gow: face-down discards are the weakest tiles)", minimum=1, maximum=10_000),
        Param("inference_mcmc", int, 0, "with inference: Metropolis steps (in 4 chains) that draw the worlds in "
              "proportion to their likelihood under the opponent model instead of weighing candidates "
              "(ai.inference.chain); 0: none", minimum=0, maximum=100_000),
        Param("inference_eps", float, 0.5, "the opponent model's noise: the chance that another seat plays "
              "a uniformly random legal move instead of the greedy one; 0: each seat's own, unknown, integrated over a "
              "grid (ai.inference.EPS_GRID)", minimum=0.0, maximum=1.0),
        Param("inference_model", str, "greedy", "with inference: the opponent model the other seats' moves are "
              "weighed by: 'greedy' (greedy with noise inference_eps), 'search' (chances fitted on the search's "
              "own play, ai.inference.SEARCH_MODELS, tiengow) or 'softmax' (the greedy score at a temperature "
              "fitted on the search's own play, ai.inference.SOFTMAX_MODELS, kozel and tiuu)", choices=inference.MODELS),
        Param("opponents", str, "default", "how the search plays other seats' moves inside its tree: 'tree' (UCB "
              "over the tree's statistics, the same whatever the seat holds), 'greedy' (the greedy engine's "
              "choice from the seat's hand in each sampled world), 'default' (the rule set's measured best: "
              "typed at Tien Gow, tree elsewhere) or 'typed' (each seat by the model of the rule set's library its "
              "moves in the deal make likeliest, ai.inference.model_chances: Tien Gow; greedy where a rule set has "
              "no library); tree where a rule set has no heuristics",
              choices=("default", "tree", "greedy", "typed")),
        Param("opponents_eps", float, 0.0, "with an opponent model (opponents='greedy' or 'typed', or 'default' "
              "at Tien Gow): the share of other seats' tree moves chosen by the tree's statistics instead",
              minimum=0.0, maximum=1.0),
    )

    #: strengths by search budget; the time limit only guards a slow machine.  ``standard`` (the default, and
    #: the ``iterations`` default) is 800 since 2026-12-06: Kozel's default playout costs about a fifth more an
    #: iteration than the search of before, and at 800 a Kozel suggestion costs no more than that search's
    #: at 1,000 and is not weaker; elsewhere 800 and 1,000 play level (docs/ai.md, "Presets")
    presets: ClassVar[tuple[Preset, ...]] = (
        Preset("quick", "Quick (200 iterations)", {"iterations": 200, "time_ms": 3000}),
        Preset("standard", "Standard (800 iterations)", {"iterations": 800, "time_ms": 8000}, default=True),
        Preset("strong", "Strong (5,000 iterations)", {"iterations": 5000, "time_ms": 10000}),
    )

    def worlds(self, state: State, seat: Seat, params: dict[str, Any],
               rng: random.Random) -> tuple[Worlds | None, dict[str, float] | None]:
        """The sampler of the worlds the search plays in and its statistics; ``None``: the information set's
        own (``state.determinizer(seat)``, uniform over what ``seat`` cannot tell apart).  With
        ``inference``, ``ai.inference.sampler``: the worlds weighted by the other seats' moves."""
        heuristics = self.heuristics(state, params)
        typed = None
        if self._opponents(heuristics, params) == "typed":
            # which model of the library each other seat plays like, judged before the worlds are drawn
            typed = self._types(state, seat, cast(Heuristics, heuristics), rng)
        made = inference.sampler(state, seat, params["inference_worlds"], params["inference_eps"], rng,
                                 mcmc=params["inference_mcmc"], model=params["inference_model"]
                                 ) if params["inference"] else None
        sampled, stats = (None, None) if made is None else made
        if typed is None:
            return sampled, stats
        out: dict[str, Any] = dict(stats or {"elapsed_ms": 0.0})
        out.update(typed, elapsed_ms=round(out["elapsed_ms"] + typed["elapsed_ms"], 3))
        return sampled, out

    @staticmethod
    def _opponents(heuristics: Heuristics | None, params: dict[str, Any]) -> str:
        """The opponent model ``opponents`` names, ``default`` resolved: ``"tree"``, ``"greedy"`` or
        ``"typed"``."""
        if heuristics is None:
            return "tree"
        name = params["opponents"]
        return heuristics.default_opponents if name == "default" else cast(str, name)

    @staticmethod
    def _types(state: State, seat: Seat, heuristics: Heuristics,
               rng: random.Random) -> dict[str, Any] | None:
        """``opponents=typed``: each other seat's chances of playing like each model of the rule set's library
        (``ai.inference.model_chances``, Bayes' rule on the likelihood of its moves in the deal averaged over
        arranged worlds, with a searching player last: the fitted ``ai.inference.SEARCH_MODELS``, which keeps
        searching seats from being taken for a greedy engine of the library), its likeliest (``types``: a seat
        whose moves do not tell the models apart is today's greedy, the library's first; one that plays like
        the searching player ``"other"``, played as today's greedy) and the time it took; ``None`` where
        there is nothing to judge (no library of two models, or no other seat has moved)."""
        names = [name for name, _policy in heuristics.models]
        if len(names) < 2 or not inference.others_moved(state, seat):
            return None  # (and no number drawn: the deal's first lead is the greedy model's search, node for node)
        t0 = time.perf_counter()
        chances = inference.model_chances(state, seat, names, TYPE_EPS, random.Random(rng.random()),
                                          judge="marginal", other=SEARCHER)
        if chances is None:
            return None
        return {"types": likeliest_types(chances, names), "chances": chances,
                "elapsed_ms": round((time.perf_counter() - t0) * 1000.0, 3)}

    def _budget(self, state: State, seat: Seat, params: dict[str, Any],
                rng: random.Random) -> tuple[Worlds | None, float, dict[str, Any]]:
        """The worlds' sampler, the time left for the search once it is built (its statistics'
        ``elapsed_ms``), and the statistics to add."""
        worlds, inferred = self.worlds(state, seat, params, rng)
        if inferred is None:
            return worlds, params["time_ms"], {}
        return worlds, max(1.0, params["time_ms"] - inferred["elapsed_ms"]), {"inference": inferred}

    def heuristics(self, state: State, params: dict[str, Any]) -> Heuristics | None:
        """The heuristics the search plays with: the rule set's own (``ai.heuristics``).  A variant of the
        engine may hand it others (``bench/variants.py``)."""
        return ai.greedy.heuristics_for(state.rules.id)

    def choose(self, state: State, seat: Seat, params: dict[str, Any], rng: random.Random) -> Decision:
        moves = state.legal_moves()
        heuristics = self.heuristics(state, params)
        kit, used = search_kit(heuristics, state, params["playout"])
        if len(moves) == 1:
            # nothing to decide: spend no budget
            return Decision(moves[0], {"iterations": 0, "elapsed_ms": 0.0, "playout": used,
                                       "candidates": [_untried(moves[0])]}, tuple(moves))
        if heuristics is not None and heuristics.distinct is not None:
            return self._paired(state, seat, params, rng, moves, heuristics.distinct(state), kit.policy,
                                kit.rollout, heuristics.rollout_draws, used)
        worlds, time_ms, extra = self._budget(state, seat, params, rng)
        model, opponents = self._model(heuristics, params, extra.get("inference"))
        found = search(
            state, seat, iterations=params["iterations"], time_ms=time_ms, uct_c=params["uct_c"], rng=rng,
            worlds=worlds, model=model, model_eps=params["opponents_eps"],
            root_uniform=params["root"] == "uniform", policy=kit.policy, rollout=kit.rollout, hidden=kit.hidden,
            observe=kit.observe)
        candidates = root_statistics(found.tree, moves, found.lo, found.hi, by_mean=params["root"] == "uniform")
        best_id = candidates[0]["move"]
        best = next(m for m in moves if m.id == best_id)
        stats = {"iterations": found.iterations, "elapsed_ms": round(found.elapsed * 1000.0, 3),
                 "playout": used, "opponents": opponents, "candidates": candidates, **extra}
        if params["root"] == "uniform":
            stats["root"] = "uniform"
        return Decision(best, stats, tuple(moves))

    def _model(self, heuristics: Heuristics | None, params: dict[str, Any],
               inferred: dict[str, Any] | None = None) -> tuple[Policy | None, str]:
        """The opponent model ``opponents`` names and the name of the one used: ``None``, ``"tree"`` for the
        tree's own UCB (also for a rule set without heuristics), else the greedy engine's one-ply choice for
        whichever seat is to move, ``"greedy"``, or ``"typed"``: each seat whose ``types`` (in ``inferred``,
        :meth:`_types`) names another model of the library played by it, the rest by the greedy engine;
        ``"default"`` is the rule set's ``Heuristics.default_opponents``.  ``inferred``: the inference's
        statistics of this decision (a variant may read them too; ``bench/variants.py``)."""
        name = self._opponents(heuristics, params)
        if heuristics is None or name == "tree":
            return None, "tree"
        policy, _ = playout_policy(heuristics, "greedy")
        if name == "greedy" or len(heuristics.models) < 2:
            return policy, "greedy"
        library = dict(heuristics.models)
        by_seat = {int(p): library[m] for p, m in ((inferred or {}).get("types") or {}).items()
                   if m in library and library[m] is not policy}
        if not by_seat:
            return policy, "typed"

        greedy = cast(Policy, policy)

        def typed(world: State, r: random.Random) -> Move:
            play = by_seat.get(cast(Seat, world.to_move))
            return play(world, r) if play is not None else greedy(world, r)

        return typed, "typed"

    def _paired(self, state: State, seat: Seat, params: dict[str, Any], rng: random.Random, moves: list[Move],
                reps: list[Move], policy: Policy | None, rollout: Rollout | None, rollout_draws: bool,
                used: str) -> Decision:
        """The search of a rule set whose root moves fall into strategic classes (``paired_search`` over
        one move per class).  Every legal move is listed in the candidates, the chosen one first, then
        the others by visits, mean reward and legal order; moves of no search have no visits."""
        if len(reps) == 1:
            # one class: nothing to decide, spend no budget
            return Decision(reps[0], {"iterations": 0, "elapsed_ms": 0.0, "playout": used, "search": "paired",
                                      "candidates": [_untried(m) for m in
                                                     sorted(moves, key=lambda m: m is not reps[0])]},
                            tuple(moves))
        worlds, time_ms, extra = self._budget(state, seat, params, rng)
        found = paired_search(
            state, seat, reps, iterations=params["iterations"], time_ms=time_ms, policy=policy,
            rng=rng, rollout=rollout, rollout_draws=rollout_draws, worlds=worlds)
        visits, totals, winner, lo = found.visits, found.totals, found.winner, found.lo
        span = found.hi - lo
        by_id = {m.id: i for i, m in enumerate(reps)}
        out: list[tuple[int, int, float, int, dict[str, Any]]] = []
        for j, m in enumerate(moves):
            i = by_id.get(m.id)
            n = visits[i] if i is not None else 0
            mean: float | None = None
            payoff: float | None = None
            if i is not None and n:
                mean = round((totals[i] / n - lo) / span, 6) if span > 0 else 0.5
                payoff = round(totals[i] / n, 3)
            out.append((i != winner, -n, -(totals[i] / n) if i is not None and n else math.inf, j,
                        {"move": m.id, "visits": n, "mean_reward": mean, "mean_payoff": payoff}))
        out.sort(key=lambda t: t[:4])
        stats = {"iterations": found.playouts, "elapsed_ms": round(found.elapsed * 1000.0, 3),
                 "playout": used, "search": "paired", "candidates": [t[4] for t in out], **extra}
        return Decision(reps[winner], stats, tuple(moves))
