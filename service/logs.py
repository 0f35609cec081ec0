"""Request ids and structured JSON logs, for the API processes and the RQ workers alike (no Flask: the
worker process never imports it).

- ``X-Request-ID``: a caller's id is kept when it is short and safe (1-64 characters from
  ``A-Z a-z 0-9 . _ : -``, starting with a letter or digit, :func:`valid_request_id`); anything else is
  replaced by a fresh ``uuid4().hex`` rather than rejected, because a bad tracing header must never fail a
  request.  The HTTP layer (:mod:`service.observability`) marks the id of the request it serves
  (:func:`enter_request`); the service puts it in ``job.meta["request_id"]`` of the jobs it queues, where
  a worker built with :class:`JobLogContext` and :class:`TracingQueue` (``worker.py``) finds it again and
  puts the job's id and request id on every line it writes from the dequeue of a job until RQ is done
  with it, RQ's own lines included.
- Logs: one JSON object per line (:func:`configure_logging`, used by the app and by ``worker.py``), with
  the request and job ids of the line's context.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
import traceback
import uuid
from contextvars import ContextVar, Token
from datetime import UTC, datetime
from typing import Any, TextIO

from rq import Queue

from service import config

REQUEST_ID_HEADER = "X-Request-ID"
_REQUEST_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,63}")


# --------------------------------------------------------------------------------------------- request ids

def valid_request_id(value: str | None) -> bool:
    return value is not None and _REQUEST_ID_RE.fullmatch(value) is not None


def new_request_id() -> str:
    return uuid.uuid4().hex


#: the id of the request this context serves (set by the HTTP layer: :func:`enter_request`), or None
_REQUEST: ContextVar[str | None] = ContextVar("tilehouse_request", default=None)
#: ``(job id, request id)`` of the job an RQ worker of ours is handling, from the moment it is dequeued until
#: RQ has finished with it -- so RQ's own lines about the job ("play: ... (id)", "Job OK", "result is kept")
#: carry the ids too, not only the lines the job function writes while RQ's current job is set
_WORKER_JOB: ContextVar[tuple[str, str | None] | None] = ContextVar("tilehouse_worker_job", default=None)


def _enter_job(job: Any) -> None:
    meta = job.meta if isinstance(getattr(job, "meta", None), dict) else {}
    rid = meta.get("request_id")
    _WORKER_JOB.set((job.id, rid if isinstance(rid, str) else None))


class TracingQueue(Queue):
    """An RQ queue that marks the job it hands to a worker as the worker's current job for the logs."""

    @classmethod
    def dequeue_any(cls, *args: Any, **kwargs: Any) -> Any:
        result = super().dequeue_any(*args, **kwargs)
        if result is not None:
            _enter_job(result[0])
        return result


class JobLogContext:
    """Mixin for an RQ worker class (before it in the bases): every log line written while the worker
    handles a job -- RQ's own included -- carries that job's ``job_id`` and ``request_id``.
    The worker's queues must be :class:`TracingQueue` (RQ logs the dequeue before ``execute_job`` runs)."""

    queue_class = TracingQueue

    def execute_job(self, job: Any, queue: Any) -> Any:
        _enter_job(job)
        try:
            return super().execute_job(job, queue)  # type: ignore[misc]
        finally:
            _WORKER_JOB.set(None)


def enter_request(request_id: str) -> Token[str | None]:
    """Mark ``request_id`` as the id of the request this context serves (the HTTP layer calls it first
    thing; :func:`leave_request` with the token when the request is done)."""
    return _REQUEST.set(request_id)


def leave_request(token: Token[str | None]) -> None:
    _REQUEST.reset(token)


def current_request_id() -> str | None:
    """The id of the request being served, or of the request that queued the job being handled, or None."""
    serving = _REQUEST.get()
    if serving is not None:
        return serving
    handled = _WORKER_JOB.get()
    if handled is not None:
        return handled[1]
    job = _current_job()
    if job is not None:
        rid = job.meta.get("request_id") if isinstance(job.meta, dict) else None
        return rid if isinstance(rid, str) else None
    return None


def _current_job() -> Any:
    try:
        from rq import get_current_job
    except ImportError:  # rq is a dependency; the guard only keeps logging usable without it
        return None
    return get_current_job()


# --------------------------------------------------------------------------------------------- logging

#: LogRecord attributes that are not user data; everything else given through ``extra=`` is logged.
_RECORD_FIELDS = frozenset(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message", "asctime",
                                                                                  "taskName"}


class ContextFilter(logging.Filter):
    """Adds ``request_id`` and ``job_id`` to every record (None outside a request or job)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "request_id"):
            record.request_id = current_request_id()
        if not hasattr(record, "job_id"):
            serving = _REQUEST.get() is not None
            handled = None if serving else _WORKER_JOB.get()
            if handled is not None:
                record.job_id = handled[0]
            else:
                job = None if serving else _current_job()
                record.job_id = getattr(job, "id", None)
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ``ts`` (UTC, ISO 8601, ms), ``level``, ``logger``, ``msg``, the
    request/job ids, any ``extra=`` fields, and ``exc`` with the traceback when there is one."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in _RECORD_FIELDS and not key.startswith("_"):
                out[key] = value
        if record.exc_info:
            out["exc"] = "".join(traceback.format_exception(*record.exc_info)).rstrip()
        return json.dumps(out, default=str, separators=(",", ":"))


def configure_logging(level: str | int | None = None, stream: TextIO | None = None) -> logging.Handler:
    """Send every log record of this process to ``stream`` (stderr) as one JSON line.

    Replaces the root logger's handlers (so calling it twice does not double lines). ``level`` defaults to
    ``TILEHOUSE_LOG_LEVEL`` or ``service.config.DEFAULT_LOG_LEVEL``. Returns the handler.
    """
    chosen = level if level is not None else os.environ.get("TILEHOUSE_LOG_LEVEL", config.DEFAULT_LOG_LEVEL)
    handler = logging.StreamHandler(stream if stream is not None else sys.stderr)
    handler.setFormatter(JsonFormatter())
    handler.addFilter(ContextFilter())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(chosen.upper() if isinstance(chosen, str) else chosen)
    return handler
