"""Load and fault bench: the real bot processes under a burst of Slack events, with faults.

Everything runs on 127.0.0.1 and stops by itself (global time limit, default 10 minutes):

- a private redis-server with AOF and `appendfsync always` (bench/lf_procs.py);
- a fake Slack Web API and a fake Anthropic model answering each request after ~1 s with a
  final text answer, in their own process (bench/lf_fakes.py);
- per scenario, the bot as real processes: `python -m bot web --port P` and two
  `python -m bot worker`, on a fresh Redis key prefix.

Scenarios (each: N signed app_mention events, a share of them Slack re-sends of the same event_id
with X-Slack-Retry-Num, sent concurrently over HTTP to the web process):

    A  baseline
    B  SIGKILL one worker once ~30% of the questions are answered (the other must reclaim its jobs)
    C  crash redis-server (SIGKILL) once ~30% of the requests went out, restart it on the same port
       and data dir after a few seconds; the web process answers 503 meanwhile, and the sender
       retries those like Slack does

For each: ack latency (p50/p99/max) and status codes, then (bounded wait) answers per thread on
the fake Slack: unique events, answered, lost (0 answers), duplicated (>1 answer), answers that
are not the model's answer for that thread.

    .venv/bin/python bench/load_fault.py [--events 500] [--duplicates 0.3] [--concurrency 32]
                                         [--scenarios ABC] [--time-limit 600] [--keep]
"""
from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import shutil
import signal
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx  # noqa: E402
import redis.asyncio as aioredis  # noqa: E402
from redis.exceptions import RedisError  # noqa: E402

from bench._common import percentile  # noqa: E402
from bench.lf_load import Event, Outcome, Sender, build_events, channel_prefix, schedule  # noqa: E402
from bench.lf_procs import REPO, Child, PersistentRedis, ProcessGroup, bot_env, free_port, spawn_bot  # noqa: E402
from bot.worker import GROUP  # noqa: E402
from core.keys import Keys  # noqa: E402
from tests.support.fake_slack import BOT_TOKEN, SIGNING_SECRET  # noqa: E402

TITLES = {"A": "baseline", "B": "SIGKILL a worker", "C": "redis crash + restart"}
POLL_SECONDS = 0.5
UNREACHABLE = "http://127.0.0.1:9"  # research tools the fake model never asks for: never the internet


@dataclass(frozen=True)
class Config:
    events: int
    duplicates: float
    concurrency: int
    lease_seconds: float
    worker_concurrency: int
    streaming: bool
    model_delay: float
    wait_seconds: float
    fault_at: float
    redis_down_seconds: float
    scenarios: str
    seed: int

    @property
    def unique(self) -> int:
        return max(1, round(self.events * (1 - self.duplicates)))


@dataclass
class Result:
    name: str
    requests: int = 0
    statuses: Counter[str] = field(default_factory=Counter)
    ack_ms: list[float] = field(default_factory=list)
    retries: int = 0
    unique: int = 0
    accepted: int = 0
    gave_up: int = 0
    answered: int = 0
    lost: int = 0
    duplicated: int = 0
    not_model_answer: int = 0  # the thread's answers do not include the model's answer for its question
    notices: int = 0  # threads with a message that is not the model's answer (e.g. an apology)
    answered_twice: int = 0  # threads where the model's answer was posted more than once
    wrong_thread: int = 0  # an answer quoting another question's tag
    dead_letters: int = 0
    pending_left: int | None = None
    model_calls: int = 0
    complete: bool = False
    send_seconds: float = 0.0
    makespan: float = 0.0  # first request to last answer seen
    fault: str = "-"
    fault_time: float | None = None  # seconds after the first request
    tail: float | None = None  # fault to last answer seen
    fault_end: float | None = None  # the fault was over (redis back), seconds after the first request
    crashed: list[str] = field(default_factory=list)  # bot processes that died without being killed
    log_errors: int = 0
    log_notable: list[str] = field(default_factory=list)
    examples: list[str] = field(default_factory=list)


# --- infrastructure shared by the scenarios -----------------------------------------------------


@dataclass
class Bench:
    config: Config
    group: ProcessGroup
    run_dir: Path
    redis: PersistentRedis
    slack_api: str
    model_url: str
    stats_url: str
    client: aioredis.Redis
    http: httpx.AsyncClient

    async def answers(self, channel_prefix: str) -> dict[str, Any] | None:
        try:
            response = await self.http.get(self.stats_url + "/answers", params={"channel_prefix": channel_prefix})
            return response.json()
        except (httpx.HTTPError, ValueError):
            return None

    async def queue_idle(self, keys: Keys) -> tuple[bool, int | None]:
        """(nothing pending and nothing unread, pending count); (False, None) while Redis is away."""
        try:
            if not await self.client.exists(keys.jobs):
                return True, 0
            summary = await self.client.xpending(keys.jobs, GROUP)
            pending = int(summary.get("pending") or 0)
            info = await self.client.xinfo_stream(keys.jobs)
            last = _s(info.get("last-generated-id") or "0-0")
            groups = await self.client.xinfo_groups(keys.jobs)
            delivered = next((_s(g.get("last-delivered-id") or "0-0") for g in groups if _s(g.get("name")) == GROUP), "0-0")
            return pending == 0 and delivered == last, pending
        except (RedisError, OSError):
            return False, None


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def _s(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def bot_settings(bench: Bench, prefix: str) -> dict[str, str]:
    c = bench.config
    return {
        "REDIS_URL": bench.redis.url,
        "REDIS_PREFIX": prefix,
        "SLACK_BOT_TOKEN": BOT_TOKEN,
        "SLACK_SIGNING_SECRET": SIGNING_SECRET,
        "SLACK_API_URL": bench.slack_api,
        "ALLOW_PUBLIC": "1",  # the only traffic is the bench's own fakes: open on purpose (docs/security.md)
        "SLACK_STREAMING": "true" if c.streaming else "false",
        "SLACK_POST_INTERVAL_SECONDS": "0",
        "ANTHROPIC_API_KEY": "bench-not-a-real-key",
        "ANTHROPIC_BASE_URL": bench.model_url,
        "RATE_LIMIT_USER_PER_HOUR": "0",
        "RATE_LIMIT_CHANNEL_PER_HOUR": "0",
        "DAILY_TOKEN_BUDGET": "0",
        "JOB_LEASE_SECONDS": str(c.lease_seconds),
        "WORKER_CONCURRENCY": str(c.worker_concurrency),
        "DEEPWIKI_MCP_URL": UNREACHABLE,
        "GITHUB_API_URL": UNREACHABLE,
        "GITCODE_API_URL": UNREACHABLE,
        "REPOS_DIR": str(bench.run_dir / "repos"),
        "DATA_DIR": str(bench.run_dir / "data"),
        "HOST": "127.0.0.1",
        "LOG_LEVEL": "INFO",
    }


@dataclass
class Bot:
    url: str
    web: Child
    workers: list[Child]
    killed: set[int] = field(default_factory=set)

    @property
    def children(self) -> list[Child]:
        return [self.web, *self.workers]

    def crashed(self) -> list[str]:
        return [c.name for c in self.children if not c.alive() and c.pid not in self.killed]

    def stop(self) -> None:
        for child in self.children:
            child.stop()


async def start_bot(bench: Bench, name: str, prefix: str) -> Bot:
    env = bot_env(bot_settings(bench, prefix))
    port = free_port()
    web = spawn_bot(bench.group, "web", f"{name}-web", env, bench.run_dir, port)
    workers = [spawn_bot(bench.group, "worker", f"{name}-worker{i}", env, bench.run_dir) for i in (1, 2)]
    bot = Bot(f"http://127.0.0.1:{port}", web, workers)
    keys = Keys(prefix)
    deadline = time.monotonic() + 90
    web_up = False
    while time.monotonic() < deadline:
        for child in bot.children:
            if not child.alive():
                raise RuntimeError(f"{child.name} exited during startup:\n{child.log_tail()}")
        if not web_up:
            try:
                web_up = (await bench.http.get(bot.url + "/healthz")).status_code == 200
            except httpx.HTTPError:
                pass
        # Redis 7.0 lists a consumer only once it read something, so "ready" is: each worker
        # says it started, and the consumer group exists.
        started = all("starting worker" in _read(w.log_path) for w in workers)
        try:
            group_made = started and any(_s(g.get("name")) == GROUP for g in await bench.client.xinfo_groups(keys.jobs))
        except RedisError:
            group_made = False
        if web_up and group_made:
            return bot
        await asyncio.sleep(0.2)
    raise RuntimeError("the bot processes did not become ready within 90 s")


# --- faults ------------------------------------------------------------------------------------


async def kill_busiest_worker(bench: Bench, bot: Bot, keys: Keys) -> str:
    """SIGKILL the worker holding the most unacked jobs (it is mid-work, not idle)."""
    held: dict[int, int] = {}
    try:
        summary = await bench.client.xpending(keys.jobs, GROUP)
        for consumer in summary.get("consumers") or []:
            pid = _s(consumer["name"]).rsplit("-", 2)[-2]
            if pid.isdigit():
                held[int(pid)] = int(consumer["pending"])
    except (RedisError, OSError, KeyError, IndexError):
        pass
    victim = max(bot.workers, key=lambda w: held.get(w.pid, 0))
    bot.killed.add(victim.pid)
    victim.kill()
    return f"SIGKILL {victim.name} holding {held.get(victim.pid, 0)} job(s)"


async def bounce_redis(bench: Bench, down_seconds: float) -> str:
    bench.redis.crash()
    crashed = time.monotonic()
    await asyncio.sleep(down_seconds)
    await bench.redis.start()
    bench.redis.back_at = time.monotonic()
    return f"redis SIGKILL, down {time.monotonic() - crashed:.1f} s (AOF fsync always)"


# --- one scenario -------------------------------------------------------------------------------


async def run_scenario(bench: Bench, name: str, run: str) -> Result:
    c = bench.config
    result = Result(name)
    prefix = f"lf{run.lower()}{uuid.uuid4().hex[:6]}"
    keys = Keys(prefix)
    channels = channel_prefix(run)
    events = build_events(run, c.unique)
    sends = schedule(events, c.events, random.Random(c.seed))
    before = await bench.answers(channels)
    model_calls_before = (before or {}).get("model_calls", 0)
    bot = await start_bot(bench, run, prefix)
    try:
        sender = Sender(bot.url, c.concurrency)
        await sender.warm_up()
        started = time.monotonic()
        send_task = asyncio.create_task(sender.run(sends))
        fault_task: asyncio.Task[str] | None = None
        seen: dict[str, float] = {}
        deadline = started + c.wait_seconds
        snapshot: dict[str, Any] | None = None
        while True:
            snapshot = await bench.answers(channels) or snapshot
            now = time.monotonic()
            for thread in (snapshot or {}).get("threads", {}):
                seen.setdefault(thread, now)
            if fault_task is None and name == "B" and len(seen) >= c.fault_at * c.unique:
                fault_task = asyncio.create_task(kill_busiest_worker(bench, bot, keys))
                result.fault_time = now - started
            if fault_task is None and name == "C" and sender.outcome.requests_done >= c.fault_at * len(sends):
                fault_task = asyncio.create_task(bounce_redis(bench, c.redis_down_seconds))
                result.fault_time = now - started
            fault_done = fault_task is None and name == "A" or fault_task is not None and fault_task.done()
            if send_task.done() and fault_done:
                accepted = {e.thread_key for e in events if e.event_id in sender.outcome.accepted}
                idle, _ = await bench.queue_idle(keys)
                if idle and accepted <= seen.keys():
                    result.complete = True
                    break
            if now > deadline or bot.crashed():
                break
            await asyncio.sleep(POLL_SECONDS)
        if not send_task.done():
            send_task.cancel()
        outcome = await asyncio.gather(send_task, return_exceptions=True)
        if fault_task is not None:
            result.fault = str((await asyncio.gather(fault_task, return_exceptions=True))[0])
            if name == "C" and bench.redis.back_at is not None:
                result.fault_end = bench.redis.back_at - started
        elif name != "A":
            result.fault = "not triggered"
        final = await bench.answers(channels) or snapshot or {}
        _, result.pending_left = await bench.queue_idle(keys)
        try:
            result.dead_letters = int(await bench.client.xlen(keys.dead_letters))
        except (RedisError, OSError):
            pass
        result.crashed = bot.crashed()
        result.model_calls = final.get("model_calls", 0) - model_calls_before
        sent = outcome[0] if isinstance(outcome[0], Outcome) else sender.outcome
        tally(result, sent, events, final, seen, started)
    finally:
        await asyncio.get_running_loop().run_in_executor(None, bot.stop)
    scan_logs(result, bot.children)
    return result


def tally(result: Result, sent: Outcome, events: list[Event], final: dict[str, Any], seen: dict[str, float],
          started: float) -> None:
    result.requests = sent.requests_done
    result.statuses = sent.statuses
    result.ack_ms = [x * 1000 for x in sent.latencies]
    result.retries = sent.retries
    result.unique = len(events)
    result.accepted = len(sent.accepted)
    result.gave_up = len(sent.gave_up)
    result.send_seconds = (sent.finished or time.monotonic()) - sent.started
    threads: dict[str, list[dict[str, Any]]] = final.get("threads", {})
    for event in events:
        if event.event_id not in sent.accepted:
            continue
        answers = threads.get(event.thread_key, [])
        if not answers:
            result.lost += 1
            _example(result, f"lost: {event.tag} ({event.thread_key})")
            continue
        result.answered += 1
        if len(answers) > 1:
            result.duplicated += 1
            shown = "; ".join(f"{a['kind']} {a['ts']} tags={a['tags']} {a.get('snippet', '')!r}" for a in answers)
            _example(result, f"{len(answers)} answers in {event.tag}: {shown}")
        if any(not a["tags"] for a in answers):
            result.notices += 1
        if sum(event.tag in a["tags"] for a in answers) > 1:
            result.answered_twice += 1
        if not any(event.tag in a["tags"] for a in answers):
            result.not_model_answer += 1
            _example(result, f"no model answer in {event.tag}: {answers[0].get('snippet', '')!r}")
        if any(t != event.tag for a in answers for t in a["tags"]):
            result.wrong_thread += 1
            _example(result, f"answer for another question in {event.tag}: {answers}")
    times = [seen[e.thread_key] for e in events if e.thread_key in seen]
    if times:
        result.makespan = max(times) - started
        if result.fault_time is not None:
            result.tail = max(times) - started - result.fault_time


def _example(result: Result, line: str, limit: int = 6) -> None:
    if len(result.examples) < limit:
        result.examples.append(line[:400])


_LOG_LINE = re.compile(r"^\S+ \S+ (ERROR|WARNING|CRITICAL) (\S+): (.*)$")
_IDS = re.compile(r"\b\d+-\d+\b|\b[CU][A-Z0-9]{5,}\b|Ev[A-Z]\d+|\b\d+(\.\d+)?s?\b")


def scan_logs(result: Result, children: list[Child]) -> None:
    """Count ERROR lines and tracebacks; keep the most frequent WARNING/ERROR kinds (ids masked)."""
    kinds: Counter[str] = Counter()
    for child in children:
        try:
            lines = child.log_path.read_text(errors="replace").splitlines()
        except OSError:
            continue
        for line in lines:
            match = _LOG_LINE.match(line)
            if match:
                if match.group(1) != "WARNING":
                    result.log_errors += 1
                kinds[f"{child.name.split('-', 1)[1].rstrip('12')}: {match.group(1)} {match.group(2)}: {_IDS.sub('#', match.group(3))[:140]}"] += 1
            elif line.startswith("Traceback"):
                result.log_errors += 1
    result.log_notable = [f"{n:5d} x {kind}" for kind, n in kinds.most_common(8)]


# --- the report -------------------------------------------------------------------------------


def summary(results: list[Result], config: Config) -> str:
    def row(label: str, values: list[str]) -> str:
        return f"  {label:<34}" + "".join(f"{v[:29]:>30}" for v in values)

    def ms(r: Result, q: float) -> str:
        return f"{percentile(r.ack_ms, q):.1f}" if r.ack_ms else "-"

    def secs(value: float | None) -> str:
        return "-" if value is None else f"{value:.1f}"

    lines = [
        "",
        f"Load and fault bench: {config.events} requests per scenario ({config.unique} unique events, "
        f"{config.events - config.unique} Slack re-sends), {config.concurrency} in flight, "
        f"2 workers x {config.worker_concurrency}, model {config.model_delay:.1f} s/answer, "
        f"lease {config.lease_seconds:g} s, streaming {'on' if config.streaming else 'off'}",
        row("scenario", [f"{r.name}: {TITLES[r.name]}" for r in results]),
        row("HTTP requests (incl. retries)", [str(r.requests) for r in results]),
        row("status codes", [" ".join(f"{k}:{v}" for k, v in sorted(r.statuses.items())) for r in results]),
        row("sender retries (non-200)", [str(r.retries) for r in results]),
        row("ack latency p50 / p99 / max ms", [f"{ms(r, 50)} / {ms(r, 99)} / {max(r.ack_ms, default=0):.0f}" for r in results]),
        row("send time s", [f"{r.send_seconds:.1f}" for r in results]),
        row("unique events / accepted", [f"{r.unique} / {r.accepted}" for r in results]),
        row("never acknowledged", [str(r.gave_up) for r in results]),
        row("answered threads", [str(r.answered) for r in results]),
        row("lost (0 answers)", [str(r.lost) for r in results]),
        row("duplicated (>1 answer)", [str(r.duplicated) for r in results]),
        row("  of which: notice + answer", [str(r.notices) for r in results]),
        row("  of which: model answer twice", [str(r.answered_twice) for r in results]),
        row("without the model's answer", [str(r.not_model_answer) for r in results]),
        row("answer in the wrong thread", [str(r.wrong_thread) for r in results]),
        row("model calls", [str(r.model_calls) for r in results]),
        row("dead letters / pending at end", [f"{r.dead_letters} / {r.pending_left}" for r in results]),
        row("fault", [r.fault.split(",")[0].replace(" holding", "") for r in results]),
        row("fault at s / over at s", [f"{secs(r.fault_time)} / {secs(r.fault_end)}" for r in results]),
        row("tail: fault to last answer s", [secs(r.tail) for r in results]),
        row("all answered, s after first send", [f"{r.makespan:.1f}" + ("" if r.complete else " (incomplete)") for r in results]),
        row("bot processes crashed", [", ".join(r.crashed) or "none" for r in results]),
        row("ERROR lines + tracebacks in logs", [str(r.log_errors) for r in results]),
    ]
    for r in results:
        if r.fault != "-":
            lines.append(f"\n[{r.name}] fault: {r.fault}")
        if r.examples:
            lines.append(f"[{r.name}] examples:")
            lines += [f"    {e}" for e in r.examples]
        if r.log_notable:
            lines.append(f"[{r.name}] most frequent warnings/errors in the bot logs:")
            lines += [f"    {n}" for n in r.log_notable]
    return "\n".join(lines)


def problems(results: list[Result]) -> bool:
    return any(
        r.lost or r.duplicated or r.not_model_answer or r.wrong_thread or r.crashed or not r.complete or r.gave_up
        for r in results
    )


# --- main ---------------------------------------------------------------------------------------


async def start_fakes(group: ProcessGroup, run_dir: Path, model_delay: float) -> dict[str, str]:
    ready = run_dir / "fakes.json"
    child = group.spawn(
        "fakes", [sys.executable, str(REPO / "bench" / "lf_fakes.py"), "--ready-file", str(ready),
                  "--model-delay", str(model_delay)],
        run_dir / "fakes.log", env=bot_env({}), cwd=run_dir,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if ready.exists() and ready.stat().st_size:
            return json.loads(ready.read_text())
        if not child.alive():
            raise RuntimeError(f"fake servers exited:\n{child.log_tail()}")
        await asyncio.sleep(0.1)
    raise RuntimeError("fake servers did not start within 30 s")


async def run_all(config: Config, group: ProcessGroup, run_dir: Path, results: list[Result]) -> None:
    """Appends to `results` as scenarios finish, so a time-out still reports the finished ones."""
    redis = PersistentRedis(group, run_dir / "redis")
    await redis.start()
    urls = await start_fakes(group, run_dir, config.model_delay)
    client = aioredis.Redis.from_url(redis.url, socket_connect_timeout=1.0, socket_timeout=5.0)
    http = httpx.AsyncClient(timeout=10.0)
    bench = Bench(config, group, run_dir, redis, urls["slack"], urls["anthropic"], urls["stats"], client, http)
    try:
        for i, name in enumerate(config.scenarios):
            run = f"{name}{config.scenarios[:i + 1].count(name)}"  # A1, B1, C1, C2, ...
            print(f"scenario {name} ({TITLES[name]}) ...", flush=True)
            started = time.monotonic()
            results.append(await run_scenario(bench, name, run))
            r = results[-1]
            print(f"  done in {time.monotonic() - started:.1f} s: accepted {r.accepted}/{r.unique}, answered "
                  f"{r.answered}, lost {r.lost}, duplicated {r.duplicated}, statuses {dict(r.statuses)}", flush=True)
    finally:
        await http.aclose()
        await client.aclose()


def parse_args(argv: list[str] | None = None) -> tuple[Config, float, bool]:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--events", type=int, default=500, help="HTTP requests per scenario, re-sends included")
    p.add_argument("--duplicates", type=float, default=0.3, help="share of the requests that are Slack re-sends")
    p.add_argument("--concurrency", type=int, default=32, help="requests in flight")
    p.add_argument("--lease", type=float, default=5.0, help="JOB_LEASE_SECONDS")
    p.add_argument("--worker-concurrency", type=int, default=16)
    p.add_argument("--streaming", action="store_true", help="answer with chat.startStream (default: chat.postMessage)")
    p.add_argument("--model-delay", type=float, default=1.0, help="seconds the fake model takes per answer")
    p.add_argument("--wait", type=float, default=150.0, help="max seconds per scenario until every event is answered")
    p.add_argument("--fault-at", type=float, default=0.3, help="B: share answered, C: share sent, before the fault")
    p.add_argument("--redis-down", type=float, default=4.0, help="C: seconds redis-server stays down")
    p.add_argument("--scenarios", default="ABC")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--time-limit", type=float, default=600.0, help="global limit in seconds")
    p.add_argument("--keep", action="store_true", help="keep the run directory (logs, redis data)")
    a = p.parse_args(argv)
    scenarios = "".join(s for s in a.scenarios.upper() if s in TITLES)
    if not scenarios or not 0 <= a.duplicates < 1 or a.events < 1:
        p.error("need --scenarios from A/B/C, 0 <= --duplicates < 1 and --events >= 1")
    config = Config(a.events, a.duplicates, a.concurrency, a.lease, a.worker_concurrency, a.streaming,
                    a.model_delay, a.wait, a.fault_at, a.redis_down, scenarios, a.seed)
    return config, a.time_limit, a.keep


def main(argv: list[str] | None = None) -> int:
    config, time_limit, keep = parse_args(argv)
    run_dir = Path(tempfile.mkdtemp(prefix="aic-loadfault-"))
    group = ProcessGroup()

    def hard_stop() -> None:  # the asyncio limit did not end the run: stop everything now
        print(f"\nhard time limit reached; killing {len(group.children)} child process(es)", file=sys.stderr, flush=True)
        for child in list(group.children):
            child.kill()
        import os  # noqa: PLC0415

        os._exit(3)

    watchdog = threading.Timer(time_limit + 60, hard_stop)
    watchdog.daemon = True
    watchdog.start()

    def on_term(*_: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_term)
    results: list[Result] = []
    code = 0
    try:
        asyncio.run(asyncio.wait_for(run_all(config, group, run_dir, results), time_limit))
    except TimeoutError:
        print(f"global time limit of {time_limit:.0f} s reached; stopping", file=sys.stderr)
        code = 2
    except KeyboardInterrupt:
        print("interrupted; stopping", file=sys.stderr)
        code = 130
    except Exception as exc:  # noqa: BLE001 - report, clean up, keep the logs
        print(f"bench failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        code = 1
    finally:
        group.close()
        watchdog.cancel()
    if results:
        print(summary(results, config))
    if results and problems(results):
        code = code or 1
    if keep or code:
        print(f"\nlogs and redis data kept in {run_dir}")
    else:
        shutil.rmtree(run_dir, ignore_errors=True)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
