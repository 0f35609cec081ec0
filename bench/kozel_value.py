"""``tilehouse bench kozel-value``: a learned value of a two-player Kozel position, fitted by self-play,
for the screening variant ``ismcts_kozel_value`` (bench/variants.py).

The idea (docs/ai-history.md, tenth look).  Kozel is the one rule set where more search pays (four times
the iterations: +6.3 points a match), and a search iteration there spends about a third of its time in the
playout, whose outcome is noisy: from one position of a sampled world (every hand known), the round's
payoff change for the seat to move varies by about 56 squared points from playout to playout, while the
true means of those positions vary by only about 34 across positions.  A function of the position that
predicts the playout's *mean* outcome answers at a fraction of the playout's cost and without its noise;
what it gets wrong is its bias, a fixed error per position.  The screening variant evaluates the leaf with
it instead of playing out.

The value.  For the seat to move (``m``) and the other seat (``o``) of a two-player individual round, on
a world of the search (all hands known, ``left``/``right`` ends on the table):

* per seat: hand value (pips, a lone 0-0 as 25), tiles, tiles matching an end, doubles, holds 0-0,
  whether what it would record counts (record opened, or value and carried points reach the threshold)
  times the value, record opened, carried points, no tile matching an end;
* the bazaar's size, whether it is empty, and a few products: each value times the other seat's tile
  count, the mean tile value times the other's count, the bazaar times each count and times each seat's
  being stuck, the counted value times the other's count.

``value(world)`` is the linear function of those 30 features (and a constant) fitted by least squares to
the outcomes of the cheap playout (``ai.heuristics.kozel.rollout``) from positions of self-play by the same
playout policy; the target is the change of ``running_payoffs()`` of the seat to move over the rest of the
round, played on a copy with the bazaar reshuffled (``State.restocked``).  ``fit`` prints the noise of
one playout, the spread of the positions' true means and the fitted value's bias on held-out positions (its
squared error against a 16-playout mean, less that mean's own noise).

Coefficients: ``COEFFICIENTS`` below, written by ``tilehouse bench kozel-value --write`` (method and seeds
in ``main``), from matches with the default options (so the carried points are always 0 and their weights
are nothing; the screening arena plays the defaults too).  No part of the service imports this module.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Sequence
from typing import cast

from engine.game import new_game
from engine.kozel import NUM_TILES, ZERO_ZERO, KozelState, hand_value
from engine.tiles import D_HI, D_LO

#: the doubles, as a tile mask (``engine.kozel.DOUBLES`` is the two-doubles moves)
DOUBLE_TILES: int = sum(1 << t for t in range(28) if D_HI[t] == D_LO[t])

#: the number of values ``features`` returns: 30 features and the constant 1 (the last weight is the constant)
NUM_FEATURES = 31


def features(st: KozelState) -> list[float]:
    """The features of a two-player individual round in progress (a tile on the table, a seat to move), from
    the seat to move's side (module docstring)."""
    m = st.turn
    o = 1 - m
    ends = NUM_TILES[st.left] | NUM_TILES[st.right]
    hm = st.hands[m]
    ho = st.hands[o]
    zz = st.zz25
    vm = hand_value(hm, zz)
    vo = hand_value(ho, zz)
    cm = hm.bit_count()
    co = ho.bit_count()
    em = (hm & ends).bit_count()
    eo = (ho & ends).bit_count()
    thr = st.threshold
    opm = st.opened[m]
    opo = st.opened[o]
    cam = st.carry[m]
    cao = st.carry[o]
    rm = vm if opm or vm + cam >= thr else 0
    ro = vo if opo or vo + cao >= thr else 0
    sm = 1.0 if not em else 0.0
    so = 1.0 if not eo else 0.0
    b = len(st.bazaar)
    return [vm, vo, cm, co, em, eo, (hm & DOUBLE_TILES).bit_count(), (ho & DOUBLE_TILES).bit_count(),
            hm >> ZERO_ZERO & 1, ho >> ZERO_ZERO & 1, b,
            rm, ro, float(opm), float(opo), cam, cao, sm, so, 0.0 if b else 1.0,
            vm * co, vo * cm, vm / (cm or 1) * co, vo / (co or 1) * cm, b * cm, b * co, sm * b, so * b,
            rm * co, ro * cm, 1.0]


# Written by ``tilehouse bench kozel-value --write`` (see ``main``): 30 feature weights and the constant.
COEFFICIENTS: tuple[float, ...] = (
    -0.30209533518798914, 0.19033443302765984, -0.5002285179123043, 0.11191128052426134,
    0.2915787009973479, -0.24253354616650183, -0.7439857942092983, 1.0312900307372965,
    -0.25479672053278696, 0.3103768952325687, -0.12592612012786467, 0.002512148990949874,
    0.0590681150619414, -0.9186473259201932, 0.8799277228184476, -4.440892098500626e-16,
    2.3314683517128287e-15, -5.182945965428399, 0.6065509079531272, -0.4271746755934616,
    0.029946705495785778, -0.0074501778534214885, 0.04095324015402, -0.015670863628883112,
    0.07550050088340368, -0.06730114520021499, 0.2032198374437454, 0.001485856988410496,
    0.0008377678550712531, -0.012817008831514556, 2.591244129069639,
)


def value(st: KozelState, coefficients: Sequence[float] = COEFFICIENTS) -> float:
    """The fitted mean change of the seat to move's payoff over the rest of the round."""
    return sum(w * x for w, x in zip(coefficients, features(st), strict=True))


def applies(st: KozelState) -> bool:
    """Whether ``value`` is defined here: two-player individual play, a round in progress past its lead."""
    return st.players == 2 and not st.teams and st.turn >= 0 and st.left >= 0


def settle(st: KozelState, v: float) -> None:
    """End the round of a search's world with the seat to move's payoff changed by ``v`` and the other's by
    ``-v``: its totals are moved by ``-v`` and ``+v`` (payoffs are the mean-centred totals negated), and
    nobody is to move.  Only a search's throw-away world may be settled: its totals stop being integers."""
    m = st.turn
    totals = cast(list[float], st.totals[:])
    totals[m] -= v
    totals[1 - m] += v
    st.totals = cast(list[int], totals)
    st.turn = -1


def positions(n: int, seed: int) -> list[KozelState]:
    """``n`` positions of two-player Kozel, one drawn uniformly from each round of self-play by the cheap
    playout policy (rounds of matches seeded from ``seed``), past the lead."""
    from ai.heuristics.kozel import playout

    rng = random.Random(seed)
    out: list[KozelState] = []
    while len(out) < n:
        st = cast(KozelState, new_game("kozel", players=2, seed=rng.getrandbits(32)))
        while st.to_move is not None and len(out) < n:
            r = st.round
            plies: list[KozelState] = []
            while st.to_move is not None and st.round == r:
                if st.left >= 0:
                    plies.append(st.clone())
                st.apply(playout(st, rng))
            if plies:
                out.append(rng.choice(plies))
    return out


def outcome(st: KozelState, rng: random.Random) -> float:
    """One playout's change of the seat to move's payoff to the end of the round, on a copy of ``st`` with
    the bazaar reshuffled."""
    from ai.heuristics.kozel import rollout

    world = st.restocked(rng)
    world.stop_after_deal()
    mover = st.turn
    before = world.running_payoffs()[mover]
    rollout(world, rng)
    return world.running_payoffs()[mover] - before


def fit(train: int, playouts: int, seed: int) -> list[float]:
    """Least-squares weights on ``train`` positions (seed ``seed``), ``playouts`` outcomes each."""
    import numpy as np

    rng = random.Random(seed + 1)
    rows: list[list[float]] = []
    ys: list[float] = []
    for p in positions(train, seed):
        f = features(p)
        for _ in range(playouts):
            rows.append(f)
            ys.append(outcome(p, rng))
    coef, *_ = np.linalg.lstsq(np.array(rows), np.array(ys), rcond=None)
    return [float(c) for c in coef]


def held_out(coefficients: Sequence[float], n: int, playouts: int, seed: int) -> dict[str, float]:
    """On ``n`` fresh positions: one playout's noise (variance), the spread of the true means, the value's
    bias (squared error against the ``playouts``-playout mean, less that mean's noise), in squared points."""
    rng = random.Random(seed + 1)
    means: list[float] = []
    noises: list[float] = []
    errors: list[float] = []
    for p in positions(n, seed):
        ys = [outcome(p, rng) for _ in range(playouts)]
        mean = statistics.fmean(ys)
        means.append(mean)
        noises.append(statistics.variance(ys))
        errors.append((value(p, coefficients) - mean) ** 2)
    noise = statistics.fmean(noises)
    return {"noise": noise, "signal": statistics.pvariance(means) - noise / playouts,
            "bias": statistics.fmean(errors) - noise / playouts}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tilehouse bench kozel-value", description=__doc__.split("\n\n")[0])
    parser.add_argument("--train", type=int, default=40_000, help="training positions (default 40000)")
    parser.add_argument("--playouts", type=int, default=4, help="playouts per training position (default 4)")
    parser.add_argument("--seed", type=int, default=1, help="training seed; held out: seed + 1000 (default 1)")
    parser.add_argument("--check", type=int, default=4000, help="held-out positions, 16 playouts each")
    parser.add_argument("--write", action="store_true", help="write the weights into this module")
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    coef = fit(args.train, args.playouts, args.seed)
    print(f"fitted on {args.train} positions x {args.playouts} playouts (seed {args.seed}) in "
          f"{time.perf_counter() - t0:.0f} s")
    figures = held_out(coef, args.check, 16, args.seed + 1000)
    print(f"held out ({args.check} positions, seed {args.seed + 1000}, 16 playouts each): one playout's noise "
          f"{figures['noise']:.1f}, true means' spread {figures['signal']:.1f}, the value's bias "
          f"{figures['bias']:.1f} (squared points)")
    if args.write:
        path = __file__
        with open(path, encoding="utf-8") as f:
            text = f.read()
        start = text.index("COEFFICIENTS: tuple[float, ...] = ")
        end = text.index("\n\n", start)
        body = ",\n    ".join(", ".join(f"{c!r}" for c in coef[i:i + 4]) for i in range(0, len(coef), 4))
        text = text[:start] + f"COEFFICIENTS: tuple[float, ...] = (\n    {body},\n)" + text[end:]
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        print(f"wrote {len(coef)} weights to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
