"""The conversation core's own cost per message, offline: route, triage, session load and save.

Runs the real Conversation against a real Redis (REDIS_URL, or a private redis-server) with no
model, over the routing dev set's questions, and prints p50/p99 latency, messages per second and
Redis round trips per turn.

    .venv/bin/python bench/core_cost.py [--messages 2000]
"""
from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import redis.asyncio as aioredis  # noqa: E402

from bench._common import percentile, redis_url_for_bench  # noqa: E402
from core.conversation import Conversation  # noqa: E402
from core.keys import Keys  # noqa: E402
from core.messages import InboundMessage  # noqa: E402
from core.session import RedisSessionStore  # noqa: E402

DEVSET = Path(__file__).resolve().parents[1] / "tests" / "data" / "routing_devset.jsonl"


class CountingRedis(aioredis.Redis):
    """Counts round trips: single commands and whole pipelines each count once."""

    round_trips = 0

    async def execute_command(self, *args, **options):  # type: ignore[override]
        CountingRedis.round_trips += 1
        return await super().execute_command(*args, **options)


async def main(count: int) -> None:
    with redis_url_for_bench() as url:
        await run(url, count)


async def run(url: str, count: int) -> None:
    questions = [json.loads(line)["q"] for line in DEVSET.read_text(encoding="utf-8").splitlines() if line.strip()]
    client = CountingRedis.from_url(url)
    keys = Keys(f"bench-{uuid.uuid4().hex[:8]}")
    conversation = Conversation(RedisSessionStore(client, keys, 600))
    latencies: list[float] = []
    try:
        for i in range(50):  # warm up: regexes compiled, scripts loaded
            await conversation.handle(_message(questions[i % len(questions)], f"warm{i}"))
        CountingRedis.round_trips = 0
        started = time.perf_counter()
        for i in range(count):
            # every fifth message is a follow-up in an existing thread, like real traffic
            thread = f"t{i // 5}"
            t0 = time.perf_counter()
            await conversation.handle(_message(questions[i % len(questions)], thread))
            latencies.append((time.perf_counter() - t0) * 1000)
        elapsed = time.perf_counter() - started
        print(f"messages: {count}")
        print(f"latency per message: p50 {percentile(latencies, 50):.2f} ms, p99 {percentile(latencies, 99):.2f} ms, "
              f"mean {statistics.mean(latencies):.2f} ms")
        print(f"throughput: {count / elapsed:.0f} messages/s (one coroutine, sequential)")
        print(f"redis round trips per turn: {CountingRedis.round_trips / count:.2f}")
    finally:
        async for key in client.scan_iter(match=f"*{keys.prefix}*"):
            await client.delete(key)
        await client.aclose()


def _message(text: str, thread: str) -> InboundMessage:
    mid = uuid.uuid4().hex
    return InboundMessage("bench", "w", "c", thread, "u", text, mid, mid, True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=2000)
    asyncio.run(main(parser.parse_args().messages))
