"""The contract between the bot and each chat platform.

An adapter owns everything platform-specific: verifying and parsing inbound
payloads, rendering Markdown, length limits, progress display, buttons. The
core never branches on a platform's name; it only reads `Capabilities`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar, runtime_checkable

from adapters.common.settings import AdapterSettings

from core.messages import InboundMessage, Progress, Reply

if TYPE_CHECKING:  # imported only for type hints, keeps adapters import-light
    from redis.asyncio import Redis
    from starlette.routing import BaseRoute

    from core.ingress import Ingress


@dataclass(frozen=True)
class Capabilities:
    """What a platform can do. The shared delivery engine (adapters/common/delivery.py) reads
    `max_length` and `min_edit_interval`; platform code only declares them."""

    edit_messages: bool
    buttons: bool
    streaming: bool
    max_length: int  # one message's budget in the platform's cost units (characters, UTF-16 units, bytes)
    min_edit_interval: float  # seconds between two progress updates of one message
    # The platform shows a reply placeholder from the moment the message arrives (WeCom's stream
    # bubble), so every job must end with finish(), even one that would otherwise stay silent.
    reply_opened_at_ingress: bool = False


@dataclass(frozen=True)
class Delivered:
    """What a responder posted, so a re-run of the same job can edit instead of posting again."""

    message_ids: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Responder(Protocol):
    """Answers one job in one conversation. Created per job by the adapter."""

    async def progress(self, update: Progress) -> None:
        """Show that work is happening. Must be cheap, throttled and never raise."""

    async def finish(self, reply: Reply) -> Delivered:
        """Deliver the final reply (answer, clarification, notice or error) and clear any status."""


class PlatformMisconfigured(ValueError):
    """A platform's credentials are set but its configuration cannot work; startup stops on it."""


SettingsT = TypeVar("SettingsT", bound=AdapterSettings)


@dataclass
class AdapterDeps(Generic[SettingsT]):
    """What the bot hands each adapter when it builds one.

    `settings` is the platform's own settings model (adapters/<platform>/settings.py); the bot
    passes its composed Settings, which inherits every platform's model.
    """

    settings: SettingsT
    redis: "Redis"
    ingress: "Ingress"


@runtime_checkable
class PlatformAdapter(Protocol):
    name: str
    capabilities: Capabilities

    def routes(self) -> list["BaseRoute"]:
        """Starlette routes for webhooks (empty in socket/long-connection modes)."""

    async def start(self) -> None:
        """Start background receivers (Socket Mode, long polling, WebSocket). No-op for webhooks."""

    async def stop(self) -> None:
        """Stop receivers and close clients."""

    def responder(self, message: InboundMessage, job_id: str) -> Responder:
        """A responder that answers `message` in its conversation."""
