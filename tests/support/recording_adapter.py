"""An in-memory platform adapter for worker and conversation tests."""
from __future__ import annotations

from dataclasses import dataclass, field

from adapters.base import Capabilities, Delivered
from core.messages import InboundMessage, Progress, Reply


@dataclass
class Delivery:
    job_id: str
    message: InboundMessage
    reply: Reply


@dataclass
class RecordingAdapter:
    name: str = "recording"
    capabilities: Capabilities = Capabilities(False, False, False, 100_000, 0.0)
    delivered: list[Delivery] = field(default_factory=list)
    progress: list[tuple[str, str]] = field(default_factory=list)
    fail_finishes: int = 0  # how many finish() calls raise before one succeeds

    def routes(self) -> list:
        return []

    async def start(self) -> None:
        return None

    async def stop(self) -> None:
        return None

    def responder(self, message: InboundMessage, job_id: str) -> "RecordingResponder":
        return RecordingResponder(self, message, job_id)


class RecordingResponder:
    def __init__(self, adapter: RecordingAdapter, message: InboundMessage, job_id: str) -> None:
        self.adapter, self.message, self.job_id = adapter, message, job_id

    async def progress(self, update: Progress) -> None:
        self.adapter.progress.append((self.job_id, update.text))

    async def finish(self, reply: Reply) -> Delivered:
        if self.adapter.fail_finishes > 0:
            self.adapter.fail_finishes -= 1
            raise RuntimeError("platform refused the message")
        self.adapter.delivered.append(Delivery(self.job_id, self.message, reply))
        return Delivered((f"msg-{len(self.adapter.delivered)}",))
