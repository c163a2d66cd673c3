"""Redis retention and scrape cost: what the jobs stream keeps after N answered questions, and
what a /metrics scrape costs.

Enqueues N questions (each with a realistic 600-character text) through the real ingress on a
real Redis, measures the stream's entries and MEMORY USAGE, lets a real Worker answer them all
(an echo conversation and an in-memory adapter: only the queue is measured), measures again,
then times /metrics scrapes through the real web app (one Redis pipeline each).

    .venv/bin/python bench/redis_retention.py [--jobs 1000] [--scrapes 200]
"""
from __future__ import annotations

import argparse
import asyncio
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx  # noqa: E402
import redis.asyncio as aioredis  # noqa: E402

from bench._common import percentile, redis_url_for_bench  # noqa: E402
from bot.settings import Settings  # noqa: E402
from bot.web import create_app  # noqa: E402
from bot.wiring import build_components  # noqa: E402
from bot.worker import Worker  # noqa: E402
from core.messages import InboundMessage, Reply, ReplyKind  # noqa: E402
from tests.support.recording_adapter import RecordingAdapter  # noqa: E402
from tests.support.stack import queue_drained  # noqa: E402

QUESTION = ("vllm-ascend 0.9.1 on Atlas 800I A2 fails at startup with HCCL timeout; driver 24.1, CANN 8.1. " * 6)[:600]
TOKEN = "bench-metrics-token"


class Echo:
    async def handle(self, message: InboundMessage, progress: object) -> Reply:
        return Reply(ReplyKind.ANSWER, "ok", "en")


async def _stream_size(redis: aioredis.Redis, key: str) -> tuple[int, int]:
    return int(await redis.xlen(key)), int(await redis.memory_usage(key, samples=0) or 0)


async def run(redis_url: str, jobs: int, scrapes: int) -> None:
    prefix = f"bench-{uuid.uuid4().hex[:8]}"
    redis = aioredis.Redis.from_url(redis_url)
    settings = Settings(_env_file=None, redis_url=redis_url, redis_prefix=prefix, anthropic_api_key=None,  # type: ignore[call-arg]
                        rate_limit_user_per_hour=10**9, rate_limit_channel_per_hour=10**9, worker_concurrency=16,
                        metrics_token=TOKEN)
    components = build_components(settings, redis=redis, conversation=Echo(), with_adapters=False)
    adapter = RecordingAdapter()
    components.adapters = {"recording": adapter}
    try:
        worker = Worker(components)
        await worker.ensure_group()
        for i in range(jobs):
            await components.ingress.submit(
                InboundMessage("recording", "w", "c", f"t{i}", f"u{i % 50}", QUESTION, f"m{i}", f"e{i}", True))
        before = await _stream_size(redis, components.keys.jobs)
        started = time.perf_counter()
        task = asyncio.create_task(worker.run())
        while not (await queue_drained(components) and not worker._tasks):
            await asyncio.sleep(0.05)
        elapsed = time.perf_counter() - started
        worker.stop()
        await task
        after = await _stream_size(redis, components.keys.jobs)
        print(f"jobs answered                      {len(adapter.delivered)} in {elapsed:.1f} s")
        print(f"stream before answering            {before[0]} entries, {before[1] / 1024:.0f} KiB "
              "(what an ack-only worker keeps forever)")
        print(f"stream after answering             {after[0]} entries, {after[1] / 1024:.1f} KiB")

        latencies: list[float] = []
        transport = httpx.ASGITransport(app=create_app(components))
        async with httpx.AsyncClient(transport=transport, base_url="http://bench") as http:
            for _ in range(scrapes):
                t0 = time.perf_counter()
                response = await http.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
                latencies.append(time.perf_counter() - t0)
                assert response.status_code == 200
            refused = await http.get("/metrics")
        print(f"/metrics scrape (authorized)       p50 {percentile(latencies, 50) * 1000:.2f} ms, "
              f"p95 {percentile(latencies, 95) * 1000:.2f} ms over {scrapes}; without the token: {refused.status_code}")
    finally:
        async for key in redis.scan_iter(match=f"*{prefix}*", count=500):
            await redis.delete(key)
        await components.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--scrapes", type=int, default=200)
    args = parser.parse_args()
    with redis_url_for_bench() as url:
        asyncio.run(run(url, args.jobs, args.scrapes))


if __name__ == "__main__":
    main()
