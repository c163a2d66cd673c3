"""The ASGI web app: each adapter's webhook routes plus health endpoints.

No model call ever happens here: webhooks verify, enqueue and acknowledge.
"""
from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator

from redis.exceptions import RedisError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse
from starlette.routing import Route

from bot.wiring import Components

log = logging.getLogger(__name__)


def create_app(components: Components) -> Starlette:
    async def healthz(_: Request) -> PlainTextResponse:
        return PlainTextResponse("ok")

    async def readyz(_: Request) -> JSONResponse:
        try:
            await components.redis.ping()
            redis_ok = True
        except (RedisError, OSError):
            redis_ok = False
        body = {"redis": redis_ok, "adapters": sorted(components.adapters)}
        return JSONResponse(body, status_code=200 if redis_ok else 503)

    routes = [Route("/healthz", healthz), Route("/readyz", readyz)]
    for adapter in components.adapters.values():
        routes.extend(adapter.routes())

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        for adapter in components.adapters.values():
            await adapter.start()
        # Adapters are stopped by Components.aclose(), which the process calls after the server exits.
        yield

    return Starlette(routes=routes, lifespan=lifespan)
