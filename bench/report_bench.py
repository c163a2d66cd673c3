"""The admin report over a large answer log: 100k stored answers, timed from Redis to HTML.

Fills a private Redis (or REDIS_URL, under a throwaway prefix) with N synthetic answer records
written the way the worker writes them (bot/report/log.py record_json), spread over D days and
W workspaces (through AnswerLog.append, so each record also lands in its day's counters), with
votes on 2% of the answers through the Slack adapter's own feedback writer; then builds the report
(bot/report/data.py) and renders the page (bot/report/page.py) R times each way: every record read
and folded (`counters=False`, how every report was built before the day counters) and whole days
from their counters (the default), checks the two reports are equal, and measures the peak memory
of each under tracemalloc.

    .venv/bin/python bench/report_bench.py [--answers 100000] [--days 30] [--workspaces 5] [--runs 3]
"""
from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import time
import tracemalloc
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import redis.asyncio as aioredis  # noqa: E402

from adapters.slack.state import record_feedback  # noqa: E402
from bench._common import redis_url_for_bench  # noqa: E402
from bot.report.access import OPERATOR, workspace_scope  # noqa: E402
from bot.report.data import build_report  # noqa: E402
from bot.report.limits import LogLimit, LogLimits  # noqa: E402
from bot.report.log import AnswerLog, record_json  # noqa: E402
from bot.report.page import render_html  # noqa: E402
from core.keys import Keys  # noqa: E402
from core.messages import InboundMessage, Reply, ReplyKind, Source  # noqa: E402
from core.research.redact import Redactor  # noqa: E402

QUESTIONS = (
    "vllm-ascend 0.9.1 with vllm 0.11.0 fails at startup on Atlas 800I A2",
    "Traceback (most recent call last):\nRuntimeError: ACL stream synchronize failed, error code 507035",
    "MindIE 服务化启动后请求一直没有响应，日志里有 EZ9999",
    "how do I enable torchair graph mode with a cache for DeepSeek-V3",
    "msModelSlim w8a8 quantization of Qwen2.5-72B gives NaN",
    "SGLang on NPU: --attention-backend ascend out of memory",
    "what is the weather in Shenzhen",
)
KINDS = (ReplyKind.ANSWER,) * 7 + (ReplyKind.CLARIFY, ReplyKind.OUT_OF_SCOPE, ReplyKind.NOTICE)
REPOS = ("vllm-project/vllm-ascend", "verylucky01/MindIE-LLM", "sgl-project/sglang", "verylucky01/msModelSlim")


def synthetic(rng: random.Random, workspace: str, i: int) -> tuple[InboundMessage, Reply]:
    text = f"{rng.choice(QUESTIONS)} (case {i})"
    message = InboundMessage("slack", workspace, f"C{rng.randrange(20)}", f"{1_700_000_000 + i}.000100", "U", text,
                             "m", "e", False)
    kind = rng.choice(KINDS)
    reply = Reply(kind, "answer", rng.choice(("en", "zh")), repos=(rng.choice(REPOS),), trace_id=uuid.uuid4().hex,
                  sources=tuple(Source("s", "https://example.invalid") for _ in range(rng.randrange(3))))
    if kind is ReplyKind.ANSWER:
        object.__setattr__(reply, "confidence", type("C", (), {"level": rng.choice(("high", "medium", "low"))})())
    return message, reply


async def fill(redis: aioredis.Redis, keys: Keys, log: AnswerLog, answers: int, days: int, workspaces: int,
               now: float) -> None:
    rng = random.Random(7)
    per_scope = answers // workspaces
    voted: list[tuple[str, str]] = []

    async def one(workspace: str, records: list[tuple[float, int, str]]) -> None:
        for at, i, record in records:  # in order: a workspace's stream ids must increase
            # the worker's write, with the past's stream id (the script adds the day counters)
            await log.append(f"slack:{workspace}", record, at, stream_id=f"{int(at * 1000)}-{i}")

    planned = {}
    for w in range(workspaces):
        workspace, records = f"T{w}", []
        for i in range(per_scope):
            at = now - days * 86_400 + (i + 0.5) * days * 86_400 / per_scope
            message, reply = synthetic(rng, workspace, i)
            records.append((at, i, record_json(message, reply, latency=rng.lognormvariate(2.0, 0.6),
                                               tokens=rng.randrange(30_000), redact=log.redact)))
            if rng.random() < 0.02:
                voted.append((reply.trace_id, workspace))
        planned[workspace] = records
    await asyncio.gather(*(one(workspace, records) for workspace, records in planned.items()))
    for n, (trace_id, workspace) in enumerate(voted):
        await record_feedback(redis, keys, trace_id=trace_id, workspace=workspace, user=f"U{n % 7}",
                              value="helpful" if n % 3 else "not_helpful", channel="C1", message_ts="1.0")


async def server_cpu(redis: aioredis.Redis) -> float:
    info = await redis.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


async def run(args: argparse.Namespace, url: str) -> None:
    redis = aioredis.Redis.from_url(url)
    keys = Keys(f"bench-report-{uuid.uuid4().hex[:8]}")
    limits = LogLimits(LogLimit(max(args.days, 1), args.answers))  # the bench keeps everything it writes
    log = AnswerLog(redis, keys, limits, Redactor([]))
    try:
        now = time.time()
        started = time.perf_counter()
        await fill(redis, keys, log, args.answers, args.days, args.workspaces, now)
        print(f"filled {args.answers} answers over {args.days} days, {args.workspaces} workspaces "
              f"in {time.perf_counter() - started:.1f} s")
        reports = {}
        for name, counters in (("every record", False), ("day counters", True)):
            totals = []
            for _ in range(args.runs):
                # CPU seconds of this process and of the Redis server beside the wall time: on a shared
                # machine the wall time also counts waiting for a core
                redis_cpu, cpu, t0 = await server_cpu(redis), time.process_time(), time.perf_counter()
                report = await build_report(log, redis, keys, OPERATOR, args.days, now=now, counters=counters)
                t1 = time.perf_counter()
                page = render_html(report)
                t2, cpu, redis_cpu = time.perf_counter(), time.process_time() - cpu, await server_cpu(redis) - redis_cpu
                totals.append(t2 - t0)
                print(f"{name}: {report['records_read']} records, build {t1 - t0:.2f} s, render {t2 - t1:.3f} s, "
                      f"total {t2 - t0:.2f} s (CPU: bot {cpu:.2f} s, redis {redis_cpu:.2f} s); page "
                      f"{len(page) // 1024} KB; votes {report['totals']['votes_up']}/{report['totals']['votes_down']}")
            tracemalloc.start()
            reports[name] = await build_report(log, redis, keys, OPERATOR, args.days, now=now, counters=counters)
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            print(f"{name}: median total {statistics.median(totals):.2f} s (target < 2 s); peak Python memory "
                  f"while building {peak / 2**20:.1f} MiB")
        equal = all({k: v for k, v in r.items() if k != "build_seconds"} == {
            k: v for k, v in reports["every record"].items() if k != "build_seconds"} for r in reports.values())
        print(f"the two reports are {'equal' if equal else 'DIFFERENT'}")
        # one workspace's admins: their questions' text and topic words too (a fifth of the records)
        own = workspace_scope("slack:T0")
        for name, counters in (("every record", False), ("day counters", True)):
            t0 = time.perf_counter()
            render_html(await build_report(log, redis, keys, own, args.days, now=now, counters=counters))
            print(f"slack:T0 with its text, {name}: {time.perf_counter() - t0:.2f} s")
    finally:
        async for key in redis.scan_iter(match=f"{keys.prefix}*", count=1_000):
            await redis.delete(key)
        async for key in redis.scan_iter(match=f"{{{keys.prefix}}}*", count=1_000):
            await redis.delete(key)
        await redis.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--answers", type=int, default=100_000)
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--workspaces", type=int, default=5)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with redis_url_for_bench() as url:
        asyncio.run(run(args, url))


if __name__ == "__main__":
    main()
