"""Feishu's primitives for the shared delivery engine (adapters/common/delivery.py).

1. The first progress update replies to the user's message with a "working" card:
   a CardKit entity in streaming mode where the app may use CardKit, otherwise an
   interactive card with `update_multi`. This card is the engine's placeholder.
2. Later updates (status lines, or the streamed draft of the answer) stream into the
   card (CardKit, strictly increasing `sequence`) or patch it, throttled by the engine.
3. The working card becomes the first part of the answer; further parts (answers over
   the 30 KB card limit, measured as bytes of the doubly JSON-encoded card) follow as
   reply cards. Any card that Feishu refuses is sent as a plain text reply instead.

The placeholder and the CardKit entity live in the shared per-job record, and every
reply carries a uuid derived from the job id, so a job that a new worker picks up again
edits the same card instead of posting a second one.
"""
from __future__ import annotations

import logging
import time
import uuid as uuidlib
from dataclasses import dataclass, replace
from typing import Any, Callable

from redis.asyncio import Redis

from adapters.base import Capabilities
from adapters.common.confidence import answer_body
from adapters.common.delivery import Delivery, EngineResponder
from adapters.common.escalate import escalate_button
from adapters.common.primitives import PushPlatform
from adapters.common.records import DeliveryRecord, DeliveryRecords
from adapters.feishu import render
from adapters.feishu.client import FeishuApi, FeishuApiError
from adapters.feishu.split import double_json_cost
from adapters.feishu.token import FeishuAuthError
from core.keys import Keys
from core.messages import InboundMessage, Progress, Reply, ReplyKind

log = logging.getLogger(__name__)

PLATFORM = "feishu"
_UUID_NS = uuidlib.UUID("6f7c2a4e-2a7d-4c53-9d0b-5e0f3f1a9c11")
MAX_PROGRESS_LINES = 6
STATE_TTL_SECONDS = 24 * 3600
_PART_MARKER = 200  # room for "(Part i/n)" and the card summary


class CardKitSwitch:
    """Process-wide: once Feishu refuses CardKit (scope missing, Lark tenant without it), stop trying."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def refused(self, exc: Exception) -> None:
        if isinstance(exc, FeishuApiError) and 0 < exc.status < 500 and exc.status != 429:
            log.warning("feishu: CardKit unavailable (code=%s); using patched interactive cards", exc.code)
            self.enabled = False


def request_uuid(job_id: str, part: str) -> str:
    return str(uuidlib.uuid5(_UUID_NS, f"{job_id}:{part}"))


def card_markdown(card: dict[str, Any]) -> str:
    return str(card["body"]["elements"][0]["content"])


@dataclass(frozen=True)
class Working:
    """The working card's text: progress lines or the answer's draft."""

    markdown: str


@dataclass(frozen=True)
class AnswerCard:
    markdown: str
    template: str | None = None
    buttons: tuple[dict[str, Any], ...] = ()

    def card(self) -> dict[str, Any]:
        return render.card(self.markdown, buttons=list(self.buttons) or None, template=self.template)


class FeishuPlatform(PushPlatform):
    name = PLATFORM

    def __init__(
        self,
        capabilities: Capabilities,
        *,
        api: FeishuApi,
        records: DeliveryRecords,
        message: InboundMessage,
        job_id: str,
        cardkit: CardKitSwitch,
    ) -> None:
        super().__init__(capabilities)
        self._api = api
        self._records = records
        self._message = message
        self._job_id = job_id
        self._cardkit = cardkit
        self._language = message.language
        self._lines: list[str] = []
        self._card_id = ""  # the working card's CardKit entity, when streaming

    @property
    def _reply_to(self) -> str:
        return str(self._message.reply_context.get("reply_to") or self._message.message_id)

    @property
    def _in_thread(self) -> bool:
        return bool(self._message.reply_context.get("in_thread"))

    def restore(self, record: DeliveryRecord) -> None:
        self._card_id = record.extra.get("card_id", "")

    # --- rendering ------------------------------------------------------------------------------
    def _tail(self, reply: Reply) -> list[str]:
        # research answers already end with their verified sources: never list them twice
        tail = [render.sources_markdown(reply.sources, reply.language)] if reply.sources else []
        if reply.kind is ReplyKind.CLARIFY and reply.options:
            tail.append(render.options_markdown(reply))
        return tail

    def _option_buttons(self, reply: Reply) -> tuple[dict[str, Any], ...]:
        from adapters.feishu.parse import choice_value  # local: parse ↔ responder stay independent modules

        escalate = escalate_button(reply)
        if escalate is not None:  # a click comes back as the choice "escalate", like an option's
            return (render.button(escalate.label, choice_value(escalate.key, escalate.label, self._message, reply.language), 0),)
        if reply.kind is not ReplyKind.CLARIFY or not reply.options:
            return ()
        return tuple(
            render.button(o.label, choice_value(o.key, o.label, self._message, reply.language), i) for i, o in enumerate(reply.options)
        )

    @staticmethod
    def _template(reply: Reply) -> str | None:
        return "red" if reply.kind is ReplyKind.ERROR else None

    def document(self, reply: Reply) -> str:
        return render.to_card_markdown("\n\n".join(p for p in [answer_body(reply), *self._tail(reply)] if p))

    def cost(self, text: str) -> int:
        return double_json_cost(text)

    def reserve(self, reply: Reply) -> int:
        skeleton = render.card("", buttons=list(self._option_buttons(reply)) or None, template=self._template(reply))
        return render.card_body_size(skeleton) + _PART_MARKER

    def render(self, chunk: str, reply: Reply, index: int, count: int) -> list[AnswerCard]:
        if count > 1:
            chunk += "\n\n" + render.labels(reply.language)["part"].format(i=index + 1, n=count)
        return [AnswerCard(chunk, self._template(reply))]

    async def buttons(self, reply: Reply) -> tuple[dict[str, Any], ...] | None:
        return self._option_buttons(reply) or None

    def attach(self, payload: AnswerCard, buttons: tuple[dict[str, Any], ...]) -> AnswerCard:
        return replace(payload, buttons=buttons)

    def status_view(self, update: Progress) -> str:
        text = update.text.strip()
        if text and (not self._lines or self._lines[-1] != text):
            self._lines = [*self._lines, text][-MAX_PROGRESS_LINES:]
        return render.working_markdown(self._lines, self._language)

    def status_payload(self, view: str) -> Working:
        return Working(view)

    def draft_reserve(self) -> int:
        return render.card_body_size(render.card("")) + _PART_MARKER

    def draft_payload(self, markdown: str) -> Working:
        return Working(render.to_card_markdown(markdown))

    # --- effects --------------------------------------------------------------------------------
    async def _sequence(self) -> int:
        # strictly increasing per card entity, across workers and redeliveries
        return await self._records.next_sequence(self._job_id)

    async def post(self, payload: Working | AnswerCard, *, index: int, first: bool) -> tuple[str, ...]:
        if isinstance(payload, Working):
            return (await self._post_working(payload.markdown),)
        return (await self._reply_card_or_text(payload.card(), index),)

    async def _post_working(self, markdown: str) -> str:
        if self._cardkit.enabled:
            try:
                card_id = await self._api.create_card(render.card(markdown, element_id=render.STATUS_ELEMENT, streaming=True))
                message_id = await self._api.reply(
                    self._reply_to, "interactive", {"type": "card", "data": {"card_id": card_id}},
                    uuid=request_uuid(self._job_id, "working"), in_thread=self._in_thread,
                )
                self._card_id = card_id
                await self._records.save_extra(self._job_id, "card_id", card_id)
                return message_id
            except (FeishuApiError, FeishuAuthError) as exc:
                self._cardkit.refused(exc)
        return await self._api.reply(
            self._reply_to, "interactive", render.card(markdown, element_id=render.STATUS_ELEMENT, streaming=False),
            uuid=request_uuid(self._job_id, "working-card"), in_thread=self._in_thread,
        )

    async def edit(self, message_id: str, payload: Working | AnswerCard) -> bool:
        if isinstance(payload, Working):
            if self._card_id:
                await self._api.stream_text(self._card_id, render.STATUS_ELEMENT, payload.markdown, await self._sequence())
            else:
                await self._api.patch_card(message_id, render.card(payload.markdown, element_id=render.STATUS_ELEMENT))
            return True
        if self._card_id:
            await self._api.card_settings(self._card_id, {"config": {"streaming_mode": False}}, await self._sequence())
            await self._api.update_card(self._card_id, payload.card(), await self._sequence())
        else:
            await self._api.patch_card(message_id, payload.card())
        return True

    async def _reply_card_or_text(self, card: dict[str, Any], index: int) -> str:
        try:
            return await self._api.reply(
                self._reply_to, "interactive", card, uuid=request_uuid(self._job_id, f"card-{index}"), in_thread=self._in_thread
            )
        except FeishuApiError as exc:
            log.warning("feishu: card reply refused (code=%s); sending text", exc.code)
        # text fallback: the same Markdown (options included as a numbered list) as a plain message
        return await self._api.reply(
            self._reply_to, "text", {"text": card_markdown(card)}, uuid=request_uuid(self._job_id, f"text-{index}"), in_thread=self._in_thread
        )

    async def delivered(self, message_ids: tuple[str, ...]) -> dict[str, Any]:
        return {"card_id": self._card_id} if self._card_id else {}


class FeishuResponder(EngineResponder):
    """The adapter's responder: Feishu's primitives driven by the shared engine."""

    def __init__(
        self,
        api: FeishuApi,
        redis: Redis,
        keys: Keys,
        message: InboundMessage,
        job_id: str,
        *,
        cardkit: CardKitSwitch,
        min_interval: float = 0.5,
        capabilities: Capabilities | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        caps = capabilities or Capabilities(
            edit_messages=True, buttons=True, streaming=cardkit.enabled, max_length=render.CARD_BODY_LIMIT, min_edit_interval=min_interval
        )
        records = DeliveryRecords(redis, keys, PLATFORM, STATE_TTL_SECONDS)
        platform = FeishuPlatform(caps, api=api, records=records, message=message, job_id=job_id, cardkit=cardkit)
        super().__init__(Delivery(platform, records, job_id, clock=clock))
