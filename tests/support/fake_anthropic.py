"""A local fake of the Anthropic Messages API, reached by the real `anthropic` SDK.

Each test scripts the model: a list of steps, one per POST /v1/messages, each a
`Turn` (a reply with text and tool_use blocks), a `Fail` (an HTTP error such as
429 or 529), a `BreakStream` (a stream that dies mid-way) or a callable that
gets the request body and returns one of those. Streaming and non-streaming
requests are both answered.

Usage reporting emulates prompt caching so benchmarks and tests can measure
it: prefixes ending at a `cache_control` breakpoint are remembered, and a later
request that starts with a remembered prefix reports it as cache_read. Tokens
are approximated as UTF-8 bytes / 4.
"""
from __future__ import annotations

import asyncio
import hashlib
import itertools
import json
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Union

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from tests.support.fake_http import FakeServer


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def tool(name: str, **arguments: Any) -> dict[str, Any]:
    return {"type": "tool_use", "name": name, "input": arguments}


def thinking(value: str, signature: str = "sig-abc") -> dict[str, Any]:
    """An adaptive-thinking block, as current models emit by default."""
    return {"type": "thinking", "thinking": value, "signature": signature}


@dataclass
class Turn:
    blocks: list[dict[str, Any]]
    stop_reason: str | None = None  # default: tool_use when any tool block, else end_turn
    delay: float = 0.0
    piece_interval: float = 0.0  # seconds between streamed text deltas (a fixed token rate for benchmarks)
    piece_chars: int = 40  # characters per streamed text delta


@dataclass
class Fail:
    status: int
    error_type: str = "api_error"
    message: str = "scripted failure"


@dataclass
class BreakStream:
    """A stream that starts fine and then fails: an error event, or a dropped connection."""

    mode: Literal["error_event", "disconnect", "unfinished"] = "error_event"


Step = Union[Turn, Fail, BreakStream, Callable[[dict[str, Any]], Union[Turn, Fail, BreakStream]]]


def approx_tokens(data: str) -> int:
    return max(1, (len(data.encode("utf-8")) + 3) // 4) if data else 0


@dataclass
class PromptCache:
    """Remembers prefixes that ended at a cache breakpoint (the real API's behaviour, simplified)."""

    min_tokens: int = 1024
    stored: set[str] = field(default_factory=set)

    def account(self, body: dict[str, Any]) -> tuple[int, int, int]:
        """(input, cache_write, cache_read) tokens for a request."""
        segments: list[tuple[str, bool]] = []
        for t in body.get("tools") or []:
            segments.append(_segment("tool", t))
        system = body.get("system") or []
        if isinstance(system, str):
            system = [{"type": "text", "text": system}]
        for block in system:
            segments.append(_segment("system", block))
        for message in body.get("messages") or []:
            content = message["content"]
            if isinstance(content, str):
                content = [{"type": "text", "text": content}]
            for block in content:
                segments.append(_segment(message["role"], block))
        hashes, totals = [], []
        digest = hashlib.sha256()
        total = 0
        for data, _ in segments:
            digest.update(data.encode())
            total += approx_tokens(data)
            hashes.append(digest.copy().hexdigest())
            totals.append(total)
        breakpoints = [i for i, (_, marked) in enumerate(segments) if marked]
        last = breakpoints[-1] if breakpoints else -1
        read_at = max((i for i in range(last + 1) if hashes[i] in self.stored), default=-1)
        cache_read = totals[read_at] if read_at >= 0 else 0
        cache_write = 0
        for i in breakpoints:
            if totals[i] >= self.min_tokens and hashes[i] not in self.stored:
                self.stored.add(hashes[i])
        if last > read_at and totals[last] >= self.min_tokens:
            cache_write = totals[last] - cache_read
        return total - cache_read - cache_write, cache_write, cache_read


def _segment(role: str, block: dict[str, Any]) -> tuple[str, bool]:
    marked = "cache_control" in block
    clean = {k: v for k, v in block.items() if k != "cache_control"}
    return role + ":" + json.dumps(clean, sort_keys=True, ensure_ascii=False), marked


class FakeAnthropic:
    def __init__(
        self,
        script: list[Step] | Callable[[dict[str, Any]], Any],
        *,
        min_cache_tokens: int = 1024,
        refuse: tuple[str, ...] = (),
    ) -> None:
        """`refuse` makes a partial Messages server (vLLM, SGLang, some providers' endpoints): a request
        using any of "cache_control", "thinking" (blocks or parameter) or "tools" gets a 400 naming it,
        before the script is consulted."""
        self._script = script
        self.refuse = refuse
        self._position = 0
        self._ids = itertools.count(1)
        self.cache = PromptCache(min_cache_tokens)
        self.bodies: list[dict[str, Any]] = []  # every /v1/messages request body, in order
        self.usages: list[dict[str, int]] = []  # usage reported for each successful reply
        self.handler_seconds = 0.0  # time spent inside this fake, so benchmarks can subtract it
        self.server = FakeServer([Route("/v1/messages", self._messages, methods=["POST"])])

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def calls(self) -> int:
        return len(self.bodies)

    async def __aenter__(self) -> "FakeAnthropic":
        await self.server.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.server.__aexit__(*exc)

    def _next(self, body: dict[str, Any]) -> Turn | Fail | BreakStream:
        if callable(self._script):
            return self._script(body)
        if self._position >= len(self._script):
            return Fail(400, "invalid_request_error", "fake model script exhausted")
        step = self._script[self._position]
        self._position += 1
        return step(body) if callable(step) else step

    async def _messages(self, request: Request) -> Response:
        started = time.perf_counter()
        try:
            return await self._respond(request)
        finally:
            self.handler_seconds += time.perf_counter() - started

    async def _respond(self, request: Request) -> Response:
        body = await request.json()
        self.bodies.append(body)
        refused = self._refused(body)
        if refused:
            return JSONResponse(
                {"type": "error", "error": {"type": "invalid_request_error", "message": refused}}, status_code=400
            )
        step = self._next(body)
        if isinstance(step, Fail):
            return JSONResponse(
                {"type": "error", "error": {"type": step.error_type, "message": step.message}},
                status_code=step.status,
                headers={"retry-after-ms": "5"},
            )
        if isinstance(step, Turn) and step.delay:
            await asyncio.sleep(step.delay)
        if isinstance(step, BreakStream):
            turn = Turn([text("Let me look that up")])
            message = self._message(body, turn, count_usage=False)
            return StreamingResponse(self._broken(message, step.mode), media_type="text/event-stream")
        message = self._message(body, step)
        if body.get("stream"):
            return StreamingResponse(
                _events(message, step.piece_interval, step.piece_chars), media_type="text/event-stream"
            )
        return JSONResponse(message)

    def _refused(self, body: dict[str, Any]) -> str:
        """The 400 message of a partial server for this body, or "" (wording like vLLM's validation)."""
        raw = json.dumps(body)
        if "cache_control" in self.refuse and '"cache_control"' in raw:
            return "1 validation error: messages.0.content.0.cache_control: Extra inputs are not permitted"
        if "thinking" in self.refuse and ("thinking" in body or '"type": "thinking"' in raw):
            return "Input tag 'thinking' found using 'type' does not match any of the expected tags"
        if "tools" in self.refuse and body.get("tools"):
            return '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set'
        return ""

    def _message(self, body: dict[str, Any], turn: Turn, count_usage: bool = True) -> dict[str, Any]:
        content = []
        for block in turn.blocks:
            if block["type"] == "tool_use":
                content.append({**block, "id": block.get("id") or f"toolu_{next(self._ids):04d}"})
            else:
                content.append(dict(block))
        stop = turn.stop_reason or ("tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn")
        fresh, write, read = self.cache.account(body) if count_usage else (0, 0, 0)
        usage = {
            "input_tokens": fresh,
            "output_tokens": approx_tokens(json.dumps(content, ensure_ascii=False)),
            "cache_creation_input_tokens": write,
            "cache_read_input_tokens": read,
        }
        if count_usage:
            self.usages.append(usage)
        return {
            "id": f"msg_{next(self._ids):04d}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "fake"),
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": usage,
        }

    async def _broken(self, message: dict[str, Any], mode: str) -> AsyncIterator[bytes]:
        events = list(_event_list(message))
        for name, data in events[:3]:  # message_start, content_block_start, one delta
            yield _sse(name, data)
        if mode == "error_event":
            yield _sse("error", {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
        elif mode == "disconnect":
            raise ConnectionResetError("fake model dropped the stream")
        # "unfinished": the body simply ends without message_stop


def _sse(name: str, data: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


def _event_list(message: dict[str, Any], piece_chars: int = 40) -> list[tuple[str, dict[str, Any]]]:
    start = {**message, "content": [], "stop_reason": None, "usage": {**message["usage"], "output_tokens": 1}}
    events: list[tuple[str, dict[str, Any]]] = [("message_start", {"type": "message_start", "message": start})]
    for index, block in enumerate(message["content"]):
        if block["type"] == "thinking":
            events.append(("content_block_start", {"type": "content_block_start", "index": index, "content_block": {"type": "thinking", "thinking": "", "signature": ""}}))
            events.append(("content_block_delta", {"type": "content_block_delta", "index": index, "delta": {"type": "thinking_delta", "thinking": block["thinking"]}}))
            events.append(("content_block_delta", {"type": "content_block_delta", "index": index, "delta": {"type": "signature_delta", "signature": block["signature"]}}))
        elif block["type"] == "text":
            events.append(("content_block_start", {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}))
            value = block["text"]
            for piece in [value[i : i + piece_chars] for i in range(0, len(value), piece_chars)] or [""]:
                events.append(("content_block_delta", {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": piece}}))
        else:
            events.append(("content_block_start", {"type": "content_block_start", "index": index, "content_block": {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}}))
            raw = json.dumps(block["input"], ensure_ascii=False)
            for piece in [raw[i : i + 30] for i in range(0, len(raw), 30)]:
                events.append(("content_block_delta", {"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": piece}}))
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append(("message_delta", {"type": "message_delta", "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None}, "usage": {"output_tokens": message["usage"]["output_tokens"]}}))
    events.append(("message_stop", {"type": "message_stop"}))
    return events


async def _events(message: dict[str, Any], piece_interval: float = 0.0, piece_chars: int = 40) -> AsyncIterator[bytes]:
    for name, data in _event_list(message, piece_chars):
        if piece_interval and data.get("delta", {}).get("type") == "text_delta":
            await asyncio.sleep(piece_interval)
        yield _sse(name, data)


def tool_results(body: dict[str, Any]) -> list[str]:
    """The tool_result contents the bot sent in a request (for scripted replies that quote them)."""
    found: list[str] = []
    for message in body.get("messages", []):
        if isinstance(message["content"], list):
            for block in message["content"]:
                if block.get("type") == "tool_result":
                    content = block["content"]
                    found.append(content if isinstance(content, str) else json.dumps(content))
    return found
