"""A DingTalk-shaped platform that lives outside adapters/: its folder (this package) plus one registry entry
(`ENTRY`) is all a new platform needs; tests/bot/test_platform_registry.py registers it and runs the bot.

The callback is shaped like a DingTalk robot's (`msgId`, `conversationId`, `senderStaffId`, `chatbotCorpId`,
`text.content`) and signed the way DingTalk signs it: `sign` = base64(HMAC-SHA256(app secret,
"<timestamp>\\n<app secret>")) in the headers. Replies are kept in memory (there is no DingTalk API here).
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import json
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from adapters.base import AdapterDeps, Capabilities, Delivered, PlatformMisconfigured
from adapters.common.ingress import REDIS_DOWN, Candidate, IngressPath, unavailable
from adapters.registry import Platform
from core.messages import InboundMessage, Progress, Reply
from core.secrets import secret
from tests.support.dingtalk.dedupe import DingTalkDedupeIds
from tests.support.dingtalk.settings import DingTalkSettings, credentials_set

NAME = "dingtalk"
PATH = "/dingtalk/events"


def sign(timestamp: str, app_secret: str) -> str:
    digest = hmac.new(app_secret.encode(), f"{timestamp}\n{app_secret}".encode(), hashlib.sha256).digest()
    return base64.b64encode(digest).decode()


def callback(text: str, msg_id: str, *, staff: str = "staff1", corp: str = "ding-corp", chat: str = "cid-group") -> dict[str, Any]:
    return {"msgId": msg_id, "conversationId": chat, "senderStaffId": staff, "chatbotCorpId": corp,
            "conversationType": "2", "text": {"content": text}}


def parse(body: dict[str, Any]) -> Candidate:
    message = InboundMessage(
        platform=NAME, workspace=body["chatbotCorpId"], channel=body["conversationId"], thread=body["conversationId"],
        sender=body["senderStaffId"], text=body["text"]["content"].strip(), message_id=body["msgId"],
        event_id=body["msgId"], is_direct=body.get("conversationType") == "1",
    )
    return Candidate(message, (DingTalkDedupeIds.message(body["msgId"]),))


@dataclass
class DingTalkAdapter:
    deps: AdapterDeps[DingTalkSettings]
    name: str = NAME
    capabilities: Capabilities = Capabilities(False, False, False, 20_000, 0.0)
    replies: list[tuple[InboundMessage, Reply]] = field(default_factory=list)

    def routes(self) -> list[Route]:
        return [Route(PATH, self._events, methods=["POST"])]

    async def _events(self, request: Request) -> Response:
        app_secret = secret(self.deps.settings.dingtalk_app_secret)
        expected = sign(request.headers.get("timestamp", ""), app_secret)
        if not hmac.compare_digest(request.headers.get("sign", ""), expected):
            return PlainTextResponse("bad signature", status_code=401)
        try:
            candidate = parse(json.loads(await request.body()))
        except (ValueError, KeyError, TypeError, AttributeError):
            return PlainTextResponse("bad callback", status_code=400)
        try:
            await IngressPath(self.deps.ingress, NAME).take(candidate)
        except REDIS_DOWN as exc:
            return unavailable(NAME, exc)
        return PlainTextResponse("ok")

    async def start(self) -> None:
        return None

    async def stop(self) -> None:
        return None

    def responder(self, message: InboundMessage, job_id: str) -> "DingTalkResponder":
        return DingTalkResponder(self, message)


@dataclass
class DingTalkResponder:
    adapter: DingTalkAdapter
    message: InboundMessage

    async def progress(self, update: Progress) -> None:
        return None

    async def finish(self, reply: Reply) -> Delivered:
        self.adapter.replies.append((self.message, reply))
        return Delivered((f"dt-{len(self.adapter.replies)}",))


def create_adapter(deps: AdapterDeps[DingTalkSettings]) -> DingTalkAdapter | None:
    if not credentials_set(deps.settings):
        return None
    if not (deps.settings.dingtalk_app_key and secret(deps.settings.dingtalk_app_secret)):
        raise PlatformMisconfigured("DingTalk needs both DINGTALK_APP_KEY and DINGTALK_APP_SECRET")
    return DingTalkAdapter(deps)


ENTRY = Platform(
    name=NAME,
    settings=DingTalkSettings,
    credentials_set=credentials_set,
    close_hint='ALLOWED_WORKSPACES=["dingtalk:<corp id>"] or ALLOWED_USERS=["dingtalk:<staff id>"]',
    dedupe_ids=DingTalkDedupeIds,
    sdk_loggers=("dingtalk_stream",),
    aliases=("dingding",),
    package="tests.support.dingtalk",
)
