"""The Redis store: compare-and-set on ``version``, one hash tag per game, the event log
with per-event visibility, idle expiry refreshed by every move, and deletion of every key."""

from __future__ import annotations

import json
import threading

import pytest

import engine
from service import config, tables
from service.errors import GameNotFound, NotYourTurn, VersionConflict
from service.store import (
    Store,
    events_key,
    game_key,
    keys_of,
    new_game_id,
)

TTL = 3600


def _new(store: Store, rules_id: str = "tiengow", seed: int = 3) -> str:
    rs = engine.RULES[rules_id]
    state = rs.new(rs.default_players, seed, {})
    game_id = new_game_id()
    seats = [{"seat": i, "name": f"P{i}", "kind": "human", "engine": None, "params": {}}
             for i in range(rs.default_players)]
    store.create(game_id, {"id": game_id, "rules": rules_id, "options": state.options, "seed": seed,
                           "seats": seats, "state": state.to_dict(), "last_move": None}, {"admin": "x"})
    return game_id


def _ctx(store: Store) -> tables.Context:
    return tables.Context(store, config.load(environ={}))


def test_a_move_replaces_the_state_and_raises_the_version_by_one(redis_conn):
    store = Store(redis_conn, TTL)
    game_id = _new(store)
    game = store.get(game_id)
    move = game.state.legal_moves()[0]
    after, applied = tables.play(_ctx(store), game_id, game.state.to_move, move.id, 0)
    assert applied and after.version == 1
    again = store.get(game_id)
    assert again.version == 1 and again.doc["state"] == after.state.to_dict() != game.doc["state"]
    assert again.doc["last_move"]["move"] == move.id


def test_a_stale_version_raises_conflict_and_writes_nothing(redis_conn):
    store = Store(redis_conn, TTL)
    game_id = _new(store)
    game = store.get(game_id)
    before = redis_conn.hgetall(game_key(game_id))
    with pytest.raises(VersionConflict) as e:
        tables.play(_ctx(store), game_id, game.state.to_move, game.state.legal_moves()[0].id, 4)
    assert e.value.current == 0
    with pytest.raises(NotYourTurn):
        tables.play(_ctx(store), game_id, (game.state.to_move + 1) % 4, game.state.legal_moves()[0].id, 0)
    with pytest.raises(engine.IllegalMove):
        tables.play(_ctx(store), game_id, game.state.to_move, "play:6-6+6-6+6-6", 0)
    assert redis_conn.hgetall(game_key(game_id)) == before
    assert redis_conn.llen(events_key(game_id)) == 0


def test_concurrent_compare_and_set_lets_exactly_one_of_twenty_writers_win(redis_conn, redis_url):
    import redis

    store = Store(redis_conn, TTL)
    game_id = _new(store)
    game = store.get(game_id)
    seat = game.state.to_move
    moves = [m.id for m in game.state.legal_moves()]
    barrier = threading.Barrier(20)
    outcomes: list[str] = []
    lock = threading.Lock()

    def write(i: int) -> None:
        own = Store(redis.Redis.from_url(redis_url), TTL)
        # every writer read the game before any of them wrote: a true lost-update race
        barrier.wait()
        try:
            _, applied = tables.play(_ctx(own), game_id, seat, moves[i % len(moves)], None)
            result = "applied" if applied else "retry"
        except (VersionConflict, NotYourTurn):
            result = "conflict"
        with lock:
            outcomes.append(result)

    threads = [threading.Thread(target=write, args=(i,)) for i in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert store.get(game_id).version == 1
    assert outcomes.count("applied") == 1
    assert set(outcomes) <= {"applied", "conflict", "retry"}
    assert {json.loads(e)["version"] for e in redis_conn.lrange(events_key(game_id), 0, -1)} <= {1}


def test_the_event_log_keeps_who_may_see_what(redis_conn):
    store = Store(redis_conn, TTL)
    game_id = _new(store, "kozel", seed=6)
    secrets_seen = 0
    for _ in range(40):
        game = store.get(game_id)
        if game.state.finished:
            break
        local = engine.load_state(game.doc["state"])
        move = local.legal_moves()[-1]
        expected = local.play(move)
        logged = redis_conn.llen(events_key(game_id))
        tables.play(_ctx(store), game_id, game.state.to_move, move.id)
        stored = [ev for _, ev in store.events(game_id, logged)]
        assert [(e["type"], e["seat"], e["data"]) for e in stored] == [(e["type"], e["seat"], e["data"])
                                                                       for e in expected]
        assert [e["secret"] for e in stored] == [{str(k): v for k, v in e["secret"].items()} for e in expected]
        secrets_seen += sum(bool(e["secret"]) for e in stored)
    assert secrets_seen, "a Kozel draw is a secret of the drawing seat"


def test_every_key_expires_after_the_idle_time_and_a_move_refreshes_it(redis_conn):
    store = Store(redis_conn, 100)
    game_id = _new(store)
    for key in keys_of(game_id)[:1]:
        assert 0 < redis_conn.ttl(key) <= 100
    redis_conn.expire(game_key(game_id), 10)
    game = store.get(game_id)
    tables.play(_ctx(store), game_id, game.state.to_move, game.state.legal_moves()[0].id)
    for key in keys_of(game_id)[:2]:
        assert 10 < redis_conn.ttl(key) <= 100


def test_the_idle_time_defaults_to_seven_days_and_is_configurable():
    assert config.load(environ={})["GAME_TTL_SECONDS"] == 7 * 24 * 3600
    assert config.load(environ={"TILEHOUSE_GAME_TTL_SECONDS": "60"})["GAME_TTL_SECONDS"] == 60
    assert config.load({"GAME_TTL_SECONDS": 5}, environ={"TILEHOUSE_GAME_TTL_SECONDS": "60"})[
        "GAME_TTL_SECONDS"] == 5
    assert config.load(environ={"TILEHOUSE_REDIS_URL": "redis://h:1/2"})["REDIS_URL"] == "redis://h:1/2"
    with pytest.raises(config.ConfigError):
        config.load(environ={"TILEHOUSE_GAME_TTL_SECONDS": "a week"})


def test_delete_removes_every_key_and_the_game_is_gone(redis_conn):
    store = Store(redis_conn, TTL)
    game_id = _new(store)
    store.add_job(game_id, "play-x-1")
    game = store.get(game_id)
    tables.play(_ctx(store), game_id, game.state.to_move, game.state.legal_moves()[0].id)
    assert store.delete(game_id) == ["play-x-1"]
    assert redis_conn.keys(f"*{{{game_id}}}*") == []
    with pytest.raises(GameNotFound):
        store.get(game_id)


def test_the_finished_flag_follows_the_state_through_every_commit_and_is_none_once_gone(redis_conn):
    store = Store(redis_conn, TTL)
    game_id, other = _new(store), _new(store, seed=4)
    assert store.finished([game_id, other]) == {game_id: False, other: False}
    game = store.get(game_id)
    state = game.state.clone()
    events = state.resign(game.state.to_move)
    store.commit(game, dict(game.doc), state, events, move="resign", mover=game.state.to_move)
    assert store.finished([game_id, other]) == {game_id: True, other: False}
    store.delete(other)
    assert store.finished([game_id, other]) == {game_id: True, other: None}


def test_a_game_stored_before_the_finished_flag_is_judged_by_its_state(redis_conn):
    store = Store(redis_conn, TTL)
    game_id = _new(store)
    redis_conn.hdel(game_key(game_id), "finished")
    assert store.finished([game_id]) == {game_id: False}
