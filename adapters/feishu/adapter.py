"""The Feishu/Lark PlatformAdapter: webhook routes or a long connection, and responders."""
from __future__ import annotations

import asyncio
import logging
from typing import Any

import httpx
from starlette.routing import BaseRoute

from adapters.base import AdapterDeps, Capabilities
from adapters.feishu.client import FeishuApi
from adapters.feishu.envelope import CallbackSecrets
from adapters.feishu.inbound import BotIdentity, FeishuInbound
from adapters.feishu.render import CARD_BODY_LIMIT
from adapters.feishu.responder import CardKitSwitch, FeishuResponder
from adapters.feishu.token import TenantToken
from adapters.feishu.webhook import feishu_routes
from adapters.feishu.ws import LongConnection
from adapters.feishu.settings import FeishuSettings
from core.secrets import secret
from core.keys import Keys
from core.messages import InboundMessage

log = logging.getLogger(__name__)


class FeishuAdapter:
    name = "feishu"

    def __init__(self, deps: AdapterDeps, http: httpx.AsyncClient | None = None) -> None:
        settings: FeishuSettings = deps.settings
        self._settings = settings
        self._redis = deps.redis
        self._keys = Keys(settings.redis_prefix)
        self._http = http or httpx.AsyncClient(base_url=settings.feishu_api_url.rstrip("/"), timeout=httpx.Timeout(10.0, connect=5.0))
        self.token = TenantToken(self._http, settings.feishu_app_id or "", secret(settings.feishu_app_secret))
        self.api = FeishuApi(self._http, self.token)
        self.bot = BotIdentity(settings.feishu_bot_open_id or "", self.api.bot_open_id)
        self.inbound = FeishuInbound(deps.ingress, self.bot)
        self.cardkit = CardKitSwitch(settings.feishu_cardkit)
        interval = max(settings.feishu_progress_interval_seconds, 0.2)  # ≤ 5 edits/s per message
        self.capabilities = Capabilities(
            edit_messages=True, buttons=True, streaming=self.cardkit.enabled, max_length=CARD_BODY_LIMIT, min_edit_interval=interval
        )
        self._ws: LongConnection | None = None

    def routes(self) -> list[BaseRoute]:
        if self._settings.feishu_mode != "webhook":
            return []
        secrets = CallbackSecrets(
            encrypt_key=secret(self._settings.feishu_encrypt_key),
            verification_token=secret(self._settings.feishu_verification_token),
            window_seconds=float(self._settings.feishu_timestamp_window_seconds),
        )
        return list(feishu_routes(self.inbound, secrets))

    async def start(self) -> None:
        await self.bot.open_id()  # warm the lookup so the first group mention is not delayed
        if self._settings.feishu_mode == "ws":
            self._ws = LongConnection(
                self._settings.feishu_app_id or "", secret(self._settings.feishu_app_secret), self._settings.feishu_api_url, self._dispatch_ws
            )
            await self._ws.start()

    async def _dispatch_ws(self, kind: str, payload: dict[str, Any]) -> dict[str, Any] | None:
        if kind == "card":
            return await self.inbound.on_card_action(payload)
        await self.inbound.on_event(payload)
        return None

    async def stop(self) -> None:
        if self._ws is not None:
            await asyncio.to_thread(self._ws.stop)  # joins the SDK's thread; keep the bot loop free
            self._ws = None
        await self._http.aclose()

    def responder(self, message: InboundMessage, job_id: str) -> FeishuResponder:
        return FeishuResponder(
            self.api, self._redis, self._keys, message, job_id, cardkit=self.cardkit, capabilities=self.capabilities
        )
