"""Starlette routes for webhook mode: POST /feishu/events and POST /feishu/card.

They only translate HTTP to the shared inbound path: verify (envelope), answer
url_verification at once, submit, and acknowledge. No Feishu API call and no
model call happens here, so the 3-second (1 s for url_verification) deadline holds.
"""
from __future__ import annotations

import logging
import time
from typing import Any, Awaitable, Callable

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from adapters.common.body import BodyTooLarge, read_capped_body
from adapters.common.ingress import REDIS_DOWN, unavailable
from adapters.feishu.envelope import CallbackSecrets, Rejected, is_url_verification, open_callback
from adapters.feishu.inbound import FeishuInbound

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 1024 * 1024  # events are a few KB; refuse anything absurd before reading on

Handle = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]


def feishu_routes(inbound: FeishuInbound, secrets: CallbackSecrets, clock: Callable[[], float] = time.time) -> list[Route]:
    async def on_event(payload: dict[str, Any]) -> dict[str, Any]:
        await inbound.on_event(payload)
        return {"msg": "success"}

    def endpoint(kind: str, handle: Handle) -> Callable[[Request], Awaitable[Response]]:
        """Events and card callbacks share the checks; only what is done with the payload differs."""

        async def receive(request: Request) -> Response:
            try:
                try:
                    body = await read_capped_body(request, MAX_BODY_BYTES)
                except BodyTooLarge:
                    raise Rejected(413, "body too large") from None
                payload = open_callback(body, request.headers, secrets, clock())
            except Rejected as r:
                # The reason goes to the log only: the answer is `public`, which is one fixed text for
                # every failure that depends on a secret (see envelope), so it cannot serve as an oracle.
                log.warning("feishu: rejected %s callback: %s", kind, r.reason)
                return JSONResponse({"msg": r.public}, status_code=r.status)
            if is_url_verification(payload):
                return JSONResponse({"challenge": payload["challenge"]})
            try:
                return JSONResponse(await handle(payload))
            except REDIS_DOWN as exc:
                return unavailable(f"feishu {kind}", exc)

        return receive

    return [
        Route("/feishu/events", endpoint("event", on_event), methods=["POST"]),
        Route("/feishu/card", endpoint("card", inbound.on_card_action), methods=["POST"]),
    ]
