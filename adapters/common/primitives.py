"""The primitives a push platform supplies to the delivery engine (adapters/common/delivery.py).

Each method is one platform call or one pure rendering step; the engine decides when to call
them. Defaults suit a platform without the extra (no native status, no native stream, no buttons).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from adapters.base import Capabilities
from adapters.common.records import DeliveryRecord
from core.messages import Progress, Reply

Payload = Any  # whatever the platform's post/edit take: a card, an HTML string, Block Kit kwargs


@dataclass(frozen=True)
class NativeResult:
    """What a platform's native stream of the final reply achieved."""

    delivered: str = ""  # the reply arrived in full as this message
    placeholder: str = ""  # it broke after something became visible: this message becomes the placeholder


class PushPlatform:
    """The primitives one platform supplies for one job. Defaults suit a platform without extras."""

    name = "platform"
    keepalive_every = 0.0  # seconds between keepalive() calls (Telegram's typing fades after 5 s)
    refresh_every = 0.0  # re-show a natively shown status this often (it expires on the platform)

    def __init__(self, capabilities: Capabilities) -> None:
        self.capabilities = capabilities

    # --- rendering (pure) --------------------------------------------------------------------
    def document(self, reply: Reply) -> str:
        """The whole reply as the text the platform's cost function measures."""
        raise NotImplementedError

    def cost(self, text: str) -> int:
        return len(text)

    def reserve(self, reply: Reply) -> int:
        """Budget each part's skeleton takes (card JSON, part marker) out of `max_length`."""
        return 0

    def draft_reserve(self) -> int:
        """Budget the draft's frame (card JSON, status marker) takes out of `max_length`."""
        return 0

    def render(self, chunk: str, reply: Reply, index: int, count: int) -> list[Payload]:
        """One chunk as payloads (normally one; more if rendering still overflows)."""
        raise NotImplementedError

    async def buttons(self, reply: Reply) -> Any:
        """The option buttons of a reply (None when it has none)."""
        return None

    def attach(self, payload: Payload, buttons: Any) -> Payload:
        """The payload with `buttons` under it (called for the last payload only)."""
        return payload

    def status_view(self, update: Progress) -> str:
        """How a progress line shows (a platform may keep a history of lines)."""
        return update.text.strip()

    def status_payload(self, view: str) -> Payload:
        raise NotImplementedError

    def draft_payload(self, markdown: str) -> Payload:
        raise NotImplementedError

    # --- effects -----------------------------------------------------------------------------
    async def begin(self) -> None:
        """Once, on the first progress update (e.g. a reaction on the question)."""

    async def keepalive(self) -> None:
        """Every `keepalive_every` seconds while the job runs (e.g. a typing action)."""

    async def may_show_progress(self) -> bool:
        """False when a shared budget says this progress update must be skipped."""
        return True

    async def show_status(self, view: str) -> bool:
        """Show a status line natively (no message). False: use the placeholder message."""
        return False

    async def show_draft(self, markdown: str) -> bool | str:
        """Show a draft natively. True: shown without a message (Telegram's DM draft); a message
        id: shown in a native stream message (Slack chat streaming), which becomes the placeholder;
        False: not natively (anymore), so the engine shows it in the placeholder message."""
        return False

    async def end_draft(self) -> None:
        """Close a native draft stream, so its message can be edited like any placeholder."""

    async def post(self, payload: Payload, *, index: int, first: bool) -> tuple[str, ...]:
        """Post one payload; the ids of the message(s) that arrived. Raises when nothing did."""
        raise NotImplementedError

    async def edit(self, message_id: str, payload: Payload) -> bool:
        """Edit a message in place. False when it is gone; raises on other failures."""
        raise NotImplementedError

    async def discard(self, message_id: str) -> None:
        """Delete a placeholder the answer could not replace, so no stale draft or status stays behind."""

    async def native_reply(self, reply: Reply) -> NativeResult | None:
        """Deliver the whole reply through a native stream (Slack chat streaming); None: not used."""
        return None

    async def clear(self) -> None:
        """Remove every progress sign (status line, reaction). Called after each finish()."""

    def rest_lost(self, reply: Reply) -> Payload | None:
        """A note posted when a later part fails; None: re-raise so the worker retries the job."""
        return None

    def unreachable(self, exc: BaseException) -> bool:
        """The bot may not write to this conversation any more (blocked, removed)."""
        return False

    def failed(self, exc: BaseException) -> BaseException:
        """What finish() raises when nothing of the reply arrived."""
        return exc

    def restore(self, record: DeliveryRecord) -> None:
        """Take back platform extras an earlier run of the job saved (e.g. a card entity id)."""

    async def delivered(self, message_ids: tuple[str, ...]) -> dict[str, Any]:
        """After a reply arrived: follow-up bookkeeping; returns `Delivered.extra`."""
        return {}
