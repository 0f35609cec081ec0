"""The push stream and its tickets: ``GET /v1/games/{id}/stream`` sends every event as
``GET /events`` gives the same viewer, numbered the same, resumes from ``Last-Event-ID``/``?after=`` with
nothing lost or doubled, keeps the line alive, ends with the game; tickets open it for a browser; bad input
is a 4xx problem that changes nothing.  Streams are read incrementally through the Flask test client
(``buffered=False``); tests/test_e2e.py does the same over a real gunicorn."""

from __future__ import annotations

import random
import time

import pytest
from api_support import bearer, check_schema, create, humans, sse_frames, tokens_by_seat

from service import errors
from service import store as store_module
from service.live import tickets

pytest_plugins = ["api_fixtures"]

#: short keep-alives so that reading a quiet stream never blocks for long
KEEPALIVE = 0.1


@pytest.fixture(autouse=True)
def _short_keepalive(monkeypatch):
    monkeypatch.setenv("TILEHOUSE_STREAM_KEEPALIVE_SECONDS", str(KEEPALIVE))


class Stream:
    """An open stream read frame by frame."""

    def __init__(self, resp) -> None:
        assert resp.status_code == 200, (resp.status_code, resp.get_data(as_text=True))
        assert resp.mimetype == "text/event-stream"
        self.resp = resp
        self.frames = sse_frames(resp.response)
        first = next(self.frames)
        assert first == {"retry": 3000}

    def events(self, count: int, max_quiet: int = 50) -> list[dict]:
        """The next ``count`` events (keep-alives skipped; fails after ``max_quiet`` of them in a row)."""
        out, quiet = [], 0
        while len(out) < count:
            frame = next(self.frames)
            if "comment" in frame:
                quiet += 1
                assert quiet <= max_quiet, f"only {len(out)} of {count} events arrived"
                continue
            quiet = 0
            check_schema("Event", frame["data"])
            assert frame["id"] == str(frame["data"]["n"]) and frame["event"] == frame["data"]["type"]
            out.append(frame["data"])
        return out

    def rest(self, max_quiet: int = 50) -> list[dict]:
        """Every event until the server ends the stream (fails after ``max_quiet`` keep-alives in a row)."""
        out, quiet = [], 0
        for frame in self.frames:
            if "comment" in frame:
                quiet += 1
                assert quiet <= max_quiet, f"the stream did not end (after {len(out)} events)"
                continue
            quiet = 0
            out.append(frame["data"])
        return out

    def close(self) -> None:
        self.resp.close()


def _play(client, game_id: str, toks: dict[int, str], rng: random.Random, moves: int) -> None:
    for _ in range(moves):
        view = client.get(f"/v1/games/{game_id}").get_json()
        if view["status"] == "finished":
            return
        h = bearer(toks[view["to_move"]])
        legal = client.get(f"/v1/games/{game_id}/moves", headers=h).get_json()
        assert client.post(f"/v1/games/{game_id}/moves", json={"move": rng.choice(legal)["id"]},
                           headers=h).status_code == 200


def _events(client, game_id: str, h: dict[str, str], after: int = 0) -> list[dict]:
    return client.get(f"/v1/games/{game_id}/events?after={after}", headers=h).get_json()


@pytest.fixture
def kozel(client):
    created = create(client, "kozel", humans(2), seed=11)
    return created["game"]["id"], tokens_by_seat(created), created["admin_token"]


def test_a_seat_stream_sends_the_backlog_then_each_new_event_as_get_events_gives_that_seat(client, kozel):
    game_id, toks, _ = kozel
    rng = random.Random(1)
    _play(client, game_id, toks, rng, 3)
    backlog = _events(client, game_id, bearer(toks[1]))
    stream = Stream(client.get(f"/v1/games/{game_id}/stream", headers=bearer(toks[1]), buffered=False))
    assert stream.events(len(backlog)) == backlog
    for _ in range(4):
        _play(client, game_id, toks, rng, 1)
        new = _events(client, game_id, bearer(toks[1]), after=backlog[-1]["n"])
        assert new and stream.events(len(new)) == new
        backlog += new
    stream.close()


def test_a_quiet_stream_sends_keep_alive_comments(client, kozel):
    game_id, _, _ = kozel
    stream = Stream(client.get(f"/v1/games/{game_id}/stream", buffered=False))
    started = time.monotonic()
    assert next(stream.frames) == {"comment": "keep-alive"}
    assert next(stream.frames) == {"comment": "keep-alive"}
    assert time.monotonic() - started >= KEEPALIVE
    stream.close()


def test_last_event_id_wins_over_after_and_resumes_with_nothing_lost_or_doubled(client, kozel):
    game_id, toks, _ = kozel
    rng = random.Random(2)
    _play(client, game_id, toks, rng, 6)
    every = _events(client, game_id, {})
    assert len(every) >= 6
    first = Stream(client.get(f"/v1/games/{game_id}/stream?after=0", buffered=False))
    seen = first.events(3)
    first.close()  # the connection drops; EventSource reconnects with the same URL and Last-Event-ID
    _play(client, game_id, toks, rng, 2)
    again = Stream(client.get(f"/v1/games/{game_id}/stream?after=0", buffered=False,
                              headers={"Last-Event-ID": seen[-1]["n"]}))
    total = _events(client, game_id, {})
    seen += again.events(len(total) - 3)
    assert seen == total and [e["n"] for e in seen] == list(range(1, len(total) + 1))
    again.close()
    by_query = Stream(client.get(f"/v1/games/{game_id}/stream?after=4", buffered=False))
    assert by_query.events(len(total) - 4) == total[4:]
    by_query.close()


def test_an_event_committed_right_after_the_backlog_read_still_arrives(app, client, kozel, monkeypatch):
    """The stream subscribes before it reads the backlog, so a commit between that read and the wait is
    announced to it: here every backlog read is followed at once by a move, before the stream waits."""
    game_id, toks, _ = kozel
    rng = random.Random(3)
    real_events = store_module.Store.events
    moved: list[int] = []

    def events_then_a_move(self, gid, after=0):
        out = real_events(self, gid, after)
        if len(moved) < 2:
            moved.append(after)
            _play(client, game_id, toks, rng, 1)
        return out

    monkeypatch.setattr(store_module.Store, "events", events_then_a_move)
    stream = Stream(client.get(f"/v1/games/{game_id}/stream", buffered=False))
    got = stream.events(2)
    monkeypatch.setattr(store_module.Store, "events", real_events)
    assert got == _events(client, game_id, {})[:2] and len(moved) == 2
    stream.close()


def test_the_stream_ends_after_the_last_event_and_a_reconnect_to_the_finished_game_is_204(client, kozel):
    game_id, toks, _ = kozel
    rng = random.Random(4)
    stream = Stream(client.get(f"/v1/games/{game_id}/stream", headers=bearer(toks[0]), buffered=False))
    _play(client, game_id, toks, rng, 10_000)
    assert client.get(f"/v1/games/{game_id}").get_json()["status"] == "finished"
    total = _events(client, game_id, bearer(toks[0]))
    assert stream.rest() == total  # every event, then the server closed the stream
    last = total[-1]["n"]
    done = client.get(f"/v1/games/{game_id}/stream", headers={"Last-Event-ID": str(last)})
    assert done.status_code == 204 and done.get_data() == b"" and "Content-Type" not in done.headers
    tail = Stream(client.get(f"/v1/games/{game_id}/stream?after={last - 2}", buffered=False))
    assert tail.rest() == total[-2:]


def test_deleting_the_game_ends_its_open_streams(client, kozel):
    game_id, _, admin = kozel
    stream = Stream(client.get(f"/v1/games/{game_id}/stream", buffered=False))
    assert client.delete(f"/v1/games/{game_id}", headers=bearer(admin)).status_code == 204
    assert stream.rest() == []


def test_a_dropped_subscription_ends_the_stream_and_a_resume_misses_nothing(client, kozel, redis_conn):
    """redis-py would silently reconnect a dropped subscription and lose what was published meanwhile; the
    stream ends instead, and the client's reconnect with Last-Event-ID picks up every event."""
    game_id, toks, _ = kozel
    rng = random.Random(8)
    _play(client, game_id, toks, rng, 2)
    stream = Stream(client.get(f"/v1/games/{game_id}/stream", buffered=False))
    seen = stream.events(2)
    assert redis_conn.client_kill_filter(_type="pubsub") >= 1
    _play(client, game_id, toks, rng, 2)  # published while no subscription listens
    assert stream.rest() == []  # ended, without a traceback or a half-written event
    again = Stream(client.get(f"/v1/games/{game_id}/stream", buffered=False,
                              headers={"Last-Event-ID": str(seen[-1]["n"])}))
    total = _events(client, game_id, {})
    assert seen + again.events(len(total) - 2) == total
    again.close()


# --------------------------------------------------------------------------- tickets

def _ticket(client, game_id: str, token: str) -> dict:
    r = client.post(f"/v1/games/{game_id}/stream-tickets", headers=bearer(token))
    assert r.status_code == 201 and r.headers["Cache-Control"] == "no-store"
    return r.get_json()


def test_a_seat_ticket_opens_that_seats_stream_and_serves_reconnects_within_its_life(app, client, kozel):
    game_id, toks, _ = kozel
    _play(client, game_id, toks, random.Random(5), 4)
    body = _ticket(client, game_id, toks[1])
    assert body["seat"] == 1 and body["game"] == game_id and body["expires_in"] == 60
    assert body["stream"] == f"/v1/games/{game_id}/stream?ticket={body['ticket']}"
    mine = _events(client, game_id, bearer(toks[1]))
    for _ in range(2):  # the same URL again, as EventSource does on a reconnect
        stream = Stream(client.get(body["stream"], buffered=False))
        assert stream.events(len(mine)) == mine
        stream.close()
    # stored hashed, with the ticket's life as its TTL, under the game's hash tag
    conn = app.extensions["redis"]
    keys = [k.decode() for k in conn.keys(f"th:game:{{{game_id}}}:ticket:*")]
    assert len(keys) == 1 and body["ticket"] not in keys[0] and body["ticket"].split(".")[1] not in keys[0]
    assert conn.get(keys[0]) == b"1" and 0 < conn.ttl(keys[0]) <= 60


def test_a_seat_stream_keeps_the_seat_seen_while_it_is_open(app, client, kozel, monkeypatch):
    monkeypatch.setitem(app.config, "PRESENCE_INTERVAL_SECONDS", 0.05)
    game_id, toks, admin = kozel
    store = app.extensions["store"]
    ticket = _ticket(client, game_id, toks[1])
    asked = store.get(game_id).seen["1"]  # asking for the ticket was a request with the seat's token
    time.sleep(0.06)
    stream = Stream(client.get(ticket["stream"], buffered=False))
    opened = store.get(game_id).seen["1"]
    assert opened > asked  # opening the stream with the ticket
    time.sleep(0.06)
    assert next(stream.frames) == {"comment": "keep-alive"}
    assert store.get(game_id).seen["1"] > opened  # refreshed by the keep-alive
    stream.close()
    spectator = Stream(client.get(_ticket(client, game_id, admin)["stream"], buffered=False))
    assert next(spectator.frames) == {"comment": "keep-alive"}
    assert set(store.get(game_id).seen) == {"1"}  # the admin and spectators are no seat
    spectator.close()
    view = client.get(f"/v1/games/{game_id}").get_json()
    assert view["seats"][1]["last_seen_ms"] == store.get(game_id).seen["1"]


def test_an_admin_ticket_opens_the_spectator_view(client, kozel):
    game_id, toks, admin = kozel
    _play(client, game_id, toks, random.Random(6), 4)
    body = _ticket(client, game_id, admin)
    assert body["seat"] is None
    public = _events(client, game_id, {})
    stream = Stream(client.get(body["stream"], buffered=False))
    assert stream.events(len(public)) == public
    stream.close()


def test_an_expired_ticket_is_a_401_problem(make_app, kozel):
    client = make_app(STREAM_TICKET_TTL_SECONDS=1).test_client()
    game_id, toks, _ = kozel
    ticket = _ticket(client, game_id, toks[0])
    assert ticket["expires_in"] == 1
    time.sleep(1.2)
    r = client.get(ticket["stream"])
    assert r.status_code == 401 and r.get_json()["type"].endswith(":bad-ticket")


def _snapshot(conn) -> dict:
    return {k: conn.dump(k) for k in sorted(conn.keys("th:*"))}


def test_bad_stream_and_ticket_requests_are_4xx_problems_that_change_nothing(app, client, kozel):
    game_id, toks, admin = kozel
    _play(client, game_id, toks, random.Random(7), 2)
    other = create(client, "kozel", humans(2), seed=12)
    other_ticket = _ticket(client, other["game"]["id"], other["seats"][0]["token"])["ticket"]
    own_ticket = _ticket(client, game_id, toks[0])["ticket"]
    count = len(_events(client, game_id, {}))
    conn = app.extensions["redis"]
    before = _snapshot(conn)
    url = f"/v1/games/{game_id}/stream"
    cases = [
        (client.get(f"{url}?ticket={other_ticket}"), 403, "foreign-ticket"),
        (client.get(f"{url}?ticket={game_id}.nope"), 401, "bad-ticket"),
        (client.get(f"{url}?ticket=x"), 401, "bad-ticket"),
        (client.get(f"{url}?ticket={'a' * 513}"), 422, "invalid"),
        (client.get(f"{url}?ticket={own_ticket}", headers=bearer(toks[0])), 422, "invalid"),
        (client.get(f"{url}?ticket={toks[0]}"), 401, "bad-ticket"),  # a seat token is no ticket
        (client.get(url, headers=bearer(other["seats"][0]["token"])), 403, "foreign-token"),
        (client.get(url, headers=bearer("nope")), 401, "unauthorized"),
        (client.get(f"{url}?after=-1"), 422, "invalid"),
        (client.get(f"{url}?after=two"), 422, "invalid"),
        (client.get(f"{url}?after=2147483648"), 422, "invalid"),
        (client.get(f"{url}?after={count + 1}"), 422, "invalid"),
        (client.get(f"{url}?colour=red"), 422, "invalid"),
        (client.get(url, headers={"Last-Event-ID": "x"}), 422, "invalid"),
        (client.get(url, headers={"Last-Event-ID": str(count + 1)}), 422, "invalid"),
        (client.get("/v1/games/ffffffffffffffff/stream"), 404, "not-found"),
        (client.post(f"/v1/games/{game_id}/stream-tickets"), 401, "unauthorized"),
        (client.post(f"/v1/games/{game_id}/stream-tickets", headers=bearer("nope")), 401, "unauthorized"),
        (client.post(f"/v1/games/{game_id}/stream-tickets", headers=bearer(other["admin_token"])), 403,
         "foreign-token"),
        (client.post("/v1/games/ffffffffffffffff/stream-tickets", headers=bearer(admin)), 404, "not-found"),
        (client.put(f"/v1/games/{game_id}/stream-tickets"), 405, "method-not-allowed"),
    ]
    for r, status, slug in cases:
        assert r.status_code == status, (r.request.url, r.status_code, r.get_data(as_text=True))
        assert r.mimetype == "application/problem+json" and r.get_json()["type"].endswith(":" + slug)
    assert _snapshot(conn) == before
    for field in ("after", "Last-Event-ID"):
        assert any(field in (r.get_json().get("errors") or {}) for r, _, _ in cases)


def test_a_ticket_of_one_game_is_never_looked_up_under_another(redis_conn):
    ticket = tickets.issue(redis_conn, "aaaa", 0, 30)
    assert tickets.redeem(redis_conn, "aaaa", ticket) == 0
    with pytest.raises(errors.Forbidden) as refused:
        tickets.redeem(redis_conn, "bbbb", ticket)
    assert refused.value.slug == "foreign-ticket"
