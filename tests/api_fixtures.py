"""Fixtures of the API tests: an app on the flushed test Redis whose test client validates every response
against openapi.yaml (``api_support.ContractClient``), and a real RQ worker that drains the queues."""

from __future__ import annotations

import logging

import pytest
from api_support import ContractClient
from rq import SimpleWorker

from service import create_app


@pytest.fixture
def make_app(redis_conn, redis_url):
    """A factory of apps on the test Redis with settings of the test's own (``make_app(AI_MAX_WORKERS=2)``)."""
    made = []

    def make(**settings):
        application = create_app({"REDIS_URL": redis_url, **settings})
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
