"""What the conversation core hands the research agent, and what it gets back."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from core.messages import Language, Source
from core.research.model import Usage


@dataclass(frozen=True)
class ResearchRequest:
    question: str
    language: Language
    repos: tuple[str, ...]
    history: tuple[tuple[str, str], ...] = ()  # (role, text) of earlier turns in the thread
    known_env: dict[str, str] = field(default_factory=dict)
    triage_markdown: str = ""  # the offline diagnostic, given to the model as context
    user: str = ""
    channel: str = ""
    today: str = ""


@dataclass(frozen=True)
class TraceStep:
    """One step of the answer trace: a model turn or a tool call."""

    kind: Literal["model", "tool"]
    tool: str  # tool name, or the model name for a model turn
    arguments: dict[str, Any]
    duration_ms: float
    ok: bool
    step: int = 0
    cached: bool = False
    usage: Usage | None = None
    note: str = ""  # why it failed, or how it ended; never message text

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "kind": self.kind,
            "tool": self.tool,
            "arguments": dict(self.arguments),
            "duration_ms": round(self.duration_ms, 1),
            "ok": self.ok,
            "step": self.step,
            "cached": self.cached,
        }
        if self.usage is not None:
            data["tokens"] = {
                "input": self.usage.input,
                "output": self.usage.output,
                "cache_write": self.usage.cache_write,
                "cache_read": self.usage.cache_read,
            }
        if self.note:
            data["note"] = self.note
        return data


@dataclass(frozen=True)
class ResearchOutcome:
    ok: bool  # False: the model stayed unavailable; the caller apologises and sends the triage answer
    text: str  # Markdown, citations verified, ends with a Sources list
    sources: tuple[Source, ...] = ()
    trace: tuple[TraceStep, ...] = ()
    usage: Usage = field(default_factory=Usage)
    error: str = ""
