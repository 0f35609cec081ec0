"""Tiu U (docs/rules/tiuu.md, seed 000): each test names the rule it checks.  Exact situations are built
with ``TiuUState.from_layout`` (chosen hands, pool, stock, catches and face-up stacks)."""

from __future__ import annotations

import random

import pytest
from positions import walked

import engine
from engine.tiles import CF_NAME, HEAVEN, parse_chinese
from engine.tiuu import ALL_TILES, TOTAL, TiuUState, catch_scores, round_up, settle


def ids(state: engine.State) -> list[str]:
    return sorted(m.id for m in state.legal_moves())


def layout(players: int = 2, **kw) -> TiuUState:
    return TiuUState.from_layout(players, **kw)


def tile_counts(st: TiuUState) -> tuple[int, ...]:
    """Copies of each face in the pool, played (catches and face-up stacks), the hands, the face-down stock
    and the flipped tile waiting for a choice: the double set's ``TOTAL`` in every consistent state."""
    down = list(st.down[st.dpos:])
    return tuple(st.pool[f] + st.played[f] + sum(h[f] for h in st.hands) + down.count(f) + (f == st.pending)
                 for f in range(21))


def counts(names: list[str]) -> list[int]:
    c = [0] * 21
    for n in names:
        c[parse_chinese(n)] += 1
    return c


# the seed's examples (its §0, §7)
A_257 = ["6-5"] * 4 + ["6-4"] * 4 + ["6-3"] * 2 + ["5-4"] * 2 + ["4-1"] * 2 + ["4-3", "1-1", "3-1"]
B_189 = ["6-6"] * 4 + ["4-4"] * 4 + ["5-5", "4-3", "4-2", "2-1"]
A_189 = ["6-6"] * 4 + ["6-5"] * 4 + ["4-1"]
B_181 = ["6-4"] * 4 + ["5-5"] * 4 + ["4-4", "4-1"]


def end_with_one_flip(catches: list[list[str]], players: int = 2, **options) -> TiuUState:
    """Empty hands, one unmatched stock tile: the only move flips it and the game ends."""
    st = layout(players, hands=[[] for _ in range(players)], pool=["3-2"], stock=["5-2"],
                catches=catches, options=options)
    assert ids(st) == ["flip"]
    st.play("flip")
    return st


# ------------------------------------------------------------------ scoring

def test_big_fish_score_two_per_pip_and_small_fish_their_red_pips():
    assert catch_scores(counts(["6-6", "6-5", "4-4", "6-2"]), False)[0] == 24 + 22 + 16 + 16
    assert catch_scores(counts(["1-1", "2-1", "3-1", "4-1", "5-1", "6-1"]), False)[0] == 2 + 1 + 1 + 5 + 1 + 1
    assert catch_scores(counts(["2-2", "3-2", "4-2", "5-2", "3-3", "4-3"]), False)[0] == 0 + 0 + 4 + 0 + 0 + 4
    assert catch_scores(counts([CF_NAME[f] for f in ALL_TILES]), False)[0] == 592


def test_total_is_rounded_up_to_the_ten_and_exact_tens_stay():
    assert [round_up(x) for x in (0, 1, 180, 181, 189, 257)] == [0, 10, 180, 190, 190, 260]


def test_seed_example_189_against_181_is_a_draw():
    assert catch_scores(counts(A_189), False) == (189, 190)
    assert catch_scores(counts(B_181), False) == (181, 190)
    st = end_with_one_flip([A_189, B_181])
    assert st.finished
    deal = st.result()["deals"][0]
    assert deal["raw"] == [189, 181] and deal["rounded"] == [190, 190]
    assert deal["payments"] == [] and deal["winners"] == []
    assert st.result()["payoffs"] == [0.0, 0.0]


def test_seed_example_257_against_189_pays_70():
    assert catch_scores(counts(A_257), False) == (257, 260)
    assert catch_scores(counts(B_189), False) == (189, 190)
    st = end_with_one_flip([A_257, B_189])
    res = st.result()
    assert res["deals"][0]["payments"] == [{"from": 1, "to": 0, "amount": 70}]
    assert res["scores"] == [70, -70] and res["payoffs"] == [70.0, -70.0]
    assert res["ranking"] == [0, 1] and res["reason"]


def test_three_players_every_non_winner_pays_the_winner_the_difference():
    net, payments = settle([260, 190, 150])
    assert net == [180, -70, -110]
    assert payments == [{"from": 1, "to": 0, "amount": 70}, {"from": 2, "to": 0, "amount": 110}]


def test_three_players_tied_on_top_are_each_paid_by_the_third():
    net, payments = settle([200, 200, 100])
    assert net == [100, 100, -200]
    assert payments == [{"from": 2, "to": 0, "amount": 100}, {"from": 2, "to": 1, "amount": 100}]
    st = end_with_one_flip([B_181, A_189, ["4-4"]], players=3)
    assert st.result()["scores"] == [170, 170, -340]
    assert sum(st.running_payoffs()) == 0


def test_classic_profile_rounds_only_the_small_fish_sum():
    catch = counts(["6-2", "4-1"])  # big 16, small 5
    assert catch_scores(catch, False) == (21, 30)
    assert catch_scores(catch, True) == (21, 26)
    st = end_with_one_flip([["6-2", "4-1"], ["4-4", "1-1"]], profile="classic")
    # classic 16 + 10 = 26 against 16 + 10 = 26: a draw; the seed would round 21 and 18 to 30 and 20
    assert st.result()["deals"][0]["rounded"] == [26, 26]
    seed = end_with_one_flip([["6-2", "4-1"], ["4-4", "1-1"]])
    assert seed.result()["scores"] == [10, -10]


# ------------------------------------------------------------------ deal

def test_deal_takes_pool_hands_and_stock_from_the_right_end_in_stacks_of_four():
    for players, hand in ((2, 12), (3, 8)):
        st = engine.new_game("tiuu", players=players, seed=11)
        assert isinstance(st, TiuUState)
        tiles = list(ALL_TILES)
        random.Random("11/0").shuffle(tiles)
        assert st.pool == counts([CF_NAME[f] for f in tiles[:16]])
        assert list(st.down) == tiles[40:] and st.nstock == 24
        for s in range(players):
            dealt = [0] * 21
            for k in range(6):  # six hand stacks, one at a time in turn order
                if (st.first + k) % players == s:
                    for f in tiles[16 + 4 * k:20 + 4 * k]:
                        dealt[f] += 1
            assert [h + c for h, c in zip(st.hands[s], st.catches[s], strict=True)] == dealt
            assert sum(dealt) == hand


def test_two_six_six_in_hand_are_laid_out_before_the_first_turn():
    laid = 0
    for seed in range(120):
        st = engine.new_game("tiuu", players=2, seed=seed)
        assert isinstance(st, TiuUState)
        for s in range(2):
            held = st.hands[s][HEAVEN] + st.catches[s][HEAVEN]
            assert st.hands[s][HEAVEN] == held % 2  # every pair laid out, one single may stay
            assert st.catches[s][HEAVEN] == held - held % 2
            laid += st.catches[s][HEAVEN]
        assert st.pool[HEAVEN] + sum(h[HEAVEN] for h in st.hands) + sum(c[HEAVEN] for c in st.catches) \
            + list(st.down).count(HEAVEN) == 4
    assert laid, "no seed dealt a pair of 6-6"


def test_six_six_pairs_are_shown_as_an_event_when_played_through_the_log():
    for seed in range(200):
        st = engine.new_game("tiuu", players=2, seed=seed)
        assert isinstance(st, TiuUState)
        if any(c[HEAVEN] for c in st.catches):
            log: list = []
            st._deal(0, st.first, log)
            assert any(e["type"] == "six_six_pairs" and e["data"]["tiles"][0] == "6-6" for e in log)
            deal = next(e for e in log if e["type"] == "deal")
            assert "hand" not in deal["data"] and set(deal["secret"]) == {0, 1}
            return
    pytest.fail("no seed dealt a pair of 6-6")


def test_first_player_of_the_first_game_is_drawn_from_the_seed():
    firsts = {engine.new_game("tiuu", players=3, seed=s).to_move for s in range(30)}
    assert firsts == {0, 1, 2}
    assert engine.new_game("tiuu", players=3, seed=7).to_move == engine.new_game("tiuu", players=3, seed=7).to_move


# ------------------------------------------------------------------ matching

def test_tiles_pair_by_equal_pips_whatever_the_suit():
    st = layout(hands=[["6-3"], []], pool=["5-4", "6-3", "4-4"], stock=["1-1"] * 5)
    assert ids(st) == ["capture:6-3+5-4", "capture:6-3+6-3"]


def test_player_chooses_which_pool_face_his_hand_tile_takes():
    st = layout(hands=[["6-3"], []], pool=["5-4", "6-3", "4-4"], stock=["3-2", "2-2", "1-1", "1-1", "1-1"])
    st.play("capture:6-3+5-4")
    assert st.catches[0] == counts(["6-3", "5-4"]) and st.pool[parse_chinese("6-3")] == 1


def test_supreme_4_2_matches_only_2_1():
    st = layout(hands=[["4-2"], []], pool=["5-1", "3-3", "2-1"], stock=["1-1"] * 5)
    assert ids(st) == ["capture:4-2+2-1"]
    st = layout(hands=[["5-1", "2-1"], []], pool=["4-2", "2-1"], stock=["1-1"] * 5)
    assert ids(st) == ["capture:2-1+4-2"]  # 5-1 does not take 4-2, 2-1 does not take 2-1


def test_supreme_extra_lets_4_2_take_any_six_and_2_1_take_2_1():
    opts = {"supreme_extra": True}
    st = layout(hands=[["4-2"], []], pool=["5-1", "3-3", "2-1"], stock=["1-1"] * 5, options=opts)
    assert ids(st) == ["capture:4-2+2-1", "capture:4-2+3-3", "capture:4-2+5-1"]
    st = layout(hands=[["5-1", "2-1"], []], pool=["4-2", "2-1"], stock=["1-1"] * 5, options=opts)
    assert ids(st) == ["capture:2-1+2-1", "capture:2-1+4-2", "capture:5-1+4-2"]


def test_capture_from_hand_is_compulsory_when_possible():
    st = layout(hands=[["6-4", "3-2"], []], pool=["5-5", "1-1"], stock=["1-1"] * 5)
    assert ids(st) == ["capture:6-4+5-5"]
    with pytest.raises(engine.IllegalMove):
        st.play("flip")


def test_classic_profile_makes_the_hand_capture_optional():
    st = layout(hands=[["6-4", "3-2"], []], pool=["5-5", "1-1"], stock=["1-1"] * 5, options={"profile": "classic"})
    assert ids(st) == ["capture:6-4+5-5", "flip"]


def test_without_a_hand_play_the_player_only_flips():
    st = layout(hands=[["3-2"], ["3-2"]], pool=["6-6"], stock=["6-2", "1-1", "1-1"])
    assert ids(st) == ["flip"]
    st.play("flip")
    assert st.to_move == 1 and st.pool[parse_chinese("6-2")] == 1 and st.hsize == [1, 1]


def test_move_ids_accept_either_half_order_but_keep_hand_tile_first():
    st = layout(hands=[["6-3"], []], pool=["5-4"], stock=["1-1"] * 5)
    st.play("capture:3-6+4-5")
    assert st.catches[0] == counts(["6-3", "5-4"])
    st = layout(hands=[["6-3"], []], pool=["5-4"], stock=["1-1"] * 5)
    with pytest.raises(engine.IllegalMove):
        st.play("capture:5-4+6-3")  # 5-4 is not in the hand
    with pytest.raises(engine.InvalidMove):
        st.play("capture:6-3")


# ------------------------------------------------------------------ the stock

def test_flipped_tiles_chain_three_captures_then_the_unmatched_one_stays():
    st = layout(hands=[[], ["3-2"]], pool=["6-4", "5-3", "3-1", "1-1"],
                stock=["5-5", "6-2", "2-2", "6-6", "5-2"])
    log = st.play("flip")
    assert st.catches[0] == counts(["5-5", "6-4", "6-2", "5-3", "2-2", "3-1"])
    assert st.pool == counts(["1-1", "6-6"])
    assert st.to_move == 1 and st.nstock == 1
    assert [e["data"]["tile"] for e in log if e["type"] == "flip"] == ["5-5", "6-2", "2-2", "6-6"]


def test_classic_profile_flips_one_stock_tile_per_turn():
    st = layout(hands=[[], ["3-2"]], pool=["6-4", "5-3", "3-1", "1-1"],
                stock=["5-5", "6-2", "2-2", "6-6", "5-2"], options={"profile": "classic"})
    st.play("flip")
    assert st.catches[0] == counts(["5-5", "6-4"])
    assert st.to_move == 1 and st.nstock == 4


def test_player_chooses_when_a_flipped_tile_matches_several_faces():
    st = layout(hands=[[], ["3-2"]], pool=["6-2", "5-3", "4-4", "4-4"], stock=["4-4", "1-1", "3-2"])
    st.play("flip")
    assert st.to_move == 0 and st.view(None)["table"]["flipped"] == "4-4"
    assert ids(st) == ["take:4-4+4-4", "take:4-4+5-3", "take:4-4+6-2"]
    st.play("take:4-4+6-2")
    assert st.catches[0] == counts(["4-4", "6-2"])
    # the chain goes on: 1-1 matches nothing and stays
    assert st.to_move == 1 and st.pool == counts(["5-3", "4-4", "4-4", "1-1"])


def test_a_flipped_tile_matching_only_copies_of_one_face_takes_one_at_once():
    st = layout(hands=[[], ["3-2"]], pool=["4-4", "4-4"], stock=["4-4", "3-2", "1-1"])
    st.play("flip")
    assert st.catches[0] == counts(["4-4", "4-4"]) and st.pool == counts(["4-4", "3-2"])
    assert st.to_move == 1


def test_the_game_ends_when_the_last_stock_tile_is_resolved():
    st = layout(hands=[["6-5"], ["6-5"]], pool=["1-1", "5-2"], stock=["4-3"])
    st.play("flip")
    assert st.finished and st.legal_moves() == []
    assert st.result()["deals"][0]["raw"] == [4, 0]  # seat 0 flips 4-3 and takes 5-2; hands do not score


def test_the_game_ends_during_a_chain_when_the_stock_runs_out():
    st = layout(hands=[[], []], pool=["6-4", "5-3"], stock=["5-5", "6-2"])
    st.play("flip")
    assert st.finished and st.catches[0] == counts(["5-5", "6-4", "6-2", "5-3"])


# ------------------------------------------------------------------ tripling and the fourth tile

def test_tripling_then_the_fourth_tile_each_draw_three_from_the_right():
    st = layout(hands=[["6-4", "3-2"], ["6-4", "5-2"]], pool=["6-4", "6-4", "1-1"],
                stock=["4-1", "2-2", "6-1", "5-1", "3-3", "4-3", "6-6", "6-5"])
    assert ids(st) == ["capture:6-4+6-4", "triple:6-4"]
    log = st.play("triple:6-4")
    assert st.hands[0] == counts(["3-2", "4-1", "2-2", "6-1"])
    draw = next(e for e in log if e["type"] == "draw")
    assert draw["data"]["face_up"] == [] and draw["secret"] == {0: {"tiles": ["4-1", "2-2", "6-1"]}}
    # 5-1 was flipped and stays; the stack of three is at the left end
    assert st.pool == counts(["1-1", "5-1"]) and st.to_move == 1
    assert st.view(None)["table"]["stacks"] == [{"tile": "6-4", "count": 3, "from_left": 0}]
    assert st.nstock == 7
    assert ids(st) == ["fourth:6-4"]
    st.play("fourth:6-4")
    assert st.hands[1] == counts(["5-2", "3-3", "4-3", "6-6"])
    assert st.view(None)["table"]["stacks"] == [{"tile": "6-4", "count": 4, "from_left": 0}]
    # 6-5 was flipped and stayed: four face-up 6-4 are all that is left
    assert st.nstock == 4 and st.view(None)["table"]["stock_face_down"] == 0
    assert st.pool == counts(["1-1", "5-1", "6-5"])


def test_the_fourth_tile_may_be_played_normally_instead():
    st = layout(hands=[["6-4"], []], pool=["5-5"], stock=["1-1"] * 4, stacks=[("6-4", 3)])
    assert ids(st) == ["capture:6-4+5-5", "fourth:6-4"]


def test_classic_fourth_tile_captures_the_face_up_three():
    st = layout(hands=[["6-4"], ["3-2"]], pool=["5-1"], stock=["3-3", "1-1"], stacks=[("6-4", 3)],
                options={"profile": "classic"})
    assert ids(st) == ["flip", "fourth:6-4"]  # classic: the capture stays optional
    st.play("fourth:6-4")
    # the stack left the stock; the turn goes on with one flip (3-3 takes 5-1)
    assert st.catches[0] == counts(["6-4"] * 4 + ["3-3", "5-1"])
    assert st.hands[0] == [0] * 21 and st.nstock == 1 and st.to_move == 1
    assert st.view(None)["table"]["stacks"] == []


def test_classic_fourth_tile_capture_needs_no_stock_to_draw_from():
    st = layout(hands=[["6-4"], ["3-2"]], pool=["5-1"], stock=[], stacks=[("6-4", 3)],
                options={"profile": "classic"})
    assert ids(st) == ["flip", "fourth:6-4"]
    st.play("fourth:6-4")
    assert st.finished and st.result()["deals"][0]["raw"] == [80, 0]


def test_tripling_needs_the_fourth_copy_unplayed():
    st = layout(hands=[["6-4"], []], pool=["6-4", "6-4"], stock=["1-1"] * 5, catches=[[], ["6-4", "5-5"]])
    assert ids(st) == ["capture:6-4+6-4"]


def test_tripling_and_the_fourth_tile_are_refused_when_the_stock_is_too_short():
    st = layout(hands=[["6-4"], []], pool=["6-4", "6-4"], stock=["1-1"] * 3)
    assert ids(st) == ["capture:6-4+6-4"]
    st = layout(hands=[["6-4"], []], pool=["6-4", "6-4"], stock=["1-1"] * 4)
    assert ids(st) == ["capture:6-4+6-4", "triple:6-4"]
    st = layout(hands=[["6-4"], []], pool=["3-2"], stock=[], stacks=[("6-4", 3)])
    assert ids(st) == ["flip"]
    st = layout(hands=[["6-4"], []], pool=["3-2"], stock=["1-1"], stacks=[("6-4", 3)])
    assert ids(st) == ["fourth:6-4"]


def test_several_face_up_stacks_are_drawn_oldest_first_newest_last():
    st = layout(hands=[[], ["6-1"]], pool=["3-2"], stock=["1-1"], stacks=[("6-4", 3), ("5-5", 3)])
    assert st.view(None)["table"]["stacks"] == [{"tile": "5-5", "count": 3, "from_left": 0},
                                                {"tile": "6-4", "count": 3, "from_left": 3}]
    st.play("flip")  # 1-1 stays
    st.play("flip")  # seat 1 flips 6-4 from the older stack: no match, stays
    assert st.pool == counts(["3-2", "1-1", "6-4"])
    assert st.view(None)["table"]["stacks"][1] == {"tile": "6-4", "count": 2, "from_left": 3}


def test_face_up_tiles_drawn_into_a_hand_are_public():
    st = layout(hands=[["5-5", "3-2"], ["2-2"]], pool=["5-5", "5-5", "1-1"], stock=["4-1"],
                stacks=[("6-4", 3)])
    st.play("triple:5-5")
    assert st.hands[0] == counts(["3-2", "4-1", "6-4", "6-4"])
    seen = st.view(1)["seats"][0]
    assert seen["known_hand"] == ["6-4", "6-4"] and st.view(1)["hand"] == ["2-2"]
    for k in range(10):
        world = st.determinize(1, random.Random(k))
        assert world.hands[0][parse_chinese("6-4")] >= 2
        assert world.view(1) == st.view(1)


# ------------------------------------------------------------------ hidden information

def test_views_hide_other_hands_and_the_stock_order():
    st = engine.new_game("tiuu", players=3, seed=4)
    v = st.view(1)
    assert v["hand"] == sorted(v["hand"], key=lambda t: parse_chinese(t))
    assert st.view(None)["hand"] is None

    def tiles_in(x: object) -> int:
        if isinstance(x, dict):
            return sum(tiles_in(v) for v in x.values())
        if isinstance(x, list):
            return sum(tiles_in(v) for v in x)
        return int(isinstance(x, str) and len(x) == 3 and x[1] == "-")

    # a seat sees its 8 tiles, the 16 pool tiles and the catches (the 6-6 pairs), nothing else
    caught = sum(sum(c) for c in st.catches)
    assert tiles_in(v) == len(v["hand"]) + 16 + caught
    assert tiles_in(st.view(None)) == 16 + caught
    assert [s["hand_size"] for s in v["seats"]] == [sum(h) for h in st.hands]


def test_determinize_keeps_public_tiles_and_resamples_only_unseen_ones():
    st = engine.new_game("tiuu", players=2, seed=9)
    rng = random.Random(3)
    for _ in range(4):
        st.apply(rng.choice(st.legal_moves()))
    assert isinstance(st, TiuUState)
    worlds = [st.determinize(0, random.Random(k)) for k in range(5)]
    for w in worlds:
        assert w.hands[0] == st.hands[0] and w.pool == st.pool and w.catches == st.catches
        total = [w.pool[f] + w.played[f] + sum(h[f] for h in w.hands) + list(w.down[w.dpos:]).count(f)
                 for f in range(21)]
        assert tuple(total) == TOTAL
        assert w.seed != st.seed
    assert len({tuple(w.down) for w in worlds}) > 1


@pytest.mark.parametrize(("players", "options"), [(2, {}), (3, {}), (2, {"profile": "classic"}),
                                                  (3, {"profile": "classic"})])
def test_determinize_deals_the_unseen_tiles_as_the_tile_by_tile_deal(players, options):
    """``_assign``'s shortcut (each hand the next run of tiles when the runs fit the caps) deals what the
    tile-by-tile deal does, and every determinization keeps the tile counts; from positions some random
    moves into a game, where flips with tiles in hand have capped faces."""
    kept = [0, 0]
    for seed in range(60):
        st = walked("tiuu", players, seed, 30, options)
        if st.finished:
            continue
        assert isinstance(st, TiuUState)
        seat = st.to_move
        others = [s for s in range(players) if s != seat]
        need = [st.hsize[s] - sum(st.known[s]) for s in others]
        for k in range(5):
            world = st.determinize(seat, random.Random(k))
            assert tile_counts(world) == TOTAL
            flat = [f for f in range(21) for _ in range(4)][:sum(need) + 10]
            random.Random(k).shuffle(flat)
            fast, slow = flat[:], flat[:]
            got = st._assign(fast, others, need, random.Random(k))
            want = TiuUState._assign_by_draws(slow, [st.caps[s] for s in others], need, random.Random(k))
            assert (got, fast) == (want, slow)
            kept[fast == flat] += 1
    # both ways ran: hands that were the next runs of tiles, and deals that had to skip tiles
    assert min(kept) > 20


@pytest.mark.parametrize("players", [2, 3])
def test_determinize_deals_only_the_unseen_tiles_when_hands_hold_public_ones(players):
    """Games played with tripling whenever it is legal, until another seat holds tiles it drew face up:
    a determinization keeps those tiles in its hand and deals the rest of the set, no copy more or less."""
    checked = 0
    for seed in range(100):
        st = engine.new_game("tiuu", players=players, seed=seed)
        assert isinstance(st, TiuUState)
        walk = random.Random(seed)
        while not st.finished and not any(sum(st.known[s]) for s in range(players) if s != st.to_move):
            moves = st.legal_moves()
            grow = [m for m in moves if m.action in ("triple", "fourth")]
            st.apply(grow[0] if grow else walk.choice(moves))
        if st.finished:
            continue
        for k in range(5):
            world = st.determinize(st.to_move, random.Random(k))
            assert tile_counts(world) == TOTAL
            assert all(w >= p for s in range(players) for w, p in zip(world.hands[s], st.known[s], strict=True))
        checked += 1
    assert checked > 10


def test_determinize_respects_what_a_compulsory_flip_reveals():
    # seat 0 flips with tiles in hand: it holds nothing matching 6-4, 5-3 or 1-1
    st = layout(hands=[["3-2", "3-2"], ["6-1"]], pool=["6-4", "5-3", "1-1"], stock=["2-2", "4-3", "6-6", "5-2"])
    st.play("flip")
    assert st.to_move == 1
    forbidden = {parse_chinese(t) for t in ("6-4", "5-5", "5-3", "6-2", "4-4", "1-1")}
    for k in range(40):
        world = st.determinize(1, random.Random(k))
        assert not any(world.hands[0][f] for f in forbidden)
        assert sum(world.hands[0]) == 2


def test_determinize_never_gives_a_hand_two_six_six_from_the_deal():
    st = engine.new_game("tiuu", players=3, seed=21)
    for k in range(40):
        world = st.determinize(0, random.Random(k))
        assert isinstance(world, TiuUState)
        assert all(world.hands[s][HEAVEN] <= 1 for s in (1, 2))


# ------------------------------------------------------------------ matches of several games

def test_several_games_accumulate_points_and_the_winner_opens_the_next():
    st = engine.new_game("tiuu", players=2, seed=5, options={"games": 3})
    assert isinstance(st, TiuUState)
    rng = random.Random(5)
    while st.deals_done == 0:
        st.apply(rng.choice(st.legal_moves()))
    first = st.result()["deals"][0]
    assert st.points == first["net"] and st.running_payoffs() == [float(x) for x in first["net"]]
    top = max(first["rounded"])
    assert st.first in [s for s in range(2) if first["rounded"][s] == top]
    assert st.game == 1 and st.nstock == 24 and not st.finished
    while not st.finished:
        st.apply(rng.choice(st.legal_moves()))
    res = st.result()
    assert len(res["deals"]) == 3
    assert res["scores"] == [sum(d["net"][s] for d in res["deals"]) for s in range(2)]


def test_a_drawn_game_is_reopened_by_the_tied_player_first_in_turn_order_from_the_last_opener():
    st = layout(hands=[[], []], pool=["3-2"], stock=["5-2"], catches=[A_189, B_181], turn=1,
                options={"games": 2})
    st.play("flip")
    assert st.deals_done == 1 and st.first == 1 and st.to_move == 1
    st = layout(hands=[[], []], pool=["3-2"], stock=["5-2"], catches=[A_257, B_189], turn=1,
                options={"games": 2})
    st.play("flip")
    assert st.first == 0 and st.to_move == 0 and st.points == [70, -70]


def test_games_option_is_validated():
    with pytest.raises(engine.BadOptions):
        engine.new_game("tiuu", players=2, seed=1, options={"games": 0})
    with pytest.raises(engine.BadOptions):
        engine.new_game("tiuu", players=2, seed=1, options={"profile": "pagat"})
    with pytest.raises(engine.BadOptions):
        engine.new_game("tiuu", players=4, seed=1)


def test_heuristics_take_the_most_valuable_fish_and_play_legal_moves():
    from ai.heuristics import tiuu as h

    st = layout(hands=[["6-3", "3-2"], []], pool=["5-4", "6-3", "4-1", "1-1"], stock=["1-1"] * 20)
    # 6-3 + 6-3 and 6-3 + 5-4 are worth 36 each; 3-2 + 4-1 only 5
    assert h.greedy(st, 0, random.Random(1)).id in {"capture:6-3+6-3", "capture:6-3+5-4"}
    st = layout(hands=[["5-5", "3-2"], []], pool=["5-5", "5-5", "1-1"], stock=["1-1"] * 20)
    assert h.greedy(st, 0, random.Random(1)).id == "capture:5-5+5-5"  # 40 beats two extra tiles
    st = layout(hands=[["3-1", "3-2"], []], pool=["3-1", "3-1", "1-1"], stock=["1-1"] * 20)
    assert h.greedy(st, 0, random.Random(1)).id == "triple:3-1"  # a 2-point catch is worth less
    game = engine.new_game("tiuu", players=3, seed=2)
    rng = random.Random(2)
    while not game.finished:
        m = h.playout(game, rng)
        assert m in game.legal_moves()
        game.apply(m)


# ------------------------------------------------------------------ the public record of part 1

def _played_with_snapshots(players: int, seed: int, options: dict | None = None):
    """A game played by uniformly random moves to its end, with each part-1 move's mover, move, and the true
    hands and table before it."""
    from engine.tiuu import PART1

    st = engine.new_game("tiuu", players=players, seed=seed, options=options or {})
    assert isinstance(st, TiuUState)
    rng = random.Random(seed)
    seen = []
    while not st.finished and st.deals_done == 0:
        move = rng.choice(st.legal_moves())
        if st.phase == PART1:
            seen.append((st.turn, move, [h[:] for h in st.hands], st.pool[:], st.nstock, len(st.history)))
        st.apply(move)
        if not st.finished and st.deals_done == 0:
            yield st, seen


@pytest.mark.parametrize(("players", "options"), [(2, {}), (3, {}), (2, {"profile": "classic"})])
def test_every_part1_move_is_recorded_publicly_with_the_table_it_was_chosen_at(players, options):
    # docs/rules/tiuu.md, hidden information: every move of a turn's part 1 is seen by all (a capture shows
    # both tiles, tripling and the fourth tile their face, a flip that nothing was played); the engine keeps
    # the game's record of them for inference, and a round trip through the stored form keeps it
    for seed in range(6):
        for st, seen in _played_with_snapshots(players, seed, options):
            assert len(st.history) == len(seen)
            for record, (mover, move, _hands, pool, nstock, index) in zip(st.history, seen, strict=True):
                assert len(st.history[:index]) == index
                assert record[0] == mover and record[1:4] == move.code
                assert list(record[4]) == pool and record[8] == nstock
        assert TiuUState.from_dict(st.to_dict()).history == st.history


def test_the_record_starts_afresh_with_each_game_and_a_search_sample_keeps_none():
    st = engine.new_game("tiuu", players=2, seed=4, options={"games": 2})
    rng = random.Random(4)
    while st.deals_done == 0:
        st.apply(rng.choice(st.legal_moves()))
    assert st.history == ()  # the second game has just been dealt
    st.apply(st.legal_moves()[0])
    assert len(st.history) == 1
    sample = st.clone()
    sample.stop_after_deal()
    sample.apply(sample.legal_moves()[0])
    assert sample.history == st.history
    # a state stored before the record was kept reads as one without a record
    stored = st.to_dict()
    del stored["history"]
    assert TiuUState.from_dict(stored).history == ()


@pytest.mark.parametrize(("players", "options"), [(2, {}), (3, {}), (2, {"profile": "classic"})])
def test_the_part1_replay_rebuilds_each_hand_back_to_the_seats_last_draw(players, options):
    # engine.tiuu.part1_replay: a seat's hand at an earlier part-1 move is its hand now plus what it played
    # from hand since, up to its last tripling or (seed) fourth tile, whose drawn tiles no world can place in
    # time; the replayed positions have that hand and the recorded table, and the move is legal there
    from engine.tiuu import FOURTH, TRIPLE, part1_replay

    replayed = skipped = 0
    for seed in range(8):
        for st, seen in _played_with_snapshots(players, seed, options):
            last_draw = {}
            for i, (mover, move, _h, _p, _n, _i) in enumerate(seen):
                if move.code[0] == TRIPLE or (move.code[0] == FOURTH and not st.classic):
                    last_draw[mover] = i
            expected = [i for i, (mover, *_rest) in enumerate(seen) if i > last_draw.get(mover, -1)]
            steps = [(before.turn, before.hands[mover][:], before.pool[:], before.nstock, mover, move,
                      move in before.legal_moves()) for before, mover, move in part1_replay(st)]
            assert len(steps) == len(expected)
            skipped += len(seen) - len(expected)
            for i, (turn, hand, pool, nstock, mover, move, legal) in zip(expected, steps, strict=True):
                s_mover, s_move, s_hands, s_pool, s_nstock, _index = seen[i]
                assert (turn, mover, move) == (s_mover, s_mover, s_move)
                assert hand == s_hands[mover] and pool == s_pool and nstock == s_nstock and legal
                replayed += 1
    assert replayed > 100 and skipped > 0
