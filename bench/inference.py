"""``tilehouse bench inference``: fit the opponent model of ``ai.inference`` on arena games.

The model says another seat plays like the greedy heuristic, except with probability ``eps`` a uniformly
random legal move: ``P(move) = (1 - eps) [move plays like greedy's] + eps / legal moves``.  This bench plays
``--sets`` deals (seeds from ``--seed``) with the ``--engine`` line-up repeated over the seats, exactly as the
arena does (``ai.decide``, decisions seeded from the set and the move number), and at every decision with a
real choice records whether the move played agrees with greedy's on the true position and how many legal
moves there were.  It prints, per engine, the share of agreeing moves and the maximum-likelihood ``eps``
(a grid of 0.01 steps), and for all engines pooled.

``--placement N``: instead, N positions of deals in which every seat plays the (first) ``--engine``
(seeds 0, 1, ..., stopped 9 + seed % 8 moves in, kept where another seat than the one to move has
discarded face down), and at each the share of the other seats' hidden hand tiles that a world puts in
the right hand: uniform worlds of the information set, the same arranged (``ai.inference.ARRANGE``), and
the Metropolis chain's pool (``ai.inference.chain``) for each ``--chain STEPS:EPS`` (``STEPS:search``: under
the search model), with the chain's cost
per step; means with a 95% interval over the positions, and the paired differences to the arranged worlds.
The true hands are read here only to score the worlds, never by the sampler.

Kozel and Tiu U (no face-down discards, no arrangement): the positions are kept where the other seat has
chosen between moves this round (Tiu U: in part 1 since its last draw, ``engine.tiuu.part1_replay``),
stopped 6 + seed % 14 moves in, and the rows are the uniform worlds and, for each
``--sampler WORLDS:MODEL``, the importance-resampling sampler's worlds (``ai.inference.sampler``, the
model ``greedy`` with noise 0.5 or ``softmax``) with its paired difference to the uniform ones.

``--fit``: the model of searching players fitted by maximum likelihood on ``--sets`` deals of the (first)
``--engine`` in every seat, seeds from ``--seed``.  Tien Gow: ``ai.inference.SearchModel``
(``inference_model=search``), the chance of greedy's lead, of a beat where one exists, of the cheapest
beat, of the weakest discard.  Kozel and Tiu U: the ``beta`` of ``ai.inference.SoftmaxModel``
(``inference_model=softmax``; Tiu U's on the choices of part 1 alone), with the log-likelihood it gains per
decision over uniformly random play.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import time
from collections.abc import Sequence
from typing import Any, cast

import ai
import engine
from ai import inference
from ai.arena import Spec, deal_decisions, lineups


def records(rules_id: str, specs: Sequence[Spec], sets: int, seed: int) -> dict[str, list[tuple[bool, int]]]:
    """engine label -> ``(agrees with greedy, legal moves)`` of each of its decisions with a real choice."""
    agrees = inference.REPLAYS[rules_id][1]
    players = engine.RULES[rules_id].default_players
    out: dict[str, list[tuple[bool, int]]] = {s.label: [] for s in specs}
    for i in range(sets):
        for lineup in lineups(specs, players):
            for state, mover, spec, move in deal_decisions(rules_id, lineup, seed + i):
                n = len(state.legal_moves())
                if n > 1:
                    out[spec.label].append((agrees(state, mover, move), n))
    return out


def features(rules_id: str, spec: Spec, sets: int, seed: int) -> list[inference.Feature]:
    """The search model's view (``ai.inference.FEATURES``) of every decision with a real choice in ``sets``
    deals of four ``spec`` seats (seeds from ``seed``, decisions seeded as the arena seeds them), on the
    true position."""
    feature = inference.FEATURES[rules_id]
    lineup = [spec] * engine.RULES[rules_id].default_players
    return [feature(state, mover, move) for i in range(sets) for state, mover, _s, move in
            deal_decisions(rules_id, lineup, seed + i) if len(state.legal_moves()) > 1]


#: one decision for the softmax fit: the model's score of every legal move and the index of the one played
Scored = tuple[list[float], int]


def scored(rules_id: str, spec: Spec, sets: int, seed: int) -> list[Scored]:
    """Every decision with a real choice in ``sets`` deals of ``spec`` in every seat (seeds from ``seed``,
    decisions seeded as the arena seeds them), scored by the rule set's softmax model on the true position."""
    model = inference.SOFTMAX_MODELS[rules_id]
    score = model.score
    lineup = [spec] * engine.RULES[rules_id].default_players
    out = []
    for i in range(sets):
        for state, _mover, _s, move in deal_decisions(rules_id, lineup, seed + i):
            if not model.scores(state):
                continue  # a position the model does not score (Tiu U: part 2's choices)
            moves = state.legal_moves()
            if len(moves) > 1:
                out.append(([score(state, m) for m in moves], moves.index(move)))
    return out


def softmax_log_likelihood(rows: Sequence[Scored], beta: float) -> float:
    """The log-likelihood of the decisions ``rows`` when each move is played with a chance in proportion to
    ``exp(beta * score)``."""
    return sum(inference.log_softmax(scores, chosen, beta) for scores, chosen in rows)


def fit_softmax(rows: Sequence[Scored]) -> float:
    """The ``beta`` of the grid 0.00..3.00 (steps of 0.01) that maximises the log-likelihood of ``rows``."""
    return max((k / 100 for k in range(301)), key=lambda b: softmax_log_likelihood(rows, b))


def _share(rows: Sequence[tuple[bool, int, int]]) -> float:
    """The chance ``q`` of 0.00..0.99 that maximises ``sum log(q [hit] / favourites + (1 - q) / n)`` over
    ``rows`` of ``(hit, n, favourites)``."""
    return max((k / 100 for k in range(100)),
               key=lambda q: sum(math.log(q * hit / f + (1.0 - q) / n) for hit, n, f in rows))


def fit_search_model(rows: Sequence[inference.Feature]) -> inference.SearchModel:
    """The maximum-likelihood ``ai.inference.SearchModel`` of the decisions ``rows``."""
    beats = [(hit, n, f) for kind, hit, n, f in rows if kind == "beat"]
    could = len(beats) + sum(1 for kind, *_ in rows if kind == "discard")
    return inference.SearchModel(
        lead=_share([(hit, n, f) for kind, hit, n, f in rows if kind == "lead"]),
        beat=round(len(beats) / max(1, could), 2),
        cheapest=_share([(hit, n, f) for hit, n, f in beats if n > 1]),
        weakest=_share([(hit, n, f) for kind, hit, n, f in rows if kind in ("discard", "forced discard") and n > 1]))


def fit(rows: Sequence[tuple[bool, int]]) -> float:
    """The ``eps`` of the grid 0.01..1.00 that maximises the log-likelihood of ``rows``."""
    def ll(eps: float) -> float:
        return sum(math.log((1.0 - eps) * a + eps / n) for a, n in rows)

    return max((k / 100 for k in range(1, 101)), key=ll)


def _right(world: Any, truth: Any, seat: int) -> float:
    """The share of the other seats' hand tiles of ``world`` that ``truth`` has in the same hand (hands as
    lists of faces, Kozel's tile masks, or Tiu U's face counts)."""
    ok = total = 0
    counts = world.rules.id == "tiuu"
    for p, hand in enumerate(world.hands):
        if p != seat and counts:
            total += sum(hand)
            ok += sum(map(min, hand, truth.hands[p]))
        elif p != seat and isinstance(hand, int):
            total += hand.bit_count()
            ok += (hand & truth.hands[p]).bit_count()
        elif p != seat:
            left = list(truth.hands[p])
            for f in hand:
                total += 1
                if f in left:
                    ok += 1
                    left.remove(f)
    return ok / max(1, total)


def _sampler_placement(rules_id: str, spec: Spec, count: int,
                       samplers: Sequence[tuple[int, str]]) -> dict[str, list[float]]:
    """``placement`` where no arrangement is defined (Kozel): uniform worlds and the samplers' worlds."""
    players = engine.RULES[rules_id].default_players
    replay = inference.REPLAYS[rules_id][0]
    rows: dict[str, list[float]] = {"uniform": []}
    seed = found = 0
    while found < count:
        state = engine.new_game(rules_id, players=players, seed=seed)
        for ply in range(6 + seed % 14):
            mover = state.to_move
            if mover is None or state.deals_done:
                break
            state.apply(ai.decide(spec.engine, state, mover, dict(spec.params), seed=ply).move)
        seed += 1
        seat = state.to_move
        if seat is None or state.deals_done or not any(
                mover != seat and len(before.legal_moves()) > 1 for before, mover, _m in replay(state)):
            continue
        i, found = found, found + 1
        rows["uniform"].append(statistics.mean(
            _right(state.determinize(seat, random.Random(100 + k)), state, seat) for k in range(200)))
        for worlds, model in samplers:
            t0 = time.perf_counter()
            made = inference.sampler(state, seat, worlds, 0.5 if model == "greedy" else 0.0, random.Random(i),
                                     model=model)
            ms = (time.perf_counter() - t0) * 1000.0
            assert made is not None
            draw, _stats = made
            r = random.Random(i)
            key = f"sampler {worlds} {model}"
            rows.setdefault(key, []).append(statistics.mean(_right(draw(r), state, seat) for _ in range(200)))
            rows.setdefault(key + " - uniform", []).append(rows[key][-1] - rows["uniform"][-1])
            rows.setdefault(key + " ms", []).append(ms)
    return rows


def placement(rules_id: str, spec: Spec, count: int, chains: Sequence[tuple[int, float, str]],
              samplers: Sequence[tuple[int, str]] = ()) -> dict[str, list[float]]:
    """Per position (see ``--placement``): name -> the mean share right of that kind of world."""
    if rules_id not in inference.ARRANGE:
        return _sampler_placement(rules_id, spec, count, samplers)
    players = engine.RULES[rules_id].default_players
    arrange = inference.ARRANGE[rules_id]
    rows: dict[str, list[float]] = {"uniform": [], "arranged": []}
    seed = found = 0
    while found < count:
        state = engine.new_game(rules_id, players=players, seed=seed)
        for ply in range(9 + seed % 8):
            mover = state.to_move
            assert mover is not None
            state.apply(ai.decide(spec.engine, state, mover, dict(spec.params), seed=ply).move)
        seed += 1
        seat = state.to_move
        assert seat is not None
        if not any(not up and p != seat for _l, _w, ps in cast(Any, state).tricks for p, up, _f in ps):
            continue
        i, found = found, found + 1
        uniform = [state.determinize(seat, random.Random(100 + k)) for k in range(100)]
        rows["uniform"].append(statistics.mean(_right(w, state, seat) for w in uniform))
        rows["arranged"].append(statistics.mean(_right(arrange(w, seat), state, seat) for w in uniform))
        for steps, eps, model in chains:
            t0 = time.perf_counter()
            made = inference.chain(state, seat, steps, eps, random.Random(i), model=model)
            ms = (time.perf_counter() - t0) * 1000.0
            assert made is not None
            key = f"chain {steps} eps {eps}" if model == "greedy" else f"chain {steps} {model} model"
            rows.setdefault(key, []).append(statistics.mean(_right(w, state, seat) for w in made[0]))
            rows.setdefault(key + " - arranged", []).append(rows[key][-1] - rows["arranged"][-1])
            rows.setdefault(key + " ms/step", []).append(ms / steps)
    rows["arranged - uniform"] = [a - u for a, u in zip(rows["arranged"], rows["uniform"], strict=True)]
    return rows


def _chain(text: str) -> tuple[int, float, str]:
    """``"400:0.1"`` -> (400, 0.1, "greedy"); ``"400:search"`` -> (400, 0.0, "search")."""
    steps, _, eps = text.partition(":")
    if eps == "search":
        return int(steps), 0.0, "search"
    return int(steps), float(eps), "greedy"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="tilehouse bench inference", description=__doc__.split("\n\n")[0])
    p.add_argument("rules", choices=sorted(inference.REPLAYS))
    p.add_argument("--engine", action="append", required=True, metavar="ID[:NAME=VALUE,...]")
    p.add_argument("--sets", type=int, default=10)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--json", action="store_true")
    p.add_argument("--placement", type=int, default=0, metavar="N",
                   help="N positions: how many hidden tiles uniform, arranged and chain worlds place right")
    p.add_argument("--chain", action="append", default=[], metavar="STEPS:EPS",
                   help="with --placement: a Metropolis chain to measure, under the greedy model with noise EPS "
                        "or (EPS 'search') the search model; repeat (default 400:0.1)")
    p.add_argument("--sampler", action="append", default=[], metavar="WORLDS:MODEL",
                   help="with --placement at Kozel or Tiu U: the importance-resampling sampler to measure, WORLDS candidates "
                        "under MODEL (greedy or softmax); repeat (default 200:softmax)")
    p.add_argument("--fit", action="store_true",
                   help="fit the model of searching players (Tien Gow: ai.inference.SearchModel; Kozel, Tiu U: the "
                        "softmax model's beta) on deals of the first --engine in every seat")
    a = p.parse_args(argv)
    specs = tuple(Spec.parse(t) for t in a.engine)
    if a.fit and a.rules in inference.SOFTMAX_MODELS:
        decisions = scored(a.rules, specs[0], a.sets, a.seed)
        beta = fit_softmax(decisions)
        gain = ((softmax_log_likelihood(decisions, beta) - softmax_log_likelihood(decisions, 0.0))
                / max(1, len(decisions)))
        print(json.dumps({"engine": specs[0].label, "decisions": len(decisions), "beta": beta,
                          "gain_per_decision": round(gain, 4)}) if a.json else
              f"{specs[0].label}: {len(decisions)} decisions  beta {beta:.2f}  "
              f"log-likelihood gain over uniform play {gain:.4f} a decision")
        return 0
    if a.fit:
        seen = features(a.rules, specs[0], a.sets, a.seed)
        model = fit_search_model(seen)
        print(json.dumps({"engine": specs[0].label, "decisions": len(seen), **vars(model)}) if a.json else
              f"{specs[0].label}: {len(seen)} decisions  {model}")
        return 0
    if a.placement:
        chains = [_chain(c) for c in a.chain or ["400:0.1"]]
        samplers = [(int(w), m) for w, _, m in (t.partition(":") for t in a.sampler or ["200:softmax"])]
        for key, values in placement(a.rules, specs[0], a.placement, chains, samplers).items():
            m = statistics.mean(values)
            h = 1.96 * statistics.stdev(values) / len(values) ** 0.5 if len(values) > 1 else 0.0
            print(json.dumps({"world": key, "mean": round(m, 4), "lo": round(m - h, 4), "hi": round(m + h, 4),
                              "positions": len(values)}) if a.json else
                  f"{key:32s} {m:8.4f} [{m - h:.4f}, {m + h:.4f}]  {len(values)} positions")
        return 0
    by_engine = records(a.rules, specs, a.sets, a.seed)
    report: list[dict[str, Any]] = []
    pooled = [r for engine_rows in by_engine.values() for r in engine_rows]
    for label, rows in [*by_engine.items(), ("(all)", pooled)]:
        if rows:
            report.append({"engine": label, "decisions": len(rows),
                           "agree": round(sum(a for a, _n in rows) / len(rows), 4), "eps": fit(rows)})
    for row in report:
        print(json.dumps(row) if a.json else
              f"{row['engine']:50s} {row['decisions']:6d} decisions  agree {100 * row['agree']:5.1f}%  "
              f"fitted eps {row['eps']:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
