"""Write perft regression data: ``python -m bench.perft --write FILE RULES --players N --seed S --depth K``.

Appends (or replaces, for the same players/seed/options) one case in FILE."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import engine


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.perft")
    p.add_argument("rules")
    p.add_argument("--players", type=int, required=True)
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--depth", type=int, default=3)
    p.add_argument("--options", default="{}", help="JSON object of rule options")
    p.add_argument("--write", type=Path, help="file to add the case to")
    a = p.parse_args(argv)
    opts = json.loads(a.options)
    state = engine.new_game(a.rules, players=a.players, seed=a.seed, options=opts)
    counts = [engine.perft(state, d) for d in range(1, a.depth + 1)]
    case = {"rules": a.rules, "players": a.players, "seed": a.seed, "options": opts, "counts": counts}
    print(json.dumps(case))
    if a.write:
        cases = json.loads(a.write.read_text()) if a.write.exists() else []
        cases = [c for c in cases if (c["players"], c["seed"], c.get("options")) != (a.players, a.seed, opts)]
        cases.append(case)
        a.write.write_text(json.dumps(cases, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
