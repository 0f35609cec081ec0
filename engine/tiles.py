"""The two tile sets the games use, as small integers with tables built once at import.

The tiles as the players see them: ``docs/rules/tiengow.md`` (Tiles) and ``docs/rules/tiuu.md``.

* The Chinese set has 21 *faces* (the outcomes of two dice).  Eleven are civil and come twice in a
  32-tile set; ten are military and come once.  Tien Gow plays one set (32 tiles), Tiu U two sets mixed
  (64 tiles).  Copies of a face are indistinguishable, so the engines keep hands as faces, never as
  "copy 1 of 6-6".
* The Western double-six set (Kozel) has 28 tiles, every unordered pair of 0..6 once.

Face ids are ordered by strength: civil faces by civil rank (0 = Heaven 6-6 ... 10 = 5-1), then military
faces from the nines down to Little Three (11 = 6-3 ... 20 = 2-1).  Tiles are written high half first
(``"6-3"``); the parsers accept either order.
"""

from __future__ import annotations

Face = int  # a Chinese face id, 0..20
Domino = int  # a double-six tile id, 0..27

# --------------------------------------------------------------------------- the Chinese set

#: (hi, lo, civil rank 1..11 or 0, military class or 0, English name, Chinese name)
_CHINESE: tuple[tuple[int, int, int, int, str, str], ...] = (
    (6, 6, 1, 0, "Heaven", "天"),
    (1, 1, 2, 0, "Earth", "地"),
    (4, 4, 3, 0, "Man", "人"),
    (3, 1, 4, 0, "Goose", "鵝"),
    (5, 5, 5, 0, "Plum", "梅"),
    (3, 3, 6, 0, "Long Three", "長三"),
    (2, 2, 7, 0, "Bench", "板凳"),
    (6, 5, 8, 0, "Axe", "斧頭"),
    (6, 4, 9, 0, "Partition", "屏風"),
    (6, 1, 10, 0, "Long Leg Seven", "高腳七"),
    (5, 1, 11, 0, "Big Head Six", "銅錘六"),
    (6, 3, 0, 9, "Nine", "雜九"),
    (5, 4, 0, 9, "Nine", "雜九"),
    (6, 2, 0, 8, "Eight", "雜八"),
    (5, 3, 0, 8, "Eight", "雜八"),
    (5, 2, 0, 7, "Seven", "雜七"),
    (4, 3, 0, 7, "Seven", "雜七"),
    (4, 2, 0, 6, "Big Six", "二四"),
    (4, 1, 0, 5, "Five", "雜五"),
    (3, 2, 0, 5, "Five", "雜五"),
    (2, 1, 0, 3, "Little Three", "丁三"),
)

NUM_FACES = len(_CHINESE)
FACES: tuple[Face, ...] = tuple(range(NUM_FACES))
CF_HI: tuple[int, ...] = tuple(t[0] for t in _CHINESE)
CF_LO: tuple[int, ...] = tuple(t[1] for t in _CHINESE)
CF_PIPS: tuple[int, ...] = tuple(t[0] + t[1] for t in _CHINESE)
CF_NAME: tuple[str, ...] = tuple(f"{t[0]}-{t[1]}" for t in _CHINESE)
CF_ENGLISH: tuple[str, ...] = tuple(t[4] for t in _CHINESE)
CF_CHINESE: tuple[str, ...] = tuple(t[5] for t in _CHINESE)
CF_CIVIL: tuple[bool, ...] = tuple(t[2] > 0 for t in _CHINESE)
#: civil rank, 1 = best (Heaven) .. 11 (Big Head Six); 0 for military faces
CF_CIVIL_RANK: tuple[int, ...] = tuple(t[2] for t in _CHINESE)
#: military class, larger = better: 9, 8, 7, 6 (Big Six 4-2), 5, 3 (Little Three 2-1); 0 for civil faces
CF_MILITARY_CLASS: tuple[int, ...] = tuple(t[3] for t in _CHINESE)
#: copies of the face in one 32-tile set
CF_COPIES: tuple[int, ...] = tuple(2 if t[2] else 1 for t in _CHINESE)


def _red_pips(hi: int, lo: int) -> int:
    # docs/rules/tiuu.md (small fish), docs/web.md (the tiles): every pip of a 1-face and of a 4-face is red;
    # 6-6 has half of its 12 pips red.
    if hi == lo == 6:
        return 6
    return sum(n for n in (hi, lo) if n in (1, 4))


CF_RED_PIPS: tuple[int, ...] = tuple(_red_pips(t[0], t[1]) for t in _CHINESE)

#: one comparable strength per face within its suit: civil 11 (Heaven) .. 1, military = its class.
#: A single beats another only when both are the same suit and its strength is strictly higher.
CF_STRENGTH: tuple[int, ...] = tuple(12 - t[2] if t[2] else t[3] for t in _CHINESE)

CIVIL_FACES: tuple[Face, ...] = tuple(f for f in FACES if CF_CIVIL[f])
MILITARY_FACES: tuple[Face, ...] = tuple(f for f in FACES if not CF_CIVIL[f])

HEAVEN, EARTH, MAN, GOOSE = 0, 1, 2, 3
BIG_SIX = CF_NAME.index("4-2")
LITTLE_THREE = CF_NAME.index("2-1")
SUPREME: tuple[Face, Face] = (BIG_SIX, LITTLE_THREE)

_CF_BY_PAIR: dict[tuple[int, int], Face] = {(CF_HI[f], CF_LO[f]): f for f in FACES}


def chinese_set(sets: int = 1) -> list[Face]:
    """Every tile of ``sets`` mixed Chinese sets as face ids (32 per set), in face order."""
    return [f for f in FACES for _ in range(CF_COPIES[f] * sets)]


#: exact spellings, both half orders -> face id: stored states are read tile by tile on every move and AI
#: job, and a dict lookup is several times cheaper than splitting and checking the text
_CF_BY_TEXT: dict[str, Face] = {f"{a}-{b}": f for f in FACES for a, b in ((CF_HI[f], CF_LO[f]),
                                                                          (CF_LO[f], CF_HI[f]))}


def parse_chinese(text: str) -> Face:
    """``"6-3"`` or ``"3-6"`` -> face id.  Raises ``ValueError`` for anything that is not a Chinese face."""
    face = _CF_BY_TEXT.get(text) if isinstance(text, str) else None
    if face is not None:
        return face
    a, b = _halves(text)
    face = _CF_BY_PAIR.get((max(a, b), min(a, b)))
    if face is None:
        raise ValueError(f"{text!r} is not a tile of the Chinese set")
    return face


# --------------------------------------------------------------------------- the double-six set

def _domino_id(hi: int, lo: int) -> Domino:
    return hi * (hi + 1) // 2 + lo


NUM_DOMINOES = 28
DOMINOES: tuple[Domino, ...] = tuple(range(NUM_DOMINOES))
_D_PAIRS: tuple[tuple[int, int], ...] = tuple(
    sorted(((hi, lo) for hi in range(7) for lo in range(hi + 1)), key=lambda p: _domino_id(*p))
)
D_HI: tuple[int, ...] = tuple(p[0] for p in _D_PAIRS)
D_LO: tuple[int, ...] = tuple(p[1] for p in _D_PAIRS)
D_PIPS: tuple[int, ...] = tuple(p[0] + p[1] for p in _D_PAIRS)
D_DOUBLE: tuple[bool, ...] = tuple(p[0] == p[1] for p in _D_PAIRS)
D_NAME: tuple[str, ...] = tuple(f"{p[0]}-{p[1]}" for p in _D_PAIRS)
#: D_HAS[t][n]: tile t shows number n on one of its halves
D_HAS: tuple[tuple[bool, ...], ...] = tuple(tuple(n in p for n in range(7)) for p in _D_PAIRS)
#: D_OTHER[t][n]: the other half of t when its half n is matched (-1 if t has no n)
D_OTHER: tuple[tuple[int, ...], ...] = tuple(
    tuple((p[1] if p[0] == n else p[0]) if n in p else -1 for n in range(7)) for p in _D_PAIRS
)


def domino(hi: int, lo: int) -> Domino:
    """The id of the double-six tile with halves ``hi`` and ``lo`` (either order)."""
    if not (0 <= hi <= 6 and 0 <= lo <= 6):
        raise ValueError(f"{hi}-{lo} is not a double-six tile")
    return _domino_id(max(hi, lo), min(hi, lo))


#: exact spellings, both half orders -> tile id (see ``_CF_BY_TEXT``)
_D_BY_TEXT: dict[str, Domino] = {f"{a}-{b}": t for t in DOMINOES for a, b in ((D_HI[t], D_LO[t]),
                                                                            (D_LO[t], D_HI[t]))}


def parse_domino(text: str) -> Domino:
    """``"6-3"`` or ``"3-6"`` -> double-six tile id.  Raises ``ValueError`` otherwise."""
    tile = _D_BY_TEXT.get(text) if isinstance(text, str) else None
    if tile is not None:
        return tile
    a, b = _halves(text)
    return domino(a, b)


def _halves(text: str) -> tuple[int, int]:
    if not isinstance(text, str):
        raise ValueError(f"a tile is written as a string like '6-3', not {text!r}")
    parts = text.strip().split("-")
    if len(parts) != 2 or not all(p.strip().isdigit() and len(p.strip()) == 1 for p in parts):
        raise ValueError(f"{text!r} is not a tile: write it as two numbers like '6-3'")
    return int(parts[0]), int(parts[1])
