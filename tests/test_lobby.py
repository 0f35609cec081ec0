"""Open seats, joining, the lobby and presence, through the Flask test client
(every answer validated against openapi.yaml), a real Redis and a real RQ worker."""

from __future__ import annotations

import threading

import pytest
from api_support import bearer, cheap_ai, create, humans, tokens_by_seat

from service import keys
from service import store as store_module

pytest_plugins = ["api_fixtures"]

OPEN = {"kind": "open"}


def _state(conn, game_id: str) -> tuple:
    """Everything stored for a game except presence (which any successful request may write)."""
    return ({k: v for k, v in conn.hgetall(store_module.game_key(game_id)).items() if k != b"seen"},
            conn.lrange(store_module.events_key(game_id), 0, -1), conn.zrange(keys.lobby_key(), 0, -1),
            conn.llen("rq:queue:play"))


def _problem(r, status: int, slug: str) -> dict:
    assert r.status_code == status, r.get_data(as_text=True)
    body = r.get_json(force=True)
    assert r.headers["Content-Type"].startswith("application/problem+json")
    assert body["type"] == f"urn:tilehouse:problem:{slug}", body
    return body


def test_a_game_with_an_open_seat_waits_and_its_creation_answer_gives_the_join_link(app, client):
    created = create(client, "kozel", [{"kind": "human", "name": "Ann"}, OPEN], seed=5)
    game = created["game"]
    assert game["status"] == "waiting" and game["legal_moves"] == [] and game["ai"]["pending"] is False
    assert created["join"] == [{"seat": 1, "url": f"/v1/games/{game['id']}/seats/1/join", "code": game["id"]}]
    assert [s["seat"] for s in created["seats"]] == [0]  # no token for the open seat
    assert game["seats"][1]["kind"] == "open" and game["seats"][1]["taken"] is False
    assert game["seats"][1]["join"] == created["join"][0]["url"]


def test_moving_before_every_seat_is_taken_is_a_409_and_changes_nothing(app, client):
    conn = app.extensions["redis"]
    for seed in range(1, 30):
        created = create(client, "kozel", [{"kind": "human"}, OPEN], seed=seed, public_seed=True)
        if created["game"]["to_move"] == 0:
            break
    else:
        raise AssertionError("no seed lets the human seat move first")
    game_id = created["game"]["id"]
    h = bearer(tokens_by_seat(created)[0])
    before = _state(conn, game_id)
    assert client.get(f"/v1/games/{game_id}/moves", headers=h).get_json() == []
    body = _problem(client.post(f"/v1/games/{game_id}/moves", json={"move": "draw"}, headers=h), 409, "not-started")
    assert body["open_seats"] == [1]
    _problem(client.post(f"/v1/games/{game_id}/suggestions", json={}, headers=h), 409, "not-started")
    assert _state(conn, game_id) == before


def test_no_ai_seat_moves_while_the_game_waits_and_the_last_join_starts_it(app, client, drain):
    conn = app.extensions["redis"]
    for seed in range(1, 40):
        created = create(client, "kozel", [cheap_ai("random"), OPEN, cheap_ai("random")], seed=seed,
                         public_seed=True)
        if created["game"]["to_move"] == 0:
            break
    else:
        raise AssertionError("no seed lets the first AI seat move first")
    game_id = created["game"]["id"]
    assert created["game"]["ai"] == {"pending": False, "job": None}
    drain()
    client.get(f"/v1/games/{game_id}")  # the watchdog must not queue a move either
    drain()
    assert client.get(f"/v1/games/{game_id}").get_json()["version"] == 0
    assert conn.llen("rq:queue:play") == 0
    joined = client.post(f"/v1/games/{game_id}/seats/1/join", json={"name": "Bob"})
    assert joined.status_code == 200
    body = joined.get_json()
    assert body["seat"] == 1 and body["game"]["status"] == "active" and body["game"]["you"] == 1
    assert body["game"]["seats"][1] == {**body["game"]["seats"][1], "kind": "human", "joined": True,
                                        "name": "Bob", "taken": True, "join": None}
    assert body["game"]["ai"]["pending"] is True
    drain()
    view = client.get(f"/v1/games/{game_id}", headers=bearer(body["token"])).get_json()
    assert view["version"] >= 2 and view["you"] == 1
    events = client.get(f"/v1/games/{game_id}/events").get_json()
    assert [(e["type"], e["seat"]) for e in events[:2]] == [("join", 1), ("start", None)]
    assert events[0]["data"] == {"name": "Bob"}


def test_joining_a_taken_seat_is_a_409_and_changes_nothing(app, client):
    conn = app.extensions["redis"]
    created = create(client, "tiengow", [{"kind": "human"}, OPEN, OPEN, cheap_ai("random")], seed=3)
    game_id = created["game"]["id"]
    first = client.post(f"/v1/games/{game_id}/seats/1/join")
    assert first.status_code == 200 and first.get_json()["game"]["status"] == "waiting"
    before = _state(conn, game_id)
    _problem(client.post(f"/v1/games/{game_id}/seats/1/join", json={"name": "Eve"}), 409, "seat-taken")
    _problem(client.post(f"/v1/games/{game_id}/seats/0/join"), 409, "seat-taken")  # a human seat
    _problem(client.post(f"/v1/games/{game_id}/seats/3/join"), 409, "seat-taken")  # an AI seat
    # a seat holder cannot take a second seat of the same game
    _problem(client.post(f"/v1/games/{game_id}/seats/2/join", headers=bearer(first.get_json()["token"])),
             409, "already-seated")
    _problem(client.post(f"/v1/games/{game_id}/seats/2/join", json={"name": ""}), 422, "invalid")
    _problem(client.post(f"/v1/games/{game_id}/seats/2/join", json={"seat": 2}), 422, "invalid")
    _problem(client.post(f"/v1/games/{game_id}/seats/2/join", data="{", content_type="application/json"),
             400, "malformed-json")
    _problem(client.post(f"/v1/games/{game_id}/seats/2/join", data="x", content_type="text/plain"),
             415, "not-json")
    _problem(client.post(f"/v1/games/{game_id}/seats/9/join"), 404, "not-found")
    _problem(client.post(f"/v1/games/{game_id}/seats/16/join"), 404, "not-found")
    _problem(client.post(f"/v1/games/{game_id}/seats/-1/join"), 404, "not-found")
    _problem(client.post("/v1/games/nosuchgame/seats/1/join"), 404, "not-found")
    assert _state(conn, game_id) == before


def test_twenty_concurrent_joins_of_one_seat_hand_out_its_token_exactly_once(app, client):
    created = create(client, "kozel", [{"kind": "human"}, OPEN], seed=8)
    game_id = created["game"]["id"]
    barrier = threading.Barrier(20)
    answers: list = []
    lock = threading.Lock()

    def join(i: int) -> None:
        c = app.test_client()
        barrier.wait()
        r = c.post(f"/v1/games/{game_id}/seats/1/join", json={"name": f"J{i}"})
        with lock:
            answers.append((r.status_code, r.get_json(force=True)))

    threads = [threading.Thread(target=join, args=(i,)) for i in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    winners = [body for status, body in answers if status == 200]
    assert len(answers) == 20 and len(winners) == 1
    assert winners[0]["game"]["seats"][1]["last_seen_ms"] is not None  # a seat is present from its join
    assert all(status == 409 and body["type"].endswith("seat-taken") for status, body in answers if status != 200)
    view = client.get(f"/v1/games/{game_id}", headers=bearer(winners[0]["token"])).get_json()
    assert view["you"] == 1 and view["version"] == 1 and view["seats"][1]["name"] == winners[0]["game"]["seats"][1]["name"]
    assert [e["type"] for e in client.get(f"/v1/games/{game_id}/events").get_json()] == ["join", "start"]


def test_the_lobby_lists_joinable_games_by_rule_set_page_by_page(app, client):
    kozel = [create(client, "kozel", [{"kind": "human"}, OPEN], seed=i)["game"]["id"] for i in range(5)]
    tiuu = create(client, "tiuu", [OPEN, {"kind": "human"}], seed=1)["game"]["id"]
    create(client, "kozel", humans(2), seed=1)  # nothing to join: never listed
    everything = client.get("/v1/games?status=open").get_json()
    assert {g["id"] for g in everything["games"]} == {*kozel, tiuu} and everything["next"] is None
    seen: list[str] = []
    url = "/v1/games?status=open&rules=kozel&limit=2"
    pages = 0
    while url:
        page = client.get(url).get_json()
        pages += 1
        assert len(page["games"]) <= 2
        seen += [g["id"] for g in page["games"]]
        url = f"/v1/games?status=open&rules=kozel&limit=2&cursor={page['next']}" if page["next"] else ""
    assert sorted(seen) == sorted(kozel) and len(seen) == 5 and pages >= 3
    entry = client.get("/v1/games?rules=tiuu").get_json()["games"][0]
    assert entry["join"] == [{"seat": 0, "url": f"/v1/games/{tiuu}/seats/0/join", "code": tiuu}]
    assert entry["status"] == "waiting" and entry["seats"][0]["taken"] is False


def test_the_lobby_drops_games_that_filled_were_deleted_or_expired(app, client, redis_conn):
    a = create(client, "kozel", [{"kind": "human"}, OPEN], seed=1)
    b = create(client, "kozel", [{"kind": "human"}, OPEN], seed=2)
    c = create(client, "kozel", [{"kind": "human"}, OPEN], seed=3)
    d = create(client, "kozel", [{"kind": "human"}, OPEN], seed=4)
    assert client.post(f"/v1/games/{a['game']['id']}/seats/1/join").status_code == 200
    assert client.delete(f"/v1/games/{b['game']['id']}", headers=bearer(b["admin_token"])).status_code == 204
    # an expiry: Redis drops the game's keys by itself; the index learns of it when it is read
    redis_conn.delete(*store_module.keys_of(c["game"]["id"]))
    listed = [g["id"] for g in client.get("/v1/games?rules=kozel").get_json()["games"]]
    assert listed == [d["game"]["id"]]
    assert redis_conn.zrange(keys.lobby_key("kozel"), 0, -1) == [d["game"]["id"].encode()]
    assert redis_conn.zrange(keys.lobby_key(), 0, -1) == [d["game"]["id"].encode()]


@pytest.mark.parametrize("query", ["status=finished", "limit=0", "limit=51", "limit=x", "cursor=abc", "rules=",
                                   "page=2"])
def test_a_bad_lobby_query_is_a_422(client, query):
    _problem(client.get(f"/v1/games?{query}"), 422, "invalid")


def test_a_seats_requests_show_when_it_was_last_seen_and_reads_write_only_now_and_then(app, client):
    conn = app.extensions["redis"]
    created = create(client, "kozel", [{"kind": "human"}, {"kind": "human"}, cheap_ai("random")], seed=2)
    game_id = created["game"]["id"]
    toks = tokens_by_seat(created)
    view = client.get(f"/v1/games/{game_id}").get_json()
    assert [s["last_seen_ms"] for s in view["seats"]] == [None, None, None]  # a spectator is nobody
    mine = client.get(f"/v1/games/{game_id}", headers=bearer(toks[1])).get_json()
    assert mine["seats"][1]["last_seen_ms"] is not None and mine["seats"][0]["last_seen_ms"] is None
    assert mine["seats"][2]["last_seen_ms"] is None  # AI seats have no presence
    stored = conn.hget(store_module.game_key(game_id), "seen")
    for _ in range(5):  # polls within the interval write nothing
        client.get(f"/v1/games/{game_id}", headers=bearer(toks[1]))
        client.get(f"/v1/games/{game_id}/events", headers=bearer(toks[1]))
    assert conn.hget(store_module.game_key(game_id), "seen") == stored
    assert client.get(f"/v1/games/{game_id}").get_json()["seats"][1]["last_seen_ms"] == mine["seats"][1]["last_seen_ms"]
    # a refused request records nothing
    client.post(f"/v1/games/{game_id}/moves", json={"move": 1}, headers=bearer(toks[0]))
    assert conn.hget(store_module.game_key(game_id), "seen") == stored
    app.config["PRESENCE_INTERVAL_SECONDS"] = 0.001
    later = client.get(f"/v1/games/{game_id}/moves", headers=bearer(toks[1]))
    assert later.status_code == 200
    assert client.get(f"/v1/games/{game_id}").get_json()["seats"][1]["last_seen_ms"] > mine["seats"][1]["last_seen_ms"]


def test_the_presence_hook_writes_nothing_for_a_game_that_is_gone(app, redis_conn):
    store = app.extensions["store"]
    assert store.touch("nosuchgame", 0) is None
    assert redis_conn.keys("th:game:*") == []



def test_a_seat_whose_stream_is_opened_with_a_ticket_is_present(app, client):
    conn = app.extensions["redis"]
    created = create(client, "kozel", humans(2), seed=2)
    game_id, toks = created["game"]["id"], tokens_by_seat(created)
    ticket = client.post(f"/v1/games/{game_id}/stream-tickets", headers=bearer(toks[1])).get_json()["ticket"]
    conn.hdel(store_module.game_key(game_id), "seen")  # forget the ticket request itself
    r = client.get(f"/v1/games/{game_id}/stream?ticket={ticket}", buffered=False)
    assert r.status_code == 200
    r.close()
    seats = client.get(f"/v1/games/{game_id}").get_json()["seats"]
    assert seats[1]["last_seen_ms"] is not None and seats[0]["last_seen_ms"] is None
