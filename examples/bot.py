#!/usr/bin/env python3
"""A remote tilehouse bot over plain HTTP: it takes a seat and plays whole games, move by move.

    python examples/bot.py http://127.0.0.1:8000 GAME_ID 1            # join open seat 1 of GAME_ID
    python examples/bot.py http://127.0.0.1:8000 GAME_ID 1 --token T  # play a seat whose token you have
    python examples/bot.py http://127.0.0.1:8000 --lobby kozel --games 3  # join open games from the lobby

Its policy is a seeded random legal move: replace choose() with your own.  A join lost to a faster player
(409) tries the next open game; a restarting server (no connection, 502/503/504) is waited for.  Needs only
`requests`.
"""
from __future__ import annotations

import argparse
import random
import sys
import time

import requests

#: how long a server may be away (restarting, unreachable) before the bot gives up, in seconds
PATIENCE = 60.0


def choose(view: dict, rng: random.Random) -> str:
    return rng.choice(view["legal_moves"])["id"]


def call(http: requests.Session, method: str, url: str, **kw) -> requests.Response:
    """The server's answer; while it restarts (no connection, 502/503/504) ask again, backing off."""
    deadline, pause = time.monotonic() + PATIENCE, 0.1
    while True:
        try:
            r = http.request(method, url, timeout=10, **kw)
            if r.status_code not in (502, 503, 504):
                return r
        except requests.ConnectionError:
            pass
        if time.monotonic() > deadline:
            sys.exit(f"bot: {url}: the server stayed away for {PATIENCE:.0f} s")
        time.sleep(pause)
        pause = min(2.0, pause * 2)


def play(http: requests.Session, base: str, game: str, token: str, rng: random.Random) -> dict | None:
    """Poll the seat's view (ETag: an unchanged view costs nothing) and move whenever it is our turn, until
    the game is over (its final view) or gone (None)."""
    auth, tag, view = {"Authorization": f"Bearer {token}"}, None, {}
    while True:
        r = call(http, "GET", f"{base}/v1/games/{game}", headers={**auth, **({"If-None-Match": tag} if tag else {})})
        if r.status_code == 404:  # deleted (or expired) under us
            return None
        if r.status_code != 304:
            r.raise_for_status()
            view, tag = r.json(), r.headers.get("ETag")
        if view["status"] == "finished":
            return view
        if view["legal_moves"]:
            r = call(http, "POST", f"{base}/v1/games/{game}/moves", headers=auth,
                     json={"move": choose(view, rng), "version": view["version"]})
            if r.status_code not in (200, 403, 409):  # 403/409: the game moved on (a clock?), look again
                sys.exit(f"bot: move refused: {r.status_code} {r.text}")
            tag = None
        else:
            time.sleep(0.05)


def join(http: requests.Session, base: str, game: str, seat: int, name: str) -> str | None:
    """The seat's token, or None when someone else was faster or the game is over (409) or gone (404)."""
    r = call(http, "POST", f"{base}/v1/games/{game}/seats/{seat}/join", json={"name": name})
    if r.status_code in (404, 409):
        print(f"bot: seat {seat} of {game}: {r.json().get('title')}; trying the next open game", file=sys.stderr)
        return None
    r.raise_for_status()
    return r.json()["token"]


def from_lobby(http: requests.Session, base: str, rules: str, name: str) -> tuple[str, str]:
    """Join the first open game of ``rules`` that lets us in (a game lost to a race: the next one)."""
    while True:
        r = call(http, "GET", f"{base}/v1/games", params={"status": "open", "rules": rules})
        r.raise_for_status()
        if not r.json()["games"]:
            sys.exit(f"bot: no open {rules} game in the lobby")
        for listed in r.json()["games"]:
            token = join(http, base, listed["id"], listed["join"][0]["seat"], name)
            if token is not None:
                return listed["id"], token


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
        if a.lobby:
            game, token = from_lobby(http, base, a.lobby, a.name)
        else:
            game, token = a.game, a.token or join(http, base, a.game, a.seat, a.name)
            if token is None:
                return 1
        view = play(http, base, game, token, rng)
        if view is None:
            print(f"game {game}: deleted before its end")
            continue
        print(f"game {game} seat {view['you']}: {view['result']['reason']}, payoffs {view['result']['payoffs']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
