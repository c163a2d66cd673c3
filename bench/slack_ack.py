"""Slack ingress: how fast POST /slack/events acknowledges (Slack allows 3 s), and render cost.

Runs the real Slack adapter (Bolt, signature check, dedupe + enqueue on a real Redis) under
uvicorn on loopback, with the fake Slack Web API for Bolt's auth.test. Sends signed app_mention
events over HTTP and prints ack latency percentiles; then times rendering a 20,000-character
answer into Slack messages.

    .venv/bin/python bench/slack_ack.py [--events 500] [--concurrency 10]
"""
from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx  # noqa: E402
import redis.asyncio as aioredis  # noqa: E402
from starlette.applications import Starlette  # noqa: E402

from adapters.base import AdapterDeps  # noqa: E402
from adapters.slack.adapter import SlackAdapter  # noqa: E402
from adapters.slack.blocks import render_messages  # noqa: E402
from bench._common import percentile, redis_url_for_bench  # noqa: E402
from bot.settings import Settings  # noqa: E402
from core.ingress import Ingress  # noqa: E402
from core.keys import Keys  # noqa: E402
from core.messages import Reply, ReplyKind  # noqa: E402
from tests.support.fake_http import UvicornRunner  # noqa: E402
from tests.support.fake_slack import BOT_TOKEN, SIGNING_SECRET, FakeSlack, event_callback, mention, sign  # noqa: E402


async def ack_latency(redis_url: str, events: int, concurrency: int) -> list[float]:
    prefix = f"bench-{uuid.uuid4().hex[:8]}"
    redis = aioredis.Redis.from_url(redis_url)
    async with FakeSlack() as slack:
        settings = Settings(_env_file=None, redis_url=redis_url, redis_prefix=prefix,  # type: ignore[call-arg]
                            slack_bot_token=BOT_TOKEN, slack_signing_secret=SIGNING_SECRET, slack_api_url=slack.api_url)
        adapter = SlackAdapter(AdapterDeps(settings, redis, Ingress(redis, Keys(prefix), 600)))
        runner = UvicornRunner(Starlette(routes=adapter.routes()))
        await runner.start()
        latencies: list[float] = []
        slots = asyncio.Semaphore(concurrency)
        try:
            async with httpx.AsyncClient(base_url=runner.url, timeout=10) as client:

                async def one(i: int) -> None:
                    body = json.dumps(event_callback(mention(f"question {i}", ts=f"1700{i:06d}.000100"))).encode()
                    headers = {"content-type": "application/json", **sign(body)}
                    async with slots:
                        start = time.perf_counter()
                        response = await client.post("/slack/events", content=body, headers=headers)
                        latencies.append(time.perf_counter() - start)
                    assert response.status_code == 200, response.status_code

                await one(events)  # warm-up: Bolt's first auth.test
                latencies.clear()
                await asyncio.gather(*(one(i) for i in range(events)))
            assert await redis.xlen(Keys(prefix).jobs) == events + 1
        finally:
            await runner.stop()
            async for key in redis.scan_iter(match=f"*{prefix}*"):
                await redis.delete(key)
            await redis.aclose()
    return latencies


def render_cost(rounds: int = 50) -> float:
    code = "\n".join(f"    out_{i} = layer_{i}(x)  # <!here>" for i in range(300))
    body = "\n\n".join("Paragraph " + "some **bold** text with `code` and [a link](https://x.org). " * 10
                       for _ in range(25)) + f"\n\n```python\n{code}\n```"
    reply = Reply(ReplyKind.ANSWER, body, "en", trace_id="t")
    start = time.perf_counter()
    for _ in range(rounds):
        messages = render_messages(reply)
    elapsed = (time.perf_counter() - start) / rounds
    print(f"render: {len(body):,} chars -> {len(messages)} messages in {elapsed * 1000:.2f} ms")
    return elapsed


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=500)
    parser.add_argument("--concurrency", type=int, default=10)
    args = parser.parse_args()
    with redis_url_for_bench() as redis_url:
        started = time.perf_counter()
        latencies = await ack_latency(redis_url, args.events, args.concurrency)
        wall = time.perf_counter() - started
        ms = [x * 1000 for x in latencies]
        print(f"ack: {args.events} signed events, concurrency {args.concurrency}: "
              f"p50 {percentile(ms, 50):.1f} ms, p95 {percentile(ms, 95):.1f} ms, p99 {percentile(ms, 99):.1f} ms, "
              f"max {max(ms):.1f} ms ({args.events / wall:.0f} events/s incl. startup)")
        render_cost()


if __name__ == "__main__":
    asyncio.run(main())
