"""Slack requests in, `SlackInbox` calls out: every transport ends in the same inbox calls.

HTTP message events take the short way (verify, parse, `SlackInbox.on_event`); Bolt's AsyncApp
answers url_verification and ssl_check, takes button clicks, and carries Socket Mode, whose
events reach the same `SlackInbox.on_event`. We run Bolt with `process_before_response=True`
so a Redis outage becomes a 503 (Slack retries) instead of an ack followed by a lost question;
our listeners only touch Redis, so they finish well inside the 3-second window.
"""
from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Awaitable, Callable
from typing import Any

from slack_bolt import BoltResponse
from slack_bolt.async_app import AsyncApp
from slack_bolt.middleware.authorization.async_single_team_authorization import AsyncSingleTeamAuthorization
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_sdk.signature import SignatureVerifier
from slack_sdk.web.async_client import AsyncWebClient
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from adapters.common.body import BodyTooLarge, read_capped_body
from adapters.common.ingress import REDIS_DOWN, unavailable
from adapters.slack.blocks import CLARIFY_ACTION_PREFIX, ESCALATE_ACTION, selected_blocks, ui_text
from adapters.slack.inbound import SlackInbox
from adapters.slack.parse import PLATFORM
from core.escalate import ESCALATE_CHOICE
from core.language import detect_language

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 1_000_000  # Slack's payloads are far smaller; more is not Slack
EVENTS_PATH = "/slack/events"
MESSAGE_EVENTS = ("app_mention", "message")

Spawn = Callable[[Awaitable[Any]], None]


def build_bolt_app(client: AsyncWebClient, signing_secret: str, inbox: SlackInbox, spawn: Spawn) -> AsyncApp:
    app = AsyncApp(
        client=client,
        signing_secret=signing_secret,
        process_before_response=True,
        # events_endpoint checks every HTTP signature before parsing; Socket Mode has none to check
        request_verification_enabled=False,
        name="ascend-inference-copilot",
    )

    @app.error
    async def on_error(error: Exception) -> BoltResponse | None:
        if isinstance(error, REDIS_DOWN):
            # the shared 503 (Socket Mode: the envelope stays un-acked, so Slack re-sends it)
            response = unavailable(PLATFORM, error)
            return BoltResponse(status=response.status_code, body=bytes(response.body).decode(), headers=dict(response.headers))
        log.error("slack listener failed: %s", type(error).__name__, exc_info=error)
        return None

    async def on_event(body: dict[str, Any], context: Any, request: AsyncBoltRequest) -> None:
        retry = (request.headers.get("x-slack-retry-num") or [""])[0]
        await inbox.on_event(body, context.bot_user_id or "", context.bot_id or "", retry)

    # "message" matches every subtype (edits, joins, bot posts): we filter in parse_event and
    # still ack them, so Slack never retries an event we chose to ignore.
    for kind in MESSAGE_EVENTS:
        app.event(kind)(on_event)

    @app.action(re.compile(rf"^(?:{CLARIFY_ACTION_PREFIX}\d+|{ESCALATE_ACTION})$"))
    async def on_choice(ack: Any, body: dict[str, Any], client: AsyncWebClient) -> None:
        await ack()
        candidate = await inbox.on_choice(body)
        if candidate is None:
            return
        message = body.get("message") if isinstance(body.get("message"), dict) else {}
        blocks = message.get("blocks") if isinstance(message.get("blocks"), list) else []
        m = candidate.message
        if m.choice == ESCALATE_CHOICE:
            return  # the answer keeps its buttons; the issue link comes as a reply in the thread
        language = m.language  # the question's language, as the core decides it
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


class BotIdentity:
    """The bot's own user id and bot id, from auth.test once, shared with Bolt's authorization so
    Slack is asked once whichever path sees the first event."""

    def __init__(self, app: AsyncApp) -> None:
        self._app = app
        self._ids: tuple[str, str] | None = None
        self._lock = asyncio.Lock()

    def _bolt_authorization(self) -> AsyncSingleTeamAuthorization | None:
        # Bolt keeps its middleware in a private list; without it we only lose the shared cache
        for middleware in getattr(self._app, "_async_middleware_list", ()):
            if isinstance(middleware, AsyncSingleTeamAuthorization):
                return middleware
        return None

    async def ids(self) -> tuple[str, str]:
        """(bot user id, bot id). Raises what auth.test raises (the caller falls back to Bolt)."""
        if self._ids is None:
            async with self._lock:
                if self._ids is None:
                    bolt = self._bolt_authorization()
                    result = bolt.auth_test_result if bolt is not None and bolt.auth_test_result else None
                    if result is None:
                        result = await self._app.client.auth_test()
                        if bolt is not None and bolt.auth_test_result is None:
                            bolt.auth_test_result = result
                    self._ids = (str(result.get("user_id") or ""), str(result.get("bot_id") or ""))
        return self._ids


def _event_callback(body: Any) -> bool:
    """An Events API message event: the one kind the fast lane takes (everything else goes to Bolt)."""
    if not isinstance(body, dict) or body.get("type") != "event_callback":
        return False
    event = body.get("event")
    return isinstance(event, dict) and event.get("type") in MESSAGE_EVENTS


def events_endpoint(app: AsyncApp, signing_secret: str, inbox: SlackInbox | None = None) -> Callable[[Request], Awaitable[Response]]:
    """POST /slack/events: size limit, signature and timestamp window, then the inbox or Bolt.

    Message events (nearly all the traffic, and the ones Slack times at 3 s) go straight from the
    verified body to `SlackInbox.on_event`, the same call Bolt's listener makes: one JSON parse,
    one signature check, one Redis round trip. url_verification, ssl_check and interactive
    payloads (buttons) go through Bolt, which answers and acks them."""
    verifier = SignatureVerifier(signing_secret)
    identity = BotIdentity(app)

    async def endpoint(request: Request) -> Response:
        try:
            body = await read_capped_body(request, MAX_BODY_BYTES)
        except BodyTooLarge:
            return JSONResponse({"error": "payload too large"}, status_code=413)
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            return JSONResponse({"error": "malformed payload"}, status_code=400)  # Slack always sends UTF-8
        # Bolt's own check is off (build_bolt_app): this one runs before anything is parsed.
        timestamp = request.headers.get("x-slack-request-timestamp", "")
        signature = request.headers.get("x-slack-signature", "")
        if not (timestamp.isascii() and timestamp.isdigit() and signature) or not verifier.is_valid(
            body=text, timestamp=timestamp, signature=signature
        ):
            return JSONResponse({"error": "invalid request"}, status_code=401)
        if inbox is not None and text.startswith("{"):
            fast = await _take_event(text, request, inbox, identity)
            if fast is not None:
                return fast
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


async def _take_event(text: str, request: Request, inbox: SlackInbox, identity: BotIdentity) -> Response | None:
    """A verified message event handed to the inbox; None: not one, let Bolt have it."""
    try:
        payload = json.loads(text)
    except ValueError:
        return JSONResponse({"error": "malformed payload"}, status_code=400)
    if not _event_callback(payload):
        return None
    if not _well_formed(payload):
        return JSONResponse({"error": "malformed payload"}, status_code=400)
    try:
        bot_user_id, bot_id = await identity.ids()
    except Exception as exc:  # noqa: BLE001 - auth.test failed: Bolt's path answers as it always did
        log.warning("slack auth.test failed (%s); handing the event to Bolt", type(exc).__name__)
        return None
    try:
        await inbox.on_event(payload, bot_user_id, bot_id, request.headers.get("x-slack-retry-num", ""))
    except REDIS_DOWN as exc:
        return unavailable(PLATFORM, exc)
    return Response(status_code=200)


def _well_formed(body: Any) -> bool:
    """The shapes Bolt's middleware indexes into without checking (it would answer 500)."""
    if not isinstance(body, dict):
        return False
    for name in ("event", "team", "user", "channel", "container", "message", "authorizations", "actions"):
        value = body.get(name)
        if value is not None and not isinstance(value, list if name in ("authorizations", "actions") else (dict, str)):
            return False
    return True
