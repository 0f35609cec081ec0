"""The heuristic playout's fast path (``ai.heuristics.<rules>.rollout``) is the same playout as the slow
one: from sampled positions of every rule set, ``rollout(world, rng)`` must leave the world and the
generator exactly as ``apply(playout(world, rng))`` in a loop to the end of the deal does (the
fast paths compute what the policy needs without building every legal move list, and play a trick on
local variables; any drift from the rules or from the policy's draws shows here)."""

from __future__ import annotations

import random

import pytest
from positions import walked

import engine
from ai.greedy import heuristic
from ai.heuristics import heuristics_for, play_to_deal_end
from ai.ismcts import playout_policy
from engine.game import State, below, shuffle
from engine.kozel import KozelState
from engine.tiuu import TiuUState


def _reference(world: State, rng: random.Random) -> None:
    playout = heuristic(world.rules.id, "playout")
    assert playout is not None
    play_to_deal_end(world, playout, rng)


def _positions(rules_id: str, players: int, options: dict, count: int):
    """Sampled worlds as a search sees them: a match some random moves in, determinized for the seat to
    move."""
    for seed in range(count):
        state = walked(rules_id, players, seed, 40, options)
        if state.finished:
            continue
        yield seed, state.determinize(state.to_move, random.Random(~seed))


def _compared(world: State) -> dict:
    """The stored state less what a rollout may leave stale: Kozel's hand slots (the public void facts that
    only ``determinize`` and ``view`` read) and the round's history (with the slots' acquisitions, which only
    ``round_replay`` reads) are not kept by its rollout on the search's halting world, which is thrown away
    once its payoffs are read (``ai.heuristics.kozel.rollout``).  Kozel's mask of the tiles
    on the table is not stored (it follows from the line) but the rollout keeps it in a local: compared.
    Tiu U's rollout leaves what is known of each hand (``known`` and ``caps``, which only determinizing and
    ``view`` read) as it was (``engine.tiuu.rollout_of``); its derived counts are not stored."""
    d = world.to_dict()
    if isinstance(world, KozelState):
        del d["slots"], d["origin"], d["history"]
        d["table"] = world.table
    if isinstance(world, TiuUState):
        del d["known"], d["caps"]
    return d


#: every rule set with a rollout fast path, in every player count and variant the conformance test plays
CASES = [(rules_id, players, options)
         for rules_id, ruleset in sorted(engine.RULES.items()) if heuristic(rules_id, "rollout") is not None
         for players, options in [(ruleset.default_players, {}), *ruleset.variants]]


def test_the_heuristic_rule_sets_have_rollouts():
    """Every rule set has the fast path (the wall game's for its paired root, whose
    playouts are greedy ones)."""
    assert {rules_id for rules_id, _p, _o in CASES} == {"kozel", "tiengow", "tiengow_wall", "tiuu"}


def _case_ids(cases):
    return [f"{r}-{p}p-{'-'.join(f'{k}={v}' for k, v in o.items()) or 'default'}" for r, p, o in cases]


def _assert_rollout_plays(rules_id, players, options, rollout, reference):
    """From 400 sampled worlds, ``rollout`` leaves the world and the generator as ``reference`` does."""
    checked = 0
    for seed, world in _positions(rules_id, players, options, 400):
        fast, slow = world.clone(), world.clone()
        # as the search sets it on its sampled world (``clone`` does not copy it)
        fast.halt_at_deal_end = slow.halt_at_deal_end = True
        fast_rng, slow_rng = random.Random(seed), random.Random(seed)
        rollout(fast, fast_rng)
        reference(slow, slow_rng)
        assert _compared(fast) == _compared(slow), f"{rules_id} seed {seed}: the rollout reached another state"
        assert fast_rng.getstate() == slow_rng.getstate(), f"{rules_id} seed {seed}: the rollout drew differently"
        checked += 1
    assert checked > 100


@pytest.mark.parametrize(("rules_id", "players", "options"), CASES, ids=_case_ids(CASES))
def test_rollout_plays_the_playout_policy_exactly(rules_id, players, options):
    _assert_rollout_plays(rules_id, players, options, heuristic(rules_id, "rollout"), _reference)


#: every rule set with a greedy rollout (``ismcts:playout=greedy``'s fast path), in every variant
GREEDY_CASES = [(rules_id, players, options) for rules_id, players, options in CASES
                if heuristic(rules_id, "greedy_rollout") is not None]


def _greedy_reference(world: State, rng: random.Random) -> None:
    # the greedy playout policy (Kozel's is the greedy engine's choice without voids:
    # ai.heuristics.kozel.greedy_playout)
    policy, used = playout_policy(heuristics_for(world.rules.id), "greedy")
    assert policy is not None and used == "greedy"
    play_to_deal_end(world, policy, rng)


def test_kozel_has_a_greedy_rollout():
    """Kozel's greedy playouts beat its cheap ones at equal iterations (docs/ai-history.md), so the greedy
    policy has a fast path there."""
    assert {rules_id for rules_id, _p, _o in GREEDY_CASES} == {"kozel"}


@pytest.mark.parametrize(("rules_id", "players", "options"), GREEDY_CASES, ids=_case_ids(GREEDY_CASES))
def test_greedy_rollout_plays_the_greedy_policy_exactly(rules_id, players, options):
    """The greedy rollout plays the greedy playout's one-ply choice for every seat, with its tie draws, to the
    end of the deal, exactly as the policy move by move (Kozel's scores what a move leaves the next player,
    ``engine.kozel.GreedyScore.shut`` and ``scarce``, as ``ai.heuristics.kozel.unvoided_greedy`` does)."""
    _assert_rollout_plays(rules_id, players, options, heuristic(rules_id, "greedy_rollout"), _greedy_reference)


@pytest.mark.parametrize(("rules_id", "players", "options"), CASES, ids=_case_ids(CASES))
def test_a_rollout_leaves_a_finished_deal_as_it_is(rules_id, players, options):
    """The search calls the rollout after its tree, which may have played the deal to its end: the rollout
    then plays nothing and draws nothing (a fast path that played on past the end changed the payoffs)."""
    rollout = heuristic(rules_id, "rollout")
    checked = 0
    for seed, world in _positions(rules_id, players, options, 60):
        world.halt_at_deal_end = True
        _reference(world, random.Random(seed))
        assert world.to_move is None, f"{rules_id} seed {seed}: the deal did not end"
        before = _compared(world)
        rng = random.Random(seed)
        state = rng.getstate()
        rollout(world, rng)
        assert _compared(world) == before, f"{rules_id} seed {seed}: the rollout played past the end"
        assert rng.getstate() == state, f"{rules_id} seed {seed}: the rollout drew past the end"
        checked += 1
    assert checked >= 10


def test_tiengow_last_discard_is_the_hands_last_tiles():
    """The Tien Gow rollout plays ``_pick``'s "last discard" of a group follow without the move list: the
    engine lists discards in combination order of the sorted hand (first of equal ones kept), so the last is
    the hand's last ``n`` tiles; checked against the engine's list on sampled hands of every size."""
    from engine import tiengow
    from engine.tiles import CF_COPIES, FACES

    deck = [f for f in FACES for _ in range(CF_COPIES[f])]
    walk = random.Random(3)
    follows = {}
    for sit, size in tiengow._SIZE.items():
        follows.setdefault(size, sit)
    checked = 0
    for _ in range(4000):
        hand = tuple(sorted(walk.sample(deck, walk.randint(1, 8))))
        for n, sit in follows.items():
            if n <= len(hand):
                assert tiengow.moves_for(hand, sit)[-1] is tiengow._discard_of(hand[-n:]), (hand, n)
                checked += 1
    assert checked > 8000


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, 20, 36, 64, 128, 129, 300])
def test_the_search_chance_helpers_draw_as_random_does(n):
    """``engine.game.shuffle`` and ``below`` (every determinization and rollout draws through them) give the
    results of ``rng.shuffle`` and ``rng.randrange`` and leave the generator in the same state, for
    lengths the shuffle's table of steps has met and for new ones."""
    for seed in range(30):
        fast, slow = random.Random(seed), random.Random(seed)
        a, b = list(range(n)), list(range(n))
        shuffle(a, fast)
        slow.shuffle(b)
        assert a == b
        if n:
            assert below(fast, n) == slow.randrange(n)
        assert fast.getstate() == slow.getstate()


@pytest.mark.parametrize(("players", "options"), [(p, o) for r, p, o in CASES if r == "tiengow"],
                         ids=_case_ids([c for c in CASES if c[0] == "tiengow"]))
def test_tiengow_uniform_rollout_plays_the_uniform_playout_exactly(players, options):
    """Tien Gow's playout of before the sixteenth look (``uniform_playout``: any lead, uniformly; kept for the
    arena's ``ismcts_tiengow_playout:lead=uniform``) keeps its exact fast path too; the shipped playout
    (greedy's leads, from a cache per hand) is checked above with every rule set's."""
    from ai.heuristics import tiengow

    def reference(world: State, rng: random.Random) -> None:
        play_to_deal_end(world, tiengow.uniform_playout, rng)

    _assert_rollout_plays("tiengow", players, options, tiengow.uniform_rollout, reference)


def test_tiengow_playout_leads_as_greedy_does():
    """The playout's lead is the greedy engine's lead (the weakest group of the largest size, the strongest
    tile kept back), with greedy's tie draw replaced by legal order: wherever greedy's lead has no tie it is
    the same move, and it is always one of greedy's tied best leads."""
    from ai.heuristics import tiengow

    checked = ties = 0
    for seed, world in _positions("tiengow", 4, {}, 400):
        if world.cur:
            continue
        hand = world.hands[world.to_move]
        lead = tiengow.greedy_lead(hand)
        assert tiengow.playout(world, random.Random(seed)) is lead, f"seed {seed}: the playout leads otherwise"
        picks = {tiengow.greedy(world, world.to_move, random.Random(k)) for k in range(8)}
        assert lead in picks, f"seed {seed}: {lead} is not among greedy's leads {picks}"
        ties += len(picks) > 1
        checked += 1
    assert checked > 50
    assert ties < checked


def _assert_kit_plays(rules_id, cases, policy, rollout):
    """A screened playout's fast path plays as ``policy`` move by move, in each ``(players, options)``."""

    def reference(world: State, rng: random.Random) -> None:
        play_to_deal_end(world, policy, rng)

    for players, options in cases:
        _assert_rollout_plays(rules_id, players, options, rollout, reference)


@pytest.mark.parametrize(("lead", "cheapest_beat", "last_discard"),
                         [("greedy", 1.0, 1.0), ("greedy", 0.9, 0.0), ("uniform", 0.5, 1.0)])
def test_tiengow_screened_playouts_have_exact_rollouts(lead, cheapest_beat, last_discard):
    """The playouts screened by ``ismcts_tiengow_playout`` (other leads and follow chances,
    ``ai.heuristics.tiengow.playout_with``) are played by their fast path exactly as move by move."""
    from ai.heuristics import tiengow

    policy, rollout = tiengow.playout_with(lead=lead, cheapest_beat=cheapest_beat, last_discard=last_discard)
    _assert_kit_plays("tiengow", [(4, {})], policy, rollout)


@pytest.mark.parametrize(("explore", "growth", "growth_stock"), [(0.0, 12, 12), (0.5, 30, 0), (0.1, 0, 40)])
def test_tiuu_screened_playouts_have_exact_rollouts(explore, growth, growth_stock):
    """The playouts screened by ``ismcts_tiuu_playout`` (other exploration and growth values,
    ``ai.heuristics.tiuu.playout_with``) are played by their fast path exactly as move by move."""
    from ai.heuristics import tiuu

    policy, rollout = tiuu.playout_with(explore=explore, growth=growth, growth_stock=growth_stock)
    _assert_kit_plays("tiuu", [(p, o) for r, p, o in CASES if r == "tiuu"], policy, rollout)
