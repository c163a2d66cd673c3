"""Answers one job in one WeCom conversation (runs in the worker).

The answer goes into the stream bubble opened at ingress: in API mode the
responder only writes Redis state and WeCom pulls it through refresh
callbacks; on the long connection it also queues frames for the connection
owner. What cannot go into the bubble (it was closed after the stream window,
or the answer is longer than one bubble, or the job came from a card click
and has no bubble) is delivered actively: `response_url` in API mode,
`aibot_send_msg` on the long connection.

Progress and streamed drafts go through the shared engine (adapters/common/delivery.py),
which throttles them on `Capabilities.min_edit_interval`; the bubble is their native
display, and the final answer overwrites the draft in it. What is delivered actively is
recorded in the shared per-job record, so a re-run does not send it twice.
"""
from __future__ import annotations

import logging
from typing import Any

from adapters.base import Capabilities, Delivered
from adapters.common.delivery import Delivery
from adapters.common.primitives import PushPlatform
from adapters.common.records import DeliveryRecord, DeliveryRecords
from core.messages import InboundMessage, Language, Progress, Reply, ReplyKind

from . import cards as card_builders
from .frames import RESPOND_MSG, card_body, markdown_body, send_msg_frame, stream_body, ws_frame
from .outbox import Outbox
from .render import (
    STREAM_LIMIT_BYTES,
    byte_len,
    join_for_one_message,
    lay_out,
    render_progress,
    render_reply,
    split_utf8,
    text,
    to_wecom_markdown,
)
from .response_url import ResponseUrlClient, ResponseUrlError
from .store import CardStore, StreamStore

log = logging.getLogger(__name__)

DRAFT_MARGIN = 256  # bytes: defanging mentions adds invisible characters to the draft
FINISH_ON_TIME, FINISH_LATE, FINISH_AGAIN, FINISH_LATE_AGAIN, FINISH_UNKNOWN = 1, 0, 2, 3, -1


class BubblePlatform(PushPlatform):
    """Progress primitives for the engine: the stream bubble shows status lines and drafts natively."""

    name = "wecom"

    def __init__(self, capabilities: Capabilities, responder: "WeComResponder") -> None:
        super().__init__(capabilities)
        self._r = responder
        self._history: list[Progress] = []

    def status_view(self, update: Progress) -> str:
        self._history.append(update)
        return render_progress(self._history, self._r.language)

    async def show_status(self, view: str) -> bool:
        await self._r.write_bubble(view)
        return True

    def cost(self, text: str) -> int:
        return byte_len(text)  # WeCom counts a bubble's UTF-8 bytes

    def draft_reserve(self) -> int:
        return DRAFT_MARGIN

    async def show_draft(self, markdown: str) -> bool:
        # the engine cut the draft to what one bubble holds; the answer replaces it in full
        await self._r.write_bubble(to_wecom_markdown(markdown))
        return True


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
        records: DeliveryRecords,
        capabilities: Capabilities | None = None,
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
        self._records = records
        caps = capabilities or Capabilities(
            edit_messages=True, buttons=True, streaming=True, max_length=limit, min_edit_interval=min_interval,
            reply_opened_at_ingress=True,
        )
        self._limit = limit
        lang = self._ctx.get("language")
        self.language: Language = lang if lang in ("zh", "en") else "zh"
        self._progress = Delivery(BubblePlatform(caps, self), records, job_id)
        self._record: DeliveryRecord | None = None

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
        await self._progress.progress(update)  # throttled; never raises

    async def write_bubble(self, content: str) -> None:
        if await self._streams.progress(self._stream_id, content) and self._ws and self._outbox is not None:
            frame = ws_frame(RESPOND_MSG, self._ctx.get("req_id", ""), stream_body(self._stream_id, content, False))
            await self._outbox.put(frame, kind="progress", stream_id=self._stream_id)

    # --- finish ------------------------------------------------------------------------------
    async def finish(self, reply: Reply) -> Delivered:
        await self._progress.stop_progress()  # no throttled update may land after the answer
        language: Language = reply.language if reply.language in ("zh", "en") else self.language
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
        if status in (FINISH_ON_TIME, FINISH_AGAIN):
            if layout.rest:  # a re-run sends only what the record does not hold yet
                await self._deliver_elsewhere(list(layout.rest), language, None)
            kind = "stream" if status == FINISH_ON_TIME else "already"
            return Delivered(message_ids=(self._stream_id,), extra={"delivered": kind})
        if status in (FINISH_LATE, FINISH_UNKNOWN, FINISH_LATE_AGAIN):
            await self._deliver_elsewhere(split_utf8(markdown, self._limit), language, card)
            kind = "already" if status == FINISH_LATE_AGAIN else "late"
            return Delivered(message_ids=(self._stream_id,), extra={"delivered": kind})
        return Delivered(message_ids=(self._stream_id,), extra={"delivered": "already"})

    async def _record_loaded(self) -> DeliveryRecord:
        if self._record is None:
            self._record = await self._progress.record()
        return self._record

    async def _once(self, index: int, how: str, send: Any) -> None:
        """Run `send` unless an earlier run of this job recorded part `index` as delivered."""
        record = await self._record_loaded()
        if index in record.parts:
            return
        if await send() is False:
            return
        record.parts[index] = (how,)
        try:
            await self._records.save_part(self._job_id, index, (how,))
        except Exception:  # noqa: BLE001 - delivered; only a re-run could repeat it
            log.warning("wecom could not record a delivery of job %s", self._job_id)

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
        """Active delivery: every chunk on the long connection; one message through response_url.

        Parts are numbered from 1 (the bubble is part 0) and recorded, so a re-run skips them."""
        if self._ws and self._outbox is not None:
            chat_id = self._ctx.get("chat_id", "")
            outbox = self._outbox
            frames = [send_msg_frame(chat_id, markdown_body(chunk)) for chunk in chunks]
            if card:
                frames.append(send_msg_frame(chat_id, card_body(card)))
            for n, frame in enumerate(frames, start=1):
                await self._once(n, "ws", lambda frame=frame: outbox.put(frame, kind="send"))
            return
        content = join_for_one_message(tuple(chunks), language, self._limit)
        await self._once(1, "response_url", lambda: self._send_response_url(content))

    async def _send_response_url(self, content: str) -> bool:
        try:
            sent = await self._response_url.send_markdown(self._ctx.get("response_url", ""), content)
        except ResponseUrlError as exc:
            log.warning("wecom active reply failed: %s", exc)
            raise
        if not sent:
            log.warning("wecom answer could not be delivered: no unused response_url for job %s", self._job_id)
        return bool(sent)
