"""The ``tilehouse`` command: one entry point that hands its arguments to the module owning each
subcommand, imported only when used (``tilehouse bench engine`` must not pay for Flask)."""

from __future__ import annotations

import importlib
import sys

#: subcommand -> (module:function taking argv, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "serve": ("service.runner:main", "start Redis (if needed), the API under gunicorn and AI workers"),
    "worker": ("worker:main", "run one RQ worker on the suggest and play queues"),
    "arena": ("ai.arena_cli:main", "play duplicate matches between AI engines and report their strength"),
    "margins": ("ai.arena_cli:margins_main", "pool arena reports' per-set margins, or compare two on the same seeds"),
    "replay": ("engine.replay:main", "check that a replay file (GET /v1/games/{id}/replay) reproduces its match"),
    "bench": ("", "benchmarks: engine | ai | http | streams | fairness | memory | soak | capacity | inference | regret | variants"
              " | kozel-value"),
}
BENCHES = {"engine": "bench.engine:main", "ai": "bench.ai:main", "http": "bench.http:main",
           "streams": "bench.streams:main", "fairness": "bench.fairness:main",
           "memory": "bench.memory:main", "soak": "bench.soak:main", "capacity": "bench.capacity:main",
           "inference": "bench.inference:main", "regret": "bench.regret:main",
           "variants": "bench.variants:main",
           "kozel-value": "bench.kozel_value:main"}


def _call(target: str, argv: list[str]) -> int:
    module, _, func = target.partition(":")
    return int(getattr(importlib.import_module(module), func)(argv) or 0)


def _usage() -> str:
    lines = ["usage: tilehouse COMMAND [ARGS...]", "", "commands:"]
    lines += [f"  {name:8s} {help_}" for name, (_, help_) in COMMANDS.items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in ("-h", "--help", "help"):
        print(_usage())
        return 0
    cmd, rest = args[0], args[1:]
    if cmd == "bench":
        if not rest or rest[0] not in BENCHES:
            print(f"usage: tilehouse bench {{{'|'.join(BENCHES)}}} [ARGS...]", file=sys.stderr)
            return 2
        return _call(BENCHES[rest[0]], rest[1:])
    if cmd not in COMMANDS:
        print(f"tilehouse: unknown command {cmd!r}\n\n{_usage()}", file=sys.stderr)
        return 2
    return _call(COMMANDS[cmd][0], rest)


if __name__ == "__main__":
    raise SystemExit(main())
