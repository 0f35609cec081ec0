"""gunicorn's own refusals as problem documents.

Some requests never reach Flask: gunicorn's parser refuses a request line longer than
``limit_request_line`` (414), more header fields than ``limit_request_fields`` or a field longer than
``limit_request_field_size`` (431), and anything that is not HTTP (400).  gunicorn answers those itself
with ``gunicorn.util.write_error``, an HTML page; :func:`install` (called by gunicorn.conf.py) puts
:func:`write_problem` in its place, so a client gets the same ``application/problem+json`` shape as from the
app (``type`` ``urn:tilehouse:problem:<slug>``, the status, gunicorn's reason as the title, its message as
the detail) and the connection is closed as before.
"""

from __future__ import annotations

import json
import socket

#: status -> slug of gunicorn's refusals (any other status: ``malformed-request``)
SLUGS = {400: "malformed-request", 414: "request-line-too-long", 431: "headers-too-large"}


def problem_bytes(status: int, reason: str, detail: str) -> bytes:
    """The whole HTTP response of one refusal: status line, headers, problem document."""
    from service.problems import PROBLEM_JSON, TYPE_PREFIX  # loaded in the worker by then

    body = json.dumps({"type": TYPE_PREFIX + SLUGS.get(status, "malformed-request"), "title": reason,
                       "status": status, "detail": detail}).encode()
    head = (f"HTTP/1.1 {status} {reason}\r\nConnection: close\r\nContent-Type: {PROBLEM_JSON}\r\n"
            f"Content-Length: {len(body)}\r\n\r\n")
    return head.encode("latin-1") + body


def write_problem(sock: socket.socket, status_int: int, reason: str, mesg: str) -> None:
    """``gunicorn.util.write_error``'s signature, writing a problem document."""
    from gunicorn import util  # type: ignore[import-untyped]

    util.write_nonblock(sock, problem_bytes(int(status_int), str(reason), str(mesg)))


def install() -> None:
    """Make gunicorn write its refusals with :func:`write_problem` (its workers call ``util.write_error``)."""
    from gunicorn import util

    util.write_error = write_problem
