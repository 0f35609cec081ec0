"""Shared fixtures: a real Redis for the whole session (private server when possible) and a flushed
connection per test.

Tables with no person at them play without a pause in the suite (``TILEHOUSE_AI_PACE_MS=0``, here, for the
apps the tests make and every process they start): the tests drain whole all-AI games with workers that run
no scheduler.  tests/test_pace.py turns the pace on where it is the rule under test."""

from __future__ import annotations

import os

import pytest
import redis

from service.redis_local import redis_for_tests

os.environ["TILEHOUSE_AI_PACE_MS"] = "0"


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
