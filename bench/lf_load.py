"""The load of bench/load_fault.py: signed Slack app_mention events, sent like Slack sends them.

A share of the requests are retried duplicates (same body and event_id, X-Slack-Retry-Num set),
each sent after its original. Any answer other than 200 (503 while Redis is down, a dropped
connection) is retried the way Slack does: same payload, freshly signed, X-Slack-Retry-Num
counting up; Slack's minutes between retries are compressed to seconds so the run stays short.
"""
from __future__ import annotations

import asyncio
import json
import random
import time
from collections import Counter
from dataclasses import dataclass, field

import httpx

from tests.support.fake_slack import TEAM, event_callback, mention, sign

EVENTS_PATH = "/slack/events"


@dataclass(frozen=True)
class Event:
    tag: str  # quoted by the fake model's answer, so an answer can be matched to its question
    event_id: str
    channel: str
    ts: str
    body: bytes

    @property
    def thread_key(self) -> str:
        return f"{self.channel}|{self.ts}"


@dataclass(frozen=True)
class Send:
    event: Event
    first_retry_num: int  # 0: an original delivery; 1: Slack re-sending it (a duplicate)


def channel_prefix(run: str) -> str:
    return f"C{run}X"


def build_events(run: str, unique: int) -> list[Event]:
    """One top-level mention per event, each in its own channel and thread; `run` (e.g. "A1")
    keeps the channels, threads and event ids of different scenario runs apart."""
    events = []
    for i in range(unique):
        tag = f"q{run}x{i}"
        channel = f"{channel_prefix(run)}{i:05d}"
        ts = f"{1700000000 + i}.000100"
        question = f"vllm-ascend on 910B: question {tag} about graph mode"
        payload = event_callback(
            mention(question, ts=ts, channel=channel, user=f"U0USER{i % 50:03d}"),
            event_id=f"Ev{run}x{i:08d}",
        )
        events.append(Event(tag, payload["event_id"], channel, ts, json.dumps(payload).encode()))
    return events


def schedule(events: list[Event], total: int, rng: random.Random) -> list[Send]:
    """`total` requests: every event once, the rest re-sends of random events, each after its original."""
    duplicates = rng.sample(range(len(events)), max(0, total - len(events)))
    keyed: list[tuple[float, Send]] = [(float(i), Send(e, 0)) for i, e in enumerate(events)]
    for i in duplicates:
        keyed.append((i + rng.uniform(0.5, len(events) * 0.3 + 1), Send(events[i], 1)))
    keyed.sort(key=lambda pair: pair[0])
    return [send for _, send in keyed]


def warmup_body() -> bytes:
    """An event the bot acks and ignores (a channel join): Bolt's first auth.test happens here."""
    event = {"type": "message", "subtype": "channel_join", "user": "U0USER999", "text": "joined",
             "ts": "1600000000.000100", "channel": "CWARMUP01", "team": TEAM, "event_ts": "1600000000.000100"}
    return json.dumps(event_callback(event, event_id="EvWARMUP0001")).encode()


@dataclass
class Outcome:
    latencies: list[float] = field(default_factory=list)  # seconds, every HTTP request
    statuses: Counter[str] = field(default_factory=Counter)
    accepted: set[str] = field(default_factory=set)  # event ids acknowledged with 200 at least once
    gave_up: set[str] = field(default_factory=set)  # event ids never acknowledged
    retries: int = 0  # re-sends caused by a non-200 answer
    requests_done: int = 0
    started: float = 0.0
    finished: float = 0.0


class Sender:
    def __init__(self, base_url: str, concurrency: int, *, max_retries: int = 15, timeout: float = 10.0) -> None:
        self._base_url = base_url
        self._slots = asyncio.Semaphore(concurrency)
        self._concurrency = concurrency
        self._max_retries = max_retries
        self._timeout = timeout
        self.outcome = Outcome()

    async def post(self, client: httpx.AsyncClient, body: bytes, retry_num: int, reason: str) -> str:
        headers = {"content-type": "application/json", **sign(body)}
        if retry_num:
            headers["x-slack-retry-num"] = str(retry_num)
            headers["x-slack-retry-reason"] = reason
        async with self._slots:
            started = time.perf_counter()
            try:
                response = await client.post(EVENTS_PATH, content=body, headers=headers)
                status = str(response.status_code)
            except httpx.HTTPError as exc:
                status = type(exc).__name__
            self.outcome.latencies.append(time.perf_counter() - started)
        self.outcome.statuses[status] += 1
        self.outcome.requests_done += 1
        return status

    async def deliver(self, client: httpx.AsyncClient, send: Send) -> None:
        retry_num, reason = send.first_retry_num, "http_timeout"
        for _ in range(self._max_retries + 1):
            status = await self.post(client, send.event.body, retry_num, reason)
            if status == "200":
                self.outcome.accepted.add(send.event.event_id)
                return
            if status.isdigit() and 400 <= int(status) < 500:
                break  # Slack does not retry a refusal
            self.outcome.retries += 1
            retry_num, reason = retry_num + 1, "http_error"
            await asyncio.sleep(min(0.5 * retry_num, 3.0))
        self.outcome.gave_up.add(send.event.event_id)

    async def warm_up(self) -> None:
        async with httpx.AsyncClient(base_url=self._base_url, timeout=self._timeout) as client:
            headers = {"content-type": "application/json", **sign(warmup_body())}
            response = await client.post(EVENTS_PATH, content=warmup_body(), headers=headers)
            if response.status_code != 200:
                raise RuntimeError(f"warm-up event answered {response.status_code}: {response.text[:200]}")

    async def run(self, sends: list[Send]) -> Outcome:
        limits = httpx.Limits(max_connections=self._concurrency, max_keepalive_connections=self._concurrency)
        self.outcome.started = time.monotonic()
        async with httpx.AsyncClient(base_url=self._base_url, timeout=self._timeout, limits=limits) as client:
            await asyncio.gather(*(self.deliver(client, s) for s in sends))
        self.outcome.finished = time.monotonic()
        self.outcome.gave_up -= self.outcome.accepted  # a duplicate may have been refused while its twin got in
        return self.outcome
