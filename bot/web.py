"""The ASGI web app: each adapter's webhook routes plus health endpoints.

No model call ever happens here: webhooks verify, enqueue and acknowledge.
"""
from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator

import time

from prometheus_client import CONTENT_TYPE_LATEST
from redis.exceptions import ConnectionError, RedisError, ResponseError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from bot.metrics import StatusGate
from bot.report.endpoint import admin_route
from adapters.common.ingress import unavailable
from bot.wiring import Components

log = logging.getLogger(__name__)


def create_app(components: Components, *, host: str | None = None) -> Starlette:
    """`host`: the address the server binds (default HOST); beyond loopback, /readyz and /metrics close."""
    settings = components.settings
    token = settings.metrics_token.get_secret_value() if settings.metrics_token else ""
    gate = StatusGate.for_server(host or settings.host, token, settings.metrics_public)
    if gate.closed:
        log.warning("/readyz and /metrics are closed: the server binds %s, beyond loopback; set METRICS_TOKEN "
                    "(a bearer token) or METRICS_PUBLIC=true to open them (/healthz stays open)", host or settings.host)

    def refused(request: Request, *, metrics: bool) -> Response | None:
        # Before any Redis work: an unauthenticated caller costs nothing. The header is never logged.
        status = gate.refusal(request.headers.get("authorization"), metrics=metrics)
        if status is None:
            return None
        headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
        return PlainTextResponse("unauthorized" if status == 401 else "forbidden", status_code=status, headers=headers)

    async def healthz(_: Request) -> PlainTextResponse:
        return PlainTextResponse("ok")

    async def readyz(request: Request) -> Response:
        if (refusal := refused(request, metrics=False)) is not None:
            return refusal
        try:
            await components.redis.ping()
            redis_ok = True
        except (RedisError, OSError):
            redis_ok = False
        body = {"redis": redis_ok, "adapters": sorted(components.adapters)}
        return JSONResponse(body, status_code=200 if redis_ok else 503)

    async def metrics(request: Request) -> Response:
        if components.metrics is None:
            return PlainTextResponse("metrics disabled", status_code=404)
        if (refusal := refused(request, metrics=True)) is not None:
            return refusal
        try:
            await refresh_queue_gauges(components)
        except (RedisError, OSError):
            pass  # still serve the counters we have
        return Response(components.metrics.render(), media_type=CONTENT_TYPE_LATEST)

    async def redis_unavailable(_: Request, exc: Exception) -> Response:
        # A Redis error no route caught: the same 503 every webhook answers (the platform retries).
        return unavailable("webhook", exc)

    routes = [Route("/healthz", healthz), Route("/readyz", readyz), Route("/metrics", metrics)]
    admin = admin_route(components)  # None when no ADMIN_TOKEN(S) is set: /admin is off
    if admin is not None:
        routes.append(admin)
    for adapter in components.adapters.values():
        routes.extend(adapter.routes())

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        for adapter in components.adapters.values():
            await adapter.start()
        # Adapters are stopped by Components.aclose(), which the process calls after the server exits.
        yield

    handlers = {RedisError: redis_unavailable, ConnectionError: redis_unavailable}
    return Starlette(routes=routes, lifespan=lifespan, exception_handlers=handlers)


async def refresh_queue_gauges(components: Components) -> None:
    """Queue depth and the age of the oldest unacked job, read from the stream's consumer group.

    One pipeline, one round trip per scrape: a scraper every few seconds on every replica must not
    add up to real load on Redis. A missing stream or group answers with an error inside the
    pipeline, which means an empty queue.
    """
    from bot.worker import GROUP  # noqa: PLC0415 - avoids importing the worker into web-only code paths

    metrics, redis, stream = components.metrics, components.redis, components.keys.jobs
    assert metrics is not None
    async with redis.pipeline(transaction=False) as pipe:
        pipe.xpending(stream, GROUP)
        pipe.xinfo_groups(stream)
        pipe.xlen(stream)
        summary, groups, length = await pipe.execute(raise_on_error=False)
    if isinstance(summary, ResponseError) or isinstance(groups, ResponseError):  # no stream or group yet
        metrics.queue_depth.set(0)
        metrics.oldest_pending_seconds.set(0)
        return
    pending = int(summary.get("pending") or 0)
    ours = next((g for g in groups if g.get("name") in (GROUP, GROUP.encode())), {})
    lag = ours.get("lag")
    # Redis < 7 has no lag, and 7 answers nil when it cannot tell; finished jobs are deleted from the
    # stream, so its length (waiting + in progress) is the right figure then.
    metrics.queue_depth.set(pending + int(lag) if lag is not None else int(length))
    oldest = summary.get("min")
    if oldest:
        oldest_id = oldest.decode() if isinstance(oldest, bytes) else oldest
        metrics.oldest_pending_seconds.set(max(time.time() - int(oldest_id.split("-")[0]) / 1000, 0))
    else:
        metrics.oldest_pending_seconds.set(0)
