"""The shared Redis pacer: bursts then spacing, per scope, across processes."""
from __future__ import annotations

from typing import Any

import redis.asyncio as aioredis

from adapters.common.pacing import Pacer, Rate


def recorder() -> tuple[list[float], Any]:
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    return waits, sleep


async def test_a_burst_passes_then_posts_are_spaced(redis: Any, keys: Any) -> None:
    waits, sleep = recorder()
    pacer = Pacer(redis, keys, "test", sleep)
    for _ in range(5):
        await pacer.wait("chat:1", Rate(interval=10.0, burst=3))
    assert len(waits) == 2  # three back to back, then one slot per interval
    assert 5.0 < waits[0] <= 10.0 and 15.0 < waits[1] <= 20.0


async def test_two_processes_share_one_budget_and_scopes_are_separate(redis: Any, keys: Any) -> None:
    waits, sleep = recorder()
    web, worker = Pacer(redis, keys, "test", sleep), Pacer(redis, keys, "test", sleep)  # e.g. two workers
    rate = Rate(interval=10.0)
    await web.wait("chat:1", rate)
    await worker.wait("chat:1", rate)  # the other process sees the slot taken
    await worker.wait("chat:2", rate)  # another chat has its own slots
    assert len(waits) == 1 and 5.0 < waits[0] <= 10.0


async def test_a_redis_outage_posts_without_pacing(keys: Any) -> None:
    waits, sleep = recorder()
    from redis.asyncio.retry import Retry
    from redis.backoff import NoBackoff

    # no retries with backoff: the pacer's fallback is tested, not redis-py's patience
    down = aioredis.Redis(host="127.0.0.1", port=1, socket_connect_timeout=0.2, retry=Retry(NoBackoff(), 0))
    await Pacer(down, keys, "test", sleep).wait("chat:1", Rate(interval=10.0))  # must not raise
    assert waits == []
    await down.aclose()
