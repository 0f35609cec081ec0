"""A fixed-size numeric encoding of one seat's view (``docs/agents.md``).

The encoding reads nothing but ``state.view(seat)`` -- what that seat may see -- so it cannot depend on a
hidden tile.  It is generic: its layout comes from the structure of the view of a fresh match of the rule
set (the view's keys never change during a match), so every rule set gets one without a hand-written
encoder.  Seats are *relative*: block 0 is the observing seat, block 1 the next seat in turn order, ...

Layout (float32), ``T`` = 28 tile names of the double-six set (the Chinese faces are a subset), in
:data:`actions.TILE_NAMES` order:

1. who is to move, relative to the observer (``players`` one-hot; all zero once the match is over), and a
   finished flag;
2. the observer's hand: copies of each tile (``T``);
3. every further per-viewer list of the view (Tien Gow's ``discards``, the observer's own face-down
   discards): tile counts (``T`` each);
4. per seat, relative: every number or flag of ``seats[i]`` (hand size, score, columns, ...; ``null`` is 0),
   then tile counts of each of its lists (Tiu U's ``catch`` and ``known_hand``; ``T`` each);
5. the table, key by key in sorted order: a number or flag is one value; a tile-valued string, a list or an
   object is ``T`` tile counts of every tile under it plus its first 4 numbers when it is a flat list of
   numbers (Kozel's line ``ends``, per-seat ``points``), zero-padded (a key that was ``null`` in a fresh
   match and holds a number later puts it first); other strings (option names) are skipped.

Choice made where the requirements are silent: the encoding is a baseline for learning agents, not a complete
description (the order of tiles inside a column is not in it); the view dict travels with every
observation for agents that want more.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from engine.game import State
from tilehouse.agents.actions import TILE_NAMES

T = len(TILE_NAMES)
_TILE_INDEX = {t: i for i, t in enumerate(TILE_NAMES)}
#: the view's own keys that the fixed blocks already cover (or that hold no per-viewer facts)
_STANDARD = {"rules", "players", "to_move", "finished", "you", "hand", "seats", "table", "result", "options"}
_NUMBERS = 4


def _tiles_under(obj: Any) -> Iterator[int]:
    if isinstance(obj, str):
        i = _TILE_INDEX.get(obj)
        if i is not None:
            yield i
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _tiles_under(v)
    elif isinstance(obj, list | tuple):
        for v in obj:
            yield from _tiles_under(v)


def _number(v: Any) -> float:
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, int | float):
        return float(v)
    return 0.0


def _is_scalar(v: Any) -> bool:
    return isinstance(v, bool | int | float)


@dataclass(frozen=True)
class Layout:
    """Where each part of a view goes in the vector: built once per rule set, player count and options."""

    players: int
    extra_lists: tuple[str, ...]
    seat_numbers: tuple[str, ...]
    seat_lists: tuple[str, ...]
    table_numbers: tuple[str, ...]
    table_parts: tuple[str, ...]

    @classmethod
    def of(cls, state: State) -> Layout:
        v = state.view(0)
        seat = v["seats"][0]
        table = v["table"]
        return cls(
            players=state.players,
            extra_lists=tuple(sorted(k for k in v if k not in _STANDARD)),
            seat_numbers=tuple(k for k in sorted(seat) if k != "seat" and (_is_scalar(seat[k]) or seat[k] is None)),
            seat_lists=tuple(k for k in sorted(seat) if isinstance(seat[k], list | dict)),
            table_numbers=tuple(k for k in sorted(table) if _is_scalar(table[k])),
            table_parts=tuple(k for k in sorted(table) if not _is_scalar(table[k]) and (
                not isinstance(table[k], str) or table[k] in _TILE_INDEX)),
        )

    @property
    def size(self) -> int:
        per_seat = len(self.seat_numbers) + T * len(self.seat_lists)
        return (self.players + 1 + T + T * len(self.extra_lists) + self.players * per_seat
                + len(self.table_numbers) + (T + _NUMBERS) * len(self.table_parts))

    def encode(self, view: dict[str, Any], seat: int) -> np.ndarray:
        """The vector of ``view`` (``state.view(seat)``)."""
        out = np.zeros(self.size, dtype=np.float32)
        n = self.players
        to_move = view["to_move"]
        if to_move is not None:
            out[(to_move - seat) % n] = 1.0
        out[n] = float(bool(view["finished"]))
        pos = n + 1
        for t in _tiles_under(view.get("hand") or []):
            out[pos + t] += 1.0
        pos += T
        for k in self.extra_lists:
            for t in _tiles_under(view.get(k)):
                out[pos + t] += 1.0
            pos += T
        seats = view["seats"]
        for rel in range(n):
            s = seats[(seat + rel) % n]
            for k in self.seat_numbers:
                out[pos] = _number(s.get(k))
                pos += 1
            for k in self.seat_lists:
                for t in _tiles_under(s.get(k)):
                    out[pos + t] += 1.0
                pos += T
        table = view["table"]
        for k in self.table_numbers:
            out[pos] = _number(table.get(k))
            pos += 1
        for k in self.table_parts:
            value = table.get(k)
            for t in _tiles_under(value):
                out[pos + t] += 1.0
            pos += T
            if _is_scalar(value):  # a key that was null in a fresh match and holds a number now
                out[pos] = _number(value)
            elif isinstance(value, list) and value and all(_is_scalar(x) for x in value):
                numbers = [_number(x) for x in value[:_NUMBERS]]
                out[pos:pos + len(numbers)] = numbers
            pos += _NUMBERS
        assert pos == self.size
        return out
