"""Fixtures of the API tests: an app on the flushed test Redis whose test client validates every response
against openapi.yaml (``api_support.ContractClient``), and a real RQ worker that drains the queues."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time

import pytest
from api_support import ROOT, TEST_SEED_SECRET, ContractClient
from rq import SimpleWorker

from service import create_app


@pytest.fixture
def make_app(redis_conn, redis_url):
    """A factory of apps on the test Redis with settings of the test's own (``make_app(AI_MAX_WORKERS=2)``)."""
    made = []

    def make(**settings):
        # a fixed seed secret (the generated one would differ per test, since each test flushes Redis); a
        # game is still dealt afresh on every run by its own nonce, unless it is created with a public seed
        # (service.fairplay.seeds)
        application = create_app({"REDIS_URL": redis_url, "SEED_SECRET": TEST_SEED_SECRET, **settings})
        application.test_client_class = ContractClient
        made.append(application)
        return application

    yield make
    for application in made:
        application.extensions["redis"].close()
        application.extensions["redis_streams"].close()


@pytest.fixture
def app(make_app):
    return make_app()


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def drain(app):
    """Run every queued job with a real RQ worker (in process, burst mode)."""
    conn = app.extensions["redis"]
    queues = [app.extensions["queues"][n] for n in ("suggest", "play")]

    def run() -> None:
        logging.getLogger("rq.worker").setLevel(logging.WARNING)
        SimpleWorker(queues, connection=conn).work(burst=True, logging_level="WARNING")

    return run


@pytest.fixture
def run_due(app):
    """Wait until every job scheduled with ``enqueue_at`` is due, then run a real RQ worker with its
    scheduler (burst mode: the scheduler queues the due jobs once, the worker runs them)."""
    conn = app.extensions["redis"]
    queues = [app.extensions["queues"][n] for n in ("suggest", "play")]

    def run() -> None:
        latest = max((score for q in queues for _, score in
                      conn.zrange(f"rq:scheduled:{q.name}", 0, -1, withscores=True)), default=0.0)
        time.sleep(max(0.0, latest - time.time() + 0.05))
        logging.getLogger("rq.worker").setLevel(logging.WARNING)
        SimpleWorker(queues, connection=conn).work(burst=True, with_scheduler=True, logging_level="WARNING")

    return run


@pytest.fixture
def worker_process(redis_url, tmp_path):
    """A real ``python worker.py`` process (with RQ's scheduler, as deployed) on the test Redis."""
    env = {**os.environ, "TILEHOUSE_REDIS_URL": redis_url, "TILEHOUSE_LOG_LEVEL": "WARNING"}
    with open(tmp_path / "worker.log", "wb") as log:
        proc = subprocess.Popen([sys.executable, "worker.py"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                                stderr=log)
    try:
        yield proc
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
