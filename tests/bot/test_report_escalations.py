"""Escalations in the admin report: `escalate` in a conversation on the real Redis stores one record
per workspace stream, and the report (data, text, HTML) shows it with the scope's rules."""
from __future__ import annotations

import json
import time

import pytest
from redis.asyncio import Redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from bot.report.access import OPERATOR, workspace_scope
from bot.report.command import _summary
from bot.report.data import build_report
from bot.report.escalations import EscalationLog
from bot.report.limits import LogLimit, LogLimits
from bot.report.log import AnswerLog
from bot.report.page import render_html
from core.conversation import Conversation
from core.escalate import Escalation, Escalator, build_escalation
from core.messages import InboundMessage, ReplyKind
from core.research.redact import Redactor
from core.session import RedisSessionStore

SECRET = "hunter2-configured-SECRET-value"
QUESTION = (f"vllm-ascend 0.9.1 on 910B: vllm serve fails with --api-key {SECRET}, zanzibar-marker "
            "RuntimeError: ACL stream synchronize failed, error code:507015")
WORDS_OF_QUESTION = "zanzibar"  # a word only the question holds


def message(text: str, *, workspace: str = "T1", thread: str = "1700000000.000100") -> InboundMessage:
    return InboundMessage("slack", workspace, "C1", thread, "U1", text, "m", "e", False)


class RecordingFiler:
    async def file(self, escalation: Escalation) -> str | None:
        return f"https://github.com/{escalation.api_repo}/issues/9001"


def limits(days: int = 90, entries: int = 50_000) -> LogLimits:
    return LogLimits(LogLimit(days, entries))


def logs(redis, keys, lim: LogLimits | None = None) -> tuple[AnswerLog, EscalationLog]:
    lim = lim or limits()
    redact = Redactor([SECRET])
    return AnswerLog(redis, keys, lim, redact), EscalationLog(redis, keys, lim, redact)


def conversation(redis, keys, journal: EscalationLog, filer=None) -> Conversation:
    return Conversation(RedisSessionStore(redis, keys, 600),
                        escalator=Escalator(Redactor([SECRET]), filer, journal))


async def escalate(conv: Conversation, **where) -> str:
    answer = await conv.handle(message(QUESTION, **where))
    assert answer.kind is ReplyKind.ANSWER and answer.repos[0] == "vllm-project/vllm-ascend"
    reply = await conv.handle(message("escalate", **where))
    assert "https://github.com/vllm-project/vllm-ascend/issues/new?" in reply.text
    return reply.text


async def test_an_escalation_in_a_conversation_shows_in_the_workspace_report_with_its_question(redis, keys):
    answer_log, escalation_log = logs(redis, keys)
    await escalate(conversation(redis, keys, escalation_log))
    report = await build_report(answer_log, redis, keys, workspace_scope("slack:T1"), 7)
    section = report["escalations"]
    assert section["total"] == 1
    assert section["by_product"] == {"vllm-ascend": {"opened": 1}}
    (item,) = section["items"]
    assert item["state"] == "opened" and item["workspace"] == "slack:T1" and item["repo"] == "vllm-project/vllm-ascend"
    assert item["issue"].startswith("https://github.com/vllm-project/vllm-ascend/issues/new?")
    assert item["link"].startswith("https://app.slack.com/client/T1/C1/thread/")
    assert WORDS_OF_QUESTION in item["question"]
    assert SECRET not in json.dumps(report)  # redacted when stored, as the answer log is


async def test_the_operator_sees_the_escalation_but_no_question_text(redis, keys):
    answer_log, escalation_log = logs(redis, keys)
    await escalate(conversation(redis, keys, escalation_log))
    report = await build_report(answer_log, redis, keys, OPERATOR, 7)
    (item,) = report["escalations"]["items"]
    assert "question" not in item
    # the pre-filled link carries the question in its body: the operator gets the issues page
    assert item["issue"] == "https://github.com/vllm-project/vllm-ascend/issues"
    dumped = json.dumps(report)
    assert WORDS_OF_QUESTION not in dumped and "507015" not in dumped.split('"escalations"')[1]
    assert WORDS_OF_QUESTION not in render_html(report) and WORDS_OF_QUESTION not in _summary(report)


async def test_a_second_click_is_no_new_escalation_and_filing_updates_its_state(redis, keys):
    answer_log, escalation_log = logs(redis, keys)
    conv = conversation(redis, keys, escalation_log)
    await escalate(conv)
    await conv.handle(message("escalate"))  # the same question again: the thread already has it
    assert await redis.xlen(keys.escalation_log("slack", "T1")) == 1
    filing = conversation(redis, keys, escalation_log, RecordingFiler())  # now with a token: filed
    reply = await filing.handle(message("escalate"))
    assert "https://github.com/vllm-project/vllm-ascend/issues/9001" in reply.text
    await filing.handle(message("escalate"))  # already filed: the same issue, no new record
    assert await redis.xlen(keys.escalation_log("slack", "T1")) == 2
    report = await build_report(answer_log, redis, keys, OPERATOR, 7)
    section = report["escalations"]
    assert section["total"] == 1 and section["by_product"] == {"vllm-ascend": {"filed": 1}}
    assert section["items"][0]["issue"] == "https://github.com/vllm-project/vllm-ascend/issues/9001"
    summary = _summary(report)
    assert "Escalations: 1; vllm-ascend: 1 filed" in summary and "issues/9001" in summary
    assert 'href="https://github.com/vllm-project/vllm-ascend/issues/9001"' in render_html(report)


async def test_a_workspace_admin_sees_only_their_workspace_escalations(redis, keys):
    answer_log, escalation_log = logs(redis, keys)
    conv = conversation(redis, keys, escalation_log)
    await escalate(conv, workspace="T1")
    await escalate(conv, workspace="T2")
    own = await build_report(answer_log, redis, keys, workspace_scope("slack:T2"), 7)
    assert [i["workspace"] for i in own["escalations"]["items"]] == ["slack:T2"]
    every = await build_report(answer_log, redis, keys, OPERATOR, 7)
    assert sorted(i["workspace"] for i in every["escalations"]["items"]) == ["slack:T1", "slack:T2"]


async def test_the_escalation_log_keeps_the_answer_logs_retention_limits(redis, keys):
    escalation = build_escalation(QUESTION, ["vllm-project/vllm-ascend"], None, [])
    answer_log, escalation_log = logs(redis, keys, limits(days=3, entries=2))
    now = time.time()
    for n in range(3):  # three distinct questions: the stream keeps the newest two
        other = build_escalation(f"{QUESTION} #{n}", ["vllm-project/vllm-ascend"], None, [])
        await escalation_log.escalated(message("x", thread=f"t{n}"), other, QUESTION, other.url, "opened", now)
    assert await redis.xlen(keys.escalation_log("slack", "T1")) == 2
    assert 0 < await redis.ttl(keys.escalation_log("slack", "T1")) <= 3 * 86_400
    # a record older than the workspace's days is never shown, even before Redis trims it (written
    # while the limit was longer)
    (_, fields), = await redis.xrange(keys.escalation_log("slack", "T1"), count=1)
    old = {**json.loads(fields[b"j"]), "workspace": "T9", "thread": "old"}
    then = now - 5 * 86_400
    _, longer = logs(redis, keys, limits(days=30))
    await longer.append("slack:T9", json.dumps(old), then, stream_id=f"{int(then * 1000)}-0")
    await longer.escalated(message("x", workspace="T9"), escalation, QUESTION, escalation.url, "opened", now)
    assert await redis.xlen(keys.escalation_log("slack", "T9")) == 2
    report = await build_report(answer_log, redis, keys, OPERATOR, 7, now=now + 1)
    assert report["escalations"]["total"] == 3
    assert "old" not in [i["thread"].rsplit(" · ", 1)[-1] for i in report["escalations"]["items"]]


async def test_a_report_store_that_is_down_does_not_break_escalate(redis, keys):
    # no retries: redis-py's default backoff only makes the same ConnectionError arrive ~3 s later
    down = Redis(unix_socket_path="/nonexistent/redis.sock", retry=Retry(NoBackoff(), 0))
    journal = EscalationLog(down, keys, limits(), Redactor([SECRET]))
    text = await escalate(conversation(redis, keys, journal))
    assert "pre-filled" in text
    await down.aclose()


@pytest.mark.parametrize("record", ['{"v": 1, "state": "opened"}', "not json", '{"v": 2}'])
async def test_an_unreadable_record_is_skipped(redis, keys, record):
    answer_log, escalation_log = logs(redis, keys)
    await escalation_log.append("slack:T1", record, time.time())
    report = await build_report(answer_log, redis, keys, OPERATOR, 7)
    assert report["escalations"] == {"total": 0, "by_product": {}, "items": []}


async def test_the_served_conversation_records_escalations_for_the_report(make_settings, redis, keys):
    """bot/wiring.py gives the serving conversation's escalator the escalation log."""
    from bot.wiring import build_components  # noqa: PLC0415

    components = build_components(make_settings(), redis=redis, with_adapters=False)
    await escalate(components.conversation)
    answer_log, _ = logs(redis, keys)
    report = await build_report(answer_log, redis, keys, OPERATOR, 7)
    assert report["escalations"]["by_product"] == {"vllm-ascend": {"opened": 1}}
