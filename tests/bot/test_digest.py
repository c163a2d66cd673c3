"""The weekly digest: its text from a workspace's report on the real Redis, and `bot digest` printing
it (--dry-run) or posting it through each platform's own sender, against the local fakes the
adapter tests use: Slack's Web API, Feishu's Open API, Telegram's Bot API and WeCom's AI-bot
long connection (where the bot process holding the connection sends what the command queued)."""
from __future__ import annotations

import argparse
import json
import time
from collections.abc import AsyncIterator

import pytest

from bot.report.access import workspace_scope
from bot.report.data import build_report
from bot.report.digest import digest_text, top_gaps
from bot.report.digest_command import cmd_digest
from bot.report.escalations import EscalationLog
from bot.report.limits import LogLimit, LogLimits
from bot.report.log import AnswerLog, record_json
from core.escalate import build_escalation
from core.research.redact import Redactor
from adapters.base import AdapterDeps
from adapters.wecom import create_adapter as create_wecom
from core.ingress import Ingress
from tests.support.fake_feishu import FakeFeishu
from tests.support.fake_slack import BOT_TOKEN, SIGNING_SECRET, FakeSlack
from tests.support.fake_telegram import BOT_ID as TG_BOT_ID
from tests.support.fake_telegram import TOKEN as TG_TOKEN
from tests.support.fake_telegram import FakeTelegram
from tests.support.fake_wecom import FakeAibotWs
from tests.support.report_data import StreamIds, message, reply

PRIVATE = "quetzalcoatl"  # a word only the users' questions hold
ERRORS = {  # error line -> how many low-confidence questions paste it
    "RuntimeError: ACL stream synchronize failed, error code:507015": 4,
    "ImportError: libhccl.so: cannot open shared object file": 3,
    "RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB": 2,
    "ValueError: unsupported quantization method w4a4": 1,
}


@pytest.fixture
async def slack() -> AsyncIterator[FakeSlack]:
    async with FakeSlack() as fake:
        yield fake


async def fill(redis, keys, workspace: str = "T1", answered: int = 5, platform: str = "slack") -> None:
    """A week of one workspace: `answered` good answers, the gaps of ERRORS, one filed escalation."""
    limits = LogLimits(LogLimit(90, 50_000))
    log, ids, now = AnswerLog(redis, keys, limits, Redactor(())), StreamIds(), time.time()
    scope = f"{platform}:{workspace}"

    async def store(text: str, rep) -> None:
        at = now - 3_600
        record = record_json(message(text, workspace=workspace, platform=platform), rep, latency=1.0, tokens=10,
                             redact=log.redact)
        await log.append(scope, record, at, stream_id=ids.next(scope, at))

    for n in range(answered):
        await store(f"{PRIVATE} graph mode question {n}", reply(confidence="high"))
    for line, times in ERRORS.items():
        for n in range(times):
            await store(f"{PRIVATE} my server fails {n}:\n{line}", reply(confidence="low"))
    escalation = build_escalation(f"{PRIVATE} fails", ["vllm-project/vllm-ascend"], None, [])
    await EscalationLog(redis, keys, limits, Redactor(())).escalated(
        message("escalate", workspace=workspace, platform=platform), escalation, f"{PRIVATE} fails",
        "https://github.com/vllm-project/vllm-ascend/issues/9001", "filed", now)


async def test_the_digest_has_the_weeks_numbers_the_top_three_gaps_and_the_escalations(redis, keys):
    await fill(redis, keys)
    log = AnswerLog(redis, keys, LogLimits(LogLimit(90, 50_000)), Redactor(()))
    report = await build_report(log, redis, keys, workspace_scope("slack:T1"), 7)
    text = digest_text(report)
    assert "Questions: 15 · unanswered or low confidence: 10" in text
    assert "Answers by confidence: high 5, low 10" in text
    gaps = top_gaps(report)
    assert [n for _, n in gaps] == [4, 3, 2]  # the three largest, largest first (w4a4 left out)
    assert "ACL stream synchronize" in gaps[0][0] and "libhccl" in gaps[1][0]
    assert all(f"  {n} x {key}" in text for key, n in gaps) and "w4a4" not in text
    assert "Escalations: 1; vllm-ascend: 1 filed" in text
    assert "https://github.com/vllm-project/vllm-ascend/issues/9001" in text
    assert PRIVATE not in text  # a channel holds more people than the admins: no question text
    assert len(text.splitlines()) <= 12


async def test_an_empty_week_says_so(redis, keys):
    log = AnswerLog(redis, keys, LogLimits(LogLimit(90, 50_000)), Redactor(()))
    text = digest_text(await build_report(log, redis, keys, workspace_scope("slack:T1"), 7))
    assert "Questions: 0" in text and "Top documentation gaps: none" in text and "Escalations: 0" in text


async def test_dry_run_prints_each_opted_in_workspace_its_own_digest(redis, keys, make_settings, capsys):
    await fill(redis, keys, "T1", answered=5)
    await fill(redis, keys, "T2", answered=1)
    settings = make_settings(digest_channels={"slack:T1": "C1", "slack:T2": "C2"})
    assert await cmd_digest(argparse.Namespace(days=7, dry_run=True), settings) == 0
    out = capsys.readouterr().out
    first, second = out.split("--- slack:T2 -> C2")
    assert first.startswith("--- slack:T1 -> C1") and "Questions: 15" in first
    assert "Questions: 11" in second and "(slack:T2, last 7 days)" in second


async def test_without_dry_run_the_digest_is_posted_to_the_configured_slack_channel(redis, keys, make_settings, slack):
    await fill(redis, keys)
    settings = make_settings(digest_channels={"slack:T1": "C0DIGEST"}, slack_bot_token=BOT_TOKEN,
                             slack_signing_secret=SIGNING_SECRET, slack_api_url=slack.api_url)
    assert await cmd_digest(argparse.Namespace(days=7, dry_run=False), settings) == 0
    (posted,) = slack.calls_to("chat.postMessage")
    assert posted["channel"] == "C0DIGEST" and "Questions: 15" in posted["text"]
    assert PRIVATE not in posted["text"]


async def test_a_platform_without_posting_is_reported_and_the_others_still_post(redis, keys, make_settings, slack, capsys):
    await fill(redis, keys)
    settings = make_settings(digest_channels={"slack:T1": "C0DIGEST", "telegram:123": "-100123"},
                             slack_bot_token=BOT_TOKEN, slack_signing_secret=SIGNING_SECRET, slack_api_url=slack.api_url)
    assert await cmd_digest(argparse.Namespace(days=7, dry_run=False), settings) == 1
    assert "telegram:123: not posted: telegram is not configured here" in capsys.readouterr().err
    assert slack.count("chat.postMessage") == 1


async def test_the_digest_is_posted_to_a_feishu_chat(redis, keys, make_settings):
    await fill(redis, keys, "tk", platform="feishu")
    async with FakeFeishu() as feishu:
        settings = make_settings(digest_channels={"feishu:tk": "oc_digest"}, feishu_app_id=feishu.app_id,
                                 feishu_app_secret=feishu.app_secret, feishu_verification_token="v-token",
                                 feishu_encrypt_key="k" * 16, feishu_api_url=feishu.url)
        assert await cmd_digest(argparse.Namespace(days=7, dry_run=False), settings) == 0
        (posted,) = [m for m in feishu.messages.values() if m.chat_id]
    assert posted.chat_id == "oc_digest" and "Questions: 15" in feishu.visible_text(posted)
    assert PRIVATE not in feishu.visible_text(posted) and not feishu.violations


async def test_the_digest_is_posted_to_a_telegram_chat(redis, keys, make_settings):
    await fill(redis, keys, str(TG_BOT_ID), platform="telegram")
    async with FakeTelegram() as telegram:
        settings = make_settings(digest_channels={f"telegram:{TG_BOT_ID}": "-100200300"}, telegram_bot_token=TG_TOKEN,
                                 telegram_api_url=telegram.api_url)
        assert await cmd_digest(argparse.Namespace(days=7, dry_run=False), settings) == 0
        (sent,) = telegram.chat_messages(-100200300)
        shown = telegram.visible(sent)
    assert "Questions: 15" in shown and "ACL stream synchronize" in shown and PRIVATE not in shown
    assert sent.thread_id is None and sent.reply_to is None  # the chat itself, not a thread


async def test_the_digest_goes_out_on_the_wecom_long_connection(redis, keys, make_settings):
    await fill(redis, keys, "BOT1", platform="wecom")
    async with FakeAibotWs("BOT1", "S3cret-bot") as wecom:
        settings = make_settings(digest_channels={"wecom:BOT1": "chat-digest"}, wecom_mode="ws", wecom_bot_id="BOT1",
                                 wecom_bot_secret="S3cret-bot", wecom_ws_url=wecom.url,
                                 wecom_ws_heartbeat_seconds=0.2, wecom_ws_reconnect_base_seconds=0.05)
        # the bot process that holds the connection (`serve`): it sends what the command queues
        owner = create_wecom(AdapterDeps(settings=settings, redis=redis, ingress=Ingress(redis, keys, 600)))
        await owner.start()
        try:
            await wecom.wait_subscribed()
            assert await cmd_digest(argparse.Namespace(days=7, dry_run=False), settings) == 0
            await wecom.wait_for(lambda: bool(wecom.sent_messages()))
        finally:
            await owner.stop()
    (frame,) = wecom.sent_messages()
    assert frame["body"]["chatid"] == "chat-digest"
    assert "Questions: 15" in json.dumps(frame["body"], ensure_ascii=False)
    assert PRIVATE not in json.dumps(frame["body"], ensure_ascii=False)


async def test_a_wecom_webhook_bot_cannot_post_and_says_why(redis, keys, make_settings, capsys):
    await fill(redis, keys, "BOT1", platform="wecom")
    settings = make_settings(digest_channels={"wecom:BOT1": "chat-digest"}, wecom_token="tok",
                             wecom_encoding_aes_key="a" * 43, wecom_bot_id="BOT1")
    assert await cmd_digest(argparse.Namespace(days=7, dry_run=False), settings) == 1
    assert "only over its long connection (WECOM_MODE=ws)" in capsys.readouterr().err


@pytest.mark.parametrize(("channels", "days", "said"), [
    ({}, 7, "no workspace opted in"),
    ({"T1": "C1"}, 7, "keys are platform:workspace"),
    ({"slack:T1": "C1"}, 400, "1 to 366 days"),
])
async def test_bad_settings_or_days_exit_2_with_the_reason(make_settings, capsys, channels, days, said):
    settings = make_settings(digest_channels=channels)
    assert await cmd_digest(argparse.Namespace(days=days, dry_run=True), settings) == 2
    assert said in capsys.readouterr().err

