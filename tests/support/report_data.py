"""Answer records written the way the worker writes them, at chosen times (for report tests and the bench)."""
from __future__ import annotations

from types import SimpleNamespace

from core.messages import InboundMessage, Reply, ReplyKind, Source


def message(text: str, *, platform: str = "slack", workspace: str = "T1", channel: str = "C1",
            thread: str = "1700000000.000100") -> InboundMessage:
    return InboundMessage(platform, workspace, channel, thread, "U1", text, "m", "e", False)


def reply(kind: ReplyKind = ReplyKind.ANSWER, *, repos: tuple[str, ...] = ("vllm-project/vllm-ascend",),
          language: str = "en", trace_id: str = "", sources: int = 1, confidence: str = "") -> Reply:
    made = Reply(kind, "answer text", language, repos=repos, trace_id=trace_id,  # type: ignore[arg-type]
                 sources=tuple(Source(f"s{i}", f"https://example.invalid/{i}") for i in range(sources)))
    if confidence:
        # the shape of core/confidence.py's Confidence (issue 24 item 1): the report reads its level
        object.__setattr__(made, "confidence", SimpleNamespace(level=confidence))
    return made


class StreamIds:
    """Explicit, increasing stream ids per workspace, so records can be written in the past."""

    def __init__(self) -> None:
        self._last: dict[str, tuple[int, int]] = {}

    def next(self, scope: str, at: float) -> str:
        ms = int(at * 1000)
        last_ms, seq = self._last.get(scope, (-1, 0))
        seq = seq + 1 if ms <= last_ms else 0
        ms = max(ms, last_ms)
        self._last[scope] = (ms, seq)
        return f"{ms}-{seq}"
