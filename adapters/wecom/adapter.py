"""The WeCom AI-bot (智能机器人) adapter: API mode (encrypted callbacks) or the long connection."""
from __future__ import annotations

import logging
from typing import Any

import httpx
from starlette.routing import BaseRoute

from adapters.base import AdapterDeps, Capabilities, Responder
from adapters.common.records import DeliveryRecords
from adapters.wecom.settings import WeComSettings
from core.secrets import secret
from core.keys import Keys
from core.messages import InboundMessage

from .crypto import WeComCrypto
from .frames import RESPOND_MSG, stream_body, ws_frame
from .inbound import InboundHandler, PassiveReply, late_notes
from .outbox import Outbox
from .parse import PayloadError, parse_callback
from .render import STREAM_LIMIT_BYTES
from .responder import WeComResponder
from .response_url import ResponseUrlClient
from .store import PLATFORM, STREAM_TTL_SECONDS, CardStore, FeedbackStore, StreamStore
from .webhook import WebhookEndpoint
from .ws import LeaderLock, WsClient

log = logging.getLogger(__name__)


def _setting(settings: WeComSettings, name: str, default: Any) -> Any:
    return getattr(settings, name, default)


class WeComAdapter:
    name = PLATFORM
    capabilities = Capabilities(
        edit_messages=True,  # each stream reply replaces the bubble
        buttons=True,
        streaming=True,
        max_length=STREAM_LIMIT_BYTES,  # bytes, not characters
        min_edit_interval=1.0,
        reply_opened_at_ingress=True,  # the "researching…" bubble opens in the webhook's answer
    )

    def __init__(self, deps: AdapterDeps) -> None:
        s = deps.settings
        self._settings = s
        self._redis = deps.redis
        self.keys = Keys(s.redis_prefix)  # the same prefix the web and worker processes use
        self.mode: str = s.wecom_mode
        self.window_seconds = float(_setting(s, "wecom_stream_window_seconds", 330.0))
        self.streams = StreamStore(deps.redis, self.keys)
        self.deliveries = DeliveryRecords(deps.redis, self.keys, PLATFORM, STREAM_TTL_SECONDS)
        self.cards = CardStore(deps.redis, self.keys, s.clarification_ttl_seconds)
        self.feedback = FeedbackStore(deps.redis, self.keys)
        self.outbox = Outbox(deps.redis, self.keys)
        self._http: httpx.AsyncClient | None = None
        self.inbound = InboundHandler(
            ingress=deps.ingress,
            streams=self.streams,
            cards=self.cards,
            feedback=self.feedback,
            window_seconds=self.window_seconds,
            dedupe_ttl_seconds=s.dedupe_ttl_seconds,
            bot_id=s.wecom_bot_id,
        )
        self._bot_name: str | None = _setting(s, "wecom_bot_name", None)
        self._webhook: WebhookEndpoint | None = None
        self.ws: WsClient | None = None
        if self.mode == "webhook":
            crypto = WeComCrypto(
                secret(s.wecom_token), secret(s.wecom_encoding_aes_key), _setting(s, "wecom_receive_id", "")
            )
            self._webhook = WebhookEndpoint(
                crypto,
                self.inbound,
                bot_name=self._bot_name,
                max_clock_skew_seconds=int(_setting(s, "wecom_max_clock_skew_seconds", 300)),
            )
        else:
            bot_id = s.wecom_bot_id or ""
            self.ws = WsClient(
                url=s.wecom_ws_url,
                bot_id=bot_id,
                secret=secret(s.wecom_bot_secret),
                lock=LeaderLock(deps.redis, self.keys.adapter_state(PLATFORM, f"ws-leader:{bot_id}")),
                outbox=self.outbox,
                on_callback=self._on_ws_callback,
                on_tick=self.close_overdue_streams,
                heartbeat_seconds=float(_setting(s, "wecom_ws_heartbeat_seconds", 30.0)),
                reconnect_base_seconds=float(_setting(s, "wecom_ws_reconnect_base_seconds", 1.0)),
                reconnect_max_seconds=float(_setting(s, "wecom_ws_reconnect_max_seconds", 30.0)),
                tick_seconds=min(1.0, max(self.window_seconds / 4, 0.05)),
                lock_poll_seconds=min(2.0, float(_setting(s, "wecom_ws_heartbeat_seconds", 30.0))),
            )

    @property
    def http(self) -> httpx.AsyncClient:
        if self._http is None:
            self._http = httpx.AsyncClient(timeout=httpx.Timeout(10.0))
        return self._http

    # --- PlatformAdapter -------------------------------------------------------------------------
    def routes(self) -> list[BaseRoute]:
        return list(self._webhook.routes()) if self._webhook else []

    async def start(self) -> None:
        if self.ws is not None:
            await self.ws.start()

    async def stop(self) -> None:
        if self.ws is not None:
            await self.ws.stop()
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    def responder(self, message: InboundMessage, job_id: str) -> Responder:
        return WeComResponder(
            message,
            job_id,
            streams=self.streams,
            cards=self.cards,
            response_url=ResponseUrlClient(self.http, self._redis, self.keys, self._settings.wecom_api_url),
            outbox=self.outbox,
            records=self.deliveries,
            capabilities=self.capabilities,
        )

    # --- long connection -------------------------------------------------------------------------
    async def _on_ws_callback(self, frame: dict[str, Any]) -> None:
        request_id = str((frame.get("headers") or {}).get("req_id", ""))
        try:
            callback = parse_callback(frame.get("body"), self._bot_name)
        except PayloadError as exc:
            log.warning("wecom ws callback dropped: %s", exc)
            return

        async def emit(reply: PassiveReply) -> None:
            await self.outbox.put(ws_frame(reply.cmd, request_id, reply.body), kind=reply.kind)

        reply = await self.inbound.handle(callback, mode="ws", req_id=request_id, emit=emit)
        if reply is not None:
            await emit(reply)

    async def close_overdue_streams(self) -> None:
        """Long connection only: nobody pulls, so overdue bubbles are closed with a note from here."""
        for stream_id in await self.streams.overdue():
            view = await self.streams.refresh(stream_id, late_notes())
            await self.streams.forget_deadline(stream_id)
            if view is not None and view.status == 2:
                request_id = (await self.streams.fields(stream_id, "req_id")).get("req_id", "")
                frame = ws_frame(RESPOND_MSG, request_id, stream_body(stream_id, view.content, True))
                await self.outbox.put(frame, kind="final", stream_id=stream_id)
