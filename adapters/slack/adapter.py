"""The Slack `PlatformAdapter`: HTTP mode (POST /slack/events) or Socket Mode, and responders."""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from slack_sdk.web.async_client import AsyncWebClient
from starlette.routing import BaseRoute, Route

from adapters.base import AdapterDeps, Capabilities
from adapters.common.background import BackgroundTasks
from adapters.slack.webhook import EVENTS_PATH, build_bolt_app, events_endpoint
from adapters.slack.client import build_client
from adapters.slack.inbound import SlackInbox
from adapters.slack.pacing import ChannelPacer
from adapters.slack.responder import SlackResponder, StreamingSwitch
from adapters.slack.state import EngagedThreads, JobDeliveries
from core.secrets import secret
from core.keys import Keys
from core.messages import InboundMessage

if TYPE_CHECKING:
    from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler

log = logging.getLogger(__name__)

TEXT_LIMIT = 40_000  # Slack truncates `text` beyond this; we split far below it
EDIT_INTERVAL = 1.0  # chat.update is Tier 3 (~50/min)


class SlackAdapter:
    name = "slack"

    def __init__(self, deps: AdapterDeps, client: AsyncWebClient | None = None) -> None:
        settings = deps.settings
        self.capabilities = Capabilities(
            edit_messages=True, buttons=True, streaming=settings.slack_streaming,
            max_length=TEXT_LIMIT, min_edit_interval=EDIT_INTERVAL,
        )
        keys = Keys(settings.redis_prefix)
        self.client = client or build_client(settings)
        self._signing_secret = secret(settings.slack_signing_secret)
        self._app_token = secret(settings.slack_app_token)
        self._threads = EngagedThreads(deps.redis, keys, settings.session_ttl_seconds)
        self._deliveries = JobDeliveries(deps.redis, keys, settings.dedupe_ttl_seconds)
        self._pacer = ChannelPacer(deps.redis, keys, settings.slack_post_interval_seconds)
        self._streaming = StreamingSwitch(settings.slack_streaming)
        self._background = BackgroundTasks(self.name)
        self._inbox = inbox = SlackInbox(
            deps.ingress, self._threads, deps.redis, keys,
            require_mention_in_threads=settings.slack_require_mention_in_threads,
        )
        self.app = build_bolt_app(self.client, self._signing_secret, inbox, self._background.spawn)
        self._socket: AsyncSocketModeHandler | None = None

    @property
    def socket_mode(self) -> bool:
        return bool(self._app_token)

    def routes(self) -> list[BaseRoute]:
        if self.socket_mode:
            return []  # events arrive over the WebSocket; no public endpoint needed
        if not self._signing_secret:
            log.warning("slack inbound is off: set SLACK_SIGNING_SECRET (HTTP mode) or SLACK_APP_TOKEN (Socket Mode)")
            return []
        return [Route(EVENTS_PATH, events_endpoint(self.app, self._signing_secret, self._inbox), methods=["POST"])]

    async def start(self) -> None:
        if not self.socket_mode or self._socket is not None:
            return
        from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler  # noqa: PLC0415

        # apps.connections.open goes through our client, so SLACK_API_URL applies here too
        self._socket = AsyncSocketModeHandler(self.app, self._app_token, web_client=self.client)
        await self._socket.connect_async()
        log.info("slack socket mode connected")

    async def stop(self) -> None:
        if self._socket is not None:
            try:
                await self._socket.close_async()
            finally:
                self._socket = None
        await self._background.drain()

    def responder(self, message: InboundMessage, job_id: str) -> SlackResponder:
        return SlackResponder(
            client=self.client, message=message, job_id=job_id, pacer=self._pacer,
            deliveries=self._deliveries, threads=self._threads, streaming=self._streaming,
            capabilities=self.capabilities,
        )
