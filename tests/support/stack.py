"""The whole bot on loopback for end-to-end tests: the real web app under uvicorn plus a worker."""
from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from bot.settings import Settings
from bot.web import create_app
from bot.wiring import Components, build_components
from bot.worker import GROUP, Worker
from tests.support.fake_http import UvicornRunner


@dataclass
class Stack:
    components: Components
    worker: Worker
    runner: UvicornRunner

    @property
    def base_url(self) -> str:
        return self.runner.url

    @property
    def redis(self) -> Any:
        return self.components.redis

    @property
    def keys(self) -> Any:
        return self.components.keys

    async def wait_idle(self, timeout: float = 20.0) -> None:
        """Wait until every enqueued job has been read, answered and acked."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if await queue_drained(self.components) and not self.worker._tasks:
                return
            await asyncio.sleep(0.05)
        raise TimeoutError("jobs still pending after %.0fs" % timeout)


async def queue_drained(components: Components) -> bool:
    redis, stream = components.redis, components.keys.jobs
    if not await redis.exists(stream):
        return True
    info = await redis.xinfo_stream(stream)
    last = info.get("last-generated-id") or info.get(b"last-generated-id")
    groups = await redis.xinfo_groups(stream)
    group = next((g for g in groups if (g.get("name") or g.get(b"name")) in (GROUP, GROUP.encode())), None)
    if group is None:
        return info.get("length", 0) == 0
    delivered = group.get("last-delivered-id") or group.get(b"last-delivered-id")
    pending = group.get("pending") or group.get(b"pending") or 0
    return delivered == last and pending == 0


def jobs_enqueued(components: Components) -> int:
    """How many jobs ingress enqueued. A finished job is deleted from the stream (issue 16), so
    XLEN after the worker ran says nothing about deduplication; the ingress counter does."""
    assert components.metrics is not None
    return int(sum(
        sample.value
        for metric in components.metrics.events.collect()
        for sample in metric.samples
        if sample.name.endswith("_total") and sample.labels.get("outcome") == "enqueued"
    ))


@contextlib.asynccontextmanager
async def running_bot(settings: Settings, conversation: Any = None, *, worker: bool = True) -> AsyncIterator[Stack]:
    components = build_components(settings, conversation=conversation)
    runner = UvicornRunner(create_app(components))
    await runner.start()
    job_worker = Worker(components)
    await job_worker.ensure_group()
    task = asyncio.create_task(job_worker.run()) if worker else None
    try:
        yield Stack(components, job_worker, runner)
    finally:
        job_worker.stop()
        if task is not None:
            await task
        await runner.stop()
        await components.aclose()
