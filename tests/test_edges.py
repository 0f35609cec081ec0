"""Edges of HTTP with a real gunicorn (gunicorn.conf.py, the way the image runs it): malformed and truncated
chunked bodies (``service.hardening.bodies``), gunicorn's own 400/414/431 refusals
(``service.hardening.http_errors``) and no token or stream ticket in any log line
(``service.hardening.redact``)."""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from api_support import ROOT
from processes import environment, stop, wait_ready

from service.hardening.redact import REDACTED, redact
from service.redis_local import free_port

pytestmark = pytest.mark.e2e

CHUNKED = (b"POST /v1/games HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
           b"Transfer-Encoding: chunked\r\n\r\n")


@pytest.fixture(scope="module")
def served(redis_url, tmp_path_factory) -> Iterator[tuple[int, Path]]:
    """gunicorn with the project's config file, its access log on; (port, the file with all its output)."""
    port, log = free_port(), tmp_path_factory.mktemp("edges") / "gunicorn.log"
    env = environment(redis_url, {"TILEHOUSE_BIND": f"127.0.0.1:{port}", "TILEHOUSE_ACCESS_LOG": "1",
                                  "TILEHOUSE_LOG_LEVEL": "INFO", "TILEHOUSE_METRICS_BIND": f"127.0.0.1:{free_port()}"})
    with open(log, "ab") as out:
        proc = subprocess.Popen([sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "service:create_app()"],
                                cwd=ROOT, env=env, stdout=out, stderr=out)
    try:
        wait_ready(f"http://127.0.0.1:{port}", [proc])
        yield port, log
    finally:
        stop([proc])


def _raw(port: int, data: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send ``data``, close our side, read the whole answer: (status, headers, body)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)
        got = b""
        while chunk := s.recv(65536):
            got += chunk
    head, _, body = got.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    return int(lines[0].split()[1]), headers, body


def _problem(port: int, data: bytes, status: int) -> dict:
    got, headers, body = _raw(port, data)
    assert got == status, body
    assert headers["content-type"] == "application/problem+json"
    doc = json.loads(body)
    assert doc["status"] == status and doc["type"].startswith("urn:tilehouse:problem:")
    return doc


def _lines(log: Path) -> list[str]:
    return log.read_text(errors="replace").splitlines()


@pytest.mark.parametrize(("body", "what"), [(b"zz\r\n{}\r\n0\r\n\r\n", "chunk size"),
                                            (b"2\r\n{}XX0\r\n\r\n", "chunk terminator"),
                                            (b"64\r\n{\"rules\": ", "truncated")])
def test_a_malformed_or_truncated_chunked_body_is_a_400_problem_logged_as_a_warning(served, redis_conn, body, what):
    port, log = served
    doc = _problem(port, CHUNKED + body, 400)
    assert doc["type"].endswith(":malformed-body")
    time.sleep(0.3)
    lines = _lines(log)
    assert not any("Traceback" in line for line in lines), what
    assert any('"level":"warning"' in line.replace(" ", "") and "malformed chunked body" in line for line in lines)
    assert not redis_conn.keys("th:game:*")


def test_gunicorns_own_refusals_are_problem_documents(served):
    port, _ = served
    assert _problem(port, b"GET /" + b"a" * 5000 + b" HTTP/1.1\r\nHost: t\r\n\r\n", 414)["type"].endswith(
        ":request-line-too-long")
    assert _problem(port, b"GET / HTTP/1.1\r\nHost: t\r\nX-Big: " + b"a" * 9000 + b"\r\n\r\n", 431)["type"].endswith(
        ":headers-too-large")
    many = b"".join(b"X-%d: 1\r\n" % i for i in range(60))
    assert _problem(port, b"GET / HTTP/1.1\r\nHost: t\r\n" + many + b"\r\n", 431)
    assert _problem(port, b"GARBAGE\r\n\r\n", 400)["type"].endswith(":malformed-request")


def _call(base: str, method: str, path: str, body: dict | None = None, token: str | None = None,
          read: int | None = None) -> dict:
    req = urllib.request.Request(base + path, method=method, data=None if body is None else json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json",
                                          **({"Authorization": f"Bearer {token}"} if token else {})})
    with urllib.request.urlopen(req, timeout=10) as r:
        data = r.read(read) if read else r.read()
    return json.loads(data) if not read and data else {}


def test_no_token_or_stream_ticket_appears_in_any_log_line(served):
    port, log = served
    base = f"http://127.0.0.1:{port}"
    created = _call(base, "POST", "/v1/games", {"rules": "kozel", "seats": [{"kind": "human"}] * 2})
    game_id = created["game"]["id"]
    secrets_seen = [created["admin_token"], *(s["token"] for s in created["seats"])]
    for seat in created["seats"]:
        ticket = _call(base, "POST", f"/v1/games/{game_id}/stream-tickets", token=seat["token"])
        secrets_seen.append(ticket["ticket"])
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:  # the stream, ticket in its query
            sock.sendall(f"GET {ticket['stream']} HTTP/1.1\r\nHost: t\r\n\r\n".encode())
            assert sock.recv(64).startswith(b"HTTP/1.1 200")
        _call(base, "GET", f"/v1/games/{game_id}", token=seat["token"])
    for bad in ("/v1/games/nope/stream?ticket=" + secrets_seen[-1], f"/v1/games/{game_id}?token={secrets_seen[0]}"):
        with contextlib.suppress(urllib.error.HTTPError):
            urllib.request.urlopen(base + bad, timeout=10).read()
    _call(base, "DELETE", f"/v1/games/{game_id}", token=created["admin_token"])
    time.sleep(0.5)
    lines = _lines(log)
    assert any("/stream" in line for line in lines), "the access log was not captured"
    leaked = [line for line in lines for s in secrets_seen if s in line or s.split(".", 1)[-1] in line]
    assert leaked == []
    assert any(REDACTED in line for line in lines)


def test_redact_removes_query_json_and_bearer_secrets_and_nothing_else():
    line = ('GET /v1/games/ab/stream?ticket=t.1-x_y&after=3 {"token": "ab.zz", "admin_token": "ab.q"} '
            'Authorization: Bearer ab.cd x_token=v')
    assert redact(line) == ('GET /v1/games/ab/stream?ticket=[redacted]&after=3 {"token": "[redacted]", '
                            '"admin_token": "[redacted]"} Authorization: Bearer [redacted] x_token=[redacted]')
