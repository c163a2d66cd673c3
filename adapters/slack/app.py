"""slack-bolt's AsyncApp as a thin translator: Slack requests in, `SlackInbox` calls out.

Bolt verifies signatures (HTTP mode), answers url_verification and ssl_check, drops the
bot's own events and acks. We run it with `process_before_response=True` so a Redis
outage becomes a 503 (Slack retries) instead of an ack followed by a lost question; our
listeners only touch Redis, so they finish well inside the 3-second window.
"""
from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable
from typing import Any

from redis.exceptions import RedisError
from slack_bolt import BoltResponse
from slack_bolt.async_app import AsyncApp
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_sdk.signature import SignatureVerifier
from slack_sdk.web.async_client import AsyncWebClient
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from adapters.common.body import BodyTooLarge, read_capped_body
from adapters.slack.blocks import CLARIFY_ACTION_PREFIX, selected_blocks, ui_text
from adapters.slack.inbox import SlackInbox
from core.language import detect_language

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 1_000_000  # Slack's payloads are far smaller; more is not Slack
EVENTS_PATH = "/slack/events"

Spawn = Callable[[Awaitable[Any]], None]


def build_bolt_app(client: AsyncWebClient, signing_secret: str, inbox: SlackInbox, spawn: Spawn) -> AsyncApp:
    app = AsyncApp(
        client=client,
        signing_secret=signing_secret,
        process_before_response=True,
        name="ascend-inference-copilot",
    )

    @app.error
    async def on_error(error: Exception) -> BoltResponse | None:
        if isinstance(error, (RedisError, OSError)):
            log.warning("slack request not taken: redis unavailable (%s)", type(error).__name__)
            return BoltResponse(status=503, body="temporarily unavailable")
        log.error("slack listener failed: %s", type(error).__name__, exc_info=error)
        return None

    async def on_event(body: dict[str, Any], context: Any, request: AsyncBoltRequest) -> None:
        retry = (request.headers.get("x-slack-retry-num") or [""])[0]
        await inbox.on_event(body, context.bot_user_id or "", context.bot_id or "", retry)

    # "message" matches every subtype (edits, joins, bot posts): we filter in parse_event and
    # still ack them, so Slack never retries an event we chose to ignore.
    app.event("app_mention")(on_event)
    app.event("message")(on_event)

    @app.action(re.compile(rf"^{CLARIFY_ACTION_PREFIX}\d+$"))
    async def on_choice(ack: Any, body: dict[str, Any], client: AsyncWebClient) -> None:
        await ack()
        candidate = await inbox.on_choice(body)
        if candidate is None:
            return
        message = body.get("message") if isinstance(body.get("message"), dict) else {}
        blocks = message.get("blocks") if isinstance(message.get("blocks"), list) else []
        m = candidate.message
        language = detect_language(str(message.get("text") or m.text))  # the question's language
        # The buttons go away once picked, so a second click cannot ask twice.
        spawn(
            client.chat_update(
                channel=m.channel, ts=m.message_id, text=str(message.get("text") or m.text),
                blocks=selected_blocks(blocks, m.text, m.sender, language),
            )
        )

    @app.action(re.compile(r"^aic_feedback_(up|down)$"))
    async def on_feedback(ack: Any, body: dict[str, Any], client: AsyncWebClient) -> None:
        await ack()
        feedback = await inbox.on_feedback(body)
        if feedback is None or not feedback.channel:
            return
        message = body.get("message") if isinstance(body.get("message"), dict) else {}
        language = detect_language(str(message.get("text") or ""))
        spawn(
            client.chat_postEphemeral(
                channel=feedback.channel, user=feedback.user, text=ui_text("thanks", language),
                thread_ts=message.get("thread_ts") or None,
            )
        )

    return app


def events_endpoint(app: AsyncApp, signing_secret: str) -> Callable[[Request], Awaitable[Response]]:
    """POST /slack/events: size limit, signature and timestamp window, then Bolt."""
    verifier = SignatureVerifier(signing_secret)

    async def endpoint(request: Request) -> Response:
        try:
            body = await read_capped_body(request, MAX_BODY_BYTES)
        except BodyTooLarge:
            return JSONResponse({"error": "payload too large"}, status_code=413)
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            return JSONResponse({"error": "malformed payload"}, status_code=400)  # Slack always sends UTF-8
        # Checked here as well as in Bolt so that nothing unverified is even parsed.
        timestamp = request.headers.get("x-slack-request-timestamp", "")
        signature = request.headers.get("x-slack-signature", "")
        if not (timestamp.isascii() and timestamp.isdigit() and signature) or not verifier.is_valid(
            body=text, timestamp=timestamp, signature=signature
        ):
            return JSONResponse({"error": "invalid request"}, status_code=401)
        try:
            bolt_request = AsyncBoltRequest(body=text, query=request.url.query, headers=dict(request.headers))
        except (ValueError, TypeError, AttributeError, KeyError):
            return JSONResponse({"error": "malformed payload"}, status_code=400)
        if not _well_formed(bolt_request.body):
            return JSONResponse({"error": "malformed payload"}, status_code=400)
        try:
            response = await app.async_dispatch(bolt_request)
        except Exception as exc:  # noqa: BLE001 - a payload Bolt cannot take is a bad request, not a crash
            log.warning("slack payload rejected: %s", type(exc).__name__)
            return JSONResponse({"error": "malformed payload"}, status_code=400)
        headers = {k: v for k, v in response.first_headers_without_set_cookie().items() if k.lower() != "content-length"}
        return Response(status_code=response.status, content=response.body, headers=headers)

    return endpoint


def _well_formed(body: Any) -> bool:
    """The shapes Bolt's middleware indexes into without checking (it would answer 500)."""
    if not isinstance(body, dict):
        return False
    for name in ("event", "team", "user", "channel", "container", "message", "authorizations", "actions"):
        value = body.get(name)
        if value is not None and not isinstance(value, list if name in ("authorizations", "actions") else (dict, str)):
            return False
    return True
