"""Metrics exposure: ``/metrics`` behind ``TILEHOUSE_METRICS_TOKEN`` or only on a separate
``TILEHOUSE_METRICS_BIND`` listener (service.hardening.metrics_access), in the app and under gunicorn."""

from __future__ import annotations

import urllib.error
import urllib.request

import pytest
from api_support import ContractClient, bearer, check_response
from processes import environment, start_gunicorn, stop, wait_ready

from service import create_app
from service.redis_local import free_port


def _app(redis_url: str, **config):
    app = create_app({"REDIS_URL": redis_url, **config})
    app.test_client_class = ContractClient
    return app


def test_by_default_metrics_answer_only_on_the_loopback_metrics_listener(redis_conn, redis_url):
    app = _app(redis_url)
    assert app.config["METRICS_BIND"] == "127.0.0.1:9100"
    assert app.test_client().get("/metrics").status_code == 404
    app.test_client_class = None
    assert app.test_client().get("/metrics", environ_overrides={"SERVER_PORT": "9100"}).status_code == 200


def test_with_no_metrics_listener_metrics_need_the_token_and_are_a_404_without_one(redis_conn, redis_url):
    for off in ("off", ""):
        resp = _app(redis_url, METRICS_BIND=off).test_client().get("/metrics")
        assert resp.status_code == 404 and b"tilehouse_" not in resp.data


def test_with_a_metrics_token_metrics_need_it_and_the_api_does_not(redis_conn, redis_url):
    client = _app(redis_url, METRICS_TOKEN="s3cret-metrics", METRICS_BIND="off").test_client()
    for headers in ({}, bearer("wrong"), {"Authorization": "Basic czNjcmV0"}):
        resp = client.get("/metrics", headers=headers)
        assert resp.status_code == 401 and resp.headers["Content-Type"] == "application/problem+json"
        assert resp.headers["WWW-Authenticate"].startswith("Bearer")
        assert b"tilehouse_" not in resp.data
    ok = client.get("/metrics", headers=bearer("s3cret-metrics"))
    assert ok.status_code == 200 and b"tilehouse_http_requests_total" in ok.data
    assert client.get("/v1/rules").status_code == 200


def test_with_a_metrics_bind_metrics_answer_only_there_and_nothing_else_does(redis_conn, redis_url):
    app = _app(redis_url, METRICS_BIND="127.0.0.1:9109")
    client = app.test_client()
    public = client.get("/metrics")
    assert public.status_code == 404 and public.headers["Content-Type"] == "application/problem+json"
    assert client.get("/v1/rules").status_code == 200
    # the metrics listener is not the API, so openapi.yaml does not describe it: a plain client
    app.test_client_class = None
    metrics_side = app.test_client()
    on_metrics = {"SERVER_PORT": "9109"}
    assert metrics_side.get("/metrics", environ_overrides=on_metrics).status_code == 200
    assert metrics_side.get("/healthz", environ_overrides=on_metrics).status_code == 200
    hidden = metrics_side.get("/v1/rules", environ_overrides=on_metrics)
    assert hidden.status_code == 404 and hidden.headers["Content-Type"] == "application/problem+json"


def test_a_metrics_bind_that_is_not_host_and_port_stops_the_app_at_start(redis_url):
    with pytest.raises(ValueError, match="METRICS_BIND"):
        create_app({"REDIS_URL": redis_url, "METRICS_BIND": "9100"})


def _get(url: str, headers: dict[str, str] | None = None) -> tuple[int, str | None, bytes]:
    req = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.headers.get("Content-Type"), r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type"), e.read()


def test_under_gunicorn_the_metrics_bind_is_a_second_listener_and_the_host_header_cannot_reach_it(
        redis_conn, redis_url, tmp_path):
    metrics_port = free_port()
    env = environment(redis_url, {"TILEHOUSE_METRICS_BIND": f"127.0.0.1:{metrics_port}"})
    # gunicorn.conf.py turns TILEHOUSE_METRICS_BIND into the second listener
    gunicorn, base = start_gunicorn(env, tmp_path / "gunicorn.log", config_file=True)
    try:
        wait_ready(base, [gunicorn])
        status, ctype, body = _get(base + "/metrics")
        check_response("GET", "/metrics", status, ctype, body)
        assert status == 404
        status, _, _ = _get(base + "/metrics", {"Host": f"127.0.0.1:{metrics_port}"})
        assert status == 404
        status, ctype, body = _get(f"http://127.0.0.1:{metrics_port}/metrics")
        check_response("GET", "/metrics", status, ctype, body)
        assert status == 200 and b"tilehouse_http_requests_total" in body
        assert _get(f"http://127.0.0.1:{metrics_port}/v1/rules")[0] == 404
        assert _get(base + "/v1/rules")[0] == 200
    finally:
        stop([gunicorn])
