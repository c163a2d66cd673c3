"""The day counters (written with each answer record) give the report the record-by-record fold gives:
on varied records over several days and workspaces, with votes, and on the days the counters cannot
cover whole (trimmed by the entries limit, written before the counters, a capped day), which are
then read record by record. On the real Redis."""
from __future__ import annotations

import random

import pytest

from adapters.slack.state import record_feedback
from adapters.wecom.store import FeedbackStore
from bot.report import counters as report_counters
from bot.report import log as report_log
from bot.report.access import OPERATOR, workspace_scope
from bot.report.counters import plan
from bot.report.data import build_report
from bot.report.limits import LogLimit, LogLimits
from bot.report.log import AnswerLog, record_json
from core.messages import ReplyKind
from core.research.redact import Redactor
from tests.support.report_data import StreamIds, message, reply

DAY = 86_400
NOW = 1_760_000_000.0  # 2025-10-09 08:53 UTC: a 7-day window has a partial day at each end
TEXTS = (
    "vllm serve fails\nTraceback\nRuntimeError: ACL stream synchronize failed, error code 507035",
    "how to enable torchair graph cache with DeepSeek",
    "torchair graph cache is slow on 910B",
    "ImportError: libhccl.so: cannot open shared object file",
    "MindIE 服务化启动后请求一直没有响应",
    "msModelSlim w8a8 量化 Qwen2.5 精度下降",
    "what is the weather",
)
KINDS = (ReplyKind.ANSWER,) * 5 + (ReplyKind.CLARIFY, ReplyKind.OUT_OF_SCOPE, ReplyKind.NOTICE, ReplyKind.ERROR)
SCOPES = (("slack", "T1"), ("slack", "T2"), ("feishu", "tk"))


def answer_log(redis, keys, entries: int = 50_000) -> AnswerLog:
    return AnswerLog(redis, keys, LogLimits(LogLimit(90, entries)), Redactor(()))


async def fill(log: AnswerLog, redis, keys, n: int = 700, seed: int = 3, days: int = 8) -> None:
    """`n` varied records over the last `days` days (some in the same question, some the same
    thread), and votes on some of them from Slack and WeCom."""
    rng, ids = random.Random(seed), StreamIds()
    voted: list[tuple[str, str, str]] = []
    for i in range(n):
        platform, workspace = rng.choice(SCOPES)
        at = NOW - days * DAY + i * days * DAY / n
        text = rng.choice(TEXTS) + ("" if rng.random() < 0.5 else f" (case {rng.randrange(4)})")
        trace = f"{i:032x}"
        rep = reply(rng.choice(KINDS), repos=rng.choice((("vllm-project/vllm-ascend",), ("verylucky01/MindIE-LLM",), ())),
                    language=rng.choice(("en", "zh")), trace_id=trace, sources=rng.randrange(3),
                    confidence=rng.choice(("", "high", "medium", "low", "low")))
        msg = message(text, platform=platform, workspace=workspace, channel=f"C{rng.randrange(3)}",
                      thread=f"17000000{rng.randrange(40)}.0001")
        record = record_json(msg, rep, latency=rng.lognormvariate(1.5, 0.8), tokens=rng.randrange(5_000),
                             redact=log.redact)
        scope = f"{platform}:{workspace}"
        await log.append(scope, record, at, stream_id=ids.next(scope, at))
        if rng.random() < 0.1:
            voted.append((trace, platform, workspace))
    wecom = FeedbackStore(redis, keys)
    for n_vote, (trace, platform, workspace) in enumerate(voted):
        if platform == "slack":
            await record_feedback(redis, keys, trace_id=trace, workspace=workspace, user=f"U{n_vote % 3}",
                                  value="helpful" if n_vote % 3 else "not_helpful", channel="C1", message_ts="1.0")
        else:
            await wecom.record(trace_id=trace, feedback_id=f"f{n_vote}", user_id="u1",
                               entry={"type": 1 + n_vote % 2}, answer="x")


def same(report: dict) -> dict:
    return {k: v for k, v in report.items() if k != "build_seconds"}


async def records_read(monkeypatch, log: AnswerLog, scope, days: int) -> tuple[dict, int]:
    """The report, and how many records it read one by one."""
    seen = [0]
    original = AnswerLog.read_range

    async def counting(self, *args, **kwargs):
        async for chunk in original(self, *args, **kwargs):
            seen[0] += len(chunk)
            yield chunk

    monkeypatch.setattr(AnswerLog, "read_range", counting)
    report = await build_report(log, log.redis, log._keys, scope, days, now=NOW)
    monkeypatch.setattr(AnswerLog, "read_range", original)
    return report, seen[0]


@pytest.mark.parametrize("seed", [3, 11])
@pytest.mark.parametrize("scope", [OPERATOR, workspace_scope("slack:T1"), workspace_scope("slack:T1", "feishu:tk")])
async def test_counted_days_give_the_report_every_record_gives(redis, keys, monkeypatch, scope, seed):
    log = answer_log(redis, keys)
    await fill(log, redis, keys, seed=seed)
    counted, read = await records_read(monkeypatch, log, scope, 7)
    everything = await build_report(log, redis, keys, scope, 7, now=NOW, counters=False)
    assert same(counted) == same(everything)
    assert counted["records_read"] == everything["records_read"] > 0
    assert read < everything["records_read"] / 3  # most days came from their counters
    assert counted["feedback"]["up"] + counted["feedback"]["down"] > 0  # votes on counted days were found
    assert counted["gaps"]["by_signature"] and all(c["examples"] for c in counted["gaps"]["by_signature"])
    if scope.shows_text:
        assert counted["gaps"]["by_topic"]


async def test_a_window_of_whole_days_reads_no_record(redis, keys):
    log = answer_log(redis, keys)
    await fill(log, redis, keys, n=200)
    day = int(NOW // DAY)
    stream_segments, _ = await plan(log, "slack:T1", (day - 5) * DAY * 1000, (day - 1) * DAY * 1000 - 1)
    assert [s.kind for s in stream_segments] == ["day"] * 4


async def test_a_day_trimmed_by_the_entries_limit_is_read_record_by_record(redis, keys, monkeypatch):
    log = answer_log(redis, keys, entries=150)  # each workspace keeps its newest 150 of ~230
    await fill(log, redis, keys)
    for scope in (OPERATOR, workspace_scope("slack:T2")):
        counted, _ = await records_read(monkeypatch, log, scope, 7)
        assert same(counted) == same(await build_report(log, redis, keys, scope, 7, now=NOW, counters=False))
    stream = log.key("slack:T1")
    first_id = (await redis.xrange(stream, count=1))[0][0].decode()
    trimmed_day = int(first_id.split("-")[0]) // (DAY * 1000)
    segments, _ = await plan(log, "slack:T1", (trimmed_day - 1) * DAY * 1000, (trimmed_day + 2) * DAY * 1000 - 1)
    assert [s.kind for s in segments][:2] == ["records", "day"]  # the trimmed day and the one before are read


async def test_records_written_before_the_counters_are_read_record_by_record(redis, keys, monkeypatch):
    log, ids = answer_log(redis, keys), StreamIds()
    stream, at = log.key("slack:T1"), NOW - 3 * DAY
    for i in range(5):  # an older version of the bot: the record only
        record = record_json(message(f"KeyError: 'k{i % 2}'"), reply(ReplyKind.OUT_OF_SCOPE), latency=1.0 + i,
                             tokens=10, redact=log.redact)
        await redis.xadd(stream, {"j": record}, id=ids.next("slack:T1", at + i))
    await redis.zadd(keys.answer_log_index, {"slack:T1": at})
    for i in range(5):  # this version, the same day: counted from the sixth record on
        record = record_json(message(f"KeyError: 'k{i % 2}'"), reply(), latency=2.0, tokens=1, redact=log.redact)
        await log.append("slack:T1", record, at + 100 + i, stream_id=ids.next("slack:T1", at + 100 + i))
    counted, read = await records_read(monkeypatch, log, OPERATOR, 7)
    assert read == 10 and counted["records_read"] == 10
    assert same(counted) == same(await build_report(log, redis, keys, OPERATOR, 7, now=NOW, counters=False))


async def test_a_day_whose_cluster_keys_hit_the_cap_is_read_record_by_record(redis, keys, monkeypatch):
    monkeypatch.setattr(report_log, "DAY_FIELD_CAP", 12)
    log = answer_log(redis, keys)
    await fill(log, redis, keys, n=300)
    day_keys = await redis.keys(f"{log.key('slack:T1')}:d:*")
    assert [await redis.hget(k, "capped") for k in day_keys].count(b"1") >= 1
    scope = workspace_scope("slack:T1")
    counted, _ = await records_read(monkeypatch, log, scope, 7)
    assert same(counted) == same(await build_report(log, redis, keys, scope, 7, now=NOW, counters=False))


async def test_latency_percentiles_come_from_redis_by_the_same_rule(redis, keys):
    log, ids = answer_log(redis, keys), StreamIds()
    at = NOW - 2 * DAY
    for i, latency in enumerate([0.1234, 5.0, 5.0, 7.77, 12.345, 60.0, 0.5, 3.3333, 3.3333, 250.0, 1_234.5]):
        record = record_json(message(f"q{i}"), reply(), latency=latency, tokens=1, redact=log.redact)
        await log.append("slack:T1", record, at + i, stream_id=ids.next("slack:T1", at + i))
    counted = await build_report(log, redis, keys, OPERATOR, 7, now=NOW)
    everything = await build_report(log, redis, keys, OPERATOR, 7, now=NOW, counters=False)
    (cell,) = counted["per_workspace_day"]
    assert cell == everything["per_workspace_day"][0]
    assert (cell["latency_p50"], cell["latency_p95"]) == (5.0, 1_230.0)  # three digits: 1234.5 s is 1230 s


async def test_counters_expire_with_the_days_they_count(redis, keys):
    log, ids = AnswerLog(redis, keys, LogLimits(LogLimit(3, 100)), Redactor(())), StreamIds()
    import time

    at = time.time()
    await log.append("slack:T1", record_json(message("q"), reply(trace_id="a" * 32), latency=1.0, tokens=1,
                                             redact=log.redact), at, stream_id=ids.next("slack:T1", at))
    day = int(at // DAY)
    stream = log.key("slack:T1")
    for key in (report_counters.day_key(stream, day), report_counters.latency_key_of(stream, day)):
        ttl = await redis.pttl(key)
        assert 3 * DAY * 1000 < ttl <= 4 * DAY * 1000  # the workspace's days and one, from the last write
    assert 0 < await redis.ttl(report_counters.traces_key(stream)) <= 3 * DAY

