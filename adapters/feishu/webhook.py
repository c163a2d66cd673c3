"""Starlette routes for webhook mode: POST /feishu/events and POST /feishu/card.

They only translate HTTP to the shared inbound path: verify (envelope), answer
url_verification at once, submit, and acknowledge. No Feishu API call and no
model call happens here, so the 3-second (1 s for url_verification) deadline holds.
"""
from __future__ import annotations

import logging
import time
from typing import Callable

from redis.exceptions import RedisError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from adapters.feishu.envelope import CallbackSecrets, Rejected, is_url_verification, open_callback
from adapters.feishu.inbound import FeishuInbound

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 1024 * 1024  # events are a few KB; refuse anything absurd before reading on

def feishu_routes(inbound: FeishuInbound, secrets: CallbackSecrets, clock: Callable[[], float] = time.time) -> list[Route]:
    async def read(request: Request) -> dict:
        declared = request.headers.get("content-length")
        if declared and declared.isdigit() and int(declared) > MAX_BODY_BYTES:
            raise Rejected(413, "body too large")
        body = await request.body()
        if len(body) > MAX_BODY_BYTES:
            raise Rejected(413, "body too large")
        return open_callback(body, request.headers, secrets, clock())

    async def events(request: Request) -> Response:
        try:
            payload = await read(request)
        except Rejected as r:
            log.warning("feishu: rejected event callback: %s", r.reason)
            return JSONResponse({"msg": r.reason}, status_code=r.status)
        if is_url_verification(payload):
            return JSONResponse({"challenge": payload["challenge"]})
        try:
            await inbound.on_event(payload)
        except RedisError as exc:
            log.error("feishu: redis unavailable, asking Feishu to retry: %s", type(exc).__name__)
            return JSONResponse({"msg": "busy"}, status_code=503)
        return JSONResponse({"msg": "success"})

    async def card(request: Request) -> Response:
        try:
            payload = await read(request)
        except Rejected as r:
            log.warning("feishu: rejected card callback: %s", r.reason)
            return JSONResponse({"msg": r.reason}, status_code=r.status)
        if is_url_verification(payload):
            return JSONResponse({"challenge": payload["challenge"]})
        try:
            return JSONResponse(await inbound.on_card_action(payload))
        except RedisError as exc:
            log.error("feishu: redis unavailable during card callback: %s", type(exc).__name__)
            return JSONResponse({"msg": "busy"}, status_code=503)

    return [Route("/feishu/events", events, methods=["POST"]), Route("/feishu/card", card, methods=["POST"])]
