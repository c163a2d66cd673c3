"""The model client interface the tool loop talks to.

The loop only knows these neutral types, so another provider (an
OpenAI-compatible endpoint, say) is one more class implementing
`ModelClient`, with no change to the loop.
"""
from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, Union


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    input_schema: Mapping[str, Any]


@dataclass(frozen=True)
class TextBlock:
    text: str


@dataclass(frozen=True)
class ToolUse:
    id: str
    name: str
    input: Mapping[str, Any]
    # Set when the provider sent arguments that are not a JSON object; the registry answers the
    # model with this as an error result instead of running the tool.
    arguments_error: str = ""


@dataclass(frozen=True)
class ToolResultBlock:
    tool_use_id: str
    content: str
    is_error: bool = False


@dataclass(frozen=True)
class ProviderBlock:
    """A provider-specific block the loop does not read but must send back unchanged in the
    next request (Anthropic's thinking blocks carry a signature the API checks during tool use)."""

    data: Mapping[str, Any]


Block = Union[TextBlock, ToolUse, ToolResultBlock, ProviderBlock]


@dataclass(frozen=True)
class Message:
    """One conversation message.

    `cache_point` is a hint that later requests will repeat everything up to
    the end of this message, so a provider with prompt caching may mark it.
    """

    role: Literal["user", "assistant"]
    blocks: tuple[Block, ...]
    cache_point: bool = False


@dataclass(frozen=True)
class Usage:
    input: int = 0
    output: int = 0
    cache_write: int = 0
    cache_read: int = 0

    def __add__(self, other: "Usage") -> "Usage":
        return Usage(
            self.input + other.input,
            self.output + other.output,
            self.cache_write + other.cache_write,
            self.cache_read + other.cache_read,
        )

    @property
    def total_input(self) -> int:
        return self.input + self.cache_write + self.cache_read


@dataclass(frozen=True)
class ModelReply:
    blocks: tuple[TextBlock | ToolUse | ProviderBlock, ...]
    stop_reason: str
    usage: Usage = field(default_factory=Usage)

    @property
    def text(self) -> str:
        return "".join(b.text for b in self.blocks if isinstance(b, TextBlock)).strip()

    @property
    def tool_uses(self) -> tuple[ToolUse, ...]:
        return tuple(b for b in self.blocks if isinstance(b, ToolUse))


class ModelUnavailable(Exception):
    """The model could not answer after the retries. The message is safe to log (no secrets, no text)."""


class ToolsUnsupported(ModelUnavailable):
    """The server refused a request because it carried tools (vLLM started without
    `--enable-auto-tool-choice`, a gateway without function calling). The agent can still answer
    with its own retrieval instead of model-driven tool calls."""


# Called with the whole visible text of the current turn so far (think blocks stripped) while a
# reply streams in; a client stops calling it once the turn starts a tool call.
TextCallback = Callable[[str], Awaitable[None]]


class ModelClient(Protocol):
    @property
    def model(self) -> str: ...

    async def complete(
        self,
        *,
        system: str,
        tools: Sequence[ToolSpec],
        messages: Sequence[Message],
        on_text: TextCallback | None = None,
    ) -> ModelReply:
        """One model turn. Raises ModelUnavailable when the provider stays unavailable
        (ToolsUnsupported when it refused the tools)."""
        ...

    async def aclose(self) -> None: ...
