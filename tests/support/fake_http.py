"""A local HTTP server for fake platform and tool APIs, run on a free loopback port.

Tests give it Starlette routes; it records every request so tests can assert
what the real SDK clients sent.
"""
from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.routing import BaseRoute


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    query: dict[str, str] = field(default_factory=dict)

    @property
    def json(self) -> Any:
        return json.loads(self.body or b"null")


class _PromptServer(uvicorn.Server):
    """uvicorn's server, stopping as soon as it is asked.

    uvicorn notices `should_exit` on its 0.1 s tick, then sleeps a fixed 0.1 s and polls every 0.1 s
    for connections to close: ~0.2 s per stop, and the suite starts and stops several hundred
    servers. The steps here are uvicorn's own (stop listening, ask every connection to finish,
    wait for connections and request tasks up to the graceful timeout, then the app's lifespan
    shutdown); only the waits are short polls instead of fixed sleeps."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self._asked = asyncio.Event()

    def ask_to_stop(self) -> None:
        self.should_exit = True
        self._asked.set()

    async def main_loop(self) -> None:
        counter = 0
        while not await self.on_tick(counter):  # on_tick refreshes the Date header every 10th tick
            counter = (counter + 1) % 864000
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._asked.wait(), 0.1)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        for server in self.servers:
            server.close()
        for connection in list(self.server_state.connections):
            connection.shutdown()
        loop = asyncio.get_running_loop()
        grace = self.config.timeout_graceful_shutdown
        deadline = None if grace is None else loop.time() + grace
        while (self.server_state.connections or self.server_state.tasks) and (deadline is None or loop.time() < deadline):
            await asyncio.sleep(0.005)
        for task in self.server_state.tasks:
            task.cancel(msg="Task cancelled, timeout graceful shutdown exceeded")
        for server in self.servers:
            await server.wait_closed()
        if not self.force_exit:
            await self.lifespan.shutdown()


class UvicornRunner:
    """Runs an ASGI app under uvicorn inside the current event loop."""

    def __init__(self, app: Any, port: int | None = None) -> None:
        self.port = port or free_port()
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning", lifespan="on")
        self._server = _PromptServer(config)
        self._task: asyncio.Task[None] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> None:
        self._task = asyncio.create_task(self._server.serve())
        while not self._server.started:
            if self._task.done():
                self._task.result()  # surfaces the startup error
            await asyncio.sleep(0.01)

    async def stop(self) -> None:
        self._server.ask_to_stop()
        if self._task is not None:
            await self._task


class FakeServer:
    def __init__(self, routes: list[BaseRoute]) -> None:
        self.requests: list[RecordedRequest] = []
        self.app = Starlette(routes=routes)
        self.app.add_middleware(_Recorder, sink=self.requests)  # type: ignore[arg-type]
        self._runner = UvicornRunner(self.app)

    @property
    def url(self) -> str:
        return self._runner.url

    def paths(self) -> list[str]:
        return [r.path for r in self.requests]

    def count(self, path: str) -> int:
        return sum(1 for r in self.requests if r.path == path)

    async def __aenter__(self) -> "FakeServer":
        await self._runner.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._runner.stop()


class _Recorder:
    """ASGI middleware: buffers the body, records the request, replays the body downstream."""

    def __init__(self, app: Any, sink: list[RecordedRequest]) -> None:
        self.app = app
        self.sink = sink

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        more = True
        while more:
            message = await receive()
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        body = b"".join(chunks)
        request = Request(scope)
        self.sink.append(
            RecordedRequest(
                method=scope["method"],
                path=scope["path"],
                headers={k.lower(): v for k, v in request.headers.items()},
                body=body,
                query=dict(request.query_params),
            )
        )
        sent = False

        async def replay() -> dict:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)
