"""Slack (Telegram, Feishu) ack path against a bare floor, side by side, under the same burst, while workers answer.

Everything runs on 127.0.0.1 as real processes and stops with the bench:

- a private in-memory redis-server;
- the fake Slack Web API and a fake model (bench/lf_fakes.py) answering after --model-delay s;
- the bot: `python -m bot web` (the real ack path: signature or secret, parse, allowlist, dedupe +
  enqueue, logging, metrics) and two `python -m bot worker` answering the queued questions;
- the floor (bench/ack_floor.py): a Starlette app that checks the same signature (Telegram: the
  same secret header; Feishu: the same timestamp window and signature, and decrypts the body to
  read the event id) and does one Redis Lua dedupe + XADD, nothing else;
- with `--platforms telegram` / `feishu`, a fake Telegram Bot API / Feishu Open API in this
  process (getMe, tenant tokens, the workers' replies).

Each request of the burst (signed app_mention events, a share of them Slack re-sends of an earlier
event with X-Slack-Retry-Num) goes to the bot and to the floor at the same moment, each with
--concurrency requests in flight, so both see the same load, the same CPU contention and the
same busy workers. Prints ack latency p50/p95/p99/max for both and the bot/floor ratio, and
checks exactly-once: each unique event is one job in each stream. The first --prime rounds are not
measured: they fill the queue, so the measured rounds run while the workers answer.

    .venv/bin/python bench/ack_bench.py [--events 600] [--duplicates 0.3] [--concurrency 32] [--rounds 3] [--prime 1]
                                        [--platforms slack telegram feishu]
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import shutil
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import aiohttp  # noqa: E402
import httpx  # noqa: E402
import redis.asyncio as aioredis  # noqa: E402
from redis.exceptions import RedisError  # noqa: E402

from adapters.feishu import crypto as feishu_crypto  # noqa: E402
from bench._common import percentile  # noqa: E402
from bench.lf_load import EVENTS_PATH, Event, Send, build_events, schedule, warmup_body  # noqa: E402
from bench.lf_procs import REPO, Child, ProcessGroup, bot_env, free_port, spawn_bot  # noqa: E402
from bench.load_fault import start_fakes  # noqa: E402
from bot.embedded_redis import redis_server_binary  # noqa: E402
from bot.worker import GROUP  # noqa: E402
from core.keys import Keys  # noqa: E402
from tests.support.fake_slack import BOT_TOKEN, SIGNING_SECRET, sign  # noqa: E402
from tests.support.fake_feishu import FakeFeishu, message_event, seal  # noqa: E402
from tests.support.fake_telegram import TOKEN as TELEGRAM_TOKEN, FakeTelegram  # noqa: E402

UNREACHABLE = "http://127.0.0.1:9"  # research tools the fake model never asks for: never the internet
TELEGRAM_SECRET = "bench-telegram-secret-0123456789"
FEISHU_ENCRYPT_KEY, FEISHU_TOKEN, FEISHU_BOT = "bench-feishu-encrypt-key", "bench-feishu-v-token", "ou_benchbot"


@dataclass(frozen=True)
class Platform:
    """How one platform's webhook is called: its path, its auth headers, its events."""

    name: str
    path: str
    headers: Callable[[bytes, int], dict[str, str]]
    events: Callable[[str, int], list[Event]]
    warmup: bytes  # an update the bot acks and ignores (Bolt's first auth.test, PTB's getMe)


def slack_headers(body: bytes, retry_num: int) -> dict[str, str]:
    headers = {"content-type": "application/json", **sign(body)}
    if retry_num:
        headers["x-slack-retry-num"] = str(retry_num)
        headers["x-slack-retry-reason"] = "http_timeout"
    return headers


def telegram_headers(_: bytes, __: int) -> dict[str, str]:
    return {"content-type": "application/json", "x-telegram-bot-api-secret-token": TELEGRAM_SECRET}


def telegram_events(run: str, unique: int) -> list[Event]:
    """One private-chat question per update, each chat its own conversation."""
    base = 10_000_000 * (1 + sum(map(ord, run)) % 90)
    events = []
    for i in range(unique):
        chat = 700_000 + i
        update = {"update_id": base + i, "message": {
            "message_id": i + 1, "date": int(time.time()), "chat": {"id": chat, "type": "private", "first_name": "U"},
            "from": {"id": chat, "is_bot": False, "first_name": "U"},
            "text": f"vllm-ascend on 910B: question q{run}x{i} about graph mode"}}
        events.append(Event(f"q{run}x{i}", str(base + i), str(chat), str(i + 1), json.dumps(update).encode()))
    return events


def feishu_headers(body: bytes, _: int) -> dict[str, str]:
    """Signed at send time, like Feishu: a re-send is the same encrypted body with a fresh signature."""
    timestamp, nonce = str(int(time.time())), uuid.uuid4().hex[:16]
    return {"content-type": "application/json", "x-lark-request-timestamp": timestamp, "x-lark-request-nonce": nonce,
            "x-lark-signature": feishu_crypto.signature(timestamp, nonce, FEISHU_ENCRYPT_KEY, body)}


def feishu_events(run: str, unique: int) -> list[Event]:
    """One group @-mention per event (encrypted like Feishu), each chat its own conversation."""
    events = []
    for i in range(unique):
        chat, event_id = f"oc_{run}x{i}", f"ev_{run}x{i:08d}"
        payload = message_event(f"vllm-ascend on 910B: question q{run}x{i} about graph mode", token=FEISHU_TOKEN,
                                bot_open_id=FEISHU_BOT, chat_id=chat, event_id=event_id, message_id=f"om_{run}x{i}")
        body, _ = seal(payload, FEISHU_ENCRYPT_KEY, sign=False)
        events.append(Event(f"q{run}x{i}", event_id, chat, str(i + 1), body))
    return events


def feishu_warmup() -> bytes:
    """An event the bot acks and ignores (another event type)."""
    payload = {"schema": "2.0", "header": {"event_id": "ev_warmup", "token": FEISHU_TOKEN,
                                           "event_type": "im.chat.member.bot.added_v1"}, "event": {}}
    return seal(payload, FEISHU_ENCRYPT_KEY, sign=False)[0]


PLATFORMS = {
    "slack": Platform("slack", EVENTS_PATH, slack_headers, build_events, warmup_body()),
    "telegram": Platform("telegram", "/telegram/webhook", telegram_headers, telegram_events, json.dumps(
        {"update_id": 1, "edited_message": {"message_id": 1, "date": 1, "chat": {"id": 1, "type": "private"}, "text": "x"}}
    ).encode()),
    "feishu": Platform("feishu", "/feishu/events", feishu_headers, feishu_events, feishu_warmup()),
}


@dataclass
class Side:
    name: str
    url: str
    stream: str
    platform: Platform = PLATFORMS["slack"]
    latencies_ms: list[float] = field(default_factory=list)
    statuses: dict[str, int] = field(default_factory=dict)


async def start_redis(group: ProcessGroup, run_dir: Path) -> str:
    port = free_port()
    args = [redis_server_binary(), "--bind", "127.0.0.1", "--port", str(port), "--save", "", "--appendonly", "no",
            "--protected-mode", "yes", "--dir", str(run_dir)]
    child = group.spawn("redis", args, run_dir / "redis.log")
    url = f"redis://127.0.0.1:{port}/0"
    client = aioredis.Redis.from_url(url, socket_connect_timeout=0.3)
    try:
        for _ in range(100):
            if not child.alive():
                raise RuntimeError(f"redis-server exited: {child.log_tail()}")
            try:
                if await client.ping():
                    return url
            except (RedisError, OSError):
                await asyncio.sleep(0.05)
    finally:
        await client.aclose()
    raise RuntimeError("redis-server did not start")


def bot_settings(redis_url: str, prefix: str, fakes: dict[str, str], run_dir: Path, worker_concurrency: int) -> dict[str, str]:
    telegram = {
        "TELEGRAM_BOT_TOKEN": TELEGRAM_TOKEN,
        "TELEGRAM_WEBHOOK_SECRET": TELEGRAM_SECRET,
        "TELEGRAM_WEBHOOK_URL": "https://bot.example.invalid/telegram/webhook",
        "TELEGRAM_API_URL": fakes["telegram"],
    } if "telegram" in fakes else {}
    feishu = {
        "FEISHU_APP_ID": "cli_bench",
        "FEISHU_APP_SECRET": "bench-feishu-app-secret",
        "FEISHU_ENCRYPT_KEY": FEISHU_ENCRYPT_KEY,
        "FEISHU_VERIFICATION_TOKEN": FEISHU_TOKEN,
        "FEISHU_BOT_OPEN_ID": FEISHU_BOT,
        "FEISHU_MODE": "webhook",
        "FEISHU_API_URL": fakes["feishu"],
        "FEISHU_CARDKIT": "false",
        "FEISHU_PROGRESS_INTERVAL_SECONDS": "0",
    } if "feishu" in fakes else {}
    return {
        **telegram,
        **feishu,
        "REDIS_URL": redis_url,
        "REDIS_PREFIX": prefix,
        "SLACK_BOT_TOKEN": BOT_TOKEN,
        "SLACK_SIGNING_SECRET": SIGNING_SECRET,
        "SLACK_API_URL": fakes["slack"],
        "ALLOW_PUBLIC": "1",  # the only traffic is the bench's own fakes: open on purpose (docs/security.md)
        "SLACK_STREAMING": "false",
        "SLACK_POST_INTERVAL_SECONDS": "0",
        "MODEL_PROVIDER": "anthropic",
        "ANTHROPIC_API_KEY": "bench-not-a-real-key",
        "ANTHROPIC_BASE_URL": fakes["anthropic"],
        "RATE_LIMIT_USER_PER_HOUR": "0",
        "RATE_LIMIT_CHANNEL_PER_HOUR": "0",
        "DAILY_TOKEN_BUDGET": "0",
        "WORKER_CONCURRENCY": str(worker_concurrency),
        "DEEPWIKI_MCP_URL": UNREACHABLE,
        "GITHUB_API_URL": UNREACHABLE,
        "GITCODE_API_URL": UNREACHABLE,
        "REPOS_DIR": str(run_dir / "repos"),
        "DATA_DIR": str(run_dir / "data"),
        "HOST": "127.0.0.1",
        "LOG_LEVEL": "INFO",  # the production default: the ack path's log lines are part of its cost
    }


async def wait_http(http: httpx.AsyncClient, url: str, children: list[Child], seconds: float = 90.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for child in children:
            if not child.alive():
                raise RuntimeError(f"{child.name} exited during startup:\n{child.log_tail()}")
        try:
            await http.post(url + "/slack/events", content=b"{}")
            return  # any answer (401 for an unsigned body) means it listens
        except httpx.HTTPError:
            await asyncio.sleep(0.2)
    raise RuntimeError(f"{url} did not come up within {seconds:.0f} s")


async def post(session: aiohttp.ClientSession, side: Side, body: bytes, retry_num: int) -> tuple[str, float]:
    headers = side.platform.headers(body, retry_num)
    started = time.perf_counter()
    try:
        async with session.post(side.url + side.platform.path, data=body, headers=headers) as response:
            await response.read()
            status = str(response.status)
    except aiohttp.ClientError as exc:
        status = type(exc).__name__
    return status, time.perf_counter() - started


async def burst(sides: list[Side], sends: list[Send], concurrency: int) -> None:
    """Every request goes to all sides at the same moment; each side has its own in-flight limit.

    aiohttp rather than httpx on the sending side: the sender shares a core with the servers, and
    its own per-request cost lands in every latency it measures."""
    timeout = aiohttp.ClientTimeout(total=10)
    sessions = [aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency), timeout=timeout) for _ in sides]
    slots = [asyncio.Semaphore(concurrency) for _ in sides]
    try:
        for side, session in zip(sides, sessions):  # Bolt's first auth.test is not part of the ack path
            status, _ = await post(session, side, side.platform.warmup, 0)
            if status != "200":
                raise RuntimeError(f"{side.name}: warm-up answered {status}")

        async def deliver(side: Side, session: aiohttp.ClientSession, slot: asyncio.Semaphore, send: Send) -> None:
            retry_num = send.first_retry_num
            for _ in range(5):  # a non-200 is re-sent like the platform does (bounded)
                async with slot:
                    status, seconds = await post(session, side, send.event.body, retry_num)
                side.latencies_ms.append(seconds * 1000)
                side.statuses[status] = side.statuses.get(status, 0) + 1
                if status == "200":
                    return
                retry_num += 1

        async def one(send: Send) -> None:
            await asyncio.gather(*(deliver(*both, send) for both in zip(sides, sessions, slots)))

        await asyncio.gather(*(one(s) for s in sends))
    finally:
        for session in sessions:
            await session.close()


async def answered(redis: aioredis.Redis, keys: Keys) -> int:
    """Jobs the workers finished (acked) so far."""
    try:
        groups = await redis.xinfo_groups(keys.jobs)
        pending = int((await redis.xpending(keys.jobs, GROUP)).get("pending") or 0)
    except RedisError:
        return 0
    for g in groups:
        if g.get("name") in (GROUP, GROUP.encode()):
            return int(g.get("entries-read") or 0) - pending
    return 0


async def jobs_added(redis: aioredis.Redis, stream: str) -> int:
    """Every XADD ever made to the stream (workers delete answered entries, so XLEN would undercount)."""
    info = await redis.xinfo_stream(stream)
    return int(info.get("entries-added") or 0)


def line(side: Side) -> str:
    ms = side.latencies_ms
    return (f"{side.name:>14}: {len(ms)} acks  p50 {percentile(ms, 50):6.1f} ms  p95 {percentile(ms, 95):6.1f} ms  "
            f"p99 {percentile(ms, 99):6.1f} ms  max {max(ms):6.1f} ms  statuses {side.statuses}")


async def run(args: argparse.Namespace, group: ProcessGroup, run_dir: Path) -> int:
    platforms = [PLATFORMS[name] for name in args.platforms]
    async with contextlib.AsyncExitStack() as stack:
        fakes = dict(await start_fakes(group, run_dir, args.model_delay))
        if any(p.name == "telegram" for p in platforms):
            # in this process: it only answers getMe/setWebhook and the workers' replies
            fakes["telegram"] = (await stack.enter_async_context(FakeTelegram())).api_url
        if any(p.name == "feishu" for p in platforms):
            fakes["feishu"] = (await stack.enter_async_context(FakeFeishu())).url
        return await measure(args, group, run_dir, platforms, fakes)


async def measure(args: argparse.Namespace, group: ProcessGroup, run_dir: Path, platforms: list[Platform],
                  fakes: dict[str, str]) -> int:
    redis_url = await start_redis(group, run_dir)
    prefix = f"ack{uuid.uuid4().hex[:6]}"
    keys = Keys(prefix)
    env = bot_env(bot_settings(redis_url, prefix, fakes, run_dir, args.worker_concurrency))
    web_port, floor_port = free_port(), free_port()
    web = spawn_bot(group, "web", "bot-web", env, run_dir, web_port)
    workers = [spawn_bot(group, "worker", f"bot-worker{i}", env, run_dir) for i in (1, 2)]
    floor = group.spawn(
        "floor", [sys.executable, str(REPO / "bench" / "ack_floor.py"), "--port", str(floor_port), "--redis-url", redis_url,
                  "--prefix", prefix, "--signing-secret", SIGNING_SECRET, "--telegram-secret", TELEGRAM_SECRET,
                  "--feishu-encrypt-key", FEISHU_ENCRYPT_KEY],
        run_dir / "floor.log", env=bot_env({}), cwd=run_dir,
    )
    ours_url, floor_url, floor_stream = f"http://127.0.0.1:{web_port}", f"http://127.0.0.1:{floor_port}", f"{{{prefix}}}:floor:jobs"
    pairs = {p.name: (Side(f"{p.name} ours", ours_url, keys.jobs, p), Side(f"{p.name} floor", floor_url, floor_stream, p))
             for p in platforms}
    redis = aioredis.Redis.from_url(redis_url)
    unique_total = 0
    try:
        async with httpx.AsyncClient(timeout=5.0) as http:
            await wait_http(http, ours_url, [web, *workers])
            await wait_http(http, floor_url, [floor])
        for r in range(args.rounds):
            for platform in platforms:
                unique = max(1, round(args.events * (1 - args.duplicates)))
                events = platform.events(f"R{r}", unique)
                sends = schedule(events, args.events, random.Random(args.seed + r))
                started = time.monotonic()
                ours, bare = pairs[platform.name]
                measured = [ours, bare] if r >= args.prime else [Side(s.name, s.url, "", platform) for s in (ours, bare)]
                await burst(measured, sends, args.concurrency)
                unique_total += unique
                kind = "measured" if r >= args.prime else "priming"
                print(f"round {r + 1} {platform.name} ({kind}): {len(sends)} requests ({unique} unique) to each side in "
                      f"{time.monotonic() - started:.1f} s; answered so far {await answered(redis, keys)}", flush=True)
        # Warm-up events are ones the bot acks and never queues (a channel join, an edit); the floor
        # queues whatever it is sent: one per platform (later rounds re-send the same id)
        ours_jobs = await jobs_added(redis, keys.jobs)
        floor_jobs = await jobs_added(redis, floor_stream) - len(platforms)
        for ours, bare in pairs.values():
            print(line(ours))
            print(line(bare))
            ratios = [percentile(ours.latencies_ms, p) / percentile(bare.latencies_ms, p) for p in (50, 95, 99)]
            print(f"{ours.platform.name} ratio ours/floor: p50 {ratios[0]:.2f}x  p95 {ratios[1]:.2f}x  p99 {ratios[2]:.2f}x")
        exact = ours_jobs == unique_total and floor_jobs == unique_total
        print(f"exactly once: {'yes' if exact else 'NO'} ({unique_total} unique events; jobs ours {ours_jobs}, floor {floor_jobs})")
        return 0 if exact else 1
    finally:
        await redis.aclose()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--events", type=int, default=600, help="requests per round and side, re-sends included")
    p.add_argument("--duplicates", type=float, default=0.3, help="share of the requests that are Slack re-sends")
    p.add_argument("--concurrency", type=int, default=32, help="requests in flight per side")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--prime", type=int, default=1, help="first rounds not measured: they give the workers work")
    p.add_argument("--worker-concurrency", type=int, default=16)
    p.add_argument("--model-delay", type=float, default=0.5, help="seconds the fake model takes per answer")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--platforms", nargs="+", choices=sorted(PLATFORMS), default=["slack"],
                   help="whose ack path to measure (each against the floor), one after the other per round")
    p.add_argument("--keep", action="store_true", help="keep the run directory (logs)")
    args = p.parse_args(argv)
    run_dir = Path(tempfile.mkdtemp(prefix="aic-ackbench-"))
    group = ProcessGroup()
    code = 1
    try:
        code = asyncio.run(run(args, group, run_dir))
    except Exception as exc:  # noqa: BLE001 - report, clean up, keep the logs
        print(f"bench failed: {type(exc).__name__}: {exc}", file=sys.stderr)
    finally:
        group.close()
    if args.keep or code:
        print(f"logs kept in {run_dir}")
    else:
        shutil.rmtree(run_dir, ignore_errors=True)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
