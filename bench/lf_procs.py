"""Child processes for bench/load_fault.py: a crash-safe private redis-server and the bot itself.

Every child is started so that it cannot outlive the bench: it gets SIGKILL when the bench
process dies (Linux PR_SET_PDEATHSIG), and `ProcessGroup.close()` (called from `finally`
blocks and signal handlers) stops the ones still running, each by its own pid.
"""
from __future__ import annotations

import asyncio
import ctypes
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from bot.embedded_redis import redis_server_binary

REPO = Path(__file__).resolve().parents[1]
PR_SET_PDEATHSIG = 1


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


try:
    _PRCTL = ctypes.CDLL(None, use_errno=True).prctl  # looked up now: the child only calls it
except (OSError, AttributeError):
    _PRCTL = None  # not Linux: ProcessGroup.close() still cleans up


def _die_with_parent() -> None:  # runs in the child between fork and exec
    if _PRCTL is not None:
        _PRCTL(PR_SET_PDEATHSIG, signal.SIGKILL)


@dataclass
class Child:
    name: str
    process: subprocess.Popen[bytes]
    log_path: Path
    _log: IO[bytes] | None = None

    @property
    def pid(self) -> int:
        return self.process.pid

    def alive(self) -> bool:
        return self.process.poll() is None

    def kill(self) -> None:
        """SIGKILL: a crash, nothing gets to clean up."""
        if self.alive():
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()

    def stop(self, timeout: float = 8.0) -> None:
        """SIGTERM, then SIGKILL if it does not exit in time."""
        if self.alive():
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.kill()
        if self._log is not None:
            self._log.close()
            self._log = None

    def log_tail(self, lines: int = 15) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


@dataclass
class ProcessGroup:
    """Every child this bench started; close() stops them all, newest first."""

    children: list[Child] = field(default_factory=list)

    def spawn(self, name: str, args: list[str], log_path: Path, *, env: dict[str, str] | None = None,
              cwd: Path | None = None) -> Child:
        log = open(log_path, "ab")  # noqa: SIM115 - closed by Child.stop
        process = subprocess.Popen(
            args, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
            cwd=str(cwd) if cwd else None, preexec_fn=_die_with_parent,
        )
        child = Child(name, process, log_path, log)
        self.children.append(child)
        return child

    def close(self) -> None:
        for child in reversed(self.children):
            try:
                child.stop(timeout=5.0)
            except Exception:  # noqa: BLE001 - keep stopping the others
                child.kill()
        self.children.clear()


# --- redis -----------------------------------------------------------------------------------


class PersistentRedis:
    """A private redis-server whose data survives a crash: AOF with fsync on every write."""

    def __init__(self, group: ProcessGroup, data_dir: Path, port: int | None = None) -> None:
        self.group = group
        self.data_dir = data_dir
        self.port = port or free_port()
        self.child: Child | None = None
        self.back_at: float | None = None  # monotonic time of the last restart
        data_dir.mkdir(parents=True, exist_ok=True)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    async def start(self, timeout: float = 15.0) -> None:
        """Spawn (from the calling thread, which must be the main one: the child dies with it) and
        wait, without blocking the event loop, until it answers PING with its data loaded."""
        args = [
            redis_server_binary(), "--bind", "127.0.0.1", "--port", str(self.port),
            "--dir", str(self.data_dir.resolve()), "--appendonly", "yes", "--appendfsync", "always",
            "--save", "", "--protected-mode", "yes", "--logfile", "redis.log",
        ]
        self.child = self.group.spawn("redis", args, self.data_dir / "stdout.log")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.child.alive():
                raise RuntimeError(f"redis-server exited: {self.child.log_tail()}")
            if _redis_ready(self.port):
                return
            await asyncio.sleep(0.05)
        raise RuntimeError("redis-server did not become ready")

    def crash(self) -> None:
        """SIGKILL: what survives is only what the AOF already had on disk."""
        if self.child is not None:
            self.child.kill()


def _redis_ready(port: int) -> bool:
    """PING answers PONG only once the AOF is loaded (LOADING errors before that)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.3) as conn:
            conn.sendall(b"PING\r\n")
            return conn.recv(16).startswith(b"+PONG")
    except OSError:
        return False


# --- the bot ----------------------------------------------------------------------------------

# Only these reach the bot's environment: no token or key of the person running the bench.
_PASS_THROUGH = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT")


def bot_env(settings: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k in _PASS_THROUGH}
    env["PYTHONPATH"] = str(REPO)
    env["PYTHONUNBUFFERED"] = "1"
    env.update(settings)
    return env


def spawn_bot(group: ProcessGroup, mode: str, name: str, env: dict[str, str], run_dir: Path,
              port: int | None = None) -> Child:
    # cwd is the run directory: no stray .env of the repository is read
    args = [sys.executable, "-m", "bot", mode]
    if port is not None:
        args += ["--port", str(port)]
    return group.spawn(name, args, run_dir / f"{name}.log", env=env, cwd=run_dir)
