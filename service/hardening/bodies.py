"""Request bodies larger than ``MAX_BODY_BYTES`` are a 413 problem document, whether the client says the
length (``Content-Length``) or streams the body chunked.

Flask's ``MAX_CONTENT_LENGTH`` alone does not hold for a chunked body: werkzeug then reads the stream up to
the limit and hands the view a truncated body, which answered 400 ("not valid JSON") for any oversized
chunked request.  :func:`limit_body` runs before every view:

* a ``Content-Length`` above the limit is refused at once, before one byte of the body is read;
* a chunked body is read here in pieces of at most :data:`READ_SIZE` bytes, never more than the limit plus
  one byte in all; past the limit it is refused, otherwise the bytes read are handed on to the view as a
  plain body with its ``Content-Length`` (so the view reads what the client sent, no more).

A chunked body that is malformed (a chunk size that is not hex, a chunk without its CRLF) or truncated (the
client stops before the last chunk) is a 400 problem document, logged as a warning with the parser's
message, never a traceback.

The 413 and that 400 carry ``Connection: close``: the unread rest of the body must not be parsed as the next request
of a keep-alive connection, and draining it would cost the reads the limit is there to avoid.
"""

from __future__ import annotations

import io
import logging

from flask import Flask, current_app, request

from service.problems import Problem

log = logging.getLogger(__name__)

try:  # the errors gunicorn's chunked reader raises (InvalidChunkSize, ChunkMissingTerminator, NoMoreData)
    from gunicorn.http.errors import ParseException  # type: ignore[import-untyped]
except ImportError:  # another WSGI server: its read errors are OSErrors or ValueErrors
    BODY_ERRORS: tuple[type[Exception], ...] = (OSError, ValueError)
else:
    BODY_ERRORS = (OSError, ValueError, ParseException)

#: bytes read from the socket at a time while a chunked body is checked against the limit
READ_SIZE = 16 * 1024


def too_large(limit: int) -> Problem:
    return Problem(413, f"the request body is larger than the limit of {limit} bytes",
                   headers={"Connection": "close"})


def malformed(exc: Exception) -> Problem:
    return Problem(400, f"the chunked request body is malformed or truncated ({exc})", slug="malformed-body",
                   title="Malformed request body", headers={"Connection": "close"})


def limit_body() -> None:
    limit: int = current_app.config["MAX_BODY_BYTES"]
    environ = request.environ
    length = request.content_length
    if length is not None:
        if length > limit:
            raise too_large(limit)
        return
    if "chunked" not in environ.get("HTTP_TRANSFER_ENCODING", "").lower():
        return
    stream = environ["wsgi.input"]
    body = bytearray()
    while True:
        try:
            piece = stream.read(min(READ_SIZE, limit + 1 - len(body)))
        except BODY_ERRORS as exc:
            log.warning("malformed chunked body", extra={"error": str(exc), "read_bytes": len(body)})
            raise malformed(exc) from None
        if not piece:
            break
        body += piece
        if len(body) > limit:
            raise too_large(limit)
    environ["wsgi.input"] = io.BytesIO(bytes(body))
    environ["CONTENT_LENGTH"] = str(len(body))
    del environ["HTTP_TRANSFER_ENCODING"]


def init_app(app: Flask) -> None:
    app.before_request(limit_body)
