"""Operations: request ids, JSON logs, Prometheus metrics, /healthz and /readyz
(``service.observability``), checked on a small Flask app wired the way ``create_app`` wires it (a real
Redis client in ``app.extensions["redis"]``, real RQ queues in ``app.extensions["queues"]``) and with a
real RQ worker running jobs that log and count."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest
import redis
import rq
from flask import Flask, g
from prometheus_client.parser import text_string_to_metric_families
from redis.backoff import NoBackoff
from redis.retry import Retry

from service import logs, metrics, observability
from service.redis_local import free_port


def _make_app(conn: redis.Redis) -> Flask:
    app = Flask("observability-test")
    app.extensions["redis"] = conn
    app.extensions["queues"] = {name: rq.Queue(name, connection=conn) for name in ("suggest", "play")}
    observability.init_app(app)

    @app.get("/v1/games/<game_id>")
    def game(game_id: str) -> dict[str, str]:
        return {"id": game_id, "request_id": g.request_id}

    @app.post("/v1/games/<game_id>/suggestions")
    def suggest(game_id: str) -> tuple[dict[str, str], int]:
        # What the service does when it queues a job: carry the request id in the job's meta.
        job = app.extensions["queues"]["suggest"].enqueue(logging_job, game_id,
                                                          meta={"request_id": g.request_id})
        return {"job": job.id}, 202

    return app


def logging_job(game_id: str) -> str:
    """Runs inside the RQ worker: writes a log line and counts itself, as the service's AI jobs do."""
    logging.getLogger("tilehouse.jobs").info("played for %s", game_id)
    metrics.record_ai_job(rq.get_current_job().connection, "greedy", "played")
    return game_id


@pytest.fixture
def app(redis_conn: redis.Redis) -> Flask:
    return _make_app(redis_conn)


@pytest.fixture
def json_log() -> Iterator[io.StringIO]:
    root = logging.getLogger()
    saved_handlers, saved_level = list(root.handlers), root.level
    buf = io.StringIO()
    logs.configure_logging("INFO", stream=buf)
    yield buf
    for h in list(root.handlers):
        root.removeHandler(h)
    for h in saved_handlers:
        root.addHandler(h)
    root.setLevel(saved_level)


def _lines(buf: io.StringIO) -> list[dict]:
    return [json.loads(line) for line in buf.getvalue().splitlines() if line.strip()]


def _samples(body: bytes) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    out = {}
    for family in text_string_to_metric_families(body.decode()):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


# ------------------------------------------------------------------------------------------ request ids

def test_request_id_given_by_the_client_is_returned_and_kept_in_g(app):
    rv = app.test_client().get("/v1/games/g1", headers={"X-Request-ID": "trace-42.a_b:c"})
    assert rv.headers["X-Request-ID"] == "trace-42.a_b:c"
    assert rv.json["request_id"] == "trace-42.a_b:c"


@pytest.mark.parametrize("bad", ["has space", "x" * 65, "-leading-dash", "quote\"", "é"])
def test_unsafe_or_long_request_id_is_replaced_by_a_fresh_one(app, bad):
    rv = app.test_client().get("/v1/games/g1", headers={"X-Request-ID": bad})
    rid = rv.headers["X-Request-ID"]
    assert rid != bad and logs.valid_request_id(rid)
    assert rv.json["request_id"] == rid


def test_request_without_id_gets_a_distinct_one_each_time(app):
    client = app.test_client()
    ids = {client.get("/healthz").headers["X-Request-ID"] for _ in range(3)}
    assert len(ids) == 3


def test_request_id_travels_into_the_queued_job_and_its_worker_log_lines(app, redis_conn, json_log):
    rv = app.test_client().post("/v1/games/g7/suggestions", headers={"X-Request-ID": "carry-me"})
    assert rv.status_code == 202
    job = rq.job.Job.fetch(rv.json["job"], connection=redis_conn)
    assert job.meta["request_id"] == "carry-me"
    rq.SimpleWorker([app.extensions["queues"]["suggest"]], connection=redis_conn).work(burst=True)
    job_lines = [line for line in _lines(json_log) if line["logger"] == "tilehouse.jobs"]
    assert len(job_lines) == 1
    assert (job_lines[0]["msg"], job_lines[0]["request_id"], job_lines[0]["job_id"]) == (
        "played for g7", "carry-me", job.id)


# ------------------------------------------------------------------------------------------ logs

def test_each_request_writes_one_json_line_with_route_status_duration_and_id(app, json_log):
    app.test_client().get("/v1/games/abc", headers={"X-Request-ID": "r-1"})
    requests = [line for line in _lines(json_log) if line["logger"] == "tilehouse.request"]
    assert len(requests) == 1
    line = requests[0]
    assert (line["method"], line["route"], line["path"], line["status"], line["request_id"]) == (
        "GET", "/v1/games/<game_id>", "/v1/games/abc", 200, "r-1")
    assert line["level"] == "info" and line["duration_ms"] >= 0 and line["ts"].endswith("+00:00")


def test_log_lines_outside_requests_and_jobs_carry_null_ids_and_exceptions_as_text(json_log):
    try:
        raise ValueError("boom")
    except ValueError:
        logging.getLogger("tilehouse.x").exception("failed", extra={"game": "g1"})
    (line,) = _lines(json_log)
    assert line["request_id"] is None and line["job_id"] is None and line["game"] == "g1"
    assert "ValueError: boom" in line["exc"]


# ------------------------------------------------------------------------------------------ metrics

def test_metrics_count_requests_per_route_template_and_status(app):
    client = app.test_client()
    for game_id in ("a", "b", "c"):
        client.get(f"/v1/games/{game_id}")
    client.get("/no/such/path")
    samples = _samples(client.get("/metrics").data)
    game_labels = (("method", "GET"), ("route", "/v1/games/<game_id>"), ("status", "200"))
    assert samples[("tilehouse_http_requests_total", game_labels)] == 3
    assert samples[("tilehouse_http_request_duration_seconds_count", game_labels)] == 3
    unmatched = (("method", "GET"), ("route", "<unmatched>"), ("status", "404"))
    assert samples[("tilehouse_http_requests_total", unmatched)] == 1
    assert not any("/v1/games/a" in dict(labels).get("route", "") for _, labels in samples)


def test_made_up_http_methods_are_counted_as_other_and_do_not_grow_the_metrics(app):
    client = app.test_client()
    assert client.open("/v1/games/g1", method="BREW0").status_code == 405
    client.get("/metrics")
    before = client.get("/metrics").data
    for i in range(1, 120):
        assert client.open(f"/v1/games/g{i}", method=f"BREW{i}").status_code == 405
    after = client.get("/metrics").data
    assert set(_samples(after)) == set(_samples(before))
    methods = {dict(labels).get("method") for _, labels in _samples(after)} - {None}
    assert methods == {"GET", observability.OTHER_METHOD}
    assert not any(b"BREW" in line for line in after.splitlines())
    # only the counted values changed: a few more digits per sample line at most
    assert len(after) - len(before) < 20 * len(after.splitlines())
    other = (("method", "OTHER"), ("route", "<unmatched>"), ("status", "405"))
    assert _samples(after)[("tilehouse_http_requests_total", other)] == 120


def test_ai_job_counters_written_by_a_real_worker_appear_in_metrics(app, redis_conn):
    client = app.test_client()
    client.post("/v1/games/g1/suggestions")
    client.post("/v1/games/g2/suggestions")
    rq.SimpleWorker([app.extensions["queues"]["suggest"]], connection=redis_conn).work(burst=True)
    metrics.record_ai_job(redis_conn, "ismcts", "failed")
    samples = _samples(client.get("/metrics").data)
    assert samples[("tilehouse_ai_jobs_total", (("engine", "greedy"), ("outcome", "played")))] == 2
    assert samples[("tilehouse_ai_jobs_total", (("engine", "ismcts"), ("outcome", "failed")))] == 1


def test_games_created_and_finished_are_counted(app, redis_conn):
    for event in ("created", "created", "finished"):
        metrics.record_game(redis_conn, event)
    samples = _samples(app.test_client().get("/metrics").data)
    assert samples[("tilehouse_games_created_total", ())] == 2
    assert samples[("tilehouse_games_finished_total", ())] == 1


def test_record_game_rejects_an_unknown_event(redis_conn):
    with pytest.raises(ValueError, match="created"):
        metrics.record_game(redis_conn, "abandoned")


def test_queue_depth_is_reported_per_queue(app, redis_conn):
    queues = app.extensions["queues"]
    for _ in range(2):
        queues["play"].enqueue(logging_job, "g")
    queues["suggest"].enqueue(logging_job, "g")
    samples = _samples(app.test_client().get("/metrics").data)
    assert samples[("tilehouse_queue_depth", (("queue", "play"),))] == 2
    assert samples[("tilehouse_queue_depth", (("queue", "suggest"),))] == 1
    assert samples[("tilehouse_metrics_redis_up", ())] == 1


def test_metrics_still_answer_when_redis_is_down():
    app = _make_app(redis.Redis(port=free_port(), socket_connect_timeout=0.5))
    rv = app.test_client().get("/metrics")
    assert rv.status_code == 200
    samples = _samples(rv.data)
    assert samples[("tilehouse_metrics_redis_up", ())] == 0
    assert ("tilehouse_ai_jobs_total", (("engine", "greedy"), ("outcome", "played"))) not in samples


def test_a_counter_lost_to_a_redis_outage_does_not_fail_the_job():
    down = redis.Redis(port=free_port(), retry=Retry(NoBackoff(), 0))
    metrics.record_ai_job(down, "greedy", "played")
    metrics.record_game(down, "finished")


# ------------------------------------------------------------------------------------------ health

def test_healthz_is_ok_without_touching_redis():
    app = _make_app(redis.Redis(port=free_port(), socket_connect_timeout=0.5))
    rv = app.test_client().get("/healthz")
    assert (rv.status_code, rv.json) == (200, {"status": "ok"})


def test_readyz_is_ready_when_redis_and_the_queues_answer(app):
    rv = app.test_client().get("/readyz")
    assert rv.status_code == 200
    assert rv.json == {"status": "ready", "checks": {"redis": "ok", "queue": "ok"}}


def test_readyz_is_a_503_problem_with_retry_after_when_redis_is_down():
    app = _make_app(redis.Redis(port=free_port(), socket_connect_timeout=0.5))
    rv = app.test_client().get("/readyz")
    assert rv.status_code == 503
    assert rv.mimetype == "application/problem+json"
    assert int(rv.headers["Retry-After"]) > 0
    body = json.loads(rv.data)
    assert body["status"] == 503 and body["type"].endswith(":unavailable") and body["title"]
    assert body["checks"]["redis"].startswith("unreachable") and body["checks"]["queue"].startswith("unreachable")
    assert "redis" in body["detail"]


def test_readyz_is_not_ready_when_the_queues_are_not_configured(redis_conn):
    app = Flask("bare")
    app.extensions["redis"] = redis_conn
    observability.init_app(app)
    rv = app.test_client().get("/readyz")
    assert rv.status_code == 503
    assert json.loads(rv.data)["checks"] == {"redis": "ok", "queue": "not configured"}



# ------------------------------------------------------------------------------------------ through create_app

#: a request that came in on the default metrics listener (127.0.0.1:9100), the only one serving /metrics
ON_METRICS_LISTENER = {"SERVER_PORT": "9100"}


@pytest.fixture
def service_app(redis_url: str, redis_conn: redis.Redis) -> Flask:
    from service.app import create_app

    return create_app({"REDIS_URL": redis_url})


def test_create_app_answers_health_readiness_and_metrics(service_app):
    client = service_app.test_client()
    assert client.get("/healthz").json == {"status": "ok"}
    assert client.get("/readyz").json == {"status": "ready", "checks": {"redis": "ok", "queue": "ok"}}
    rv = client.get("/v1/rules", headers={"X-Request-ID": "rules-1"})
    assert rv.status_code == 200 and rv.headers["X-Request-ID"] == "rules-1"
    samples = _samples(client.get("/metrics", environ_overrides=ON_METRICS_LISTENER).data)
    assert samples[("tilehouse_http_requests_total",
                    (("method", "GET"), ("route", "/v1/rules"), ("status", "200")))] == 1


def test_request_id_of_a_game_creation_is_carried_into_the_ai_job_it_queues(service_app, redis_conn):
    rv = service_app.test_client().post("/v1/games", headers={"X-Request-ID": "create-77"}, json={
        "rules": "tiengow", "seed": 3, "seats": [{"kind": "ai", "engine": "random"}] * 4})
    assert rv.status_code == 201
    job_id = rv.json["game"]["ai"]["job"]
    assert job_id is not None
    assert rq.job.Job.fetch(job_id, connection=redis_conn).meta["request_id"] == "create-77"
    samples = _samples(service_app.test_client().get("/metrics", environ_overrides=ON_METRICS_LISTENER).data)
    assert samples[("tilehouse_games_created_total", ())] == 1
    assert samples[("tilehouse_queue_depth", (("queue", "play"),))] == 1


def test_create_app_readyz_is_a_503_problem_when_redis_is_down():
    from service.app import create_app

    app = create_app({"REDIS_URL": f"redis://127.0.0.1:{free_port()}/0"})
    rv = app.test_client().get("/readyz")
    assert rv.status_code == 503 and rv.mimetype == "application/problem+json"
    assert rv.headers["Retry-After"] == str(app.config["RETRY_AFTER_SECONDS"])
