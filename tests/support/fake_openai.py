"""A local fake OpenAI-compatible server (Chat Completions, /models), reached by the real `openai` SDK.

It behaves like the servers the bot meets: vLLM/vllm-ascend, SGLang, MindIE and
gateways. Each test scripts the model as a list of steps, one per POST
/v1/chat/completions: a `Reply` (content, tool calls, optional reasoning), a
`Fail` (an HTTP error) or a callable that gets the request body and returns
one. Streaming answers are SSE chunks ending with `data: [DONE]`, content
split into small pieces, `reasoning_content` sent as its own deltas.

Server modes:
- `reject_tools`: any request with `tools` gets vLLM's 400 for a server started
  without `--enable-auto-tool-choice`;
- `reject_stream_options`: a gateway that refuses `stream_options`;
- `models`: what GET /v1/models lists.
"""
from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, Union

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from tests.support.fake_http import FakeServer

VLLM_TOOLS_ERROR = '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set'


def call(name: str, raw_arguments: str | None = None, **arguments: Any) -> dict[str, Any]:
    """A scripted tool call; `raw_arguments` sends that exact (possibly broken) argument text."""
    return {"name": name, "arguments": raw_arguments if raw_arguments is not None else json.dumps(arguments)}


@dataclass
class Reply:
    content: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    reasoning_content: str = ""  # sent in its own field, as vLLM's reasoning parsers do
    finish_reason: str | None = None  # default: tool_calls when there are calls, else stop
    piece_chars: int = 8  # streamed content is split into pieces of this many characters
    piece_interval: float = 0.0  # seconds between streamed pieces (a fixed token rate for benchmarks)
    delay: float = 0.0  # seconds before the first byte
    omit_ids: bool = False  # some servers send tool calls without ids


@dataclass
class Fail:
    status: int
    message: str = "scripted failure"


Step = Union[Reply, Fail, Callable[[dict[str, Any]], Union[Reply, Fail]]]


def approx_tokens(data: str) -> int:
    return max(1, (len(data.encode("utf-8")) + 3) // 4) if data else 0


class FakeOpenAI:
    def __init__(
        self,
        script: list[Step] | Callable[[dict[str, Any]], Reply | Fail],
        *,
        models: tuple[str, ...] = ("fake-served-model",),
        reject_tools: bool = False,
        reject_stream_options: bool = False,
        reject_max_tokens: bool = False,  # OpenAI's reasoning models take max_completion_tokens only
        cached_tokens: int = 0,
        api_key: str | None = None,  # when set, other keys get 401
    ) -> None:
        self._script = script
        self._position = 0
        self._ids = itertools.count(1)
        self.models = models
        self.reject_tools = reject_tools
        self.reject_stream_options = reject_stream_options
        self.reject_max_tokens = reject_max_tokens
        self.cached_tokens = cached_tokens
        self.api_key = api_key
        self.bodies: list[dict[str, Any]] = []  # every chat completion request body, in order
        self.headers: list[dict[str, str]] = []
        self.model_list_calls = 0
        self.server = FakeServer(
            [
                Route("/v1/chat/completions", self._chat, methods=["POST"]),
                Route("/v1/models", self._models, methods=["GET"]),
            ]
        )

    @property
    def url(self) -> str:
        """The base URL a client is configured with (the SDK appends /chat/completions)."""
        return self.server.url + "/v1"

    @property
    def calls(self) -> int:
        return len(self.bodies)

    async def __aenter__(self) -> "FakeOpenAI":
        await self.server.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.server.__aexit__(*exc)

    def _authorised(self, request: Request) -> bool:
        return self.api_key is None or request.headers.get("authorization") == f"Bearer {self.api_key}"

    async def _models(self, request: Request) -> Response:
        self.model_list_calls += 1
        if not self._authorised(request):
            return _error(401, "Incorrect API key provided")
        return JSONResponse({"object": "list", "data": [{"id": m, "object": "model", "owned_by": "fake"} for m in self.models]})

    def _next(self, body: dict[str, Any]) -> Reply | Fail:
        if callable(self._script):
            return self._script(body)
        if self._position >= len(self._script):
            return Fail(400, "fake model script exhausted")
        step = self._script[self._position]
        self._position += 1
        return step(body) if callable(step) else step

    async def _chat(self, request: Request) -> Response:
        body = await request.json()
        self.bodies.append(body)
        self.headers.append(dict(request.headers))
        if not self._authorised(request):
            return _error(401, "Incorrect API key provided")
        if body.get("model") not in self.models:
            return _error(404, f"The model `{body.get('model')}` does not exist.")
        if self.reject_tools and body.get("tools"):
            return _error(400, VLLM_TOOLS_ERROR)
        if self.reject_stream_options and "stream_options" in body:
            return _error(400, "Unrecognized request argument supplied: stream_options")
        if self.reject_max_tokens and "max_tokens" in body:
            return _error(400, "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.")
        step = self._next(body)
        if isinstance(step, Fail):
            return _error(step.status, step.message)
        if step.delay:
            await asyncio.sleep(step.delay)
        completion_id = f"chatcmpl-{next(self._ids)}"
        calls = [
            {"id": "" if step.omit_ids else f"call_{next(self._ids)}", "type": "function", "function": dict(c)}
            for c in step.tool_calls
        ]
        usage = self._usage(body, step)
        finish = step.finish_reason or ("tool_calls" if calls else "stop")
        if body.get("stream"):
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            return StreamingResponse(
                self._chunks(completion_id, body["model"], step, calls, finish, usage if include_usage else None),
                media_type="text/event-stream",
            )
        message: dict[str, Any] = {"role": "assistant", "content": step.content or None}
        if step.reasoning_content:
            message["reasoning_content"] = step.reasoning_content
        if calls:
            message["tool_calls"] = calls
        return JSONResponse(
            {
                "id": completion_id,
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body["model"],
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": usage,
            }
        )

    def _usage(self, body: dict[str, Any], step: Reply) -> dict[str, Any]:
        prompt = approx_tokens(json.dumps(body.get("messages", []), ensure_ascii=False))
        completion = approx_tokens(step.content + step.reasoning_content + json.dumps(step.tool_calls))
        usage: dict[str, Any] = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
        if self.cached_tokens:
            usage["prompt_tokens_details"] = {"cached_tokens": min(self.cached_tokens, prompt)}
        return usage

    async def _chunks(
        self,
        completion_id: str,
        model: str,
        step: Reply,
        calls: list[dict[str, Any]],
        finish: str,
        usage: dict[str, Any] | None,
    ) -> AsyncIterator[bytes]:
        def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> bytes:
            data = {
                "id": completion_id,
                "object": "chat.completion.chunk",
                "created": int(time.time()),
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
            }
            return f"data: {json.dumps(data, ensure_ascii=False)}\n\n".encode()

        yield chunk({"role": "assistant", "content": ""})
        for piece in _pieces(step.reasoning_content, 16):
            yield chunk({"reasoning_content": piece})
        for piece in _pieces(step.content, step.piece_chars):
            if step.piece_interval:
                await asyncio.sleep(step.piece_interval)
            yield chunk({"content": piece})
        for index, tool_call in enumerate(calls):
            function = tool_call["function"]
            head = {"index": index, "type": "function", "function": {"name": function["name"], "arguments": ""}}
            if tool_call["id"]:
                head["id"] = tool_call["id"]
            yield chunk({"tool_calls": [head]})
            for piece in _pieces(function["arguments"], 10):
                yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
        yield chunk({}, finish)
        if usage is not None:
            data = {"id": completion_id, "object": "chat.completion.chunk", "created": 0, "model": model, "choices": [], "usage": usage}
            yield f"data: {json.dumps(data)}\n\n".encode()
        yield b"data: [DONE]\n\n"


def _pieces(value: str, size: int) -> list[str]:
    return [value[i : i + size] for i in range(0, len(value), size)]


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse(
        {"object": "error", "message": message, "type": "BadRequestError", "code": status,
         "error": {"message": message, "type": "invalid_request_error", "code": None}},
        status_code=status,
        headers={"retry-after-ms": "5"},
    )


def tool_messages(body: dict[str, Any]) -> list[str]:
    """The `tool` role contents the bot sent in a request (for scripted replies that quote them)."""
    return [m["content"] for m in body.get("messages", []) if m.get("role") == "tool"]


def user_text(body: dict[str, Any]) -> str:
    return "\n".join(m["content"] for m in body.get("messages", []) if m.get("role") == "user" and isinstance(m.get("content"), str))
