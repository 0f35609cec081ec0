"""``/v1/games/{id}/stream`` and ``/v1/games/{id}/stream-tickets``: the game's
events pushed as Server-Sent Events, and the tickets with which a browser opens a seat's stream.

Who is watching: ``?ticket=`` (from ``POST .../stream-tickets``), or ``Authorization: Bearer`` with a seat
or admin token (curl, servers), or neither: a spectator, who needs no ticket.  Sending both a ticket and a
token is a 422 (which one should win would be a guess).  Where to start: ``Last-Event-ID`` (what
``EventSource`` sends when it reconnects, with the URL it first used) wins over ``?after=``; a number past
the game's last event is a 422 (no client can have seen it); a finished game with nothing left to send
answers 204 (``EventSource`` then stops reconnecting).  Everything is checked, and the subscription made,
before the 200 goes out, so bad input or an unreachable Redis is an ordinary problem document.

Caps (``service.fairplay.streams``): at most ``STREAMS_PER_CLIENT`` open streams per client address (429
beyond) and ``STREAMS_PER_PROCESS`` per API process (503 beyond), checked before anything is subscribed.

Presence (``Store.touch``): a seat's stream records the seat as seen when it opens and at every keep-alive
while it stays open, so ``last_seen_ms`` in the views stays current for a player who only watches.
"""

from __future__ import annotations

from flask import Blueprint, current_app, jsonify, request
from flask.typing import ResponseReturnValue

from service import auth, schemas
from service.api import caller, conn, event_for, no_content, store
from service.fairplay import streams as stream_caps
from service.fairplay.clients import address_key
from service.live import stream, tickets
from service.problems import invalid

bp = Blueprint("streams", __name__, url_prefix="/v1/games")

LAST_EVENT_ID = "Last-Event-ID"


def _start(query: dict[str, int | str]) -> int:
    """Where the stream starts: after ``Last-Event-ID`` when the browser sent one, else after ``?after=``."""
    header = request.headers.get(LAST_EVENT_ID)
    if header is None or header.strip() == "":
        after = query["after"]
        assert isinstance(after, int)
        return after
    text = header.strip()
    if not text.isascii() or not text.isdigit() or len(text) > 10 or int(text) > schemas.MAX_EVENT_NUMBER:
        raise invalid({LAST_EVENT_ID: [f"an event number from 0 to {schemas.MAX_EVENT_NUMBER}"]})
    return int(text)


@bp.get("/<game_id>/stream")
def open_stream(game_id: str) -> ResponseReturnValue:
    # first a place among this process's and this address's open streams (429 / 503 beyond the caps: the
    # cheapest answer, one script, for a client that opens too many), given back when the response closes
    # or when the stream does not open
    lease = stream_caps.admit(conn(), current_app.config, address_key())
    try:
        resp = _open(game_id, lease)
    except BaseException:
        lease.release(conn())
        raise
    if isinstance(resp, tuple):  # 204: nothing to stream
        lease.release(conn())
    return resp


def _open(game_id: str, lease: stream_caps.Lease) -> ResponseReturnValue:
    game = store().get(game_id)
    query = schemas.load(schemas.STREAM_QUERY, request.args.to_dict())
    ticket = query.get("ticket")
    who: int | str | None
    if ticket is not None:
        if "Authorization" in request.headers:
            raise invalid({"ticket": ["send a stream ticket or an Authorization header, not both"]})
        who = tickets.redeem(conn(), game.id, ticket)
    else:
        who = caller(game)
    seat = who if isinstance(who, int) else None
    after = _start(query)
    count = game.last_event[0] if game.last_event else 0
    if after > count:
        field = LAST_EVENT_ID if LAST_EVENT_ID in request.headers else "after"
        raise invalid({field: [f"the game has {count} events so far"]})
    if game.state.finished and after >= count:
        return no_content()
    cfg = current_app.config
    redis_conn = conn()
    sub = stream.subscribe(current_app.extensions["redis_streams"], game.id)
    games = store()
    interval = float(cfg["PRESENCE_INTERVAL_SECONDS"])
    if seat is not None:
        # presence: an open stream of a seat counts as the seat being seen, now (written at once when the
        # seat's last stream had closed since: Store.touch) and at every keep-alive while it stays open
        games.touch(game.id, seat, interval=interval)

    def on_keepalive() -> None:
        if seat is not None:
            games.touch(game.id, seat, interval=interval)

    keepalive = float(cfg["STREAM_KEEPALIVE_SECONDS"])
    body = stream.events(games, sub, game.id, lambda n, ev: event_for(n, ev, seat), after, keepalive,
                         on_keepalive)
    resp = current_app.response_class(stream_caps.renewing(redis_conn, lease, body, keepalive),
                                      mimetype="text/event-stream")
    # closed with the response too: a client gone before the first chunk never starts the generator
    resp.call_on_close(sub.close)
    resp.call_on_close(lambda: lease.release(redis_conn))
    if seat is not None:
        # the seat's stream closed (its tab too, most often): it stops counting as present at its table
        resp.call_on_close(lambda: games.leave(game.id, seat))
    resp.headers["Cache-Control"] = "no-cache"
    # nginx and similar proxies would otherwise buffer the stream
    resp.headers["X-Accel-Buffering"] = "no"
    return resp


@bp.post("/<game_id>/stream-tickets")
def create_ticket(game_id: str) -> ResponseReturnValue:
    game = store().get(game_id)
    who = caller(game, required=True)
    assert who is not None
    ttl = int(current_app.config["STREAM_TICKET_TTL_SECONDS"])
    ticket = tickets.issue(conn(), game.id, who, ttl)
    resp = jsonify({"ticket": ticket, "game": game.id, "seat": None if who == auth.ADMIN else who,
                    "expires_in": ttl, "stream": f"/v1/games/{game.id}/stream?ticket={ticket}"})
    resp.status_code = 201
    resp.headers["Cache-Control"] = "no-store"
    return resp
