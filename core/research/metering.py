"""Token usage for every model turn, even from a server that reports none.

Budgets are charged with each reply's usage. Some OpenAI-compatible servers (older vLLM and
MindIE builds, gateways that drop the streamed usage chunk) send no usage at all: left alone,
their answers would cost nothing and no budget would ever hold. `Metered` wraps any model
client and, for a turn that reports no tokens, charges an estimate instead: the prompt and the
reply counted by a tokenizer when one is known, else characters / 3 (a little above what
tokenizers give for English, well above for code, below for Chinese). It says so in the log
once per client, not once per turn.
"""
from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from typing import Any

from core.research.model import (
    Message,
    ModelClient,
    ModelReply,
    ProviderBlock,
    TextBlock,
    TextCallback,
    ToolResultBlock,
    ToolSpec,
    ToolUse,
    Usage,
)

log = logging.getLogger(__name__)

CHARS_PER_TOKEN = 3
TokenCounter = Callable[[str], int]


def estimate_by_characters(text: str) -> int:
    return -(-len(text) // CHARS_PER_TOKEN)  # ceiling: a short text still costs a token


class Metered:
    """A `ModelClient` whose replies always carry usage: the server's, or an estimate."""

    def __init__(self, client: ModelClient, count_tokens: TokenCounter | None = None) -> None:
        self._client = client
        self._count = count_tokens or estimate_by_characters
        self._method = "the tokenizer" if count_tokens is not None else f"characters / {CHARS_PER_TOKEN}"
        self._told = False

    @property
    def model(self) -> str:
        return self._client.model

    async def complete(
        self,
        *,
        system: str,
        tools: Sequence[ToolSpec],
        messages: Sequence[Message],
        on_text: TextCallback | None = None,
    ) -> ModelReply:
        reply = await self._client.complete(system=system, tools=tools, messages=messages, on_text=on_text)
        if reply.usage != Usage():
            return reply
        if not self._told:
            self._told = True
            log.warning(
                "model %s reports no token usage; budgets are charged an estimate (%s)", self.model, self._method
            )
        prompt = "\n".join([system, *(_spec_text(t) for t in tools), *(_message_text(m) for m in messages)])
        return ModelReply(
            blocks=reply.blocks,
            stop_reason=reply.stop_reason,
            usage=Usage(input=self._count(prompt), output=self._count(_blocks_text(reply.blocks))),
        )

    async def aclose(self) -> None:
        await self._client.aclose()

    def __getattr__(self, name: str) -> Any:  # anything else a client offers (e.g. settings the agent reads)
        return getattr(self._client, name)


def _spec_text(spec: ToolSpec) -> str:
    return f"{spec.name}\n{spec.description}\n{json.dumps(spec.input_schema, ensure_ascii=False)}"


def _message_text(message: Message) -> str:
    return _blocks_text(message.blocks)


def _blocks_text(blocks: Sequence[Any]) -> str:
    parts: list[str] = []
    for block in blocks:
        if isinstance(block, TextBlock):
            parts.append(block.text)
        elif isinstance(block, ToolUse):
            parts.append(f"{block.name} {json.dumps(dict(block.input), ensure_ascii=False, default=str)}")
        elif isinstance(block, ToolResultBlock):
            parts.append(block.content)
        elif isinstance(block, ProviderBlock):
            parts.append(json.dumps(dict(block.data), ensure_ascii=False, default=str))
    return "\n".join(parts)
