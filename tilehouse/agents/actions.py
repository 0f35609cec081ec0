"""The fixed action space of every rule set and player count (``docs/agents.md``).

An action is an index into :func:`move_ids`: every move id that can ever be legal in that rule set with that
many players, under any option, in a fixed, documented order.  The engine's ``legal_moves()`` of any state
maps into it (``tests/test_agents.py`` checks it on random matches of every configuration).

* ``kozel`` (2-4 players, 107 actions): ``play:T`` for the 28 dominoes (the first tile of a round), then
  ``play:T@left`` and ``play:T@right`` per domino, ``draw``, ``pass``, then ``doubles:A+B`` (two doubles laid
  on both ends at once, higher double first) for the 21 pairs of different doubles.
* ``tiengow`` (4 players, 9,983 actions): ``play:G`` for the 61 groups of the rules (singles, pairs, the
  Supreme, mixed pairs, triples, quartets) in the engine's group order, then ``discard:D`` for every multiset
  of 1 to 4 tiles of the 32-tile set (by size, then in lexicographic order of the engine's face ids).
* ``tiengow_wall`` (188,064 actions with 2 or 4 players, 127,312 with 3, which play without 4-2 and 2-1):
  ``lead:L`` for every multiset of 1 to 4 tiles of the set, then ``place:T>0+T>1...`` for every ordered
  placement of 1 to 4 tiles on as many columns -- the 120-way (and larger) follows are single actions.
* ``tiuu`` (2-3 players, 925 actions): ``capture:H+P`` for the 21x21 face pairs, ``take:F+P`` likewise,
  ``triple:T`` and ``fourth:T`` per face, then ``flip``.  Pairs that never match under either
  ``supreme_extra`` setting are included but never legal, so the space does not depend on options.
"""

from __future__ import annotations

from functools import cache
from itertools import combinations, permutations

import engine
from engine import kozel, tiengow, tiengow_wall, tiuu
from engine.tiles import CF_COPIES, CF_NAME, D_NAME, FACES


def _multisets(tiles: tuple[int, ...], sizes: range) -> list[tuple[int, ...]]:
    """Distinct sub-multisets of the sorted ``tiles``, by size, each in lexicographic order."""
    return [c for k in sizes for c in dict.fromkeys(combinations(tiles, k))]


def _kozel() -> list[str]:
    ids = [m.id for m in kozel.FIRST_MOVES]
    ids += [m.id for pair in kozel.END_MOVES for m in pair]
    ids += [kozel.DRAW.id, kozel.PASS.id]
    # DOUBLES holds both orientations; the id names the higher double first, so each pair is one action
    ids += dict.fromkeys(kozel.DOUBLES[k].id for k in sorted(kozel.DOUBLES))
    return ids


def _tiengow() -> list[str]:
    ids = [f"play:{'+'.join(tiengow.tile_names(faces))}" for faces, _type, _rank in tiengow._GROUP_LIST]
    full = tuple(f for f in FACES for _ in range(CF_COPIES[f]))
    ids += [f"discard:{'+'.join(tiengow.tile_names(d))}" for d in _multisets(full, range(1, 5))]
    return ids


def _tiengow_wall(players: int) -> list[str]:
    w = tiengow_wall
    full = tuple(i for i in range(w.NUM) for _ in range(w.COPIES[i])
                 if not (players == 3 and i in w.COMMANDERS))
    ids = ["lead:" + "+".join(w.NAME[f] for f in c) for c in _multisets(full, range(1, w.MAX_LEAD + 1))]
    for c in _multisets(full, range(1, w.MAX_LEAD + 1)):
        for order in dict.fromkeys(permutations(c)):
            ids.append("place:" + "+".join(f"{w.NAME[f]}>{i}" for i, f in enumerate(order)))
    return ids


def _tiuu() -> list[str]:
    ids = [f"capture:{CF_NAME[h]}+{CF_NAME[p]}" for h in FACES for p in FACES]
    ids += [f"take:{CF_NAME[f]}+{CF_NAME[p]}" for f in FACES for p in FACES]
    ids += [m.id for m in tiuu.TRIPLE_MOVES] + [m.id for m in tiuu.FOURTH_MOVES] + [tiuu.FLIP_MOVE.id]
    return ids


@cache
def move_ids(rules: str, players: int) -> tuple[str, ...]:
    """Every move id of ``rules`` with ``players`` players, in action order."""
    rs = engine.get_rules(rules)
    if players not in rs.players:
        raise ValueError(f"{rs.title} is played by {rs.min_players} to {rs.max_players} players, not {players}")
    if rules == "kozel":
        ids = _kozel()
    elif rules == "tiengow":
        ids = _tiengow()
    elif rules == "tiengow_wall":
        ids = _tiengow_wall(players)
    elif rules == "tiuu":
        ids = _tiuu()
    else:
        raise ValueError(f"no action space is defined for rule set {rules!r}")
    if len(set(ids)) != len(ids):
        raise AssertionError(f"duplicate move ids in the action space of {rules}")
    return tuple(ids)


@cache
def action_index(rules: str, players: int) -> dict[str, int]:
    """Move id -> action number."""
    return {m: i for i, m in enumerate(move_ids(rules, players))}


#: every tile name the encodings count (the double-six set; the Chinese faces are a subset of it)
TILE_NAMES: tuple[str, ...] = tuple(sorted(set(D_NAME), key=lambda t: (-int(t[0]), -int(t[2]))))
