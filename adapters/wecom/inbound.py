"""One path from a parsed callback to the queue, for both API mode and the long connection.

Message callbacks open a stream bubble (state in Redis) and enqueue a job;
card clicks enqueue the chosen option; feedback is stored next to its answer.
What the caller sends back is a `PassiveReply` body: encrypted in API mode,
wrapped in a frame on the long connection.
"""
from __future__ import annotations

import logging
import secrets
import time
from dataclasses import dataclass
from typing import Any, Awaitable, Callable

from adapters.common.ingress import Candidate, IngressPath
from adapters.wecom.dedupe import WeComDedupeIds
from core.ingress import Ingress, SubmitOutcome
from core.language import detect_language as language_of

from . import cards as card_builders
from .frames import RESPOND_MSG, RESPOND_UPDATE, RESPOND_WELCOME, stream_body, text_body, update_card_body
from .parse import PLATFORM, Callback, CardClick, EnterChat, FeedbackEvent, MessageCallback, StreamRefresh, to_inbound
from .render import text
from .store import CardStore, FeedbackStore, StreamStore

log = logging.getLogger(__name__)


def late_notes() -> dict[str, str]:
    return {"zh": text("late", "zh"), "en": text("late", "en")}


@dataclass(frozen=True)
class PassiveReply:
    body: dict[str, Any]
    cmd: str = RESPOND_MSG  # the long-connection command that carries it
    kind: str = "reply"  # outbox kind: "open" for a stream's first frame


Emit = Callable[[PassiveReply], Awaitable[None]]


class InboundHandler:
    def __init__(
        self,
        *,
        ingress: Ingress,
        streams: StreamStore,
        cards: CardStore,
        feedback: FeedbackStore,
        window_seconds: float,
        dedupe_ttl_seconds: int,
        bot_id: str | None,
    ) -> None:
        self._path = IngressPath(ingress, PLATFORM)
        self._streams = streams
        self._cards = cards
        self._feedback = feedback
        self._window = window_seconds
        self._dedupe_ttl = dedupe_ttl_seconds
        self._bot_id = bot_id

    def _other_bot(self, bot_id: str) -> bool:
        return bool(self._bot_id and bot_id and bot_id != self._bot_id)

    async def handle(
        self, callback: Callback, *, mode: str, req_id: str = "", emit: Emit | None = None
    ) -> PassiveReply | None:
        """The reply to send back, if any. `emit` (long connection) gets a new stream's opening
        frame before the job is enqueued. Raises redis errors unchanged (API mode answers 503)."""
        if isinstance(callback, StreamRefresh):
            return await self.refresh(callback.stream_id)
        if isinstance(callback, (MessageCallback, CardClick, FeedbackEvent, EnterChat)) and self._other_bot(
            callback.chat.bot_id
        ):
            log.warning("wecom callback for another bot id ignored")
            return None
        if isinstance(callback, MessageCallback):
            return await self._message(callback, mode=mode, req_id=req_id, emit=emit)
        if isinstance(callback, CardClick):
            return await self._card_click(callback, mode=mode)
        if isinstance(callback, FeedbackEvent):
            await self._store_feedback(callback)
            return None
        if isinstance(callback, EnterChat):
            return PassiveReply(text_body(text("welcome", "zh") + "\n\n" + text("welcome", "en")), RESPOND_WELCOME)
        return None

    async def refresh(self, stream_id: str) -> PassiveReply:
        view = await self._streams.refresh(stream_id, late_notes())
        if view is None:  # unknown or expired: close the bubble rather than leave it spinning
            return PassiveReply(stream_body(stream_id, text("expired", "zh") + "\n" + text("expired", "en"), True))
        return PassiveReply(stream_body(stream_id, view.content, view.finish, card=view.card))

    async def _message(self, cb: MessageCallback, *, mode: str, req_id: str, emit: Emit | None) -> PassiveReply | None:
        if not cb.text:
            name = "text_only" if cb.msgtype in ("image", "file") else "empty"
            note = text(name, "zh") + "\n" + text(name, "en")  # no text, so no language to go by
            return PassiveReply(stream_body("n" + secrets.token_hex(12), note, True))
        language = language_of(cb.text)
        stream_id, created = await self._streams.claim(cb.msgid, self._dedupe_ttl)
        opening = text("opening", language)
        if created:
            await self._streams.open(
                stream_id,
                opening,
                self._window,
                mode=mode,
                req_id=req_id,
                chat_id=cb.chat.chat_id,
                response_url=cb.response_url,
                language=language,
            )
            if emit:  # before the job exists, so the opening frame cannot overtake the answer
                await emit(PassiveReply(stream_body(stream_id, opening, False, feedback_id=stream_id), kind="open"))
        message = to_inbound(
            cb.chat,
            msgid=cb.msgid,
            text=cb.text,
            reply_context={
                "mode": mode,
                "stream_id": stream_id,
                "req_id": req_id,
                "response_url": cb.response_url,
                "chat_id": cb.chat.chat_id,
                "language": language,
                "question": cb.text[:200],
            },
        )
        result = await self._path.take(Candidate(message))
        assert result is not None
        if result.outcome is SubmitOutcome.NOT_ALLOWED:
            # No job will answer: close the bubble now instead of leaving it spinning for minutes.
            note = text("not_allowed", language)
            if await self._streams.finish(stream_id, note, card=None, answer="", trace_id="", note=note) == 1 and emit:
                await emit(PassiveReply(stream_body(stream_id, note, True), kind="final"))
        if mode != "webhook":
            return None
        view = await self._streams.refresh(stream_id, late_notes())
        content, finish, card = (view.content, view.finish, view.card) if view else (opening, False, None)
        return PassiveReply(stream_body(stream_id, content, finish, feedback_id=stream_id, card=card))

    async def _card_click(self, cb: CardClick, *, mode: str) -> PassiveReply | None:
        option_key = card_builders.option_key_of(cb.event_key)
        picked = await self._cards.choices.pick(cb.task_id, key=option_key) if option_key is not None else None
        if picked is None:
            known = await self._cards.choices.load(cb.task_id)
            language = known.language if known is not None else "zh"
            return PassiveReply(update_card_body(card_builders.expired_card(language, cb.task_id)), RESPOND_UPDATE)
        language, label, record = picked.language, picked.choice.label, picked.extra
        message = to_inbound(
            cb.chat,
            msgid=cb.msgid,
            text=label,
            choice=option_key,
            reply_context={
                "mode": mode,
                "kind": "card",
                "task_id": cb.task_id,
                "response_url": cb.response_url or record.get("response_url", ""),
                "chat_id": cb.chat.chat_id,
                "language": language,
                "question": record.get("question", ""),
            },
        )
        result = await self._path.take(Candidate(message, (WeComDedupeIds.card(cb.task_id),)))
        if result is None or result.outcome is not SubmitOutcome.ENQUEUED:
            return None
        return PassiveReply(update_card_body(card_builders.chosen_card(label, language, cb.task_id)), RESPOND_UPDATE)

    async def _store_feedback(self, cb: FeedbackEvent) -> None:
        if not cb.feedback_id:
            return
        if not self._path.allows_actor(cb.chat.bot_id, cb.chat.chat_id, cb.chat.user_id):
            log.info("wecom feedback from outside the allowlists ignored")  # answered 200, not stored
            return
        known = await self._streams.fields(cb.feedback_id, "answer", "trace_id")
        await self._feedback.record(
            trace_id=known.get("trace_id", ""),
            feedback_id=cb.feedback_id,
            user_id=cb.chat.user_id,
            answer=known.get("answer", ""),
            entry={
                "type": cb.feedback_type,
                "content": cb.content,
                "reasons": list(cb.reasons),
                "chat_id": cb.chat.chat_id,
                "at": int(time.time()),
            },
        )
