"""WeCom API mode: how fast POST /wecom/callback answers (WeCom allows 5 s; URL verification 1 s),
for the first message callback (verify, decrypt, open the stream, dedupe + enqueue, encrypted
reply) and for refresh callbacks (verify, decrypt, one Lua read, encrypted reply); then the cost
of rendering and byte-splitting a long answer.

Runs the real WeCom adapter under uvicorn on loopback against a real Redis (REDIS_URL, or a
private redis-server).

    .venv/bin/python bench/wecom_ack.py [--events 500] [--concurrency 10]
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
from adapters.wecom.adapter import WeComAdapter  # noqa: E402
from adapters.wecom.render import byte_len, lay_out, render_reply  # noqa: E402
from bench._common import percentile, redis_url_for_bench  # noqa: E402
from bot.settings import Settings  # noqa: E402
from core.ingress import Ingress  # noqa: E402
from core.keys import Keys  # noqa: E402
from core.messages import Reply, ReplyKind  # noqa: E402
from tests.support.fake_http import UvicornRunner  # noqa: E402
from tests.support.fake_wecom import WeComCallbackClient, message_body  # noqa: E402



TOKEN, AES = "bench-token", "kWxPEV2QE6N1q9oGNVb5XQCMO1XIQV0MPPkO5q5Fj5o"


def summary(name: str, seconds: list[float], wall: float) -> str:
    ms = [x * 1000 for x in seconds]
    return (f"{name}: {len(ms)} callbacks: p50 {percentile(ms, 50):.1f} ms, p95 {percentile(ms, 95):.1f} ms, "
            f"p99 {percentile(ms, 99):.1f} ms, max {max(ms):.1f} ms ({len(ms) / wall:.0f}/s)")


async def ack_latency(redis_url: str, events: int, concurrency: int) -> None:
    prefix = f"bench-{uuid.uuid4().hex[:8]}"
    redis = aioredis.Redis.from_url(redis_url)
    settings = Settings(_env_file=None, redis_url=redis_url, redis_prefix=prefix,  # type: ignore[call-arg]
                        wecom_token=TOKEN, wecom_encoding_aes_key=AES)
    adapter = WeComAdapter(AdapterDeps(settings, redis, Ingress(redis, Keys(prefix), 600)))
    runner = UvicornRunner(Starlette(routes=adapter.routes()))
    await runner.start()
    client = WeComCallbackClient(runner.url, TOKEN, AES)
    slots = asyncio.Semaphore(concurrency)
    streams: list[str] = []
    try:
        async with httpx.AsyncClient(base_url=runner.url, timeout=10) as http:

            async def post(payload: dict) -> tuple[float, dict]:
                params, body = client.seal(payload)
                async with slots:
                    start = time.perf_counter()
                    response = await http.post("/wecom/callback", params=params, content=body)
                    took = time.perf_counter() - start
                assert response.status_code == 200, response.status_code
                env = response.json()
                return took, json.loads(client.crypto.decrypt(env["encrypt"]))

            async def message(i: int) -> float:
                took, reply = await post(message_body(f"@Bot question {i}", chat_id=f"grp{i % 20}"))
                streams.append(reply["stream"]["id"])
                return took

            async def refresh(sid: str) -> float:
                took, reply = await post({"msgid": uuid.uuid4().hex, "msgtype": "stream", "stream": {"id": sid}})
                assert reply["stream"]["id"] == sid
                return took

            await message(-1)  # warm-up
            streams.clear()
            started = time.perf_counter()
            first = await asyncio.gather(*(message(i) for i in range(events)))
            print(summary("message callback -> stream opened + job queued", list(first), time.perf_counter() - started))
            started = time.perf_counter()
            again = await asyncio.gather(*(refresh(s) for s in streams))
            print(summary("refresh callback -> bubble from Redis", list(again), time.perf_counter() - started))
        assert await redis.xlen(Keys(prefix).jobs) == events + 1
    finally:
        await runner.stop()
        await adapter.stop()
        async for key in redis.scan_iter(match=f"*{prefix}*"):
            await redis.delete(key)
        await redis.aclose()


def render_cost(rounds: int = 50) -> None:
    code = "\n".join(f"    out_{i} = layer_{i}(x)  # 第{i}层 @all" for i in range(300))
    body = "\n\n".join("段落 " + "**加粗** 文本、`code` 和 [链接](https://x.org)。" * 20 for _ in range(60))
    body += f"\n\n```python\n{code}\n```"
    reply = Reply(ReplyKind.ANSWER, body, "zh")
    start = time.perf_counter()
    for _ in range(rounds):
        layout = lay_out(render_reply(reply), "zh")
    elapsed = (time.perf_counter() - start) / rounds
    print(f"render + split: {byte_len(body):,} bytes -> bubble + {len(layout.rest)} more in {elapsed * 1000:.2f} ms")


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=500)
    parser.add_argument("--concurrency", type=int, default=10)
    args = parser.parse_args()
    with redis_url_for_bench() as redis_url:
        await ack_latency(redis_url, args.events, args.concurrency)
        render_cost()


if __name__ == "__main__":
    asyncio.run(main())
