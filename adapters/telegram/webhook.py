"""POST /telegram/webhook: check the secret header, accept JSON only, enqueue, return at once.

python-telegram-bot's own webhook server checks X-Telegram-Bot-Api-Secret-Token, but a route in
our own ASGI app has to do it itself, in constant time, before reading the body.
"""
from __future__ import annotations

import hmac
import logging
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response

from adapters.common import json_body
from adapters.common.body import BodyTooLarge, read_capped_body
from adapters.common.ingress import REDIS_DOWN, unavailable
from adapters.telegram.inbound import PLATFORM, MalformedUpdate

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from adapters.telegram.adapter import TelegramAdapter

log = logging.getLogger(__name__)

WEBHOOK_PATH = "/telegram/webhook"
SECRET_HEADER = "x-telegram-bot-api-secret-token"
MAX_BODY = 1_000_000  # an update is a few KB; anything near this is not from Telegram


def secret_matches(given: str | None, expected: str) -> bool:
    if not given or not expected:
        return False
    return hmac.compare_digest(given.encode("utf-8", "surrogateescape"), expected.encode("utf-8"))


def _is_json(content_type: str | None) -> bool:
    return (content_type or "").split(";", 1)[0].strip().lower() == "application/json"


def webhook_endpoint(adapter: "TelegramAdapter") -> "Callable[[Request], Awaitable[Response]]":
    from adapters.telegram.adapter import BotNotReady  # noqa: PLC0415 - avoids an import cycle

    async def endpoint(request: Request) -> Response:
        if not secret_matches(request.headers.get(SECRET_HEADER), adapter.config.webhook_secret):
            return Response("forbidden", status_code=403)
        if not _is_json(request.headers.get("content-type")):
            return Response("expected application/json", status_code=400)
        try:
            body = await read_capped_body(request, MAX_BODY)
        except BodyTooLarge:
            return Response("too large", status_code=413)
        try:
            data: Any = json_body.loads(body)  # depth-capped: a deeply nested body is a 400, not a 500
        except (ValueError, UnicodeDecodeError):
            return Response("invalid JSON", status_code=400)
        if not isinstance(data, dict) or not isinstance(data.get("update_id"), int) or isinstance(data.get("update_id"), bool):
            return Response("not a Telegram update", status_code=400)
        try:
            await adapter.handle_update(data)
        except MalformedUpdate:
            return Response("malformed update", status_code=400)
        except REDIS_DOWN as exc:
            return unavailable(PLATFORM, exc)
        except BotNotReady:
            return Response("try again", status_code=503)
        except Exception:  # noqa: BLE001 - log it; a 500 makes Telegram deliver the update again
            log.exception("telegram webhook: update %s could not be handled", data.get("update_id"))
            return Response("error", status_code=500)
        return Response(status_code=200)

    return endpoint
