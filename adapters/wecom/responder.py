"""Answers one job in one WeCom conversation (runs in the worker).

The answer goes into the stream bubble opened at ingress: in API mode the
responder only writes Redis state and WeCom pulls it through refresh
callbacks; on the long connection it also queues frames for the connection
owner. What cannot go into the bubble (it was closed after the stream window,
or the answer is longer than one bubble, or the job came from a card click
and has no bubble) is delivered actively: `response_url` in API mode,
`aibot_send_msg` on the long connection.
"""
from __future__ import annotations

import logging
import time
from typing import Any

from adapters.base import Delivered
from core.messages import InboundMessage, Language, Progress, Reply, ReplyKind

from . import cards as card_builders
from .frames import RESPOND_MSG, card_body, markdown_body, send_msg_frame, stream_body, ws_frame
from .outbox import Outbox
from .render import STREAM_LIMIT_BYTES, join_for_one_message, lay_out, render_progress, render_reply, split_utf8, text
from .response_url import ResponseUrlClient, ResponseUrlError
from .store import CardStore, StreamStore

log = logging.getLogger(__name__)

FINISH_ON_TIME, FINISH_LATE, FINISH_AGAIN, FINISH_LATE_AGAIN, FINISH_UNKNOWN = 1, 0, 2, 3, -1


class WeComResponder:
    def __init__(
        self,
        message: InboundMessage,
        job_id: str,
        *,
        streams: StreamStore,
        cards: CardStore,
        response_url: ResponseUrlClient,
        outbox: Outbox | None,
        min_interval: float = 1.0,
        limit: int = STREAM_LIMIT_BYTES,
    ) -> None:
        self._message = message
        self._job_id = job_id
        self._ctx = message.reply_context
        self._streams = streams
        self._cards = cards
        self._response_url = response_url
        self._outbox = outbox
        self._min_interval = min_interval
        self._limit = limit
        self._history: list[Progress] = []
        self._last_progress = 0.0
        lang = self._ctx.get("language")
        self._language: Language = lang if lang in ("zh", "en") else "zh"

    @property
    def _ws(self) -> bool:
        return self._ctx.get("mode") == "ws" and self._outbox is not None

    @property
    def _stream_id(self) -> str:
        return str(self._ctx.get("stream_id") or "")

    # --- progress ----------------------------------------------------------------------------
    async def progress(self, update: Progress) -> None:
        if not self._stream_id:
            return  # a card click's answer has no bubble to grow
        self._history.append(update)
        now = time.monotonic()
        if now - self._last_progress < self._min_interval:
            return  # the next update (or the answer) carries the full text anyway
        self._last_progress = now
        try:
            content = render_progress(self._history, self._language)
            if await self._streams.progress(self._stream_id, content) and self._ws and self._outbox is not None:
                frame = ws_frame(RESPOND_MSG, self._ctx.get("req_id", ""), stream_body(self._stream_id, content, False))
                await self._outbox.put(frame, kind="progress", stream_id=self._stream_id)
        except Exception:  # progress is cosmetic; it must never fail the job
            log.warning("wecom progress update failed", exc_info=True)

    # --- finish ------------------------------------------------------------------------------
    async def finish(self, reply: Reply) -> Delivered:
        language: Language = reply.language if reply.language in ("zh", "en") else self._language
        markdown = render_reply(reply)
        card = await self._clarification_card(reply, language)
        if not self._stream_id:
            await self._deliver_elsewhere(split_utf8(markdown, self._limit), language, card)
            return Delivered(extra={"delivered": "active"})

        layout = lay_out(markdown, language, self._limit)
        status = await self._streams.finish(
            self._stream_id,
            layout.first,
            card=card,
            answer=markdown,
            trace_id=reply.trace_id,
            note=text("late", language),
        )
        if status == FINISH_ON_TIME:
            if self._ws and self._outbox is not None:
                body = stream_body(self._stream_id, layout.first, True, card=card)
                await self._outbox.put(
                    ws_frame(RESPOND_MSG, self._ctx.get("req_id", ""), body),
                    kind="final",
                    stream_id=self._stream_id,
                    fallback=send_msg_frame(self._ctx.get("chat_id", ""), markdown_body(layout.first)),
                )
            if layout.rest:
                await self._deliver_elsewhere(list(layout.rest), language, None)
            return Delivered(message_ids=(self._stream_id,), extra={"delivered": "stream"})
        if status in (FINISH_LATE, FINISH_UNKNOWN):
            await self._deliver_elsewhere(split_utf8(markdown, self._limit), language, card)
            return Delivered(message_ids=(self._stream_id,), extra={"delivered": "late"})
        return Delivered(message_ids=(self._stream_id,), extra={"delivered": "already"})

    async def _clarification_card(self, reply: Reply, language: Language) -> dict[str, Any] | None:
        if reply.kind is not ReplyKind.CLARIFY or not reply.options:
            return None
        task_id = card_builders.new_task_id()
        await self._cards.save(
            task_id,
            {
                "options": {o.key: o.label for o in reply.options},
                "language": language,
                "question": self._ctx.get("question", ""),
                "response_url": self._ctx.get("response_url", ""),
                "chat_id": self._ctx.get("chat_id", ""),
            },
        )
        return card_builders.clarification_card(
            self._ctx.get("question", "") or self._message.text, reply.options, language, task_id
        )

    async def _deliver_elsewhere(self, chunks: list[str], language: Language, card: dict[str, Any] | None) -> None:
        """Active delivery: every chunk on the long connection; one message through response_url."""
        if self._ws and self._outbox is not None:
            chat_id = self._ctx.get("chat_id", "")
            for chunk in chunks:
                await self._outbox.put(send_msg_frame(chat_id, markdown_body(chunk)), kind="send")
            if card:
                await self._outbox.put(send_msg_frame(chat_id, card_body(card)), kind="send")
            return
        content = join_for_one_message(tuple(chunks), language, self._limit)
        try:
            sent = await self._response_url.send_markdown(self._ctx.get("response_url", ""), content)
        except ResponseUrlError as exc:
            log.warning("wecom active reply failed: %s", exc)
            raise
        if not sent:
            log.warning("wecom answer could not be delivered: no unused response_url for job %s", self._job_id)
