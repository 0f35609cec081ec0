"""The AI CPU budget per game and per client (429 with ``Retry-After``, nothing queued,
unused time given back by the worker), the creation rate per client (Flask-Limiter on Redis) and the cap on
live games per client.  Real HTTP (Flask test client, every answer validated against openapi.yaml), a real
Redis, a real RQ worker."""

from __future__ import annotations

import json
import time

from api_support import bearer, create, humans, tokens_by_seat

from service import keys

pytest_plugins = ["api_fixtures"]

KOZEL_AI = [{"kind": "ai", "engine": "random"}, {"kind": "ai", "engine": "random"}]


def _queued(app) -> int:
    return sum(len(q) for q in app.extensions["queues"].values())


def _retry_after(r) -> int:
    value = int(r.headers["Retry-After"])
    assert 1 <= value <= 60
    return value


def _two_humans(client) -> tuple[str, dict[int, dict[str, str]], int]:
    created = create(client, "kozel", humans(2))
    return created["game"]["id"], {s: bearer(t) for s, t in tokens_by_seat(created).items()}, created["game"]["to_move"]


def _ask(client, game_id: str, h: dict[str, str], time_ms: int, workers: int = 1, address: str = "127.0.0.1"):
    return client.post(f"/v1/games/{game_id}/suggestions", headers=h, environ_base={"REMOTE_ADDR": address},
                       json={"engine": "ismcts", "params": {"time_ms": time_ms, "iterations": 3}, "workers": workers})


def test_a_games_ai_budget_refuses_more_search_with_429_and_retry_after_and_queues_nothing(make_app):
    app = make_app(AI_CPU_MS_PER_MINUTE_PER_GAME=1000)
    client = app.test_client()
    game_id, h, seat = _two_humans(client)
    assert _ask(client, game_id, h[seat], 300, workers=2).status_code == 202  # 600 ms charged
    queued = _queued(app)
    refused = _ask(client, game_id, h[seat], 250, workers=2)  # 500 more would make 1100
    assert refused.status_code == 429
    assert refused.get_json()["type"].endswith(":ai-budget") and "this game" in refused.get_json()["detail"]
    _retry_after(refused)
    assert _queued(app) == queued
    assert _ask(client, game_id, h[seat], 400).status_code == 202  # exactly 1000


def test_a_clients_ai_budget_is_its_own_while_the_game_has_room(make_app):
    client = make_app(AI_CPU_MS_PER_MINUTE_PER_CLIENT=500).test_client()
    game_id, h, seat = _two_humans(client)
    assert _ask(client, game_id, h[seat], 500).status_code == 202
    refused = _ask(client, game_id, h[seat], 1)
    assert refused.status_code == 429 and "this client" in refused.get_json()["detail"]
    _retry_after(refused)
    # the other seat of the same game, from another address, is another client, and the game's own budget
    # still has room; from the same address it shares the address's budget (many tokens, one budget)
    url = f"/v1/games/{game_id}"
    while client.get(url).get_json()["to_move"] == seat:
        move = client.get(f"{url}/moves", headers=h[seat]).get_json()[0]["id"]
        assert client.post(f"{url}/moves", json={"move": move}, headers=h[seat]).status_code == 200
    same_address = _ask(client, game_id, h[1 - seat], 500)
    assert same_address.status_code == 429 and "client address" in same_address.get_json()["detail"]
    assert _ask(client, game_id, h[1 - seat], 500, address="10.9.0.2").status_code == 202


def test_the_worker_gives_back_the_budget_a_search_did_not_use(make_app, redis_conn):
    from rq import SimpleWorker

    app = make_app(AI_CPU_MS_PER_MINUTE_PER_GAME=1000)
    client = app.test_client()
    game_id, h, seat = _two_humans(client)
    first = _ask(client, game_id, h[seat], 900)  # 3 iterations: a few milliseconds of the 900 charged
    assert first.status_code == 202
    assert _ask(client, game_id, h[seat], 900).status_code == 429
    SimpleWorker([app.extensions["queues"]["suggest"]], connection=redis_conn).work(burst=True)
    done = client.get(f"/v1/jobs/{first.get_json()['id']}", headers=h[seat]).get_json()
    assert done["status"] == "finished" and done["result"]["stats"]["elapsed_ms"] < 800
    assert _ask(client, game_id, h[seat], 900).status_code == 202


def test_game_creation_from_one_address_is_rate_limited_and_refused_bodies_do_not_count(make_app):
    client = make_app(GAMES_PER_MINUTE=3).test_client()
    for _ in range(4):
        assert client.post("/v1/games", json={"rules": "kozel", "seats": humans(9)}).status_code == 422
    for _ in range(3):
        create(client, "kozel", humans(2))
    refused = client.post("/v1/games", json={"rules": "kozel", "seats": humans(2)})
    assert refused.status_code == 429 and refused.get_json()["type"].endswith(":rate-limited")
    _retry_after(refused)
    # a made-up token does not make a new client; another address is one
    fake = client.post("/v1/games", json={"rules": "kozel", "seats": humans(2)}, headers=bearer("x.y"))
    assert fake.status_code == 429
    elsewhere = client.post("/v1/games", json={"rules": "kozel", "seats": humans(2)},
                            environ_base={"REMOTE_ADDR": "192.0.2.7"})
    assert elsewhere.status_code == 201


def test_live_games_per_client_are_capped_and_a_finished_or_deleted_game_makes_room(make_app, redis_conn):
    app = make_app(LIVE_GAMES_PER_CLIENT=2)
    client = app.test_client()
    first = create(client, "kozel", humans(2))
    create(client, "kozel", KOZEL_AI, options={"target": 10})
    refused = client.post("/v1/games", json={"rules": "kozel", "seats": humans(2)})
    assert refused.status_code == 429 and refused.get_json()["type"].endswith(":live-games")
    _retry_after(refused)
    assert len(redis_conn.keys("th:game:{*}")) == 2
    # the all-AI game plays to its end: room for one more
    from rq import SimpleWorker

    SimpleWorker([app.extensions["queues"]["play"]], connection=redis_conn).work(burst=True)
    third = create(client, "kozel", humans(2))
    assert client.post("/v1/games", json={"rules": "kozel", "seats": humans(2)}).status_code == 429
    # deleting a game makes room too
    gone = client.delete(f"/v1/games/{first['game']['id']}", headers=bearer(first["admin_token"]))
    assert gone.status_code == 204
    create(client, "kozel", humans(2))
    assert third["game"]["id"]


def _live(redis_conn, address: str = "ip:127.0.0.1") -> set[str]:

    return {m.decode() for m in redis_conn.zrange(keys.client_games_key(address), 0, -1)}


def test_admission_reads_the_finished_flags_and_loads_no_game_state(make_app, redis_conn, monkeypatch):
    from rq import SimpleWorker

    from service import store as store_module
    from service.errors import TooManyLiveGames
    from service.fairplay import live_games

    app = make_app(LIVE_GAMES_PER_CLIENT=3)
    client = app.test_client()
    live = [create(client, "kozel", humans(2))["game"]["id"] for _ in range(2)]
    ended = create(client, "kozel", KOZEL_AI, options={"target": 10})["game"]["id"]
    SimpleWorker([app.extensions["queues"]["play"]], connection=redis_conn).work(burst=True)
    assert client.get(f"/v1/games/{ended}").get_json()["status"] == "finished"
    assert _live(redis_conn) == {*live, ended}

    def no_load(*args, **kwargs):
        raise AssertionError("admission loaded a game's state")

    monkeypatch.setattr(store_module.Store, "get", no_load)
    monkeypatch.setattr(store_module, "load_state", no_load)
    live_games.admit_game(redis_conn, app.config, "ip:127.0.0.1", "admitted-1")
    assert _live(redis_conn) == {*live, "admitted-1"}  # the finished game was pruned by its flag
    try:
        live_games.admit_game(redis_conn, app.config, "ip:127.0.0.1", "admitted-2")
    except TooManyLiveGames as refused:
        assert refused.slug == "live-games" and refused.retry_after
    else:
        raise AssertionError("a fourth live game was admitted with a cap of three")
    assert _live(redis_conn) == {*live, "admitted-1"}


def test_concurrent_creations_from_one_address_never_pass_the_live_cap(make_app, redis_conn):
    import threading

    app = make_app(LIVE_GAMES_PER_CLIENT=3, GAMES_PER_MINUTE=1000)
    start = threading.Barrier(12)
    answers: list[int] = []

    def create_one() -> None:
        client = app.test_client()
        start.wait()
        answers.append(client.post("/v1/games", json={"rules": "kozel", "seats": humans(2)}).status_code)

    threads = [threading.Thread(target=create_one) for _ in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(answers) == [201] * 3 + [429] * 9
    assert len(redis_conn.keys("th:game:{*}")) == 3
    assert len(_live(redis_conn)) == 3


def test_a_creation_in_flight_holds_its_place_until_it_is_stored_or_given_back(make_app, redis_conn):
    from service.errors import TooManyLiveGames
    from service.fairplay import live_games

    app = make_app(LIVE_GAMES_PER_CLIENT=1)
    # admitted, its game not stored yet: a concurrent admission must not take it for a gone game
    live_games.admit_game(redis_conn, app.config, "ip:127.0.0.1", "in-flight")
    refused = app.test_client().post("/v1/games", json={"rules": "kozel", "seats": humans(2)})
    assert refused.status_code == 429 and refused.get_json()["type"].endswith(":live-games")
    # an admission older than PENDING_SECONDS without a game is a crashed creation: pruned
    redis_conn.zadd(keys.client_games_key("ip:127.0.0.1"),
                    {"in-flight": int(time.time() * 1000) - (live_games.PENDING_SECONDS + 1) * 1000})
    create(app.test_client(), "kozel", humans(2))
    assert "in-flight" not in _live(redis_conn)
    live_games.release_game(redis_conn, "ip:127.0.0.1", next(iter(_live(redis_conn))))
    try:
        live_games.admit_game(redis_conn, app.config, "ip:127.0.0.1", "after-release")
    except TooManyLiveGames:
        raise AssertionError("a released place was not given back") from None


def test_a_creation_that_fails_to_store_its_game_gives_its_live_place_back_at_once(make_app, redis_conn,
                                                                                   monkeypatch):
    """An admitted creation whose game is never stored (here Redis fails the write) takes no
    place among the client's live games: the next creation is admitted at once, not after the 60 s an
    admission in flight is held."""
    import redis

    from service.store import Store

    app = make_app(LIVE_GAMES_PER_CLIENT=1)
    client = app.test_client()
    real_create = Store.create

    def failing_create(self, *args, **kwargs):
        raise redis.exceptions.ConnectionError("the write was lost")

    monkeypatch.setattr(Store, "create", failing_create)
    failed = client.post("/v1/games", json={"rules": "kozel", "seats": humans(2)})
    assert failed.status_code >= 500 and failed.mimetype == "application/problem+json"
    assert _live(redis_conn) == set() and redis_conn.keys("th:game:{*}") == []
    monkeypatch.setattr(Store, "create", real_create)
    created = create(client, "kozel", humans(2))
    assert _live(redis_conn) == {created["game"]["id"]}


def _leave_alone(app, worker) -> None:
    """The tabs are closed: the worker plays the AI seats up to a human's turn, then the idle time passes."""
    worker.work(burst=True)
    time.sleep(app.config["LIVE_IDLE_SECONDS"] + 0.05)


SOLO = [{"kind": "human", "name": "Solo"}, {"kind": "ai", "engine": "greedy"}]


def test_a_solo_player_starts_100_games_in_a_row_closing_each_tab_without_one_429(make_app, redis_conn):
    # the idle time scaled down from its default minute, the creation rate (its own limit) out of the way:
    # fifteen games are started within each idle time (a person at the real pace starts ten a minute)
    from flask.testing import FlaskClient

    app = make_app(LIVE_IDLE_SECONDS=0.15, GAMES_PER_MINUTE=10_000)
    from rq import SimpleWorker

    client = FlaskClient(app)  # the answers' shapes are the contract tests' business: only the statuses here
    worker = SimpleWorker([app.extensions["queues"]["play"]], connection=redis_conn)
    for n in range(100):
        r = client.post("/v1/games", json={"rules": "kozel", "seats": SOLO})
        assert r.status_code == 201, (n, r.get_json())
        token = r.get_json()["seats"][0]["token"]
        assert client.get(f"/v1/games/{r.get_json()['game']['id']}", headers=bearer(token)).status_code == 200
        if n % 15 == 14:
            _leave_alone(app, worker)
    assert len(_live(redis_conn)) == 100  # every game is still listed (and kept): only the count is live


def test_a_game_counts_as_live_while_an_ai_is_to_move_or_a_seat_was_seen_lately(make_app, redis_conn):
    from service.errors import TooManyLiveGames
    from service.fairplay import live_games

    app = make_app(LIVE_IDLE_SECONDS=0.3, LIVE_GAMES_PER_CLIENT=2)
    client = app.test_client()
    watched = create(client, "kozel", humans(2))
    running = create(client, "kozel", KOZEL_AI, options={"target": 1000})  # an AI to move: it runs on its own
    assert client.post("/v1/games", json={"rules": "kozel", "seats": humans(2)}).status_code == 429
    time.sleep(0.35)
    # the human table was left alone; the all-AI one still has an AI to move
    h = bearer(watched["seats"][0]["token"])
    assert client.get(f"/v1/games/{watched['game']['id']}", headers=h).status_code == 200  # its player is back
    assert client.post("/v1/games", json={"rules": "kozel", "seats": humans(2)}).status_code == 429
    time.sleep(0.35)
    third = create(client, "kozel", humans(2))  # the human table is idle again: room for one
    assert client.post("/v1/games", json={"rules": "kozel", "seats": humans(2)}).status_code == 429
    listed = _live(redis_conn)
    assert {watched["game"]["id"], running["game"]["id"], third["game"]["id"]} <= listed
    time.sleep(0.35)
    try:  # the all-AI table keeps counting while it plays; the two human ones are idle
        live_games.admit_game(redis_conn, app.config, "ip:127.0.0.1", "one-more")
    except TooManyLiveGames:
        raise AssertionError("an idle game was counted as live") from None
    try:
        live_games.admit_game(redis_conn, app.config, "ip:127.0.0.1", "two-more")
    except TooManyLiveGames as refused:
        assert refused.slug == "live-games"
    else:
        raise AssertionError("the running all-AI table was not counted")


def test_a_table_whose_players_stream_closed_stops_counting_as_live_at_once_and_counts_again_when_back(
        make_app, redis_conn):
    """The live-games cap counts a table while someone is at it: a seat seen in the idle time whose stream
    has not closed since.  A player who closes the tab (its stream closes) leaves at once, without waiting
    out the idle time, so a solo player's next game is admitted; opening the stream again brings it back."""
    from service.errors import TooManyLiveGames
    from service.fairplay import live_games

    app = make_app(LIVE_GAMES_PER_CLIENT=1, GAMES_PER_MINUTE=1000, LIVE_IDLE_SECONDS=600)
    client = app.test_client()
    created = create(client, "kozel", humans(2))
    game_id, token = created["game"]["id"], tokens_by_seat(created)[0]
    stream = client.get(f"/v1/games/{game_id}/stream", headers=bearer(token), buffered=False)
    assert stream.status_code == 200
    next(iter(stream.response))  # the stream is open: the seat is at its table
    refused = client.post("/v1/games", json={"rules": "kozel", "seats": humans(2)})
    assert refused.status_code == 429 and refused.get_json()["type"].endswith(":live-games")
    stream.close()  # the tab is closed
    assert redis_conn.hget(keys.game_key(game_id), "left") is not None
    # the seat came back within the (long) idle time: present again, so the cap is met
    back = client.get(f"/v1/games/{game_id}/stream", headers=bearer(token), buffered=False)
    # (a refused stream writes no presence: say so, rather than fail below on the cap)
    assert back.status_code == 200, back.get_data(as_text=True)
    next(iter(back.response))
    seen = json.loads(redis_conn.hget(keys.game_key(game_id), "seen"))
    left = json.loads(redis_conn.hget(keys.game_key(game_id), "left"))
    assert left[str(0)] < seen[str(0)], f"seen {seen} is not after left {left}"
    try:
        live_games.admit_game(redis_conn, app.config, "ip:127.0.0.1", "while-back")
        raise AssertionError("a second live game was admitted while the first one's player was back")
    except TooManyLiveGames:
        pass
    back.close()
    assert create(client, "kozel", humans(2))["game"]["id"] != game_id


def test_a_seat_seen_again_in_the_millisecond_its_stream_closed_counts_as_back(make_app, redis_conn):
    """Presence compares when a seat was last seen with when its stream last closed (``left``): a seat that
    comes back in the same millisecond as it left, or whose request is timed by a clock a little behind the
    one that wrote ``left``, is recorded as seen just after it, so the live-games cap counts its table."""
    app = make_app(LIVE_GAMES_PER_CLIENT=1, GAMES_PER_MINUTE=1000, LIVE_IDLE_SECONDS=600)
    client = app.test_client()
    store = app.extensions["store"]
    game_id = create(client, "kozel", humans(2))["game"]["id"]
    now = int(time.time() * 1000)
    store.touch(game_id, 0, now=now - 10)
    # the stream closed at ``left``; the seat is seen again at ``back_at``: the same millisecond, then a clock
    # 3 ms behind the one that wrote ``left``
    for left, back_at in ((now, now), (now + 10, now + 7)):
        store.leave(game_id, 0, now=left)
        assert store.touch(game_id, 0, now=back_at) == left + 1
        seen = json.loads(redis_conn.hget(keys.game_key(game_id), "seen"))
        assert seen["0"] == left + 1
        refused = client.post("/v1/games", json={"rules": "kozel", "seats": humans(2)})
        assert refused.status_code == 429 and refused.get_json()["type"].endswith(":live-games")
