#!/usr/bin/env python3
"""A remote tilehouse bot over plain HTTP (issue 13): it takes a seat and plays whole games, move by move.

    python examples/bot.py http://127.0.0.1:8000 GAME_ID 1            # join open seat 1 of GAME_ID
    python examples/bot.py http://127.0.0.1:8000 GAME_ID 1 --token T  # play a seat whose token you have
    python examples/bot.py http://127.0.0.1:8000 --lobby kozel --games 3  # join open games from the lobby

Its policy is a seeded random legal move: replace choose() with your own.  Needs only `requests`.
"""
from __future__ import annotations

import argparse
import random
import sys
import time

import requests


def choose(view: dict, rng: random.Random) -> str:
    return rng.choice(view["legal_moves"])["id"]


def play(http: requests.Session, base: str, game: str, token: str, rng: random.Random) -> dict:
    """Poll the seat's view (ETag: an unchanged view costs nothing) and move whenever it is our turn."""
    auth, tag, view = {"Authorization": f"Bearer {token}"}, None, {}
    while True:
        r = http.get(f"{base}/v1/games/{game}", headers={**auth, **({"If-None-Match": tag} if tag else {})})
        if r.status_code != 304:
            r.raise_for_status()
            view, tag = r.json(), r.headers.get("ETag")
        if view["status"] == "finished":
            return view
        if view["legal_moves"]:
            r = http.post(f"{base}/v1/games/{game}/moves", headers=auth,
                          json={"move": choose(view, rng), "version": view["version"]})
            if r.status_code not in (200, 409):  # 409: the game moved on (a clock?), just look again
                sys.exit(f"bot: move refused: {r.status_code} {r.text}")
            tag = None
        else:
            time.sleep(0.05)


def join(http: requests.Session, base: str, game: str, seat: int, name: str) -> str:
    r = http.post(f"{base}/v1/games/{game}/seats/{seat}/join", json={"name": name})
    r.raise_for_status()
    return r.json()["token"]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("base"), p.add_argument("game", nargs="?"), p.add_argument("seat", nargs="?", type=int)
    p.add_argument("--token", help="the seat's token (else the bot joins the open seat)")
    p.add_argument("--lobby", metavar="RULES", help="find open games of RULES in GET /v1/games?status=open")
    p.add_argument("--games", type=int, default=1), p.add_argument("--name", default="examples/bot.py")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    http, rng, base = requests.Session(), random.Random(a.seed), a.base.rstrip("/")
    for _ in range(a.games):
        game, seat, token = a.game, a.seat, a.token
        if a.lobby:
            listed = http.get(f"{base}/v1/games", params={"status": "open", "rules": a.lobby}).json()["games"]
            if not listed:
                sys.exit(f"bot: no open {a.lobby} game in the lobby")
            game, seat = listed[0]["id"], listed[0]["join"][0]["seat"]
        if token is None:
            token = join(http, base, game, seat, a.name)
        view = play(http, base, game, token, rng)
        print(f"game {game} seat {view['you']}: {view['result']['reason']}, payoffs {view['result']['payoffs']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
