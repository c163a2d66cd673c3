"""What each platform sends for a reply, laid out by its production path (no copy of it).

Slack, Feishu and Telegram: the platform's real responder, its delivery engine's `payloads` (the platform's
document, split under its limit by its own cost, rendered) with the buttons attached to the last part, as
`finish` does; Slack also streams answers, so its stream's Markdown is included. WeCom: the stream layout its
responder's `finish` sends. The terminal: its one renderer. No request is made: the responders are built
with no clients, and only their pure rendering primitives run.

Used by the hostile-input tests (tests/adapters/common/test_render_hostile.py, test_untrusted_titles.py),
the platforms' render tests and bench/render_bench.py.
"""
from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from redis.asyncio import Redis

from adapters.feishu.responder import AnswerCard, CardKitSwitch, FeishuResponder
from adapters.slack.blocks import SlackMessage, reply_markdown
from adapters.slack.responder import SlackResponder, StreamingSwitch
from adapters.telegram.responder import TelegramHandles, TelegramResponder
from adapters.terminal.render import render_text
from adapters.wecom.render import lay_out, render_reply
from core.keys import Keys
from core.messages import InboundMessage, Reply

T = TypeVar("T")
# a client that is never connected: responders register their scripts on it, and rendering sends nothing
_NO_REDIS = Redis(unix_socket_path="/nonexistent/render.sock")


_REPLY_CONTEXT: dict[str, dict[str, Any]] = {"telegram": {"chat_id": 42, "chat_type": "private"}}


def question(platform: str) -> InboundMessage:
    return InboundMessage(platform, "workspace", "channel", "thread", "user", "q", "message-1", "event-1", False,
                          reply_context=_REPLY_CONTEXT.get(platform, {}))


def _done(awaitable: Awaitable[T]) -> T:
    """The result of a primitive that is async but awaits nothing (Slack's and Feishu's buttons)."""
    coroutine = awaitable.__await__()
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
    raise RuntimeError("this primitive does I/O: it cannot run without a platform")


def _laid_out(responder: Any, reply: Reply, *, buttons: bool = True) -> list[Any]:
    engine = responder.engine
    payloads = engine.payloads(reply)
    extra = _done(engine.platform.buttons(reply)) if buttons else None
    if extra is not None and payloads:
        payloads[-1] = engine.platform.attach(payloads[-1], extra)
    return payloads


def slack_messages(reply: Reply, message: InboundMessage | None = None) -> list[SlackMessage]:
    """The messages Slack's posting path sends (clarifications, long answers, a stream that failed)."""
    responder = SlackResponder(client=None, message=message or question("slack"), job_id="render", pacer=None,  # type: ignore[arg-type]
                               deliveries=None, threads=None, streaming=StreamingSwitch(True))  # type: ignore[arg-type]
    return _laid_out(responder, reply)


def slack_stream(reply: Reply) -> str:
    """The Markdown Slack's streaming path appends for an answer."""
    return reply_markdown(reply)


def feishu_cards(reply: Reply, message: InboundMessage | None = None) -> list[dict[str, Any]]:
    """The cards Feishu's responder posts (their Markdown is also the text fallback)."""
    responder = FeishuResponder(None, _NO_REDIS, Keys("render"), message or question("feishu"), "render",  # type: ignore[arg-type]
                                cardkit=CardKitSwitch(True))
    cards: list[AnswerCard] = _laid_out(responder, reply)
    return [c.card() for c in cards]


def telegram_html(reply: Reply) -> list[str]:
    """The HTML messages Telegram's responder sends (its keyboard needs Redis: not drawn here)."""
    handles = TelegramHandles(bot=None, redis=_NO_REDIS, keys=Keys("render"), buttons=None)  # type: ignore[arg-type]
    responder = TelegramResponder(handles=handles, message=question("telegram"), job_id="render", record_ttl=60, deadline=60)
    return [p.html for p in _laid_out(responder, reply, buttons=False)]


def wecom_stream(reply: Reply) -> list[str]:
    """The stream bubble and the follow-up messages WeCom's responder sends."""
    layout = lay_out(render_reply(reply), reply.language)
    return [layout.first, *layout.rest]


def _strings(value: Any) -> list[str]:
    """Every string in a payload (texts, block and card fields, button labels and values), in order."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _strings(v)]
    return []


# everything each platform sends for a reply, as one text (what a hostile-input check reads)
SENT: dict[str, Callable[[Reply], str]] = {
    "slack": lambda r: "\n".join([*_strings([m.kwargs() for m in slack_messages(r)]), slack_stream(r)]),
    "feishu": lambda r: "\n".join(_strings(feishu_cards(r))),
    "telegram": lambda r: "\n".join(telegram_html(r)),
    "wecom": lambda r: "\n".join(wecom_stream(r)),
    "terminal": render_text,
}
