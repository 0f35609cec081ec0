"""No token or stream ticket in any log line.

A seat's token, the admin token and a stream ticket are bearer secrets: whoever reads one in a log can play
that seat.  The app never logs them itself (its request lines carry the route template, not the URL), but
gunicorn's access log carries the query string -- where a browser's stream ticket travels
(``/v1/games/{id}/stream?ticket=...``) -- and a server's or a library's message may quote a URL or a header.
:class:`RedactSecrets`, a logging filter on every handler of the API (gunicorn.conf.py) and of the workers
(worker.py), replaces in each record's message and arguments

* the value of a ``ticket``, ``token`` or ``*_token`` query parameter or JSON member, and
* whatever follows ``Bearer``

with :data:`REDACTED`, before any formatter sees the record.
"""

from __future__ import annotations

import logging
import re
from typing import Any

REDACTED = "[redacted]"

#: ``ticket=...`` / ``admin_token=...`` in a query, ``"token": "..."`` in JSON, ``Bearer ...`` in a header
PATTERNS = (
    re.compile(r"(?i)\b((?:ticket|token|\w+_token)=)[^&\s\"']+"),
    re.compile(r"(?i)(\"(?:ticket|token|\w+_token)\"\s*:\s*\")[^\"]+"),
    re.compile(r"(?i)(\bbearer\s+)[^\s\"',;]+"),
)


def redact(text: str) -> str:
    for pattern in PATTERNS:
        text = pattern.sub(lambda m: m.group(1) + REDACTED, text)
    return text


def _clean(value: Any) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return type(value)(_clean(v) for v in value)
    return value


class RedactSecrets(logging.Filter):
    """Removes tokens and tickets from a record's message, arguments and string extras."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = redact(record.msg)
        if record.args:
            record.args = _clean(record.args)
        for name, value in list(vars(record).items()):
            if isinstance(value, str) and name not in ("msg", "levelname", "name", "pathname", "filename",
                                                         "module", "funcName", "threadName", "processName"):
                setattr(record, name, redact(value))
        return True


def install(logger: logging.Logger | None = None) -> None:
    """Put :class:`RedactSecrets` on every handler of ``logger`` (the root logger by default), once."""
    for handler in (logger or logging.getLogger()).handlers:
        if not any(isinstance(f, RedactSecrets) for f in handler.filters):
            handler.addFilter(RedactSecrets())
