"""Posting the bot's own notices from a command (the weekly digest, an escalation's follow-up).

Through each platform's adapter, built as startup builds it (the registry's `create_adapter`,
after the platform's own settings check), never started (no receiver runs here):

- into a thread: the adapter's responder, the worker's delivery path (rendering, splitting,
  mention rules, and the per-job delivery record keyed by `delivery_id`, so a re-run posts nothing
  twice). The thread's place comes from the escalation record: platform, chat, thread and the few
  reply-context values a platform needs to answer there (`CONTEXT_KEYS`, taken when the thread
  escalated; nothing that works as a credential);
- into a channel: Slack `chat.postMessage` and Feishu's create-message call through the adapter's
  own client (their responders only answer a message); Telegram and WeCom through the responder,
  whose "no thread" is the chat itself.

WeCom's AI bot can post by itself only over its long connection (`aibot_send_msg`, WECOM_MODE=ws):
the frame goes to the outbox in Redis and the bot process holding the connection sends it. In
webhook mode it can only answer a user's message, so posting is refused with that reason.
"""
from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from redis.asyncio import Redis

from core.messages import InboundMessage, Language, Reply, ReplyKind

log = logging.getLogger(__name__)

# Reply-context values kept with an escalation so a follow-up can answer in that thread: where the
# chat and the topic are, which message to answer, the sender's team (Slack Connect). Never a
# response_url, a request id or a stream (short-lived, and a response_url is a credential).
CONTEXT_KEYS = ("chat_id", "chat_type", "topic_id", "reply_to", "in_thread", "recipient_team", "mode")


class NotPosted(Exception):
    """Nothing was posted; the message says why (shown to the operator, never a secret)."""


@dataclass(frozen=True)
class Place:
    platform: str
    workspace: str
    channel: str
    thread: str = ""  # "" posts to the channel itself
    context: Mapping[str, Any] = field(default_factory=dict)


def place_context(reply_context: Mapping[str, Any]) -> dict[str, Any]:
    """The values of CONTEXT_KEYS a thread's reply context holds (plain scalars only)."""
    return {k: reply_context[k] for k in CONTEXT_KEYS
            if isinstance(reply_context.get(k), (str, int, bool)) and not isinstance(reply_context.get(k), float)}


class Poster:
    """Posts through the adapters of the configured platforms (`async with Poster(settings, redis)`);
    each platform's adapter is built on first use, the way startup builds it, so one platform whose
    settings cannot work is reported for its places and the others still post."""

    def __init__(self, settings: Any, redis: Redis, adapters: Mapping[str, Any] | None = None) -> None:
        self._settings = settings
        self._redis = redis
        self._adapters: dict[str, Any] = dict(adapters or {})
        self._refused: dict[str, str] = {}
        self._built: list[Any] = []

    async def __aenter__(self) -> "Poster":
        return self

    async def __aexit__(self, *exc: object) -> None:
        for adapter in self._built:
            try:
                await adapter.stop()
            except Exception:  # noqa: BLE001 - closing must go on for the others
                log.warning("closing the %s adapter failed", getattr(adapter, "name", "?"))

    def _adapter(self, name: str) -> Any:
        if name in self._adapters:
            return self._adapters[name]
        if name not in self._refused:
            self._refused[name] = f"{name} is not configured here (its credentials are not set)"
            from adapters import registry  # noqa: PLC0415 - only when posting
            from adapters.base import AdapterDeps  # noqa: PLC0415
            from adapters.common.config_check import misconfigured_line  # noqa: PLC0415
            from bot.access_check import access_policy  # noqa: PLC0415
            from core.ingress import Ingress  # noqa: PLC0415
            from core.keys import Keys  # noqa: PLC0415

            platform = registry.platform(name)
            if platform is not None and platform.credentials_set(self._settings):
                check = platform.check(self._settings) if platform.check is not None else None
                if check is not None and check.problems:
                    self._refused[name] = misconfigured_line(name, check)
                    return None
                ingress = Ingress(self._redis, Keys(self._settings.redis_prefix), self._settings.dedupe_ttl_seconds,
                                  access_policy(self._settings))
                try:
                    adapter = platform.create_adapter(AdapterDeps(settings=self._settings, redis=self._redis,
                                                                  ingress=ingress))
                except Exception as exc:  # noqa: BLE001 - ImportError, PlatformMisconfigured: that platform only
                    self._refused[name] = f"{name} cannot be set up ({type(exc).__name__}: {' '.join(str(exc).split())[:200]})"
                    return None
                if adapter is not None:
                    self._adapters[name] = adapter
                    self._built.append(adapter)
                    self._refused.pop(name)
                    return adapter
        return None

    async def post(self, place: Place, text: str, language: Language, delivery_id: str) -> None:
        """Post `text` (Markdown) to `place`; raises NotPosted with the reason when nothing was posted."""
        adapter = self._adapter(place.platform)
        if adapter is None:
            raise NotPosted(self._refused.get(place.platform, f"{place.platform} is not configured here"))
        try:
            if not place.thread and place.platform == "slack":
                await adapter.client.chat_postMessage(channel=place.channel, text=text, unfurl_links=False,
                                                      unfurl_media=False)
                return
            if not place.thread and place.platform == "feishu":
                await adapter.api.call("POST", "/open-apis/im/v1/messages",
                                       {"receive_id": place.channel, "msg_type": "text",
                                        "content": json.dumps({"text": text}, ensure_ascii=False),
                                        "uuid": delivery_id[:50]},
                                       params={"receive_id_type": "chat_id"})
                return
            message = _message(place, language, delivery_id, getattr(adapter, "mode", ""))
            delivered = await adapter.responder(message, delivery_id).finish(Reply(ReplyKind.NOTICE, text, language))
        except NotPosted:
            raise
        except Exception as exc:  # noqa: BLE001 - one place's failure is reported, the others go on
            raise NotPosted(f"{place.platform} refused it ({type(exc).__name__})") from None
        if delivered.extra.get("undeliverable") or (not delivered.message_ids and place.platform != "wecom"):
            raise NotPosted(f"{place.platform} could not deliver it (the bot may have left that chat)")


def _message(place: Place, language: Language, delivery_id: str, mode: str) -> InboundMessage:
    """The inbound message a responder answers: the place, and the reply context it needs there."""
    context = dict(place.context)
    if place.platform == "telegram":
        chat, _, topic = (place.thread or place.channel).partition(":")
        try:
            context = {"chat_id": int(place.channel or chat), "chat_type": str(context.get("chat_type") or "group"),
                       "topic_id": int(topic) if topic else None,
                       "reply_to": context.get("reply_to") if place.thread else None}
        except ValueError:
            raise NotPosted(f"a Telegram chat is a number, not {place.channel!r}") from None
    elif place.platform == "feishu":
        context = {"reply_to": str(context.get("reply_to") or place.thread), "in_thread": True}
    elif place.platform == "wecom":
        if (context.get("mode") or mode) != "ws":
            raise NotPosted("a WeCom AI bot posts by itself only over its long connection (WECOM_MODE=ws); "
                            "in webhook mode it can only answer a message")
        context = {"mode": "ws", "chat_id": place.channel, "language": language}
    return InboundMessage(place.platform, place.workspace, place.channel, place.thread or place.channel, "", "",
                          str(context.get("reply_to") or place.thread or ""), delivery_id,
                          place.channel.startswith("D") and place.platform == "slack", reply_context=context)
