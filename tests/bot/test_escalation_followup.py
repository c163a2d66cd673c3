"""A maintainer's answer on an escalated issue goes back to the chat thread (bot/issues/followup.py).

`python -m bot sync --issues` against the local fake GitHub (and GitCode) listing API stores what
changed; the follow-up then reads the escalations of the opted-in workspaces from the real Redis and
posts into their threads through the platforms' own delivery path, here the local fake Slack and
Telegram. The re-index after the sync is left out (no index in these tests)."""
from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from bot.issues import sync as sync_module
from bot.issues.followup import Followups, run_followups, sanitize_quote
from bot.issues.sync import run_issues_sync
from bot.report.access import OPERATOR
from bot.report.data import build_report
from bot.report.digest import digest_text
from bot.report.escalations import EscalationLog
from bot.report.limits import LogLimit, LogLimits
from bot.report.log import AnswerLog
from bot.report.post import Poster
from core.escalate import build_escalation
from core.keys import Keys
from core.messages import InboundMessage
from core.research.redact import Redactor
from tests.support.fake_feishu import FakeFeishu
from tests.support.fake_issue_host import FakeIssueHost, HostedIssue
from tests.support.fake_slack import BOT_TOKEN, SIGNING_SECRET, FakeSlack
from tests.support.fake_telegram import BOT_ID as TG_BOT_ID
from tests.support.fake_telegram import TOKEN as TG_TOKEN
from tests.support.fake_telegram import FakeTelegram

REPO = "vllm-project/vllm-ascend"
QUESTION = "vllm serve fails on 910B with RuntimeError: ACL stream synchronize failed, error code:507015"
ISSUE_URL = f"https://github.com/{REPO}/issues/9001"
NOW = time.time()
ESCALATED = NOW  # the log's time is its stream id, the write's: upstream events come after it
GHP = "ghp_" + "A1b2C3d4" * 5  # a GitHub token's shape


def iso(at: float) -> str:
    return datetime.fromtimestamp(at, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def said(login: str, body: str, role: str, at: float) -> dict[str, Any]:
    return {"user": {"login": login}, "body": body, "author_association": role, "created_at": iso(at)}


def issue(number: int = 9001, comments: list[dict[str, Any]] | None = None, *, state: str = "open",
          closed_at: float | None = None, updated: float = NOW + 3_600, body: str = "the report",
          created: float = ESCALATED + 600) -> HostedIssue:
    return HostedIssue(number=number, title="serve fails", updated_at=iso(updated), body=body, state=state,
                       created_at=iso(created), closed_at=iso(closed_at) if closed_at else None,
                       comments=comments or [])


@pytest.fixture(autouse=True)
def _no_index(monkeypatch: pytest.MonkeyPatch) -> None:
    async def nothing(*_: Any, **__: Any) -> bool:
        return True

    monkeypatch.setattr(sync_module, "reindex_changed", nothing)


@pytest.fixture
async def slack() -> AsyncIterator[FakeSlack]:
    async with FakeSlack() as fake:
        yield fake


@pytest.fixture
async def github() -> AsyncIterator[FakeIssueHost]:
    async with FakeIssueHost("github", {REPO: [issue()]}) as host:
        yield host


def settings_with(make_settings: Any, tmp_path: Path, github: FakeIssueHost, slack: FakeSlack, **extra: Any) -> Any:
    values: dict[str, Any] = dict(
        github_api_url=github.api_url, gitcode_api_url="http://127.0.0.1:9", github_token=None, issues_page_size=10,
        issues_retries=1, slack_bot_token=BOT_TOKEN, slack_signing_secret=SIGNING_SECRET, slack_api_url=slack.api_url,
        escalation_followup_workspaces=["slack:T1"], issues_full_listing_days=0,
    )
    values.update(extra)
    return make_settings(**values)


async def escalate(redis: Any, keys: Keys, *, workspace: str = "T1", thread: str = "1700000000.000100",
                   state: str = "filed", url: str = ISSUE_URL, platform: str = "slack", channel: str = "C1",
                   language: str = "en", context: dict[str, Any] | None = None, repo: str = REPO,
                   question: str = QUESTION) -> Any:
    """An escalation from a thread, written the way `escalate` writes it (bot/report/escalations.py)."""
    escalation = build_escalation(question, [repo], None, [])
    where = InboundMessage(platform, workspace, channel, thread, "U1", "escalate", "m1", "e1", False,
                           reply_context=context or {})
    log = EscalationLog(redis, keys, LogLimits(LogLimit(90, 5_000)), Redactor(()))
    await log.escalated(where, escalation, question, url if state == "filed" else escalation.url, state, ESCALATED,
                        language)
    return escalation


async def sync(settings: Any) -> int:
    return await run_issues_sync(settings, [REPO])


async def test_a_maintainer_reply_is_posted_once_into_the_thread(redis, keys, make_settings, tmp_path, github, slack, capsys):
    github.issues[REPO] = [issue(comments=[
        said("old-member", "an answer from before the escalation", "MEMBER", ESCALATED - 600),
        said("dev1", "Fixed in 0.9.2: set ASCEND_LAUNCH_BLOCKING=1 and upgrade CANN.", "MEMBER", NOW + 7_200),
    ])]
    await escalate(redis, keys)
    settings = settings_with(make_settings, tmp_path, github, slack)
    assert await sync(settings) == 0
    (posted,) = slack.in_thread("C1", "1700000000.000100")
    assert "maintainer dev1" in posted.text and ISSUE_URL in posted.text
    assert "Fixed in 0.9.2" in posted.text and "before the escalation" not in posted.text
    assert "not checked by me" in posted.text
    assert "1 posted" in capsys.readouterr().out
    # the next sync: nothing new upstream, nothing posted
    assert await sync(settings) == 0
    assert len(slack.in_thread("C1", "1700000000.000100")) == 1
    # the report and the digest know it was answered upstream, with the issue's link
    log = AnswerLog(redis, keys, LogLimits(LogLimit(90, 5_000)), Redactor(()))
    report = await build_report(log, redis, keys, OPERATOR, 7)
    assert report["escalations"]["by_product"] == {"vllm-ascend": {"answered": 1}}
    assert report["escalations"]["items"][0]["issue"] == ISSUE_URL
    assert f"vllm-ascend (answered): {ISSUE_URL}" in digest_text(report)


async def test_a_reply_by_someone_else_is_not_posted(redis, keys, make_settings, tmp_path, github, slack):
    github.issues[REPO] = [issue(comments=[said("passer-by", "me too, any news?", "NONE", NOW + 7_200),
                                           said("contrib", "try --enforce-eager", "CONTRIBUTOR", NOW + 3_000)])]
    await escalate(redis, keys)
    assert await sync(settings_with(make_settings, tmp_path, github, slack)) == 0
    assert slack.count("chat.postMessage") == 0


async def test_a_login_in_issues_maintainers_counts_as_a_maintainer(redis, keys, make_settings, tmp_path, github, slack):
    github.issues[REPO] = [issue(comments=[said("lead", "a known issue, fixed in main", "NONE", NOW + 7_200)])]
    await escalate(redis, keys)
    assert await sync(settings_with(make_settings, tmp_path, github, slack, issues_maintainers={REPO: ["lead"]})) == 0
    (posted,) = slack.in_thread("C1", "1700000000.000100")
    assert "maintainer lead" in posted.text


async def test_a_close_without_words_posts_a_short_closed_line(redis, keys, make_settings, tmp_path, github, slack):
    github.issues[REPO] = [issue(state="closed", closed_at=NOW + 1_800)]
    await escalate(redis, keys)
    settings = settings_with(make_settings, tmp_path, github, slack)
    assert await sync(settings) == 0
    (posted,) = slack.in_thread("C1", "1700000000.000100")
    assert posted.text.strip() == f"The issue was closed: {ISSUE_URL}"
    # a maintainer's reply after that is news, and is posted on its own
    github.issues[REPO] = [issue(state="closed", closed_at=NOW + 1_800, updated=NOW + 20_000,
                                 comments=[said("dev1", "closing: fixed by #9100", "COLLABORATOR", NOW + 19_000)])]
    assert await sync(settings) == 0
    first, second = slack.in_thread("C1", "1700000000.000100")
    assert "fixed by #9100" in second.text and "was closed" not in second.text
    log = AnswerLog(redis, keys, LogLimits(LogLimit(90, 5_000)), Redactor(()))
    report = await build_report(log, redis, keys, OPERATOR, 7)
    assert report["escalations"]["by_product"] == {"vllm-ascend": {"closed": 1}}  # one escalation, its latest state


async def test_a_workspace_not_opted_in_hears_nothing(redis, keys, make_settings, tmp_path, github, slack):
    github.issues[REPO] = [issue(comments=[said("dev1", "fixed", "MEMBER", NOW + 7_200)], state="closed",
                                 closed_at=NOW + 600)]
    await escalate(redis, keys, workspace="T2")
    assert await sync(settings_with(make_settings, tmp_path, github, slack)) == 0  # only slack:T1 opted in
    assert slack.count("chat.postMessage") == 0
    assert await sync(settings_with(make_settings, tmp_path, github, slack, escalation_followup_workspaces=[])) == 0
    assert slack.count("chat.postMessage") == 0


async def test_mass_mentions_are_defanged_tokens_redacted_and_links_dropped(redis, keys, make_settings, tmp_path, github, slack):
    configured = "s3cr3t-configured-value-42"
    words = (f"@channel @all <!here> @所有人 please retry with token {GHP} and {configured}; "
             "see [the fix](https://evil.example/phish) or https://evil.example/x and ping @someone")
    github.issues[REPO] = [issue(comments=[said("dev1", words, "MEMBER", NOW + 7_200)])]
    await escalate(redis, keys)
    settings = settings_with(make_settings, tmp_path, github, slack, anthropic_api_key=configured)
    assert await sync(settings) == 0
    (posted,) = slack.in_thread("C1", "1700000000.000100")
    text = posted.text
    assert GHP not in text and configured not in text and "[redacted]" in text
    assert "evil.example" not in text and "the fix" in text and "(link)" in text
    for mention in ("@channel", "@all", "@所有人", "@someone", "<!here>"):
        assert mention not in text
    assert ISSUE_URL in text  # the one link shown is the issue's own


def test_a_quote_is_one_short_line():
    quote = sanitize_quote("line one\n\n```\ncode\n```\n" + "word " * 200, Redactor(()))
    assert "\n" not in quote and len(quote) <= 280 and quote.endswith("…")


async def test_an_issue_filed_from_the_prefilled_link_is_found_by_its_reference(redis, keys, make_settings, tmp_path, github, slack):
    escalation = build_escalation(QUESTION, [REPO], None, [])
    body = escalation.body  # what the user submits from the pre-filled page
    github.issues[REPO] = [
        issue(9001, body="an unrelated issue"),
        issue(9002, body=body, comments=[said("dev1", "duplicate of #8000, fixed there", "OWNER", NOW + 3_600)]),
    ]
    await escalate(redis, keys, state="opened")
    settings = settings_with(make_settings, tmp_path, github, slack)
    assert await sync(settings) == 0
    (posted,) = slack.in_thread("C1", "1700000000.000100")
    assert f"{REPO}/issues/9002" in posted.text and "duplicate of #8000" in posted.text
    # someone copies the reference into a newer issue: the thread stays bound to the first one
    github.issues[REPO].append(issue(9003, body=body, updated=NOW + 20_000, created=NOW + 19_000,
                                     comments=[said("dev2", "hijacked answer", "MEMBER", NOW + 19_500)]))
    assert await sync(settings) == 0
    assert len(slack.in_thread("C1", "1700000000.000100")) == 1


async def test_an_issue_created_before_the_escalation_is_not_taken_for_it(redis, keys, make_settings, tmp_path, github, slack):
    body = build_escalation(QUESTION, [REPO], None, []).body
    github.issues[REPO] = [issue(9005, body=body, created=ESCALATED - 86_400,
                                 comments=[said("dev1", "old answer", "MEMBER", NOW + 3_600)])]
    await escalate(redis, keys, state="opened")
    assert await sync(settings_with(make_settings, tmp_path, github, slack)) == 0
    assert slack.count("chat.postMessage") == 0


async def test_concurrent_runs_post_once(redis, keys, make_settings, tmp_path, github, slack):
    github.issues[REPO] = [issue(comments=[said("dev1", "fixed in main", "MEMBER", NOW + 7_200)])]
    await escalate(redis, keys)
    # the issue stored by a sync with nobody opted in yet, then four follow-ups at once
    assert await sync(settings_with(make_settings, tmp_path, github, slack, escalation_followup_workspaces=[])) == 0
    settings = settings_with(make_settings, tmp_path, github, slack)
    results = await asyncio.gather(*(run_followups(settings, lambda _: None) for _ in range(4)))
    assert all(results) and slack.count("chat.postMessage") == 1


async def test_a_failed_post_is_tried_again_on_the_next_sync(redis, keys, make_settings, tmp_path, github, slack):
    github.issues[REPO] = [issue(comments=[said("dev1", "fixed in main", "MEMBER", NOW + 7_200)])]
    await escalate(redis, keys)
    settings = settings_with(make_settings, tmp_path, github, slack)
    slack.fail("chat.postMessage", error="channel_not_found", times=1)
    assert await sync(settings) == 1  # said, and the exit code shows it
    assert slack.in_thread("C1", "1700000000.000100") == [] and slack.count("chat.postMessage") == 1
    assert await sync(settings) == 0
    assert len(slack.in_thread("C1", "1700000000.000100")) == 1


async def test_a_chinese_telegram_topic_hears_back_in_chinese(redis, keys, make_settings, tmp_path, github, slack):
    github.issues[REPO] = [issue(state="closed", closed_at=NOW + 600,
                                 comments=[said("dev1", "已在 0.9.2 修复", "MEMBER", NOW + 7_200)])]
    chat, topic = -1001234567890, 77
    await escalate(redis, keys, platform="telegram", workspace=str(TG_BOT_ID), channel=str(chat),
                   thread=f"{chat}:{topic}", language="zh",
                   context={"chat_id": chat, "chat_type": "supergroup", "topic_id": topic, "reply_to": 42,
                            "response_url": "https://secret.example/once"})
    async with FakeTelegram() as telegram:
        settings = settings_with(make_settings, tmp_path, github, slack, telegram_bot_token=TG_TOKEN,
                                 telegram_api_url=telegram.api_url,
                                 escalation_followup_workspaces=[f"telegram:{TG_BOT_ID}"])
        assert await sync(settings) == 0
        (sent,) = telegram.chat_messages(chat)
        shown = telegram.visible(sent)
    assert sent.thread_id == topic and sent.reply_to == 42
    assert "维护者 dev1" in shown and "已在 0.9.2 修复" in shown and "该 issue 已关闭" in shown
    assert slack.count("chat.postMessage") == 0
    stored = str(await redis.xrange(Keys(settings.redis_prefix).escalation_log("telegram", str(TG_BOT_ID))))
    assert "secret.example" not in stored  # a response_url is never kept with the escalation


async def test_without_redis_url_the_follow_up_says_why(make_settings, tmp_path, github, slack):
    said_lines: list[str] = []
    settings = settings_with(make_settings, tmp_path, github, slack, redis_url=None)
    assert await run_followups(settings, said_lines.append) is False
    assert "set REDIS_URL" in said_lines[0]


async def test_followups_read_only_their_workspaces(redis, keys, make_settings, tmp_path, github, slack):
    """The follow-up reads the opted-in workspace's own escalation log: another team's thread in the
    same repository, with the same question, is not told."""
    github.issues[REPO] = [issue(comments=[said("dev1", "fixed", "MEMBER", NOW + 7_200)])]
    await escalate(redis, keys, workspace="T1", thread="1.1")
    await escalate(redis, keys, workspace="T9", thread="9.9", channel="C9")
    settings = settings_with(make_settings, tmp_path, github, slack)
    assert await sync(settings) == 0
    assert len(slack.in_thread("C1", "1.1")) == 1 and slack.in_thread("C9", "9.9") == []
    async with Poster(settings, redis) as poster:
        outcome = await Followups(settings, redis, keys, poster).run()
    assert outcome.watched == 1 and outcome.posted == 0


async def test_a_feishu_thread_hears_back_as_a_reply_in_the_thread(redis, keys, make_settings, tmp_path, github, slack):
    github.issues[REPO] = [issue(comments=[said("dev1", "fixed in 0.9.2", "MEMBER", NOW + 7_200)])]
    await escalate(redis, keys, platform="feishu", workspace="tk", channel="oc_chat", thread="om_root",
                   context={"reply_to": "om_escalate", "in_thread": True})
    async with FakeFeishu() as feishu:
        settings = settings_with(make_settings, tmp_path, github, slack, feishu_app_id=feishu.app_id,
                                 feishu_app_secret=feishu.app_secret, feishu_verification_token="v-token",
                                 feishu_encrypt_key="k" * 16, feishu_api_url=feishu.url,
                                 escalation_followup_workspaces=["feishu:tk"])
        assert await sync(settings) == 0
        (reply,) = feishu.replies_to("om_escalate")
        shown = feishu.visible_text(reply)
        assert reply.in_thread and "fixed in 0.9.2" in shown and ISSUE_URL in shown and not feishu.violations
