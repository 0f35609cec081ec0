"""Inference (``ai.inference``; ``ismcts:inference=true``): the search's worlds weighted by how likely each
makes the other seats' moves under an opponent model (greedy with noise, or the model of searching players
fitted on their play), computed only from what the seat saw."""

from __future__ import annotations

import math
import random
from collections.abc import Callable

import pytest

import ai
import engine
from ai import inference
from engine.game import State
from engine.tiengow import DEAD, situations

INFER = {"iterations": 60, "time_ms": 600_000, "inference": True, "inference_worlds": 12}
MCMC = {**INFER, "inference_worlds": 1, "inference_mcmc": 40}
SEARCH_MODEL = {**MCMC, "inference_model": "search"}
TYPED = {"iterations": 150, "time_ms": 600_000, "opponents": "typed"}


def _greedy_deal(seed: int, moves: int) -> State:
    """A Tien Gow deal ``moves`` moves in, every seat playing the greedy engine."""
    state = engine.new_game("tiengow", players=4, seed=seed)
    for ply in range(moves):
        state.apply(ai.decide("greedy", state, state.to_move, {}, seed=ply).move)
    return state


def _found(count: int, make: Callable[[int], State], keep: Callable[[State], bool]) -> list[State]:
    """The first ``count`` states ``make(seed)`` (seeds 0, 1, ...) that ``keep`` keeps."""
    out = []
    seed = 0
    while len(out) < count:
        state = make(seed)
        seed += 1
        if keep(state):
            out.append(state)
    return out


def _with_hidden_discards(count: int) -> list[State]:
    """Deals in which some seat other than the one to move has discarded face down."""
    return _found(count, lambda seed: _greedy_deal(seed, 9 + seed % 8), lambda state: any(
        not up and p != state.to_move for _l, _w, ps in state.tricks for p, up, _f in ps))


@pytest.mark.parametrize("sampler", ["resampling", "metropolis", "metropolis, search model", "typed opponents"])
def test_states_with_the_same_observation_history_get_the_same_inferred_decision(sampler):
    # the fair-AI rule with either sampler and either model, and with the other seats' models judged from
    # their moves (opponents=typed): the other true state deals the other hands and the other seats'
    # face-down discards afresh: the same history as the seat saw it (face-down discards stay face down),
    # different tiles behind it, and the identical decision
    params = {"resampling": INFER, "metropolis": MCMC, "metropolis, search model": SEARCH_MODEL,
              "typed opponents": TYPED}[sampler]
    _assert_same_inferred_decisions(_with_hidden_discards(4), params, random.Random(f"inference/iset/{sampler}"))


def _assert_same_inferred_decisions(states: list[State], params: dict, rng: random.Random) -> None:
    """For each state: another true state the seat to move cannot tell from it (its own determinization)
    gets the identical decision, search statistics and inference statistics (but for the time taken)."""
    for state in states:
        seat = state.to_move
        other = state.determinize(seat, rng)
        assert other.view(seat) == state.view(seat) and other.to_dict() != state.to_dict()
        a = ai.decide("ismcts", state, seat, params, seed=4)
        b = ai.decide("ismcts", other, seat, params, seed=4)
        assert a.move.id == b.move.id
        assert a.stats["candidates"] == b.stats["candidates"]
        assert a.stats["inference"] == {**b.stats["inference"], "elapsed_ms": a.stats["inference"]["elapsed_ms"]}


def _kozel_round(seed: int, moves: int, engine_id: str | None = None) -> State:
    """A two-player Kozel round ``moves`` moves in (fewer if it ends), every seat playing ``engine_id``, or
    by default the shedding greedy choice that Kozel's inference models (``ai.heuristics.kozel.score_move``;
    the greedy engine also reads the ends it leaves the next player)."""
    from ai.heuristics.kozel import shedding_greedy

    state = engine.new_game("kozel", players=2, seed=seed)
    for ply in range(moves):
        seat = state.to_move
        if seat is None or state.deals_done:
            break
        state.apply(shedding_greedy(state, seat, random.Random(ply)) if engine_id is None
                    else ai.decide(engine_id, state, seat, {}, seed=ply).move)
    return state


def _kozel_rounds(count: int) -> list[State]:
    """Kozel rounds under way in which the seat to move has a choice and its opponent has chosen between
    moves."""
    return _found(count, lambda seed: _kozel_round(seed, 7 + seed % 9), lambda state: (
        state.to_move is not None and not state.deals_done and len(state.legal_moves()) > 1 and any(
            mover != state.to_move and len(before.legal_moves()) > 1
            for before, mover, _m in inference.REPLAYS["kozel"][0](state))))


@pytest.mark.parametrize("model", ["greedy", "softmax"])
def test_kozel_states_with_the_same_observation_history_get_the_same_inferred_decision(model):
    # the fair-AI rule at Kozel, whose inference rebuilds the round from its public history: the other true
    # state deals the opponent's hand and the bazaar afresh (every void it showed kept), and the decision, the
    # search's statistics and the inference's are identical
    _assert_same_inferred_decisions(_kozel_rounds(4), {**INFER, "inference_model": model},
                                    random.Random(f"inference/kozel/{model}"))


def _tiuu_game(seed: int, moves: int) -> State:
    """A two-player Tiu U game ``moves`` moves in (fewer where it ends first), both seats playing greedy."""
    state = engine.new_game("tiuu", players=2, seed=seed)
    for ply in range(moves):
        if state.finished:
            break
        state.apply(ai.decide("greedy", state, state.to_move, {}, seed=ply).move)
    return state


def _tiuu_games(count: int) -> list[State]:
    """Tiu U games in which another seat than the one to move has made a part-1 choice the replay scores."""
    return _found(count, lambda seed: _tiuu_game(seed, 4 + seed % 8), lambda state: not state.finished and any(
        mover != state.to_move and len(before.legal_moves()) > 1
        for before, mover, _m in inference.REPLAYS["tiuu"][0](state)))


@pytest.mark.parametrize("model", ["greedy", "softmax"])
def test_tiuu_states_with_the_same_observation_history_get_the_same_inferred_decision(model):
    # the fair-AI rule at Tiu U, whose inference scores the other seat's part-1 choices on the game's public
    # record (engine.tiuu.part1_replay): the other true state deals the other hand and the stock afresh
    # (within what every flip showed), and the decision and both statistics are identical
    _assert_same_inferred_decisions(_tiuu_games(4), {**INFER, "inference_model": model},
                                    random.Random(f"inference/tiuu/{model}"))


def test_tiuu_worlds_are_weighed_for_their_hands_and_handed_over_with_the_stock_drawn_afresh():
    # a candidate is weighed for its hands; the order of the stock, which no move tells of, is drawn for
    # every world the search takes (ai.inference.REDRAW): one candidate gives many stock orders
    state = _tiuu_games(1)[0]
    seat = state.to_move
    made = inference.sampler(state, seat, 1, 0.0, random.Random(1), model="softmax")
    assert made is None  # one candidate: nothing to weigh
    made = inference.sampler(state, seat, 3, 0.0, random.Random(1), model="softmax")
    assert made is not None
    draw, stats = made
    r = random.Random(2)
    worlds = [draw(r) for _ in range(60)]
    assert stats["candidates"] == 3.0
    assert 1 < len({tuple(tuple(h) for h in w.hands) for w in worlds}) <= 3
    by_hands: dict = {}
    for w in worlds:
        assert w.view(seat) == state.view(seat)
        by_hands.setdefault(tuple(tuple(h) for h in w.hands), set()).add(w.down[w.dpos:])
    assert max(len(orders) for orders in by_hands.values()) > 1


def test_kozel_worlds_that_explain_greedy_opponents_weigh_more_than_the_others():
    # against an opponent that really plays greedy, the true round agrees with greedy at every choice while
    # other worlds of the information set do not; the weighted sampler's worlds explain the opponent's moves
    # better than uniform ones on average, under either model
    replay, agrees = inference.REPLAYS["kozel"]

    def disagreements(world: State, seat: int) -> int:
        return sum(not agrees(before, mover, move) for before, mover, move in replay(world) if mover != seat)

    uniform_ll = weighted_ll = 0.0
    others = 0
    for i, state in enumerate(_kozel_rounds(8)):
        seat = state.to_move
        assert disagreements(state, seat) == 0
        others += sum(disagreements(state.determinize(seat, random.Random(k)), seat) for k in range(30))
        for model, eps in (("greedy", 0.01), ("softmax", 0.0)):
            made = inference.sampler(state, seat, 200, eps, random.Random(i), model=model)
            assert made is not None
            draw, _stats = made
            r = random.Random(i)
            uniform_ll += sum(inference.log_likelihood(state.determinize(seat, random.Random(1000 + k)), seat,
                                                       eps, model) for k in range(20))
            weighted_ll += sum(inference.log_likelihood(draw(r), seat, eps, model) for _ in range(20))
    assert others > 0 and weighted_ll > uniform_ll


def test_the_softmax_models_chances_of_a_positions_moves_sum_to_one():
    # the softmax opponent model is a distribution over the legal moves, whatever the temperature
    for state in _kozel_rounds(3):
        for before, _mover, _move in inference.REPLAYS["kozel"][0](state):
            moves = before.legal_moves()
            for beta in (0.0, 0.12, 2.0):
                model = inference.SoftmaxModel(score=inference.SOFTMAX_MODELS["kozel"].score, beta=beta)
                total = sum(math.exp(inference.softmax_log_p(model, before, m)) for m in moves)
                assert abs(total - 1.0) < 1e-9


def test_the_replay_rebuilds_the_deal_as_the_world_has_it():
    state = _with_hidden_discards(1)[0]
    seen = []
    replayed = None
    for before, mover, move in inference.REPLAYS["tiengow"][0](state):
        assert move in before.legal_moves() and before.to_move == mover
        seen.append((mover, move.code[0], move.code[1]))
        replayed = before
    plays = [p for _l, _w, ps in state.tricks for p in ps] + list(state.cur)
    assert seen == plays
    # the replay plays on one state: once it is through, that state is the position now, hands and all
    assert replayed is not None
    assert replayed.hands == state.hands and replayed.columns == state.columns and replayed.cur == state.cur


def _replayed_log_likelihood(world: State, seat: int, eps: float) -> float:
    """The greedy model's log-likelihood as the replay scores it: the deal rebuilt and replayed, and every
    other seat's move with a choice scored against ``greedy`` on the replayed position."""
    scores: dict[int, list[tuple[bool, int]]] = {}
    for before, mover, move, n in inference._choices(world, seat):
        scores.setdefault(mover, []).append((inference._tiengow_agrees(before, mover, move), n))
    # summed seat by seat, in seat order, as the fast path sums its parts (the float sums then agree exactly)
    if eps > 0.0:
        return sum(sum(math.log((1.0 - eps) * a + eps / n) for a, n in scores[p]) for p in sorted(scores))
    total = 0.0
    for part in (scores[p] for p in sorted(scores)):
        logs = [sum(math.log((1.0 - e) * a + e / n) for a, n in part) for e in inference.EPS_GRID]
        top = max(logs)
        total += top + math.log(sum(math.exp(x - top) for x in logs) / len(logs))
    return total


@pytest.mark.parametrize("eps", [0.0, 0.1, 0.5])
def test_the_greedy_likelihood_without_the_replay_scores_every_move_as_the_replay_does(eps):
    # inference from the other seats' moves (the greedy model): Tien Gow's likelihood reads each seat's
    # hand before each of its moves from the world and the move's public situation instead of replaying
    # the deal; it must give the replay's value for every world, of random and of greedy play, with face-down
    # discards, §7 early death and forced moves among them
    rng = random.Random(f"inference/scorer/{eps}")
    worlds = dead = 0
    for seed in range(40):
        state = engine.new_game("tiengow", players=4, seed=seed)
        engine_id = "random" if seed % 2 else "greedy"
        for ply in range(4 + seed * 7 % 28):
            before = state.clone()
            state.apply(ai.decide(engine_id, state, state.to_move, {}, seed=ply).move)
            if state.to_move is None or state.deals_done:
                state = before  # the deal is over (§7 early death ends it sooner): its last position
                break
        seat = state.to_move
        dead += situations(state).count(DEAD)
        score = inference.likelihood(state, seat, eps)
        for _ in range(4):
            world = state.determinize(seat, rng)
            expected = _replayed_log_likelihood(world, seat, eps)
            assert score(world) == pytest.approx(expected, abs=1e-9)
            assert inference.log_likelihood(world, seat, eps) == pytest.approx(expected, abs=1e-9)
            worlds += 1
    assert worlds == 160 and dead > 0


def _reference_swap(world: State, seat: int, rng: random.Random) -> State | None:
    """The chain's proposal on a whole State, as ``inference._tiengow_swapped`` documents it: two hidden
    tiles of other seats exchanged (hand tiles of the other seats first, then the tiles of their face-down
    plays in the order played); ``None`` when both are in one hand or play or of one face."""
    hands = [[] if p == seat else list(h) for p, h in enumerate(world.hands)]
    downs = [(p, list(f)) for _l, _w, ps in world.tricks for p, up, f in ps if not up]
    downs += [(p, list(f)) for p, up, f in world.cur if not up]
    places = [(h, i, p) for p, h in enumerate(hands) for i in range(len(h))]
    places += [(f, i, len(hands) + k) for k, (p, f) in enumerate(downs) if p != seat for i in range(len(f))]
    if len(places) < 2:
        return None
    (a, i, ca), (b, j, cb) = rng.sample(places, 2)
    if ca == cb or a[i] == b[j]:
        return None
    a[i], b[j] = b[j], a[i]
    return world.rearranged([tuple(sorted(h)) if p != seat else world.hands[p] for p, h in enumerate(hands)],
                            [tuple(sorted(f)) for _p, f in downs])


def _reference_chain(state: State, seat: int, steps: int, eps: float, rng: random.Random, chains: int = 4):
    """Metropolis sampling as ``inference.chain`` documents it, on whole States: each chain from a fresh
    world arranged as the model plays, the proposal accepted with chance min(1, L(new) / L(old)) under the
    replayed likelihood, the second half of every chain kept."""
    uniform = state.determinizer(seat)
    per = max(2, steps // chains)
    pool = []
    for _c in range(chains):
        world = inference.ARRANGE["tiengow"](uniform(rng), seat)
        ll = _replayed_log_likelihood(world, seat, eps)
        for step in range(per):
            new = _reference_swap(world, seat, rng)
            if new is not None:
                new_ll = _replayed_log_likelihood(new, seat, eps)
                if new_ll >= ll or rng.random() < math.exp(new_ll - ll):
                    world, ll = new, new_ll
            if step >= per // 2:
                pool.append(world)
    return pool


def test_the_metropolis_chain_walks_as_the_reference_chain_on_whole_states_does():
    # the chain's fast path (light worlds, the likelihood without the replay, each seat's part remembered)
    # must draw the very worlds of the chain it stands for: the same proposals, the same acceptances
    for i, state in enumerate(_with_hidden_discards(3)):
        seat = state.to_move
        made = inference.chain(state, seat, 120, 0.1, random.Random(i))
        assert made is not None
        expected = _reference_chain(state, seat, 120, 0.1, random.Random(i))
        assert [w.to_dict() for w in made[0]] == [w.to_dict() for w in expected]
        assert len({id(w) for w in made[0]}) > 1


def test_worlds_consistent_with_greedy_opponents_weigh_more_than_the_others():
    # against seats that really play greedy, the true world explains every move (each agrees with greedy),
    # and the weighted sampler draws worlds that explain them far more often than a uniform determinization
    agree_true = agree_uniform = agree_weighted = 0
    for i, state in enumerate(_with_hidden_discards(5)):
        seat = state.to_move
        assert inference.log_likelihood(state, seat, 0.01) > max(
            inference.log_likelihood(state.determinize(seat, random.Random(k)), seat, 0.01) for k in range(30))
        agree_true += 1
        made = inference.sampler(state, seat, 200, 0.01, random.Random(i))
        assert made is not None
        draw, stats = made
        assert 1.0 <= stats["effective"] <= 200
        r = random.Random(i)
        for k in range(20):
            agree_uniform += inference.log_likelihood(state.determinize(seat, random.Random(1000 + k)), seat,
                                                      0.01) > -1.0
            agree_weighted += inference.log_likelihood(draw(r), seat, 0.01) > -1.0
    assert agree_true == 5
    assert agree_weighted > 2 * agree_uniform


def test_inference_weighs_nothing_before_another_seat_has_moved_or_without_a_replay():
    state = engine.new_game("tiengow", players=4, seed=3)
    assert inference.sampler(state, state.to_move, 8, 0.5, random.Random(1)) is None
    d = ai.decide("ismcts", state, state.to_move, INFER, seed=1)
    assert "inference" not in d.stats
    kozel = engine.new_game("kozel", players=2, seed=3)
    assert inference.sampler(kozel, kozel.to_move, 8, 0.5, random.Random(1)) is None
    tiuu = engine.new_game("tiuu", players=2, seed=3)
    assert inference.sampler(tiuu, tiuu.to_move, 8, 0.0, random.Random(1), model="softmax") is None
    wall = engine.new_game("tiengow_wall", players=4, seed=3)  # no replay: the uniform worlds
    wall.apply(wall.legal_moves()[0])
    assert inference.sampler(wall, wall.to_move, 8, 0.5, random.Random(1)) is None


def test_the_inference_is_paid_inside_the_time_budget():
    state = _with_hidden_discards(1)[0]
    d = ai.decide("ismcts", state, state.to_move, {"iterations": 1_000_000, "time_ms": 200, "inference": True,
                                                   "inference_worlds": 16}, seed=2)
    spent = d.stats["inference"]["elapsed_ms"]
    assert spent > 0 and d.stats["elapsed_ms"] + spent < 200 + 50


def test_the_arranged_world_puts_each_other_seats_weakest_hidden_tiles_face_down():
    from ai.heuristics.tiengow import POWER

    for state in _with_hidden_discards(3):
        seat = state.to_move
        world = state.determinize(seat, random.Random(8))
        arranged = inference.ARRANGE["tiengow"](world, seat)
        assert arranged.view(seat) == state.view(seat)
        for p in range(4):
            down = [f for _l, _w, ps in arranged.tricks for q, up, fs in ps if q == p and not up for f in fs]
            down += [f for q, up, fs in arranged.cur if q == p and not up for f in fs]
            before = [f for _l, _w, ps in world.tricks for q, up, fs in ps if q == p and not up for f in fs]
            before += [f for q, up, fs in world.cur if q == p and not up for f in fs]
            # the same tiles for the seat, hand and discards together
            assert sorted(down + list(arranged.hands[p])) == sorted(before + list(world.hands[p]))
            if p != seat and down:
                assert max(POWER[f] for f in down) <= min(POWER[f] for f in arranged.hands[p])
            if p == seat:
                assert arranged.hands[p] == world.hands[p] and down == before


def _all_tiles(state: State) -> list[int]:
    """Every tile of the deal: the hands and every play of the deal, face up or down."""
    tiles = [f for h in state.hands for f in h]
    tiles += [f for _l, _w, ps in state.tricks for _p, _up, fs in ps for f in fs]
    tiles += [f for _p, _up, fs in state.cur for f in fs]
    return sorted(tiles)


def test_metropolis_worlds_are_worlds_of_the_seats_information_set():
    # the information-set rule of the fair AI: a proposal exchanges only tiles the seat has not seen, so
    # every world of the chain shows the seat exactly what it saw (its hand, its own discards, every face-up
    # play, every hand and discard size) and holds the same 32 tiles
    for i, state in enumerate(_with_hidden_discards(4)):
        seat = state.to_move
        made = inference.chain(state, seat, 80, 0.3, random.Random(i))
        assert made is not None
        pool, stats = made
        assert len(pool) == 40 and 0.0 < stats["accepted"] <= 1.0
        seen = state.view(seat)
        moved = False
        for world in pool:
            assert world.view(seat) == seen
            assert _all_tiles(world) == _all_tiles(state)
            assert [len(h) for h in world.hands] == [len(h) for h in state.hands]
            moved = moved or world.hands != pool[0].hands
        assert moved  # the chain does walk


def test_metropolis_worlds_explain_greedy_opponents_better_than_uniform_ones():
    # inference from what the other seats did: against seats that play greedy, the chain's worlds make
    # their moves far likelier than the information set's uniform worlds do, and put more of their hidden
    # tiles in the right hands
    def right(world: State, truth: State, seat: int) -> float:
        ok = total = 0
        for p in range(4):
            if p != seat:
                left = list(truth.hands[p])
                for f in world.hands[p]:
                    total += 1
                    if f in left:
                        ok += 1
                        left.remove(f)
        return ok / total

    uniform_ll = chain_ll = uniform_right = chain_right = 0.0
    for i, state in enumerate(_with_hidden_discards(6)):
        seat = state.to_move
        made = inference.chain(state, seat, 200, 0.1, random.Random(i))
        assert made is not None
        pool = made[0]
        uniform = [state.determinize(seat, random.Random(100 + k)) for k in range(len(pool))]
        uniform_ll += sum(inference.log_likelihood(w, seat, 0.1) for w in uniform) / len(uniform)
        chain_ll += sum(inference.log_likelihood(w, seat, 0.1) for w in pool) / len(pool)
        uniform_right += sum(right(w, state, seat) for w in uniform) / len(uniform)
        chain_right += sum(right(w, state, seat) for w in pool) / len(pool)
    assert chain_ll > uniform_ll + 6 * 3.0  # about e^3 likelier a position, on average
    assert chain_right > uniform_right * 1.2


def test_the_placement_bench_scores_worlds_against_the_true_hands():
    # bench inference --placement: the share of hidden hand tiles a kind of world puts in the right hand is a
    # share, the paired differences are the differences of the rows, and the true world would score 1
    from ai.arena import Spec
    from bench.inference import placement

    rows = placement("tiengow", Spec.parse("greedy"), 2, [(20, 0.1, "greedy"), (20, 0.0, "search")])
    assert len(rows["chain 20 search model"]) == 2
    assert {"uniform", "arranged", "chain 20 eps 0.1", "chain 20 eps 0.1 - arranged"} <= set(rows)
    _assert_placement_rows(rows, 2, ("uniform", "arranged", "chain 20 eps 0.1"), "chain 20 eps 0.1", "arranged",
                           _with_hidden_discards(1)[0])


def _assert_placement_rows(rows: dict[str, list[float]], positions: int, shares: tuple[str, ...], key: str,
                           base: str, state: State) -> None:
    """``rows`` of ``bench inference --placement``: every kind of world a share per position, ``key - base``
    the paired differences, and the true world scored 1 where a determinization of ``state`` is not."""
    from bench.inference import _right

    for name in shares:
        assert len(rows[name]) == positions and all(0.0 <= x <= 1.0 for x in rows[name])
    assert rows[f"{key} - {base}"] == [k - b for k, b in zip(rows[key], rows[base], strict=True)]
    assert _right(state, state, state.to_move) == 1.0
    assert _right(state.determinize(state.to_move, random.Random(1)), state, state.to_move) < 1.0


def test_the_placement_bench_scores_tiuu_worlds_by_their_face_counts():
    # bench inference tiuu --placement: Tiu U's hands are face counts; the share counts the copies of each
    # face the world and the truth both put in the other hand (a world dealt the true hand scores 1)
    from ai.arena import Spec
    from bench.inference import placement

    rows = placement("tiuu", Spec.parse("greedy"), 3, [], [(16, "softmax")])
    state = _tiuu_games(1)[0]
    _assert_placement_rows(rows, 3, ("uniform", "sampler 16 softmax"), "sampler 16 softmax", "uniform", state)
    # the shares of uniform worlds are those of the unseen copies, not near 1 as counts compared as faces made them
    assert sum(rows["uniform"]) / 3 < 0.9


def test_the_search_models_chances_of_a_positions_moves_sum_to_one():
    # the model of searching players (ai.inference.SearchModel) is a distribution over the legal moves at
    # every position -- leads, follows with and without a beat, ties among favourites included -- so a world
    # is not favoured for giving a seat more equally good moves
    model = inference.SEARCH_MODELS["tiengow"]
    feature = inference.FEATURES["tiengow"]
    kinds = set()
    for seed in range(6):
        state = engine.new_game("tiengow", players=4, seed=seed)
        ply = 0
        while not state.finished and state.deals_done == 0:
            seat = state.to_move
            moves = state.legal_moves()
            if len(moves) > 1:
                features = [feature(state, seat, m) for m in moves]
                kinds.update(f[0] for f in features)
                total = sum(math.exp(inference.search_log_p(model, f)) for f in features)
                assert abs(total - 1.0) < 1e-9, (seed, ply, total)
            state.apply(ai.decide("random", state, seat, {}, seed=ply).move)
            ply += 1
    assert kinds == {"lead", "beat", "discard", "forced discard"}


def test_fitting_the_search_model_recovers_how_the_players_play():
    # bench inference --fit: on deals of greedy players the fitted chances of greedy's lead, the cheapest
    # beat and the weakest discard are near one (greedy breaks ties between leads of one size and rank at
    # random, and the model counts only those of greedy's type as its lead); on deals of random players
    # near zero
    from ai.arena import Spec
    from bench.inference import features, fit_search_model

    greedy = fit_search_model(features("tiengow", Spec.parse("greedy"), 12, 1001))
    assert greedy.lead >= 0.8 and greedy.cheapest >= 0.9 and greedy.weakest >= 0.95
    chance = fit_search_model(features("tiengow", Spec.parse("random"), 12, 1001))
    assert chance.lead <= 0.15 and chance.cheapest <= 0.15 and chance.weakest <= 0.15


def test_fitting_the_softmax_model_recovers_how_sharply_the_players_follow_the_score():
    # bench inference kozel --fit: players who always play greedy's best score are fitted a steep model (a
    # high beta), players who play at random a flat one (beta near zero)
    from ai.arena import Spec
    from ai.heuristics.kozel import shedding_greedy
    from bench.inference import fit_softmax, scored

    # players of the shedding greedy choice, the score the model is built on (the greedy engine also reads
    # the ends it leaves the next player): every decision of a round's first 30 moves, 10 seeds
    score = inference.SOFTMAX_MODELS["kozel"].score
    rows = []
    for seed in range(1, 11):
        state = engine.new_game("kozel", players=2, seed=seed)
        for ply in range(30):
            seat = state.to_move
            if seat is None or state.deals_done:
                break
            moves = state.legal_moves()
            move = shedding_greedy(state, seat, random.Random(ply))
            if len(moves) > 1:
                rows.append(([score(state, m) for m in moves], moves.index(move)))
            state.apply(move)
    assert len(rows) > 50 and fit_softmax(rows) >= 1.0
    assert fit_softmax(scored("kozel", Spec.parse("random"), 10, 1)) <= 0.1


def test_the_placement_bench_scores_kozel_worlds_against_the_true_hands():
    # bench inference kozel --placement: Kozel has no arrangement, so the rows are the uniform worlds and the
    # sampler's, each a share, with the paired difference of the two
    from ai.arena import Spec
    from bench.inference import placement

    rows = placement("kozel", Spec.parse("greedy"), 3, [], [(40, "softmax")])
    assert {"uniform", "sampler 40 softmax", "sampler 40 softmax - uniform", "sampler 40 softmax ms"} <= set(rows)
    _assert_placement_rows(rows, 3, ("uniform", "sampler 40 softmax"), "sampler 40 softmax", "uniform",
                           _kozel_rounds(1)[0])


def _mixed_table(seed: int, moves: int) -> State:
    """A Tien Gow deal ``moves`` moves in, seats 1 and 3 playing the greedy engine of before (strongest lead,
    reserved tile kept back from beats) and seats 0 and 2 today's greedy engine (the last position of the
    deal if it ends sooner)."""
    from ai.heuristics.tiengow import greedy, greedy_with

    before = greedy_with(strongest_lead=True, reserve_beats=True)
    state = engine.new_game("tiengow", players=4, seed=seed)
    for ply in range(moves):
        nxt = state.clone()
        mover = nxt.to_move
        nxt.apply((before if mover % 2 else greedy)(nxt, mover, random.Random(ply)))
        if nxt.to_move is None or nxt.deals_done:
            break
        state = nxt
    return state


def test_the_model_chances_find_which_greedy_engine_each_seat_plays_like():
    # inference from the other seats' moves, over a library of opponent models: seats that play the greedy
    # engine of before and seats that play today's are told apart from their moves in the deal (mostly by
    # their leads: the strongest group against the weakest), from worlds of the searching seat's
    # information set only
    right = wrong = 0
    for seed in range(24):
        state = _mixed_table(seed, 14 + seed % 12)
        seat = state.to_move
        chances = inference.model_chances(state, seat, ("greedy", "greedy_before"), 0.1, random.Random(seed))
        assert chances is not None
        for p, (today, before) in chances.items():
            assert today + before == pytest.approx(1.0, abs=1e-3)
            if today != before:
                truth_before = int(p) % 2 == 1
                right += (before > today) == truth_before
                wrong += (before > today) != truth_before
    assert right >= 4 * wrong and right > 40, (right, wrong)
    assert inference.model_chances(state, state.to_move, ("greedy",), 0.1, random.Random(0)) is None


@pytest.mark.parametrize("judge", [{}, {"judge": "marginal", "other": True}], ids=["mean", "marginal"])
def test_states_with_the_same_observation_history_get_the_same_model_chances(judge):
    # the fair-AI rule for the model library, either judge (with the marginal one, a uniform player among the
    # models): another true state the seat cannot tell from this one (other hands, other tiles behind the
    # other seats' face-down discards) gives identical chances
    rng = random.Random(f"inference/model-chances/iset/{sorted(judge)}")
    for seed in range(6):
        state = _mixed_table(seed, 16 + seed)
        seat = state.to_move
        other = state.determinize(seat, rng)
        assert other.view(seat) == state.view(seat) and other.to_dict() != state.to_dict()
        models = ("greedy", "greedy_before")
        assert inference.model_chances(state, seat, models, 0.1, random.Random(seed), **judge) == \
            inference.model_chances(other, seat, models, 0.1, random.Random(seed), **judge)


def test_a_table_prior_lets_one_seats_moves_tell_of_the_others_at_a_table_of_one_kind():
    # inference over the model library with a prior that the other seats play alike: at tables where every
    # other seat plays the greedy engine of before, seats that have not yet shown which engine they play
    # (even chances when judged apart) take the table's, and more seats are judged right
    from ai.heuristics.tiengow import greedy_with

    before = greedy_with(strongest_lead=True, reserve_beats=True)
    counts = {}
    for table in (0.0, 0.5):
        right = wrong = even = 0
        for seed in range(40):
            state = engine.new_game("tiengow", players=4, seed=seed)
            for ply in range(2 + seed % 14):
                nxt = state.clone()
                nxt.apply(before(nxt, nxt.to_move, random.Random(ply)))
                if nxt.to_move is None or nxt.deals_done:
                    break
                state = nxt
            chances = inference.model_chances(state, state.to_move, ("greedy", "greedy_before"), 0.1,
                                              random.Random(seed), table=table) or {}
            for today, then in chances.values():
                even += today == then
                right += then > today
                wrong += today > then
        counts[table] = (right, wrong, even)
    assert counts[0.5][0] > counts[0.0][0] and counts[0.5][2] < counts[0.0][2], counts
    assert counts[0.5][1] <= 2 * counts[0.0][1] + 5, counts


def _replayed_seat_logs(world: State, seat: int, eps: float, models: tuple[str, ...]) -> dict[int, list[float]]:
    """Per other seat, the log-likelihood of its moves under each greedy model as the replay scores them
    (every move with a choice against that engine's move on the replayed position, as ``_tiengow_agrees``
    does for today's), and last under a uniform choice among the legal moves."""
    from ai.heuristics.tiengow import MODELS, POWER, greedy_with

    engines = [greedy_with(strongest_lead=MODELS[m][0], reserve_beats=MODELS[m][1]) for m in models]
    scores: dict[int, list[tuple[list[bool], int]]] = {p: [] for p in range(4) if p != seat}
    for before, mover, move, n in inference._choices(world, seat):
        agrees = []
        for play in engines:
            g = play(before, mover, random.Random(0))
            if g.code[0] != move.code[0]:
                agrees.append(False)
            elif g.code[0]:
                agrees.append(g.code[2:4] == move.code[2:4] and len(g.code[1]) == len(move.code[1]))
            else:
                agrees.append(abs(sum(POWER[f] for f in g.code[1]) - sum(POWER[f] for f in move.code[1])) < 1e-9)
        scores[mover].append((agrees, n))
    return {p: [sum(math.log((1.0 - eps) * a[k] + eps / n) for a, n in part) for k in range(len(models))]
            + [-sum(math.log(n) for _a, n in part)] for p, part in scores.items()}


def test_the_marginal_judge_is_bayes_rule_on_the_replayed_likelihood_averaged_over_the_worlds():
    # inference over the model library, judge=marginal: a seat's chance of each model is its likelihood under
    # that model averaged over the arranged worlds of the information set, normalised (each model as likely
    # as the other before the deal, or today's at 1 - prior); with `other`, one more chance, last, for a
    # uniform player.  Checked
    # against the replay's likelihood of the same worlds (the same stream of worlds is drawn again)
    models = ("greedy", "greedy_before")
    checked = 0
    for seed in range(8):
        state = _mixed_table(seed, 12 + seed)
        seat = state.to_move
        for other, prior in ((False, None), (True, None), (True, 0.2)):
            got = inference.model_chances(state, seat, models, 0.1, random.Random(seed), worlds=6,
                                          judge="marginal", other=other, prior=prior)
            rng = random.Random(seed)
            uniform = state.determinizer(seat)
            sums: dict[int, list[float]] = {}
            for _ in range(6):
                world = inference.ARRANGE["tiengow"](uniform(rng), seat)
                for p, logs in _replayed_seat_logs(world, seat, 0.1, models).items():
                    row = sums.setdefault(p, [0.0] * (len(models) + 1))
                    for k, x in enumerate(logs):
                        row[k] += math.exp(x) / 6
            for p, row in sums.items():
                row = row if other else row[:-1]
                if prior is not None:  # today's greedy 1 - prior, the rest shared evenly
                    row = [row[0] * (1.0 - prior)] + [x * prior / (len(row) - 1) for x in row[1:]]
                assert got[str(p)] == pytest.approx([x / sum(row) for x in row], abs=1e-4)
                checked += 1
    assert checked == 72
    with pytest.raises(ValueError):
        inference.model_chances(state, seat, models, 0.1, random.Random(0), judge="vote")


def test_the_searching_player_among_the_models_is_the_fitted_search_model_replayed():
    # inference over the model library with other="search": the player like none of the models is scored as
    # the fitted model of searching players (SearchModel) scores each of its moves on the replayed position,
    # seat by seat, from the hands each world of the information set gives it (a seat with a face-down
    # discard that had two weakest sets of equal power is left out: the scorer counts one, as documented)
    fitted = inference.SEARCH_MODELS["tiengow"]
    checked = skipped = 0
    for seed in range(10):
        state = _mixed_table(seed, 10 + seed)
        seat = state.to_move
        uniform = state.determinizer(seat)
        rng = random.Random(seed)
        for _ in range(4):
            world = inference.ARRANGE["tiengow"](uniform(rng), seat)
            scorer = inference._TienGowScorer(state, seat, 0.1, ("greedy", "greedy_before"))
            logs = scorer.seat_logs(inference._light(world), "search")
            replayed: dict[int, float] = {p: 0.0 for p in logs}
            tied: set[int] = set()
            for before, mover, move, _n in inference._choices(world, seat):
                feature = inference.FEATURES["tiengow"](before, mover, move)
                replayed[mover] += inference.search_log_p(fitted, feature)
                if feature[0] in ("discard", "forced discard") and feature[3] > 1:
                    tied.add(mover)
            uniform_logs = scorer.seat_logs(inference._light(world), True)
            for p, row in logs.items():
                # the greedy models' parts are the same whichever player is last
                assert len(row) == 3 and row[:2] == uniform_logs[p][:2]
                if p in tied:
                    skipped += 1
                    continue
                assert row[-1] == pytest.approx(replayed[p], abs=1e-9), (seed, p)
                checked += 1
    assert checked >= 100 and skipped <= checked // 10, (checked, skipped)


def test_the_marginal_judge_tells_the_greedy_engines_apart_better_than_the_mean_of_the_worlds():
    # inference over the model library: at 40 positions of a table where seats 1 and 3 play the greedy engine
    # of before and seats 0 and 2 today's, Bayes' rule on the averaged likelihood judges more seats right, and
    # no more wrong, than the mean of each world's chances (measured 96 right and 17 wrong against 89 and 24)
    counts = {}
    for judge in ("mean", "marginal"):
        right = wrong = 0
        for seed in range(40):
            state = _mixed_table(seed, 10 + seed % 16)
            chances = inference.model_chances(state, state.to_move, ("greedy", "greedy_before"), 0.1,
                                              random.Random(seed), judge=judge)
            for p, (today, before) in chances.items():
                if today != before:
                    right += (before > today) == (int(p) % 2 == 1)
                    wrong += (before > today) != (int(p) % 2 == 1)
        counts[judge] = (right, wrong)
    assert counts["marginal"][0] > counts["mean"][0] and counts["marginal"][1] <= counts["mean"][1], counts
