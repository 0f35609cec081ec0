"""gunicorn settings for the tilehouse API (``gunicorn -c gunicorn.conf.py 'service.app:create_app()'``).

Every setting can be overridden from the environment (see the README's table); the defaults are for a
small machine. Worker class and counts were chosen by measurement -- see MEASURED below.
"""

from __future__ import annotations

import os

# service.config imports nothing but the standard library's os and typing, which gevent does not patch: it
# may come before the patch, which reads its default worker class
from service import config as _config

# The gevent worker (the default, see worker_class below) monkey-patches the standard library when each
# worker starts, but the master process has by then imported the app's logging classes (logconfig_dict
# below), and with them redis-py and ssl, which gevent must patch before they are imported. So the patch
# is done here, first thing, in the master: its forked workers inherit it, and gunicorn's own patch_all() in
# each worker finds nothing left to do. Other worker classes are not touched.
if os.environ.get("TILEHOUSE_WORKER_CLASS", _config.DEFAULT_WORKER_CLASS) == "gevent":
    from gevent import monkey

    monkey.patch_all()

import json
import shutil
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gunicorn.glogging import Logger


def _int(name: str, default: int) -> int:
    return int(os.environ.get(name, default))


# MEASURED (2026-11-30, this 2-core machine shared with other jobs, load average 5-10, so +-30 %):
# GET /v1/games/{id} (a Tien Gow view from Redis), a Python client with C keep-alive connections for 5 s,
# gunicorn and a private Redis on the same machine; requests/s of each run, p50 / p99 ms over the runs:
#   sync    x2          C=8: 737, 1363, 1245 (p50 5-10, p99 22-29)   C=32: 862, 901, 669 (p50 34-42, p99 47-136)
#   sync    x4          C=8: 703 (p50 11, p99 20)                    C=32: 1147 (p50 23, p99 67)
#   gthread x2, 4 thr   C=8: 1402, 998, 1320 (p50 5-8, p99 18-27)    C=32: 1007, 1071, 1324 (p50 22-30, p99 54-83)
#   gthread x2, 8 thr   C=8: 1138, 1080, 864 (p50 6-8, p99 19-24)    C=32: 1211, 1076, 1220 (p50 24-28, p99 63-80)
#   gthread x4, 4 thr   C=8: 1014 (p50 7, p99 20)                    C=32: 1247 (p50 20, p99 100)
# A request is CPU-bound Python plus a few Redis round trips, so throughput tops out near one process per
# core whatever the class; what separates them is many clients: sync serves one connection per process
# and closes it after every response, so at 32 clients it drops and its tail grows, while gthread keeps
# connections alive and overlaps Redis waits. That chose gthread, workers = cores (2), 4 threads each.
#
# MEASURED again (2026-12-01, load average 13-22 on the 2 cores: other sessions' test suites), for
# the push streams: `tilehouse bench http --worker-classes gthread,gevent --seconds 10 --rounds 10` (one
# server per class, 1 s slices interleaved; requests/s, p50/p99 ms, CPU time of gunicorn's workers/request):
#   endpoint       gthread x2, 4 thr                    gevent x2
#   GET /healthz   890 r/s, 3.3 / 28 ms,  806 us CPU    637 r/s (72 %), 2.2 / 61 ms,  727 us CPU
#   GET view       642 r/s, 4.6 / 27 ms, 1154 us CPU    391 r/s (61 %), 4.7 / 76 ms, 1136 us CPU
#   GET moves      621 r/s, 4.7 / 39 ms, 1025 us CPU    448 r/s (72 %), 4.6 / 56 ms, 1155 us CPU
#   POST move      392 r/s, 8.1 / 50 ms, 1786 us CPU    252 r/s (64 %), 7.0 / 101 ms, 1882 us CPU
# (an earlier 12 x 1 s run: 54, 43, 46, 52 %). The work per request is the same (CPU within +-10 %, p50
# equal), but on this oversubscribed machine a gevent process -- one OS thread for all its connections --
# got less of the CPU than a gthread one and its p99 doubled; on cores of its own the gap should shrink
# to the CPU difference, which this machine could not show. Chosen all the same: gevent, because under
# gthread every open push stream holds one of the 8 threads for as long as it is open, so eight idle
# streams stop the API altogether (tried: with 8 streams open, GET /healthz timed out after 5 s, twice), while 500 streams on gevent leave GET view at 109 % / 94 % (pooled /
# median of rounds) of its figure without them, at the same 1470 us CPU per request (`tilehouse bench
# streams --rounds 6`). TILEHOUSE_WORKER_CLASS=gthread remains for a deployment without streams.

# /metrics must add up the counters of every worker process: prometheus_client's multiprocess mode keeps
# them in files in this folder. It is chosen here, before any worker imports prometheus_client, so the
# API gets it however gunicorn is started, and RQ workers (other processes, other containers) never do.
_own_metrics_dir = "PROMETHEUS_MULTIPROC_DIR" not in os.environ
os.environ.setdefault("PROMETHEUS_MULTIPROC_DIR",
                      str(Path(tempfile.gettempdir()) / f"tilehouse-metrics-{os.getpid()}"))

# TILEHOUSE_METRICS_BIND adds a second listener, the only one that serves /metrics
# (service.hardening.metrics_access), so the metrics stay off the public API.
# Default 127.0.0.1:9100 (service.config); "off" or empty: no such listener (/metrics then needs the token).
bind = [os.environ.get("TILEHOUSE_BIND", _config.DEFAULT_BIND)]
_metrics_bind = os.environ.get("TILEHOUSE_METRICS_BIND", _config.DEFAULT_METRICS_BIND)
if _metrics_bind.strip().lower() not in _config.METRICS_BIND_OFF:
    bind.append(_metrics_bind)
worker_class = os.environ.get("TILEHOUSE_WORKER_CLASS", _config.DEFAULT_WORKER_CLASS)
workers = _int("TILEHOUSE_WEB_CONCURRENCY", 2)
# gthread only (TILEHOUSE_WORKER_CLASS=gthread): threads per worker process
threads = _int("TILEHOUSE_THREADS", 4)
# gevent only: connections (requests in flight and open streams) one worker process holds at once; gunicorn
# itself monkey-patches the worker (gevent.monkey.patch_all()) before it imports the app, so redis-py,
# RQ's enqueueing and everything else in the API use cooperative sockets, locks and sleeps.
worker_connections = _int("TILEHOUSE_WORKER_CONNECTIONS", 1000)
# A request is a few Redis round trips (the AI runs in RQ workers, never in the request), so a worker
# silent for 30 s is stuck, not busy.
timeout = _int("TILEHOUSE_TIMEOUT", 30)
# Below `tilehouse serve --stop-timeout` (30 s), so a graceful stop is never cut short by SIGKILL.
graceful_timeout = _int("TILEHOUSE_GRACEFUL_TIMEOUT", 20)
keepalive = _int("TILEHOUSE_KEEPALIVE", 5)
# Workers signal liveness by touching a file every second; on a container's overlay /tmp that can block
# for long enough to get healthy workers killed, /dev/shm is memory (gunicorn's own advice for Docker).
worker_tmp_dir = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
# gunicorn >= 25 opens a control socket at one fixed path per user ($HOME/.gunicorn/gunicorn.ctl): two
# servers on one machine (tests, several checkouts) would fight over it, and nothing here uses it.
control_socket_disable = True
# Bounded request lines and headers: nothing in the API needs more, and it caps what a client can make us
# buffer before Flask sees the request.
limit_request_line = 4094
limit_request_fields = 50
limit_request_field_size = 8190
# gunicorn refuses what breaks those limits (414, 431) or is not HTTP (400) before Flask sees it; those
# answers are problem documents like the app's (service.hardening.http_errors)
from service.hardening import http_errors  # noqa: E402 - after the gevent patch above

http_errors.install()
# gunicorn ignores X-Forwarded-* unless the peer is listed here; in compose the API sits behind nothing,
# behind a proxy set FORWARDED_ALLOW_IPS to its address.
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1")

# The app writes one JSON line per request itself (service.observability: route template, status,
# duration, request id), so gunicorn's own access log is off by default to avoid two lines per request.
# TILEHOUSE_ACCESS_LOG=1 turns it on (JSON, to stdout), e.g. to see requests that never reach Flask.
access_log_on = os.environ.get("TILEHOUSE_ACCESS_LOG", "").lower() in ("1", "true", "yes", "on")


class JsonAccessLogger(Logger):
    """gunicorn's access log as one JSON object per line, encoded with json.dumps: a JSON-shaped
    ``access_log_format`` would pass a quote in a path or a user agent through unescaped."""

    def access(self, resp: Any, req: Any, environ: dict[str, Any], request_time: Any) -> None:
        if not getattr(self, "access_log_enabled", True):
            return
        atoms = self.atoms(resp, req, environ, request_time)
        line = {"ts": datetime.now(UTC).isoformat(timespec="milliseconds"), "level": "info",
                "logger": "gunicorn.access", "remote": atoms["h"], "method": atoms["m"], "path": atoms["U"],
                "query": atoms["q"], "status": int(str(atoms["s"]).split()[0]), "bytes": atoms["B"],
                "duration_ms": round(request_time.total_seconds() * 1000, 3),
                "request_id": atoms.get("{x-request-id}o"), "user_agent": atoms["a"]}
        self.access_log.info(json.dumps(line, default=str))


logger_class = JsonAccessLogger
errorlog = "-"
loglevel = os.environ.get("TILEHOUSE_LOG_LEVEL", _config.DEFAULT_LOG_LEVEL).lower()

# gunicorn's own messages, and everything the app logs through the root logger, as one JSON object per
# line (the same shape as the app and the RQ workers write).
logconfig_dict: dict[str, Any] = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"context": {"()": "service.logs.ContextFilter"},
                # no token or stream ticket in any line (the access log's query carries a stream's ticket)
                "redact": {"()": "service.hardening.redact.RedactSecrets"}},
    "formatters": {
        "json": {"()": "service.logs.JsonFormatter"},
        # JsonAccessLogger's message is a JSON line already; it passes through unchanged.
        "raw": {"format": "%(message)s"},
    },
    "handlers": {
        "stderr": {"class": "logging.StreamHandler", "formatter": "json", "filters": ["redact", "context"],
                   "stream": "ext://sys.stderr"},
        "access": {"class": "logging.StreamHandler", "formatter": "raw", "filters": ["redact"],
                   "stream": "ext://sys.stdout"},
    },
    "root": {"level": loglevel.upper(), "handlers": ["stderr"]},
    "loggers": {
        "gunicorn.error": {"level": loglevel.upper(), "handlers": ["stderr"], "propagate": False},
        "gunicorn.access": {"level": "INFO" if access_log_on else "CRITICAL", "handlers": ["access"],
                            "propagate": False},
    },
}

def on_starting(server: Any) -> None:
    """Start PROMETHEUS_MULTIPROC_DIR empty: files left by an earlier run would be summed into /metrics."""
    path = Path(os.environ["PROMETHEUS_MULTIPROC_DIR"])
    path.mkdir(parents=True, exist_ok=True)
    for child in path.glob("*.db"):
        child.unlink()


def on_exit(server: Any) -> None:
    """Remove the metrics folder if it was ours (a folder the operator named is left in place)."""
    if _own_metrics_dir:
        shutil.rmtree(os.environ["PROMETHEUS_MULTIPROC_DIR"], ignore_errors=True)


def post_worker_init(worker: Any) -> None:
    """gevent: on SIGTERM, besides gunicorn's own stop (no new connections, requests in flight finish), end
    the worker's open push streams at once (service.live.stream.end_all): they never end by themselves, and
    the worker would otherwise wait the whole graceful timeout for them before it exits."""
    if worker_class != "gevent":
        return
    import signal

    import gevent

    from service.live import stream

    own = worker.handle_exit

    def handle_exit(sig: int, frame: Any) -> None:
        own(sig, frame)
        gevent.spawn(stream.end_all)  # out of the signal handler, in the worker's hub

    signal.signal(signal.SIGTERM, handle_exit)


def child_exit(server: Any, worker: Any) -> None:
    """Let prometheus_client drop the live-gauge files of a gunicorn worker that has exited."""
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)
