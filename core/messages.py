"""Platform-neutral values that flow through the conversation core.

Adapters turn platform payloads into `InboundMessage`; the core answers with
`Reply` and reports `Progress`. Markdown is the only text format here: each
adapter renders it for its platform.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from functools import cached_property
from enum import Enum
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:  # core.confidence imports this module
    from core.confidence import Confidence

Language = Literal["zh", "en"]


class ReplyKind(str, Enum):
    ANSWER = "answer"
    CLARIFY = "clarify"
    OUT_OF_SCOPE = "out_of_scope"
    ERROR = "error"
    NOTICE = "notice"  # help text, reset confirmation, rate-limit note


@dataclass(frozen=True)
class InboundMessage:
    """One user message, verified and parsed by an adapter.

    `thread` identifies the conversation (Slack thread_ts, Feishu root message,
    Telegram chat or topic, WeCom chat). `choice` carries the key of a
    clarification option when the user pressed a button instead of typing.
    `reply_context` is opaque adapter data needed to answer (response_url,
    stream id, ...); the core never reads it. `sender_org` is the sender's own
    team or tenant where the platform says it (Slack, Feishu), which differs
    from `workspace` for a Slack Connect or Feishu external-group user; the
    workspace allowlist is checked against it (core/access.py).
    """

    platform: str
    workspace: str
    channel: str
    thread: str
    sender: str
    text: str
    message_id: str
    event_id: str
    is_direct: bool
    choice: str | None = None
    sender_name: str = ""
    sender_org: str = ""
    reply_context: dict[str, Any] = field(default_factory=dict)

    @cached_property
    def language(self) -> Language:
        """The language of the question, by the core's one rule; adapters and the worker read this
        instead of detecting it again (the conversation may still keep a thread's earlier language)."""
        from core.language import detect_language  # noqa: PLC0415 - core.language imports this module

        return detect_language(self.text) if self.text.strip() else "en"

    @property
    def conversation_key(self) -> str:
        return f"{self.platform}:{self.workspace}:{self.channel}:{self.thread}"

    def to_json(self) -> str:
        # ASCII escapes keep lone surrogates (from undecodable bytes) serialisable. A shallow dict,
        # not asdict(): asdict deep-copies reply_context, the costliest step of the ack path.
        return json.dumps({f.name: getattr(self, f.name) for f in fields(self)}, separators=(",", ":"))

    @classmethod
    def from_json(cls, raw: str | bytes) -> "InboundMessage":
        return cls(**json.loads(raw))


@dataclass(frozen=True)
class Option:
    """A clarification choice. `key` is stable and short (fits Telegram's 64-byte callback data)."""

    key: str
    label: str
    repo: str


@dataclass(frozen=True)
class Source:
    title: str
    url: str


@dataclass(frozen=True)
class Reply:
    kind: ReplyKind
    text: str  # Markdown
    language: Language
    repos: tuple[str, ...] = ()
    options: tuple[Option, ...] = ()
    sources: tuple[Source, ...] = ()
    trace_id: str = ""
    confidence: Confidence | None = None  # every answer has one (core/confidence.py); other replies None

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind.value,
            "repos": list(self.repos),
            "options": [{"repo": o.repo, "label": o.label, "key": o.key} for o in self.options],
            "text": self.text,
            "sources": [{"title": s.title, "url": s.url} for s in self.sources],
            "language": self.language,
            "confidence": self.confidence.level if self.confidence is not None else None,
        }


# Progress stage of a streamed answer draft: `text` is the whole partial answer so far (Markdown,
# reasoning stripped, links not yet verified); an empty text withdraws the draft. The final Reply
# replaces the draft with the verified answer.
DRAFT_STAGE = "draft"


@dataclass(frozen=True)
class Progress:
    """A short, human-readable status line while the core works (Markdown, user's language)."""

    text: str
    step: int = 0
    stage: str = "working"  # "routing", "diagnosing", "researching", "tool", "writing", DRAFT_STAGE
    language: Language = "en"  # decided by the core; a platform's own status words follow it
