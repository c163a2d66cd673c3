"""`ModelClient` over the Anthropic Messages API (async SDK).

Retries: the SDK retries 429/5xx/529 before a response starts. A stream that
fails after it started (an `overloaded_error` event, a dropped connection, a
message that never finished) is retried once as a whole turn (sdk_client.py,
shared with the OpenAI client); after that the model counts as unavailable.

Prompt caching: the tool list and the static system prompt are byte-stable
and carry `cache_control`; so do the end of the thread history and the last
message, so later steps of this answer, and the next question in the thread,
reuse the prefix.

Partial Messages servers (vLLM/vllm-ascend and SGLang `/v1/messages`, Chinese
providers' Anthropic endpoints) may refuse an optional feature with a 400:
see `compat.py`. The request is retried once without it (sdk_client.py), and the feature
stays off for that endpoint for the life of the process.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import anthropic

from core.research.compat import OPTIONAL_FEATURES, dropped_features
from core.research.model import (
    Message,
    ModelReply,
    ProviderBlock,
    TextBlock,
    TextCallback,
    ToolResultBlock,
    ToolSpec,
    ToolUse,
    Usage,
)
from core.research.reasoning import visible_text
from core.research.sdk_client import MidStreamFailure, SdkClient

_EPHEMERAL = {"type": "ephemeral"}


class AnthropicClient(SdkClient):
    provider = "anthropic"
    default_max_tokens = 4096
    status_error = anthropic.APIStatusError
    connection_error = anthropic.APIConnectionError

    def _sdk(self, *, api_key: str, base_url: str | None, max_retries: int, timeout: float) -> Any:
        return anthropic.AsyncAnthropic(api_key=api_key, base_url=base_url, max_retries=max_retries, timeout=timeout)

    @property
    def model(self) -> str:
        return self._model

    async def _request(self, *, system: str, tools: Sequence[ToolSpec], messages: Sequence[Message]) -> dict[str, Any]:
        return self.request_params(system=system, tools=tools, messages=messages)

    async def _turn(self, params: dict[str, Any], on_text: TextCallback | None) -> ModelReply:
        if self._stream:
            return _reply(await self._streamed(params, on_text))
        return _reply(await self._client.messages.create(**params))

    def _error_text(self, exc: Exception) -> str:
        body = getattr(exc, "body", None)
        return (str(body) if body is not None else str(exc)).lower()

    def _without(self, params: dict[str, Any], features: set[str] | frozenset[str]) -> dict[str, Any]:
        return without_features(params, features)

    async def _streamed(self, params: dict[str, Any], on_text: TextCallback | None) -> Any:
        # Errors before the response starts are the SDK's (already retried); errors after are ours.
        manager = self._client.messages.stream(**params)
        stream = await manager.__aenter__()
        try:
            try:
                await _relay_text(stream, on_text)
                message = await stream.get_final_message()
            except (anthropic.APIError, OSError, ValueError) as exc:
                raise MidStreamFailure(type(exc).__name__) from None
            except Exception as exc:  # transport errors of the SDK's HTTP library
                if type(exc).__module__.split(".")[0] in ("httpx", "httpx2", "httpcore", "anyio"):
                    raise MidStreamFailure(type(exc).__name__) from None
                raise
            if message.stop_reason is None:
                raise MidStreamFailure("stream ended before the message finished")
            return message
        finally:
            try:
                await manager.__aexit__(None, None, None)
            except Exception:  # closing a broken stream may fail again; the turn outcome is decided
                pass

    def request_params(self, *, system: str, tools: Sequence[ToolSpec], messages: Sequence[Message]) -> dict[str, Any]:
        tool_params: list[dict[str, Any]] = [
            {"name": t.name, "description": t.description, "input_schema": dict(t.input_schema)} for t in tools
        ]
        if tool_params:
            tool_params[-1]["cache_control"] = _EPHEMERAL
        wire_messages = [_message(m) for m in messages]
        # Cache points: the marked history end, and the newest message (reused by the next step).
        marks = [i for i, m in enumerate(messages) if m.cache_point]
        for index in (marks[-1:] if marks else []) + [len(wire_messages) - 1]:
            if 0 <= index < len(wire_messages) and wire_messages[index]["content"]:
                wire_messages[index]["content"][-1]["cache_control"] = _EPHEMERAL
        params: dict[str, Any] = {
            "model": self._model,
            "max_tokens": self._max_tokens,
            "system": [{"type": "text", "text": system, "cache_control": _EPHEMERAL}],
            "messages": wire_messages,
        }
        if tool_params:
            params["tools"] = tool_params
        return without_features(params, dropped_features(self.endpoint))


async def _relay_text(stream: Any, on_text: TextCallback | None) -> None:
    """Read the stream, passing the turn's visible text on until the turn starts a tool call."""
    raw = ""
    tool_started = False
    async for event in stream:
        if on_text is None or tool_started:
            continue
        if event.type == "content_block_start" and event.content_block.type == "tool_use":
            tool_started = True
        elif event.type == "text":
            raw += event.text
            shown = visible_text(raw, partial=True)
            if shown.strip():
                await on_text(shown)


def without_features(params: dict[str, Any], features: set[str] | frozenset[str]) -> dict[str, Any]:
    """A copy of the request without the optional features a server refused."""
    features = set(features) & set(OPTIONAL_FEATURES)
    if not features:
        return params
    params = dict(params)
    if "cache_control" in features:
        params["system"] = [_no_cache(b) for b in params["system"]] if isinstance(params["system"], list) else params["system"]
        if "tools" in params:
            params["tools"] = [_no_cache(t) for t in params["tools"]]
        params["messages"] = [
            {**m, "content": [_no_cache(b) for b in m["content"]]} if isinstance(m["content"], list) else m
            for m in params["messages"]
        ]
    if "thinking" in features:
        params.pop("thinking", None)
        params["messages"] = [
            {**m, "content": [b for b in m["content"] if b.get("type") not in ("thinking", "redacted_thinking")]}
            if isinstance(m["content"], list)
            else m
            for m in params["messages"]
        ]
    if "tool_choice" in features:
        params.pop("tool_choice", None)
    if "is_error" in features:
        params["messages"] = [
            {**m, "content": [{k: v for k, v in b.items() if k != "is_error"} for b in m["content"]]}
            if isinstance(m["content"], list)
            else m
            for m in params["messages"]
        ]
    if "system_blocks" in features and isinstance(params["system"], list):
        params["system"] = "\n\n".join(b.get("text", "") for b in params["system"])
    return params


def _no_cache(block: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in block.items() if k != "cache_control"}


def _message(message: Message) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    for block in message.blocks:
        if isinstance(block, TextBlock):
            if block.text:
                content.append({"type": "text", "text": block.text})
        elif isinstance(block, ToolUse):
            content.append({"type": "tool_use", "id": block.id, "name": block.name, "input": dict(block.input)})
        elif isinstance(block, ToolResultBlock):
            item: dict[str, Any] = {"type": "tool_result", "tool_use_id": block.tool_use_id, "content": block.content}
            if block.is_error:
                item["is_error"] = True
            content.append(item)
        elif isinstance(block, ProviderBlock):
            content.append(dict(block.data))
    return {"role": message.role, "content": content}


def _reply(message: Any) -> ModelReply:
    blocks: list[TextBlock | ToolUse | ProviderBlock] = []
    for block in message.content:
        if block.type == "text":
            # Anthropic-compatible servers in front of reasoning models may inline <think> blocks.
            blocks.append(TextBlock(visible_text(block.text)))
        elif block.type == "tool_use":
            blocks.append(ToolUse(block.id, block.name, dict(block.input or {})))
        elif block.type in ("thinking", "redacted_thinking"):
            # Current models think adaptively by default; during tool use the API expects these
            # blocks back, signature intact, in the assistant turn that precedes the tool results.
            blocks.append(ProviderBlock(block.model_dump(exclude_none=True)))
    usage = message.usage
    return ModelReply(
        blocks=tuple(blocks),
        stop_reason=message.stop_reason or "end_turn",
        usage=Usage(
            input=usage.input_tokens or 0,
            output=usage.output_tokens or 0,
            cache_write=getattr(usage, "cache_creation_input_tokens", None) or 0,
            cache_read=getattr(usage, "cache_read_input_tokens", None) or 0,
        ),
    )
