"""The answer log and the report's numbers: what is stored, for how long, who sees what, and that
the report counts the same replies /metrics counts."""
from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field

import pytest

from adapters.slack.state import record_feedback
from adapters.wecom.store import FeedbackStore
from bot.report import data as report_data
from bot.report.access import OPERATOR, workspace_scope
from bot.report.data import ReportRangeError, build_report, check_days, percentile
from bot.report.limits import LogLimit, LogLimits
from bot.report.log import AnswerLog, record_json
from bot.wiring import _observe_research, build_components
from bot.worker import Worker
from core.messages import InboundMessage, Reply, ReplyKind
from core.research.redact import Redactor
from tests.support.recording_adapter import RecordingAdapter
from tests.support.report_data import StreamIds, message, reply
from tests.support.stack import queue_drained

DAY = 86_400
NOW = 1_760_000_000.0  # a fixed "now" (2025-10-09 08:53 UTC), so day buckets are stable


def answer_log(redis, keys, *, days: int = 90, entries: int = 50_000, per_scope=None, secrets=()) -> AnswerLog:
    return AnswerLog(redis, keys, LogLimits(LogLimit(days, entries), per_scope or {}), Redactor(secrets))


async def store(log: AnswerLog, ids: StreamIds, msg: InboundMessage, rep: Reply, at: float,
                latency: float = 1.0, tokens: int = 0) -> None:
    scope = f"{msg.platform}:{msg.workspace}"
    record = record_json(msg, rep, latency=latency, tokens=tokens, redact=log.redact)
    await log.append(scope, record, at, stream_id=ids.next(scope, at))


async def test_records_are_grouped_per_day_product_language_and_platform(redis, keys):
    log, ids = answer_log(redis, keys), StreamIds()
    await store(log, ids, message("vllm-ascend graph mode hangs"), reply(), NOW - 2 * DAY)
    await store(log, ids, message("MindIE 服务化启动失败", platform="feishu", workspace="tk"),
                reply(repos=("verylucky01/MindIE-LLM",), language="zh"), NOW - 2 * DAY + 60)
    await store(log, ids, message("help"), reply(ReplyKind.NOTICE), NOW - 1 * DAY)  # no question
    await store(log, ids, message("weather?"), reply(ReplyKind.OUT_OF_SCOPE, repos=()), NOW - 1 * DAY)
    report = await build_report(log, redis, keys, OPERATOR, 7, now=NOW)
    first, second = report["daily"]
    assert first["questions"] == 2 and second["questions"] == 1
    assert first["platform"] == {"slack": 1, "feishu": 1}
    assert first["product"] == {"vllm-ascend": 1, "MindIE-LLM": 1}
    assert first["language"] == {"en": 1, "zh": 1}
    assert second["product"] == {"(none)": 1}
    assert report["kinds"] == {"answer": 2, "notice": 1, "out_of_scope": 1}
    assert report["totals"]["questions"] == 3
    assert report["workspaces"] == ["feishu:tk", "slack:T1"]


async def test_confidence_is_counted_when_the_reply_has_it_and_shown_as_dash_when_not(redis, keys):
    log, ids = answer_log(redis, keys), StreamIds()
    await store(log, ids, message("a"), reply(confidence="high"), NOW - 100)
    await store(log, ids, message("b"), reply(confidence="low"), NOW - 90)
    await store(log, ids, message("c"), reply(), NOW - 80)
    report = await build_report(log, redis, keys, OPERATOR, 1, now=NOW)
    assert report["confidence"] == {"high": 1, "low": 1, "-": 1}


async def test_gaps_cluster_by_error_signature_and_topic_word(redis, keys):
    log, ids = answer_log(redis, keys), StreamIds()
    paste = "vllm serve fails\nTraceback\nRuntimeError: ACL stream synchronize failed, error code 507035"
    for i in range(3):
        await store(log, ids, message(f"{paste}\nseen on node {i}"), reply(confidence="low"), NOW - 500 + i)
    await store(log, ids, message("how to enable torchair graph cache?"), reply(confidence="low"), NOW - 400)
    await store(log, ids, message("torchair graph cache is slow"), reply(ReplyKind.OUT_OF_SCOPE), NOW - 300)
    await store(log, ids, message("torchair works"), reply(confidence="high"), NOW - 200)  # not a gap
    report = await build_report(log, redis, keys, workspace_scope("slack:T1"), 1, now=NOW)
    by_signature = report["gaps"]["by_signature"]
    signature = "RuntimeError: ACL stream synchronize failed, error code <n>"
    assert by_signature[0]["key"] == signature and by_signature[0]["count"] == 3
    assert len(by_signature[0]["examples"]) == 3
    topics = {c["key"]: c["count"] for c in report["gaps"]["by_topic"]}
    assert topics["torchair"] == 2 and topics["cache"] == 2
    assert "vllm" not in topics and "how" not in topics  # product names and everyday words say nothing
    assert report["totals"]["gaps"] == 5
    assert report["top_signatures"][0] == {"signature": signature, "count": 3}


async def test_question_text_is_shown_only_to_its_own_workspace(redis, keys):
    log, ids = answer_log(redis, keys), StreamIds()
    await store(log, ids, message("codename Falcon fails", workspace="T1"), reply(ReplyKind.OUT_OF_SCOPE), NOW - 70)
    await store(log, ids, message("codename Falcon hangs", workspace="T1"), reply(ReplyKind.OUT_OF_SCOPE), NOW - 60)
    await store(log, ids, message("other team's question", workspace="T2"), reply(ReplyKind.OUT_OF_SCOPE), NOW - 50)
    own = await build_report(log, redis, keys, workspace_scope("slack:T1"), 1, now=NOW)
    operator = await build_report(log, redis, keys, OPERATOR, 1, now=NOW)
    assert own["workspaces"] == ["slack:T1"] and own["totals"]["questions"] == 2
    assert "codename Falcon fails" in json.dumps(own) and "other team" not in json.dumps(own)
    assert {c["key"] for c in own["gaps"]["by_topic"]} >= {"codename", "falcon"}
    assert operator["totals"]["questions"] == 3
    # neither the text nor its words: topic clusters are the users' words too
    assert "falcon" not in json.dumps(operator).lower() and "other team" not in json.dumps(operator)
    assert operator["gaps"]["by_topic"] == [] and operator["shows_question_text"] is False


async def test_stored_questions_and_the_report_are_redacted_like_the_logs(redis, keys):
    configured = "s3cr3t-webhook-value-123"
    log, ids = answer_log(redis, keys, secrets=[configured]), StreamIds()
    leaked = f"my key sk-ant-api03-{'A' * 40} and {configured} fail with KeyError: 'x'"
    await store(log, ids, message(leaked), reply(ReplyKind.OUT_OF_SCOPE), NOW - 60)
    raw = str(await redis.xrange(keys.answer_log("slack", "T1")))
    assert "sk-ant-api03" not in raw and configured not in raw and "[redacted]" in raw
    # a secret configured only after the record was written is taken out when the report shows it
    later = "written-before-it-was-a-secret"
    await store(log, ids, message(f"{later} KeyError: '{later}'"), reply(ReplyKind.OUT_OF_SCOPE), NOW - 50)
    shown = answer_log(redis, keys, secrets=[later])
    report = json.dumps(await build_report(shown, redis, keys, workspace_scope("slack:T1"), 1, now=NOW))
    assert later not in report and "[redacted]" in report


async def test_each_workspace_keeps_at_most_its_entries_and_days(redis, keys):
    log = answer_log(redis, keys, days=30, entries=5, per_scope={"slack:T2": LogLimit(2, 100)})
    ids = StreamIds()
    for i in range(8):
        await store(log, ids, message(f"q{i}", workspace="T1"), reply(), NOW - 10 * DAY + i)
    assert await redis.xlen(keys.answer_log("slack", "T1")) == 5  # the newest five
    await store(log, ids, message("old", workspace="T2"), reply(), NOW - 3 * DAY)
    await store(log, ids, message("new", workspace="T2"), reply(), NOW - 1 * DAY)
    # written now, the old one would be trimmed by MINID; written in the past (as here), the reader
    # still refuses anything beyond the workspace's two days
    report = await build_report(log, redis, keys, workspace_scope("slack:T2"), 30, now=NOW)
    assert report["totals"]["questions"] == 1
    assert 0 < await redis.ttl(keys.answer_log("slack", "T2")) <= 2 * DAY


async def test_writing_now_trims_records_older_than_the_days(redis, keys):
    log, ids = answer_log(redis, keys, days=1), StreamIds()
    await store(log, ids, message("two days ago"), reply(), time.time() - 2 * DAY)
    await log.record(message("now"), reply(), latency=0.5, tokens=0)
    entries = await redis.xrange(keys.answer_log("slack", "T1"))
    assert len(entries) == 1 and b"now" in entries[0][1][b"j"]


def test_limits_reject_bad_overrides():
    @dataclass
    class S:
        answer_log_days: int = 90
        answer_log_max_entries: int = 100
        answer_log_limits: dict = field(default_factory=lambda: {"slack:T1": {"days": 400}})

    with pytest.raises(ValueError, match="days takes 1..366"):
        LogLimits.from_settings(S())


def test_a_report_over_a_year_is_refused_with_a_clear_reason():
    assert check_days(366) == 366
    for days in (0, 367, 10_000):
        with pytest.raises(ReportRangeError, match="1 to 366 days"):
            check_days(days)


async def test_votes_from_slack_and_wecom_count_with_their_thread_links(redis, keys):
    log, ids = answer_log(redis, keys), StreamIds()
    now = time.time()
    await store(log, ids, message("q1", channel="C9", thread="1700.1"), reply(trace_id="a" * 32), now - 300)
    await store(log, ids, message("q2", platform="wecom", workspace="bot1", channel="chat1", thread="chat1"),
                reply(trace_id="b" * 32), now - 200)
    await store(log, ids, message("q3", workspace="T2"), reply(trace_id="c" * 32), now - 100)
    for user, value in (("U1", "helpful"), ("U2", "not_helpful"), ("U3", "helpful")):
        await record_feedback(redis, keys, trace_id="a" * 32, workspace="T1", user=user, value=value,
                              channel="C9", message_ts="1700.2")
    wecom = FeedbackStore(redis, keys)
    await wecom.record(trace_id="b" * 32, feedback_id="f1", user_id="u1", entry={"type": 2}, answer="x")
    await wecom.record(trace_id="b" * 32, feedback_id="f1", user_id="u2", entry={"type": 3}, answer="x")  # withdrawn
    await record_feedback(redis, keys, trace_id="c" * 32, workspace="T2", user="U9", value="helpful",
                          channel="C1", message_ts="1")
    everyone = await build_report(log, redis, keys, OPERATOR, 1, now=time.time())
    assert everyone["feedback"]["up"] == 3 and everyone["feedback"]["down"] == 2
    assert everyone["feedback"]["helpful_rate"] == 0.6
    links = [t["link"] for t in everyone["feedback"]["threads"]["up"]]
    assert "https://app.slack.com/client/T1/C9/thread/C9-1700.1" in links
    own = await build_report(log, redis, keys, workspace_scope("slack:T1"), 1, now=time.time())
    assert (own["feedback"]["up"], own["feedback"]["down"]) == (2, 1)  # T2's vote is not T1's business


async def test_memory_stays_bounded_when_the_log_is_larger_than_the_caps(redis, keys, monkeypatch):
    monkeypatch.setattr(report_data, "MAX_RECORDS", 1_500)
    monkeypatch.setattr(report_data, "MAX_KEYS", 10)
    log, ids = answer_log(redis, keys), StreamIds()
    async with redis.pipeline(transaction=False) as pipe:
        for i in range(3_000):
            at = NOW - 3_600 + i
            text = f"KeyError: no key k{i}" if i % 2 else f"topic{i} word{i}"  # signatures, and topics without one
            rec = record_json(message(text), reply(ReplyKind.OUT_OF_SCOPE),
                              latency=i / 1000, tokens=1, redact=log.redact)
            pipe.xadd(keys.answer_log("slack", "T1"), {"j": rec}, id=ids.next("slack:T1", at))
        pipe.zadd(keys.answer_log_index, {"slack:T1": NOW})
        await pipe.execute()
    sizes: list[tuple[int, int, int]] = []

    class Watched(report_data._Fold):  # sees the fold's containers after every record
        def add(self, record):
            super().add(record)
            sizes.append((max(len(c.latencies) for c in self.cells.values()),
                          len(self.signatures.counts), len(self.gap_topics.counter.counts)))

    monkeypatch.setattr(report_data, "_Fold", Watched)
    report = await build_report(log, redis, keys, workspace_scope("slack:T1"), 1, now=NOW)
    assert report["truncated"] is True and report["records_read"] == 2_000  # stops with the chunk that passed the cap
    # a latency histogram to three digits: 0.000..1.999 s in 1,200 keys, not one per latency
    assert max(s[0] for s in sizes) <= 1_200 < report["records_read"]
    assert max(s[1] for s in sizes) == 10 and max(s[2] for s in sizes) == 10  # new keys beyond the cap are dropped


def test_percentiles_are_nearest_rank():
    values = sorted(float(v) for v in range(1, 101))
    assert percentile(values, 0.5) == 50.0 and percentile(values, 0.95) == 95.0
    assert percentile([], 0.5) == 0.0 and percentile([3.0], 0.95) == 3.0


# --- through the worker: the same replies /metrics counts ------------------------------------------


@dataclass
class Usage:
    input: int = 1000
    output: int = 200
    cache_write: int = 0
    cache_read: int = 300


class Scripted:
    """Replies of several kinds; answers spend model tokens through the research hook, as
    core/conversation.py does."""

    def __init__(self, metrics) -> None:
        self.metrics = metrics

    async def handle(self, message: InboundMessage, progress) -> Reply:
        if message.text.startswith("answer"):
            await asyncio.sleep(0)
            _observe_research(self.metrics, type("Outcome", (), {"usage": Usage(), "trace": ()})())
            return Reply(ReplyKind.ANSWER, "a", "en", repos=("vllm-project/vllm-ascend",), trace_id=message.event_id.ljust(32, "0"))
        if message.text.startswith("out"):
            return Reply(ReplyKind.OUT_OF_SCOPE, "o", "en")
        return Reply(ReplyKind.NOTICE, "help", "en")


async def test_the_report_counts_what_the_metrics_count(make_settings, redis):
    settings = make_settings(admin_token="operator-token-0123456789")
    components = build_components(settings, redis=redis, conversation=object(), with_adapters=False)
    components.conversation = Scripted(components.metrics)
    components.adapters = {"recording": RecordingAdapter()}
    texts = ["answer 1", "answer 2", "out 1", "help", "answer 3"]
    for i, text in enumerate(texts):
        await components.ingress.submit(InboundMessage("recording", "w", "c", f"t{i}", f"u{i}", text, f"e{i}", f"e{i}", True))
    worker = Worker(components)
    task = asyncio.create_task(worker.run())
    try:
        for _ in range(200):
            if await queue_drained(components) and not worker._tasks:
                break
            await asyncio.sleep(0.05)
    finally:
        worker.stop()
        await task
    report = await build_report(components.answer_log, redis, components.keys, OPERATOR, 1)
    metrics = {s.labels["kind"]: s.value for m in components.metrics.answers.collect() for s in m.samples
               if s.name.endswith("_total")}
    assert report["answers_by_platform_kind"] == {f"recording/{k}": int(v) for k, v in metrics.items()}
    assert report["answers_by_platform_kind"] == {"recording/answer": 3, "recording/notice": 1, "recording/out_of_scope": 1}
    tokens = sum(s.value for m in components.metrics.model_tokens.collect() for s in m.samples if s.name.endswith("_total"))
    assert sum(c["tokens"] for c in report["per_workspace_day"]) == int(tokens) == 3 * 1500
    latency_count = sum(s.value for m in components.metrics.job_seconds.collect() for s in m.samples
                        if s.name.endswith("_count"))
    assert sum(c["answers"] for c in report["per_workspace_day"]) == int(latency_count) == 5
    assert all(c["latency_p95"] > 0 for c in report["per_workspace_day"])
