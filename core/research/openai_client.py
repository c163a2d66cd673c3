"""`ModelClient` over an OpenAI-compatible Chat Completions endpoint (async `openai` SDK).

One class for api.openai.com, gateways (one-api/new-api, LiteLLM), Chinese
providers (DeepSeek, DashScope, GLM, Kimi) and self-hosted servers (vLLM and
vllm-ascend, SGLang, MindIE). What differs between them is handled here:

- the model: when none is configured, the first id `/models` lists (a
  self-hosted server serves one model under a name the operator chose);
- reasoning: `<think>` blocks are stripped from content, `reasoning_content` /
  `reasoning` fields are never read;
- tool-call arguments that are not a JSON object become a `ToolUse` with
  `arguments_error`, which the registry answers with an error result;
- a 400 about tools raises `ToolsUnsupported` (remembered for the process) so
  the agent answers from its own retrieval; a 400 about `stream_options` or
  `max_tokens` is retried once without it (see compat.py).

Retries: the SDK retries 429/5xx and connection errors before a response
starts; a stream that breaks after it started is retried once as a whole turn
(sdk_client.py, shared with the Anthropic client).
"""
from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import httpx
import openai

from core.research.compat import dropped_features, features_to_drop
from core.research.model import (
    Message,
    ModelReply,
    ModelUnavailable,
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

log = logging.getLogger(__name__)

# The SDK refuses an empty key; keyless self-hosted servers ignore whatever is sent.
KEYLESS_PLACEHOLDER = "no-key"
_STOP_REASONS = {"tool_calls": "tool_use", "function_call": "tool_use", "stop": "end_turn", "length": "max_tokens"}


class OpenAIClient(SdkClient):
    provider = "openai"
    default_max_tokens = 8192
    status_error = openai.APIStatusError
    connection_error = openai.APIConnectionError

    def _sdk(self, *, api_key: str, base_url: str | None, max_retries: int, timeout: float) -> Any:
        return openai.AsyncOpenAI(
            api_key=api_key or KEYLESS_PLACEHOLDER, base_url=base_url, max_retries=max_retries, timeout=timeout
        )

    @cached_property
    def _model_lock(self) -> asyncio.Lock:
        return asyncio.Lock()

    @property
    def model(self) -> str:
        return self._model or "(server default)"

    async def resolve_model(self) -> str:
        """The configured model, or the first one the server lists (asked once)."""
        async with self._model_lock:
            if not self._model:
                try:
                    page = await self._client.models.list()
                except openai.APIStatusError as exc:
                    raise ModelUnavailable(f"model list failed: API error {exc.status_code}") from None
                except openai.APIConnectionError as exc:
                    raise ModelUnavailable(f"model API unreachable ({type(exc).__name__})") from None
                if not page.data:
                    raise ModelUnavailable("the model server lists no models; set OPENAI_MODEL")
                self._model = page.data[0].id
                log.info("OPENAI_MODEL unset: using the server's first model")
            return self._model

    async def _request(self, *, system: str, tools: Sequence[ToolSpec], messages: Sequence[Message]) -> dict[str, Any]:
        return self.request_params(system=system, tools=tools, messages=messages, model=await self.resolve_model())

    async def _turn(self, params: dict[str, Any], on_text: TextCallback | None) -> ModelReply:
        if self._stream:
            return await self._streamed(params, on_text)
        return _reply_from_completion(await self._client.chat.completions.create(**params))

    def _error_text(self, exc: Exception) -> str:
        body = getattr(exc, "body", None)
        return (json.dumps(body) if isinstance(body, (dict, list)) else str(body or exc)).lower()

    def _without(self, params: dict[str, Any], features: set[str] | frozenset[str]) -> dict[str, Any]:
        return _without(params, features)

    def _features_to_drop(self, error: str, params: dict[str, Any]) -> set[str]:
        if "max_completion_tokens" in error and "max_tokens" in params:
            return {"max_tokens"}  # OpenAI's reasoning models take max_completion_tokens only
        return features_to_drop(error, params)

    def _status_problem(self, status: int, exc: Exception) -> str:
        if status == 404:
            return "model API error 404 (unknown model or wrong base URL)"
        return super()._status_problem(status, exc)

    async def _streamed(self, params: dict[str, Any], on_text: TextCallback | None) -> ModelReply:
        # Errors before the response starts are the SDK's (already retried); errors after are ours.
        stream = await self._client.chat.completions.create(**params, stream=True)
        turn = _Turn()
        try:
            async for chunk in stream:
                if turn.add(chunk) and on_text is not None and not turn.calls:
                    shown = visible_text(turn.raw, partial=True)
                    if shown.strip():
                        await on_text(shown)
        except (openai.APIError, httpx.HTTPError, OSError) as exc:
            raise MidStreamFailure(type(exc).__name__) from None
        finally:
            await stream.close()
        if turn.finish is None and not turn.raw and not turn.calls:
            raise MidStreamFailure("stream ended before the reply started")
        return turn.reply()

    def request_params(
        self, *, system: str, tools: Sequence[ToolSpec], messages: Sequence[Message], model: str
    ) -> dict[str, Any]:
        wire: list[dict[str, Any]] = [{"role": "system", "content": system}]
        for message in messages:
            wire += _wire_messages(message)
        params: dict[str, Any] = {"model": model, "messages": wire, "max_tokens": self._max_tokens}
        if tools:
            params["tools"] = [
                {
                    "type": "function",
                    "function": {"name": t.name, "description": t.description, "parameters": dict(t.input_schema)},
                }
                for t in tools
            ]
        if self._stream:
            params["stream_options"] = {"include_usage": True}  # usage arrives in a last chunk
        return _without(params, dropped_features(self.endpoint))


@dataclass
class _Call:
    id: str = ""
    name: str = ""
    arguments: str = ""


@dataclass
class _Turn:
    """One streamed reply, assembled from chunks."""

    raw: str = ""
    calls: dict[int, _Call] = field(default_factory=dict)
    finish: str | None = None
    usage: Usage = field(default_factory=Usage)

    def add(self, chunk: Any) -> bool:
        """Take one chunk; True when it added answer text."""
        if getattr(chunk, "usage", None) is not None:
            self.usage = _usage(chunk.usage)
        added = False
        for choice in chunk.choices or []:
            delta = choice.delta
            if delta is not None:
                # reasoning_content / reasoning are deliberately never read.
                if delta.content:
                    self.raw += delta.content
                    added = True
                for call in delta.tool_calls or []:
                    slot = self.calls.setdefault(call.index if call.index is not None else len(self.calls), _Call())
                    if call.id:
                        slot.id = call.id
                    if call.function is not None:
                        slot.name += call.function.name or ""
                        slot.arguments += call.function.arguments or ""
            if choice.finish_reason:
                self.finish = choice.finish_reason
        return added

    def reply(self) -> ModelReply:
        calls = [(c.id, c.name, c.arguments) for _, c in sorted(self.calls.items())]
        return _reply(self.raw, calls, self.finish, self.usage)


def _reply_from_completion(completion: Any) -> ModelReply:
    choice = completion.choices[0] if completion.choices else None
    message = choice.message if choice is not None else None
    calls = [
        (c.id or "", c.function.name or "", c.function.arguments or "")
        for c in (getattr(message, "tool_calls", None) or [])
        if getattr(c, "function", None) is not None
    ]
    usage = _usage(completion.usage) if completion.usage is not None else Usage()
    return _reply((message.content or "") if message else "", calls, choice.finish_reason if choice else None, usage)


def _reply(raw: str, calls: list[tuple[str, str, str]], finish: str | None, usage: Usage) -> ModelReply:
    blocks: list[TextBlock | ToolUse | ProviderBlock] = []
    text = visible_text(raw)
    if text.strip():
        blocks.append(TextBlock(text))
    for n, (call_id, name, arguments) in enumerate(calls):
        parsed, error = _parse_arguments(arguments)
        # Some servers send no id; the loop needs one to pair the result with its call.
        blocks.append(ToolUse(call_id or f"call_{n}", name.strip(), parsed, arguments_error=error))
    stop = "tool_use" if calls else _STOP_REASONS.get(finish or "stop", finish or "end_turn")
    return ModelReply(blocks=tuple(blocks), stop_reason=stop, usage=usage)


def _parse_arguments(raw: str) -> tuple[dict[str, Any], str]:
    if not raw.strip():
        return {}, ""
    try:
        value = json.loads(raw)
    except ValueError as exc:
        return {}, f"the arguments are not valid JSON ({type(exc).__name__} at character {getattr(exc, 'pos', '?')}); send one JSON object"
    if not isinstance(value, dict):
        return {}, "the arguments must be one JSON object"
    return value, ""


def _usage(usage: Any) -> Usage:
    prompt = usage.prompt_tokens or 0
    details = getattr(usage, "prompt_tokens_details", None)
    cached = (getattr(details, "cached_tokens", None) or 0) if details is not None else 0
    # OpenAI counts cached tokens inside prompt_tokens; Usage keeps them apart.
    return Usage(input=max(0, prompt - cached), output=usage.completion_tokens or 0, cache_read=min(cached, prompt))


def _wire_messages(message: Message) -> list[dict[str, Any]]:
    """One neutral message as Chat Completions messages: tool results become `tool` messages."""
    texts = [b.text for b in message.blocks if isinstance(b, TextBlock) and b.text]
    if message.role == "assistant":
        calls = [b for b in message.blocks if isinstance(b, ToolUse)]
        wire: dict[str, Any] = {"role": "assistant", "content": "\n\n".join(texts) or None}
        if calls:
            wire["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": json.dumps(dict(c.input), ensure_ascii=False)},
                }
                for c in calls
            ]
        elif wire["content"] is None:
            wire["content"] = ""
        return [wire]
    out: list[dict[str, Any]] = [
        {"role": "tool", "tool_call_id": b.tool_use_id, "content": b.content}
        for b in message.blocks
        if isinstance(b, ToolResultBlock)
    ]
    if texts:
        out.append({"role": "user", "content": "\n\n".join(texts)})
    return out


def _without(params: dict[str, Any], features: frozenset[str] | set[str]) -> dict[str, Any]:
    if "stream_options" in features and "stream_options" in params:
        params = {k: v for k, v in params.items() if k != "stream_options"}
    if "max_tokens" in features and "max_tokens" in params:
        params = {k: v for k, v in params.items() if k != "max_tokens"} | {"max_completion_tokens": params["max_tokens"]}
    return params
