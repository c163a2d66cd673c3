"""Outages and scale-out against real redis-server processes."""
from __future__ import annotations

import asyncio

import httpx
import redis.asyncio as aioredis
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from bot.embedded_redis import start_embedded_redis
from bot.web import create_app
from bot.wiring import build_components
from bot.worker import Worker
from core.messages import InboundMessage, Reply, ReplyKind
from tests.support.fake_http import UvicornRunner
from tests.support.recording_adapter import RecordingAdapter



class Echo:
    async def handle(self, message: InboundMessage, progress) -> Reply:
        return Reply(ReplyKind.ANSWER, f"echo {message.text}", "en")


class WebhookAdapter(RecordingAdapter):
    """A recording adapter with a webhook that enqueues, like the real platform adapters."""

    def __init__(self, ingress) -> None:
        super().__init__()
        self.ingress = ingress

    def routes(self) -> list:
        async def hook(request: Request) -> JSONResponse:
            body = await request.json()
            m = InboundMessage("recording", "w", "c", body["thread"], "u", body["text"], body["id"], body["id"], True)
            result = await self.ingress.submit(m)
            return JSONResponse({"outcome": result.outcome.value})

        return [Route("/hook", hook, methods=["POST"])]


def make(settings, redis=None):
    components = build_components(settings, redis=redis, conversation=Echo(), with_adapters=False)
    adapter = WebhookAdapter(components.ingress)
    components.adapters = {"recording": adapter}
    return components, adapter


async def wait_for(predicate, timeout: float = 20.0) -> None:
    for _ in range(int(timeout / 0.05)):
        if await predicate():
            return
        await asyncio.sleep(0.05)
    raise TimeoutError


async def test_redis_down_means_503_then_recovery(make_settings, tmp_path):
    server = start_embedded_redis(tmp_path / "r", persist=True)
    settings = make_settings(redis_url=server.url)
    components, adapter = make(settings)
    runner = UvicornRunner(create_app(components))
    await runner.start()
    worker = Worker(components)
    task = asyncio.create_task(worker.run())
    try:
        async with httpx.AsyncClient(base_url=runner.url) as http:
            ok = await http.post("/hook", json={"id": "1", "thread": "t", "text": "before"})
            assert ok.json() == {"outcome": "enqueued"}
            await wait_for(lambda: _async(len(adapter.delivered) == 1))
            server.stop()  # Redis goes away
            down = await http.post("/hook", json={"id": "2", "thread": "t", "text": "during"})
            assert down.status_code == 503  # the platform will retry
            ready = await http.get("/readyz")
            assert ready.status_code == 503
            await asyncio.sleep(0.5)  # the worker is now failing to read and backing off
            server = start_embedded_redis(tmp_path / "r", port=server.port, persist=True)
            retried = await http.post("/hook", json={"id": "2", "thread": "t", "text": "during"})
            assert retried.json() == {"outcome": "enqueued"}
            await wait_for(lambda: _async(len(adapter.delivered) == 2))
            assert [d.reply.text for d in adapter.delivered] == ["echo before", "echo during"]
    finally:
        worker.stop()
        await task
        await runner.stop()
        await components.aclose()
        server.stop()


async def test_a_job_queued_before_a_redis_restart_is_still_answered(make_settings, tmp_path):
    server = start_embedded_redis(tmp_path / "r", persist=True)
    settings = make_settings(redis_url=server.url)
    components, adapter = make(settings)
    await components.ingress.submit(InboundMessage("recording", "w", "c", "t", "u", "queued", "1", "1", True))
    client = aioredis.Redis.from_url(server.url)
    await client.execute_command("BGREWRITEAOF")
    await asyncio.sleep(0.3)
    await client.aclose()
    server.stop()
    server = start_embedded_redis(tmp_path / "r", port=server.port, persist=True)
    worker = Worker(components)
    task = asyncio.create_task(worker.run())
    try:
        await wait_for(lambda: _async(len(adapter.delivered) == 1))
        assert adapter.delivered[0].reply.text == "echo queued"
    finally:
        worker.stop()
        await task
        await components.aclose()
        server.stop()


async def _async(value: bool) -> bool:
    return value
