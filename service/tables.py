"""The use cases of the service: every change to a table, called alike by the Flask views and the RQ jobs
(cosmicpython's service layer).

* :func:`create` -- a new game (admitted among its creator's live games first);
* :func:`play` -- a seat's move, idempotent for a retry of the move that made the current version;
* :func:`join` -- taking an open seat; :func:`resign`; :func:`rematch` (create and link, or claim a seat);
* :func:`time_out` -- the clock of the seat to move ran out; :func:`ai_turn` -- the AI seat to move moves;
* :func:`delete` -- the game and its jobs go.

Every change goes through one compare-and-set loop (:func:`_change`): read the game, decide the change from
what was read (a :class:`Change`, or ``None`` when there is nothing to do), commit it on the version read
(:meth:`service.store.Store.commit`), and on a lost race read again and decide again, at most
:data:`MAX_ATTEMPTS` times.  A use case that must not outlive its version (a move sent with ``version``, an
AI turn, a timeout) decides "nothing" or refuses when the version read is not its own, so the retry never
applies it to a newer game.  Every commit, and every creation, is followed by the one after-commit step
(:func:`_after_commit`): list or unlist the game in the lobby, count the game created or finished, queue
the AI seat's play job, schedule the running clock's timeout.  (The commit itself announces new events to
the game's streams, in the same atomic step.)  The stored game document is built in one place, :func:`_document`.

Refusals are :mod:`service.errors`; nothing here knows HTTP.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import redis
from rq.job import Job

import ai
import engine
from engine import IllegalMove
from engine.game import Event, RuleSet, State, event
from service import auth, metrics, queues
from service.errors import (
    Busy,
    GameNotFound,
    GameOver,
    NotOver,
    NotStarted,
    NotYourTurn,
    RematchGone,
    SeatTaken,
    TimeUp,
    VersionConflict,
)
from service.fairplay import budget, live_games, seeds
from service.keys import client_games_key
from service.live import clock
from service.lobby import Lobby
from service.store import Game, Store, new_game_id, now_ms

#: compare-and-set rounds before a change gives up (each lost round means another change landed first)
MAX_ATTEMPTS = 64
#: fresh seeds tried to rotate the starting seat of a rematch
ROTATION_TRIES = 64
#: the engine that moves for a seat whose time ran out
TIMEOUT_ENGINE = "greedy"
#: a timeout job that finds its deadline this close (ms) waits for it rather than giving up
EARLY_WAIT_MS = 2000


@dataclass(frozen=True)
class Context:
    """What a use case talks to: the store (and through it Redis), the configuration, and the id of the
    request (or of the job's request) for the jobs it queues."""

    store: Store
    cfg: Mapping[str, Any]
    request_id: str | None = None

    @property
    def conn(self) -> redis.Redis:
        return self.store.conn


@dataclass
class Change:
    """The next version of a game: its document and state, the events to append, and the engine move (or
    ``"resign"``) that made them.  ``undo`` runs when the commit loses the race (what the decision made
    outside the game -- a rematch's new game -- is taken back)."""

    doc: dict[str, Any]
    state: State
    events: list[Event]
    move: str | None = None
    mover: int | None = None
    undo: Callable[[], None] | None = field(default=None, repr=False)


def _change(ctx: Context, game_id: str, decide: Callable[[Game], Change | None],
            game: Game | None = None) -> tuple[Game, bool]:
    """The one compare-and-set loop: ``(game after, True)`` once ``decide``'s change is committed (and
    followed by the after-commit step), ``(game as read, False)`` when ``decide`` finds nothing to do.
    ``game``: the game as the caller has just read it (saves the first read)."""
    for _ in range(MAX_ATTEMPTS):
        if game is None:
            game = ctx.store.get(game_id)
        change = decide(game)
        if change is None:
            return game, False
        try:
            after = ctx.store.commit(game, change.doc, change.state, change.events, move=change.move,
                                     mover=change.mover)
        except VersionConflict:
            if change.undo is not None:
                change.undo()
            game = None
            continue
        _after_commit(ctx, game, after)
        return after, True
    raise Busy("the game is changing too fast; try again")


def _after_commit(ctx: Context, before: Game | None, after: Game) -> None:
    """What follows every commit and creation: the lobby listing, the count of games created or finished,
    the AI seat's play job, the running clock's timeout."""
    if before is None or before.open_seats or after.open_seats:
        Lobby(ctx.store).sync(after)
    if before is None:
        metrics.record_game(ctx.conn, "created")
    if after.state.finished and not (before is not None and before.state.finished):
        metrics.record_game(ctx.conn, "finished")
    queues.schedule_play(ctx.conn, after, request_id=ctx.request_id, cfg=ctx.cfg)
    queues.schedule_timeout(ctx.conn, after, ctx.cfg)


# --------------------------------------------------------------------------- create

def _document(game_id: str, rules: str, state: State, seed: int, dealt: int, public_seed: bool,
              seats: list[dict[str, Any]], clock_settings: dict[str, Any] | None,
              rematch_of: str | None = None) -> dict[str, Any]:
    """The stored document of a new game.  ``seed``: what the creator asked for (or the server drew);
    ``engine_seed``: what the engine dealt with (service.fairplay.seeds) -- shown by nothing but the replay
    of the finished match."""
    return {"id": game_id, "rules": rules, "options": state.options, "players": len(seats), "seed": seed,
            "engine_seed": dealt, "public_seed": public_seed, "seats": seats, "state": state.to_dict(),
            "last_move": None, "clock": clock_settings, "clocks": clock.initial(clock_settings, seats),
            "rematch_of": rematch_of, "rematch": None}


def _store_new(ctx: Context, client: str, game_id: str, build: Callable[[], tuple[dict[str, Any], dict[str, str]]],
               *, follow: bool = True) -> Game:
    """Admit ``game_id`` among ``client``'s live games, store the document and token hashes ``build``
    makes, and (``follow``) run the after-commit step; a failure gives the admitted place back at once."""
    live_games.admit_game(ctx.conn, ctx.cfg, client, game_id)
    try:
        doc, hashes = build()
        # whose AI work the game's AI seats are (service.fairplay.ai_share): the creator's address
        doc["creator"] = client
        game = ctx.store.create(game_id, doc, hashes, live_index=client_games_key(client))
    except BaseException:
        discard(ctx, client, game_id)
        raise
    if follow:
        _after_commit(ctx, None, game)
    return game


def create(ctx: Context, *, rules: str, seats: list[dict[str, Any]], options: Mapping[str, Any],
           seed: int | None, public_seed: bool, clock_settings: dict[str, Any] | None,
           client: str) -> tuple[Game, dict[str, str], str]:
    """A new game: ``(game, seat tokens by seat, admin token)``.  ``seats``: ``{"kind", "name"?, "engine"?,
    "params"?}`` each, AI parameters already checked."""
    rs = engine.get_rules(rules)
    seed = seeds.new_seed() if seed is None else seed
    dealt = seeds.engine_seed(ctx.conn, ctx.cfg, seed, public_seed)
    state = rs.new(len(seats), dealt, options)
    metas = [{"seat": i, "name": s.get("name") or f"seat {i}", "kind": s["kind"],
              "engine": s.get("engine") if s["kind"] == "ai" else None,
              "params": dict(s.get("params") or {}) if s["kind"] == "ai" else {}} for i, s in enumerate(seats)]
    game_id = new_game_id()
    tokens = {str(i): auth.new_token(game_id) for i, s in enumerate(metas) if s["kind"] == "human"}
    admin = auth.new_token(game_id)

    def build() -> tuple[dict[str, Any], dict[str, str]]:
        doc = _document(game_id, rs.id, state, seed, dealt, public_seed, metas, clock_settings)
        # a game with no open seat starts now: the first seat's clock (if it has one) runs from its creation
        clock.restart(doc, state.to_move, now_ms(), all(s["kind"] != "open" for s in metas))
        hashes = {k: auth.token_hash(t) for k, t in tokens.items()}
        hashes[auth.ADMIN] = auth.token_hash(admin)
        return doc, hashes

    return _store_new(ctx, client, game_id, build), tokens, admin


# --------------------------------------------------------------------------- moves

def is_retry(game: Game, seat: int, spec: str | Mapping[str, Any]) -> bool:
    """Is ``spec`` by ``seat`` the very move that produced the current version?"""
    last = game.doc.get("last_move")
    if not last or last["seat"] != seat or last["version"] != game.version - 1:
        return False
    if spec == last["move"]:
        return True
    if isinstance(spec, Mapping):
        # a move object is recognised by its id (the stored move is its id alone)
        return bool(spec.get("id") == last["move"])
    if isinstance(spec, str):
        try:
            return bool(game.state.canonical_move_id(spec) == last["move"])
        except ValueError:
            return False
    return False


def play(ctx: Context, game_id: str, seat: int, spec: str | Mapping[str, Any], version: int | None = None,
         game: Game | None = None) -> tuple[Game, bool]:
    """Play ``spec`` (a move id or move object) for ``seat``: ``(game after, applied)``; ``applied`` is False
    for an idempotent retry of the move that produced the current version.

    The move is pinned to ``version`` (or, without one, to the version first read): a move that loses the
    race to another change is a ``VersionConflict`` unless the winner was this very move.  Raises
    ``GameNotFound``, ``VersionConflict``, ``NotStarted``, ``NotYourTurn``, ``TimeUp`` (after carrying out
    the timeout), and the engine's ``InvalidMove``/``IllegalMove``.  Nothing is written unless the move is
    applied."""
    pinned: list[int | None] = [version]

    def decide(game: Game) -> Change | None:
        expected = pinned[0]
        if expected is not None and expected != game.version:
            if expected == game.version - 1 and is_retry(game, seat, spec):
                return None
            raise VersionConflict(expected, game.version)
        pinned[0] = game.version
        state = game.state
        if game.waiting:
            raise NotStarted(game.open_seats)
        if state.to_move != seat:
            if expected is None and is_retry(game, seat, spec):
                return None
            raise NotYourTurn(seat, state.to_move)
        try:
            move = state.find_move(spec)
        except IllegalMove:
            if expected is None and is_retry(game, seat, spec):
                return None
            raise
        now = now_ms()
        if clock.expired(game.doc, seat, now):
            raise TimeUp(seat, game.version)
        state = state.clone()  # the read state may be shared through the parse cache
        events = state.play(move)
        doc = dict(game.doc)
        # only the canonical move id is kept, never what the client sent (a move object's extra bytes must
        # not live as long as the game)
        doc["last_move"] = {"seat": seat, "move": move.id, "version": game.version}
        clock.after_move(doc, seat, state, now)
        return Change(doc, state, events, move=move.id, mover=seat)

    try:
        return _change(ctx, game_id, decide, game)
    except TimeUp as e:
        # the flag fell before the scheduled timeout ran: carry it out now, then refuse the move
        done = time_out(ctx, game_id, e.version)
        raise TimeUp(seat, done["version"] if done["version"] is not None else e.version) from None


def ai_turn(ctx: Context, game_id: str, version: int, attempt: int = 0,
            started: Callable[[str], None] | None = None,
            searched: Callable[[float], None] | None = None) -> dict[str, Any]:
    """The AI seat to move at ``version`` moves (``attempt``: the step of the fallback chain,
    :data:`service.queues.CHAIN`); ``started(engine id)`` is told the engine before it searches,
    ``searched(milliseconds)`` how long the search took (the AI budget gives back the rest; 0 when the job
    finds nothing to search for: it is stale, and its whole charge goes back).  Answers
    ``{"outcome": "played" | "stale", "version", "engine"}`` -- never the move or the search statistics,
    which could show the AI seat's hidden tiles."""
    try:
        game = ctx.store.get(game_id)
    except GameNotFound:
        if searched is not None:
            searched(0.0)
        return {"outcome": "stale", "version": None, "engine": None}
    seat = game.state.to_move if game.version == version else None
    if seat is None or not game.is_ai(seat):
        if searched is not None:
            searched(0.0)
        return {"outcome": "stale", "version": game.version, "engine": None}
    engine_id, params = queues.engine_for(game, seat, attempt)
    if started is not None:
        started(engine_id)
    decision = ai.decide(engine_id, game.state, seat, params,
                         queues.derive_seed(queues.engine_seed(game), version, attempt))
    if searched is not None:
        searched(float((decision.stats or {}).get("elapsed_ms", 0)))
    try:
        after, _ = play(ctx, game_id, seat, decision.move.id, version, game)
    except (VersionConflict, NotYourTurn, GameNotFound):
        metrics.record_ai_job(ctx.conn, engine_id, "stale")
        return {"outcome": "stale", "version": ctx.store.version(game_id), "engine": engine_id}
    metrics.record_ai_job(ctx.conn, engine_id, "played")
    return {"outcome": "played", "version": after.version, "engine": engine_id}


def time_out(ctx: Context, game_id: str, version: int) -> dict[str, Any]:
    """Carry out the timeout of the seat to move at ``version``: ``{"outcome", "version"}`` with outcome
    ``timeout`` (done), ``stale`` (the game moved on, or someone else did it) or ``early`` (the deadline is
    still ahead: a scheduler on a machine whose clock runs ahead; it waits up to :data:`EARLY_WAIT_MS`).

    By the clock's ``on_timeout``: ``"move"`` -- :data:`TIMEOUT_ENGINE` makes the seat's move from what the
    seat may see (a ``timeout`` event comes before the move's own); ``"forfeit"`` -- the seat resigns."""
    outcome = {"outcome": "stale"}

    def decide(game: Game) -> Change | None:
        due = clock.deadline(game.doc)
        if game.version != version or due is None or game.state.finished:
            return None
        now = now_ms()
        if now < due:
            if due - now > EARLY_WAIT_MS:
                outcome["outcome"] = "early"
                return None
            time.sleep((due - now) / 1000)
            now = now_ms()
        seat = game.doc["clocks"]["running"]
        state = game.state.clone()
        doc = dict(game.doc)
        if game.doc["clock"]["on_timeout"] == "forfeit":
            doc["clocks"] = {**copy.deepcopy(doc["clocks"]), "running": None, "since": None}
            doc["clocks"]["remaining"][seat] = 0
            return Change(doc, state, [event("timeout", seat, action="forfeit"), *state.resign(seat)],
                          move="resign", mover=seat)
        decision = ai.decide(TIMEOUT_ENGINE, game.state, seat, {},
                             queues.derive_seed(queues.engine_seed(game), version, "timeout"))
        events = [event("timeout", seat, action="move", engine=TIMEOUT_ENGINE), *state.play(decision.move)]
        doc["last_move"] = {"seat": None, "move": decision.move.id, "version": version}
        clock.after_move(doc, seat, state, max(now, due))
        doc["clocks"]["remaining"][seat] = int(doc["clock"]["increment_ms"])
        return Change(doc, state, events, move=decision.move.id, mover=seat)

    try:
        after, done = _change(ctx, game_id, decide)
    except GameNotFound:
        return {"outcome": "stale", "version": None}
    if done:
        return {"outcome": "timeout", "version": after.version}
    return {"outcome": outcome["outcome"], "version": after.version}


def suggest(ctx: Context, game: Game, seat: int, engine_id: str, params: dict[str, Any], workers: int,
            seed: int | None, version: int | None, client: str, address: str | None = None) -> Job:
    """Queue a move suggestion for ``seat``, the seat to move, charged to the AI budgets of the game, of
    ``client`` (the token) and of ``address`` (``BudgetSpent`` when one cannot pay; nothing is queued then),
    and queued in ``address``'s share of the AI work (service.fairplay.ai_share).  Changes no table."""
    if version is not None and version != game.version:
        raise VersionConflict(version, game.version)
    if game.waiting:
        raise NotStarted(game.open_seats)
    if game.state.to_move != seat:
        raise NotYourTurn(seat, game.state.to_move)
    charged = budget.charge(ctx.conn, ctx.cfg, game.id, client, params, workers, address=address)
    seed = seeds.new_seed() if seed is None else seed
    return queues.enqueue_suggestion(ctx.conn, game, seat, engine_id, params, workers, seed, ctx.request_id,
                                     cfg=ctx.cfg, charged=charged, share=address or client)


def suggestion(ctx: Context, game_id: str, version: int, seat: int, engine_id: str, params: Mapping[str, Any],
               seed: int, charged: Mapping[str, Any] | None) -> ai.Decision | dict[str, Any]:
    """The AI's suggestion for ``seat`` at ``version`` (``{"outcome": "stale", "version"}`` once the game has
    moved on); what the search did not use of ``charged`` goes back to the AI budgets."""
    try:
        game = ctx.store.get(game_id)
    except GameNotFound:
        return {"outcome": "stale", "version": None}
    if game.version != version or game.state.to_move != seat:
        return {"outcome": "stale", "version": game.version}
    decision = ai.decide(engine_id, game.state, seat, dict(params), seed)
    budget.refund_unused(ctx.conn, charged, float((decision.stats or {}).get("elapsed_ms", 0)))
    metrics.record_ai_job(ctx.conn, engine_id, "suggested")
    return decision


def merged_suggestion(ctx: Context, game_id: str, engine_id: str, parts: list[Any]) -> dict[str, Any]:
    """The suggestion of a split search: the root statistics of the parts that finished (``parts``: their
    results) combined by ``ai.merge``; a stale answer when every part found the game moved on."""
    decisions = [p for p in parts if isinstance(p, ai.Decision)]
    if not decisions:
        stale = next((p for p in reversed(parts) if isinstance(p, dict)), None)
        if stale is not None:
            return stale
        raise RuntimeError("every part of the suggestion failed")
    return decision_json(ai.merge(decisions, ctx.store.get(game_id).state), engine_id)


def decision_json(decision: Any, engine_id: str) -> dict[str, Any]:
    """A suggestion job's result: the move and the search statistics, for the seat that asked only."""
    return {"outcome": "suggested", "move": decision.move.to_dict(), "engine": engine_id,
            "stats": dict(decision.stats or {})}


# --------------------------------------------------------------------------- seats and the end

def _seat_taken_events(seats: list[dict[str, Any]], seat: int, doc: dict[str, Any], to_move: int | None
                       ) -> list[Event]:
    """The ``join`` event of ``seat``, and the ``start`` of the game (its first clock) when no seat is left
    open or unclaimed."""
    events = [event("join", seat, name=seats[seat]["name"])]
    if not any(m["kind"] == "open" or m.get("claim") for m in seats):
        clock.restart(doc, to_move, now_ms(), True)
        events.append(event("start", None))
    return events


def join(ctx: Context, game_id: str, seat: int, name: str | None, game: Game | None = None) -> tuple[Game, str]:
    """Take the open ``seat``: ``(game after, the seat's token)``.  Of any number of concurrent joins of one
    seat exactly one lands (the seat's metadata is written by the compare-and-set); the others find the seat
    taken (``SeatTaken``)."""
    token = auth.new_token(game_id)

    def decide(game: Game) -> Change:
        if game.state.finished:
            raise GameOver()
        meta = game.doc["seats"][seat]
        if meta["kind"] != "open":
            raise SeatTaken(f"seat {seat} is not open (it is taken or was never open)")
        seats = [dict(m) for m in game.doc["seats"]]
        seats[seat] = {**meta, "kind": "human", "joined": True, "name": name or meta["name"],
                       "token_sha256": auth.token_hash(token)}
        doc = {**game.doc, "seats": seats}
        return Change(doc, game.state, _seat_taken_events(seats, seat, doc, game.state.to_move))

    after, _ = _change(ctx, game_id, decide, game)
    return after, token


def resign(ctx: Context, game_id: str, seat: int, game: Game | None = None) -> Game:
    """``seat`` resigns (``State.resign``: the rule set's result); the clocks stop.  ``GameOver`` once the
    match has ended."""

    def decide(game: Game) -> Change:
        if game.state.finished:
            raise GameOver()
        state = game.state.clone()
        events = state.resign(seat)
        doc = dict(game.doc)
        clock.charge(doc, seat, now_ms())
        clock.restart(doc, None, now_ms(), False)
        return Change(doc, state, events, move="resign", mover=seat)

    return _change(ctx, game_id, decide, game)[0]


def delete(ctx: Context, game_id: str) -> None:
    """Remove the game, everything stored for it and its queued jobs."""
    queues.delete_jobs(ctx.conn, ctx.store.delete(game_id))
    Lobby(ctx.store).unlist(game_id, *engine.RULES)


def discard(ctx: Context, client: str, game_id: str) -> None:
    """Take back a game that was admitted but is not to be kept (also when it was never stored)."""
    live_games.release_game(ctx.conn, client, game_id)
    delete(ctx, game_id)


# --------------------------------------------------------------------------- rematch

def _rotated_seed(ctx: Context, rs: RuleSet, options: dict[str, Any], players: int,
                  first: int | None) -> tuple[int, int, State]:
    """A fresh ``(seed, engine seed, state dealt from it)`` (``service.fairplay.seeds``: the engine seed is
    new randomness for each game) whose deal makes the seat after ``first`` the first to act."""
    want = None if first is None else (first + 1) % players
    for _ in range(ROTATION_TRIES):
        seed = seeds.new_seed()
        dealt = seeds.engine_seed(ctx.conn, ctx.cfg, seed)
        state = rs.new(players, dealt, options)
        if want is None or state.to_move == want:
            break
    return seed, dealt, state


def _create_rematch(ctx: Context, old: Game, client: str) -> Game:
    doc = old.doc
    rs = engine.get_rules(doc["rules"])
    players = len(doc["seats"])
    first = rs.new(players, old.state.seed, doc["options"]).to_move  # the old game's first player
    seed, dealt, state = _rotated_seed(ctx, rs, doc["options"], players, first)
    seats = []
    for i, m in enumerate(doc["seats"]):
        meta: dict[str, Any] = {"seat": i, "name": m.get("name") or f"seat {i}", "kind": m["kind"],
                                "engine": m.get("engine"), "params": dict(m.get("params") or {})}
        if m["kind"] == "human":
            meta["claim"] = True  # kept for the seat's player, who claims it with its own rematch call
        seats.append(meta)
    game_id = new_game_id()

    def build() -> tuple[dict[str, Any], dict[str, str]]:
        new_doc = _document(game_id, rs.id, state, seed, dealt, False, seats, doc.get("clock"), rematch_of=old.id)
        return new_doc, ({auth.ADMIN: old.tokens[auth.ADMIN]} if auth.ADMIN in old.tokens else {})

    # followed by the after-commit step once it is linked: a rematch that loses the race is not counted
    return _store_new(ctx, client, game_id, build, follow=False)


def rematch(ctx: Context, old: Game, seat: int, old_token: str, client: str,
            derive_token: Callable[[str, str], str]) -> tuple[Game, bool, str]:
    """The rematch of the finished game ``old`` for ``seat``: ``(rematch, created by this call, the seat's
    token for it)``.  The first call creates it and links it to ``old`` by ``old``'s compare-and-set (a
    concurrent loser takes its own back and uses the winner's); every call claims the caller's seat once
    (``derive_token(old token, new id)``: only the holder of the old seat can have it derived)."""
    if not old.state.finished:
        raise NotOver(old.version)
    made: list[Game] = []

    def link(game: Game) -> Change | None:
        if game.doc.get("rematch"):
            return None
        new = _create_rematch(ctx, game, client)
        made[:] = [new]
        return Change({**game.doc, "rematch": new.id}, game.state, [event("rematch", None, game=new.id)],
                      undo=lambda: discard(ctx, client, new.id))

    try:
        linked, created = _change(ctx, old.id, link, old)
        new = made[0] if created else ctx.store.get(linked.doc["rematch"])
    except GameNotFound:
        raise RematchGone() from None
    if created:
        _after_commit(ctx, None, new)
    token = derive_token(old_token, new.id)
    if new.doc["seats"][seat].get("claim"):
        new = _claim(ctx, new, seat, token)
    elif new.tokens.get(str(seat)) != auth.token_hash(token):
        raise SeatTaken(f"seat {seat} of the rematch is not yours to claim")
    return new, created, token


def _claim(ctx: Context, new: Game, seat: int, token: str) -> Game:
    """Give ``seat`` of the rematch its token (once; a repeated call finds it given and changes nothing)."""

    def decide(game: Game) -> Change | None:
        meta = game.doc["seats"][seat]
        if not meta.get("claim"):
            return None
        seats = [dict(m) for m in game.doc["seats"]]
        seats[seat] = {k: v for k, v in meta.items() if k != "claim"}
        seats[seat]["token_sha256"] = auth.token_hash(token)
        doc = {**game.doc, "seats": seats}
        return Change(doc, game.state, _seat_taken_events(seats, seat, doc, game.state.to_move))

    try:
        return _change(ctx, new.id, decide, new)[0]
    except GameNotFound:
        raise RematchGone() from None
