"""Shared fixtures: a real Redis for the whole session (private server when possible) and a flushed
connection per test."""

from __future__ import annotations

import pytest
import redis

from service.redis_local import redis_for_tests


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory):
    with redis_for_tests(tmp_path_factory.mktemp("redis")) as url:
        yield url


@pytest.fixture
def redis_conn(redis_url):
    conn = redis.Redis.from_url(redis_url)
    conn.flushdb()
    yield conn
    conn.flushdb()
    conn.close()
