"""End to end: signed Slack requests over HTTP to the real web app, the worker answering through
the real slack_sdk client into the fake Slack Web API.

Conversations here are the real core (offline triage, deterministic) unless a case needs a
specific answer (a 20,000-character one, model output with `<!channel>`): then a scripted
conversation stands in for the core.
"""
from __future__ import annotations

import re
from collections.abc import AsyncIterator, Callable

import pytest

from core.messages import InboundMessage, Progress, Reply, ReplyKind, Source
from tests.support.fake_slack import (
    BOT_ID,
    BOT_TOKEN,
    BOT_USER,
    SIGNING_SECRET,
    TEAM,
    FakeSlack,
    block_action,
    event_callback,
    mention,
    message,
    post_action,
    post_event,
)
from tests.support.stack import running_bot, jobs_enqueued

CHANNEL = "C0CHAN01"
WJ = "\u2060"


@pytest.fixture
async def slack() -> AsyncIterator[FakeSlack]:
    async with FakeSlack() as fake:
        yield fake


@pytest.fixture
def settings(make_settings: Callable, slack: FakeSlack) -> Callable[..., object]:
    def build(**overrides: object) -> object:
        values: dict[str, object] = {
            "slack_bot_token": BOT_TOKEN,
            "slack_signing_secret": SIGNING_SECRET,
            "slack_api_url": slack.api_url,
            "slack_post_interval_seconds": 0.05,
            "allowed_workspaces": [f"slack:{TEAM}"],  # closed to the fake workspace's own users
        }
        values.update(overrides)
        return make_settings(**values)

    return build


class Scripted:
    """Stands in for the core: fixed progress lines, then a reply built from the message."""

    def __init__(self, reply: Callable[[InboundMessage], Reply], progress: tuple[str, ...] = ()) -> None:
        self._reply = reply
        self._progress = progress
        self.seen: list[InboundMessage] = []

    async def handle(self, message: InboundMessage, progress: Callable) -> Reply:
        self.seen.append(message)
        for line in self._progress:
            await progress(Progress(line))
        return self._reply(message)


def _fences_balanced(text: str) -> bool:
    return sum(1 for line in text.split("\n") if line.startswith("```")) % 2 == 0


# --- scripted answers -------------------------------------------------------------------------


async def test_a_20000_character_answer_is_split_with_code_fences_intact(settings, slack: FakeSlack) -> None:
    code = "\n".join(f"    result_{i} = model.generate(batch[{i}])  # keep <!here> literal" for i in range(260))
    prose = "\n\n".join(f"Paragraph {i}: " + "the quick brown fox checks the HCCL ring. " * 12 for i in range(20))
    body = f"{prose}\n\n```python\n{code}\n```\n\nDone."
    assert len(body) >= 20_000
    conversation = Scripted(lambda m: Reply(ReplyKind.ANSWER, body, "en", trace_id="trace-long"))
    async with running_bot(settings(), conversation=conversation) as stack:
        response = await post_event(stack.base_url, event_callback(mention("long one please", ts="1700000001.000100")))
        assert response.status_code == 200
        await stack.wait_idle()
    posted = slack.in_thread(CHANNEL, "1700000001.000100")
    assert len(posted) >= 3 and all(p.kind == "post" for p in posted)
    sections = [b["text"]["text"] for p in posted for b in p.blocks if b["type"] == "section"]
    assert all(len(s) <= 3000 for s in sections) and all(_fences_balanced(s) for s in sections)
    assert all(len(p.blocks) <= 50 for p in posted)
    text = "\n".join(sections)
    code_lines = [ln for ln in text.split("\n") if ln.startswith("    result_")]
    assert code_lines == [f"    result_{i} = model.generate(batch[{i}])  # keep &lt;!here&gt; literal" for i in range(260)]
    assert [ln.split(":")[0] for ln in text.split("\n") if ln.startswith("Paragraph")] == [f"Paragraph {i}" for i in range(20)]
    assert text.rstrip().endswith("Done.")
    assert [bool(p.buttons()) for p in posted] == [False] * (len(posted) - 1) + [True]
    for call in slack.calls_to("chat.postMessage"):
        assert call["thread_ts"] == "1700000001.000100" and call["unfurl_links"] is False


@pytest.mark.parametrize("streaming", [True, False])
async def test_channel_mentions_in_model_output_are_defanged(settings, slack: FakeSlack, streaming: bool) -> None:
    evil = ("Fixed in 0.9.1. <!channel> <!here|here> <!everyone> ping <@U0ADMIN1> and <!subteam^S0TEAM1|@oncall>, "
            "also @here. See [notes <!channel>](https://example.org/notes).")
    conversation = Scripted(lambda m: Reply(ReplyKind.ANSWER, evil, "en",
                                            sources=(Source("<!channel> issue", "https://example.org/i/1"),),
                                            trace_id="t-evil"))
    async with running_bot(settings(slack_streaming=streaming), conversation=conversation) as stack:
        await post_event(stack.base_url, event_callback(mention("is it fixed?", ts="1700000002.000100")))
        await stack.wait_idle()
    [answer] = slack.in_thread(CHANNEL, "1700000002.000100")
    assert answer.kind == ("stream" if streaming else "post")
    shown = answer.section_text() + answer.text
    assert not re.search(r"<[!@]", shown)  # no Slack mention syntax survives
    assert not re.search(r"@(here|channel|everyone)\b", shown)  # a typed @here is broken up too
    assert f"@{WJ}channel" in shown and f"@{WJ}here" in shown and f"@{WJ}oncall" in shown


async def test_slack_429_once_the_reply_still_arrives(settings, slack: FakeSlack) -> None:
    slack.fail("chat.startStream", status=429, error="ratelimited", retry_after=1)
    conversation = Scripted(lambda m: Reply(ReplyKind.ANSWER, "Use `--enforce-eager`.", "en", trace_id="t429"),
                            progress=("Reading your question…",))
    async with running_bot(settings(), conversation=conversation) as stack:
        await post_event(stack.base_url, event_callback(mention("graph mode hangs", ts="1700000003.000100")))
        await stack.wait_idle()
    assert slack.count("chat.startStream") == 2  # refused once with Retry-After, then accepted
    [answer] = slack.in_thread(CHANNEL, "1700000003.000100")
    assert answer.stopped and "Use `--enforce-eager`." in answer.text
    assert not await stack.redis.xlen(stack.keys.dead_letters)


@pytest.mark.parametrize("streaming", [True, False])
async def test_slack_429_on_the_answer_edit_the_reply_still_arrives_once(settings, slack: FakeSlack, streaming: bool) -> None:
    """429 + Retry-After on the call that completes the answer: chat.stopStream when streaming; chat.update of
    the progress placeholder (the status line refused, so progress went into a message) when not."""
    if streaming:
        limited = "chat.stopStream"
    else:
        limited = "chat.update"
        slack.fail("assistant.threads.setStatus", error="missing_scope")
    slack.fail(limited, status=429, error="ratelimited", retry_after=1)
    ts = "1700000006.000100"
    conversation = Scripted(lambda m: Reply(ReplyKind.ANSWER, "Set `HCCL_CONNECT_TIMEOUT=7200`.", "en", trace_id="t429e"),
                            progress=("Reading your question…",))
    async with running_bot(settings(slack_streaming=streaming), conversation=conversation) as stack:
        await post_event(stack.base_url, event_callback(mention("HCCL times out", ts=ts)))
        await stack.wait_idle()
        assert not await stack.redis.xlen(stack.keys.dead_letters)
    assert slack.count(limited) == 2  # refused once with Retry-After, then accepted
    [answer] = slack.in_thread(CHANNEL, ts)  # no second message, no fallback post
    shown = answer.text if streaming else answer.section_text()
    assert shown.count("Set `HCCL_CONNECT_TIMEOUT=7200`.") == 1
    assert answer.stopped and [b["action_id"] for b in answer.buttons()] == ["aic_feedback_up", "aic_feedback_down"]
    if not streaming:
        assert answer.updates == 1 and "Reading your question" not in answer.section_text()


async def test_postmessage_errors_do_not_crash_the_worker(settings, slack: FakeSlack) -> None:
    """Slack refuses everything for one job: it stays pending for a retry; the next job is answered."""
    slack.fail("chat.postMessage", error="channel_not_found", times=1)
    conversation = Scripted(lambda m: Reply(ReplyKind.NOTICE, f"echo {m.text}", "en"))
    async with running_bot(settings(slack_streaming=False), conversation=conversation) as stack:
        await post_event(stack.base_url, event_callback(mention("first", ts="1700000004.000100")))
        await _eventually(lambda: slack.count("chat.postMessage") >= 1)
        await post_event(stack.base_url, event_callback(mention("second", ts="1700000005.000100")))
        await _eventually(lambda: bool(slack.in_thread(CHANNEL, "1700000005.000100")))
        assert stack.worker._stopping.is_set() is False
    [second] = slack.in_thread(CHANNEL, "1700000005.000100")
    assert second.section_text() == "echo second"
    assert slack.in_thread(CHANNEL, "1700000004.000100") == []


async def _eventually(condition: Callable[[], bool], timeout: float = 20.0) -> None:
    import asyncio

    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.05)


# --- the real core (offline triage) -------------------------------------------------------------

QUESTION = "vllm-ascend 0.9.1 with vllm 0.11.0 fails at startup, why?"
AMBIGUOUS = "MindIE reports an undefined symbol after the upgrade, what should I check?"


def _answers(slack: FakeSlack, channel: str, thread: str) -> list:
    return slack.in_thread(channel, thread)


async def test_a_mention_gets_one_threaded_answer_with_progress(settings, slack: FakeSlack) -> None:
    ts = "1700000010.000100"
    async with running_bot(settings()) as stack:
        response = await post_event(stack.base_url, event_callback(mention(QUESTION, ts=ts)))
        assert response.status_code == 200
        await stack.wait_idle()
    [answer] = _answers(slack, CHANNEL, ts)
    assert answer.kind == "stream" and answer.stopped and "vllm-ascend" in answer.text
    assert [b["action_id"] for b in answer.buttons()] == ["aic_feedback_up", "aic_feedback_down", "aic_clarify_escalate"]
    # visible work: a reaction while working (removed at the end) and status lines in the thread
    assert slack.calls_to("reactions.add")[0]["timestamp"] == ts
    assert slack.reactions[(CHANNEL, ts)] == set()
    statuses = [s for s in slack.statuses if s["thread_ts"] == ts]
    assert statuses and statuses[0]["status"] and statuses[-1]["status"] == ""
    assert slack.calls_to("chat.startStream")[0]["recipient_user_id"] == "U0USER01"


async def test_a_dm_is_answered_in_the_dm(settings, slack: FakeSlack) -> None:
    ts = "1700000011.000100"
    async with running_bot(settings()) as stack:
        dm = message(QUESTION, ts=ts, channel="D0DM0001", channel_type="im")
        await post_event(stack.base_url, event_callback(dm))
        await stack.wait_idle()
    [answer] = _answers(slack, "D0DM0001", ts)
    assert "vllm-ascend" in answer.text and answer.stopped


async def test_follow_up_in_the_thread_without_mention(settings, slack: FakeSlack) -> None:
    root = "1700000012.000100"
    async with running_bot(settings()) as stack:
        await post_event(stack.base_url, event_callback(mention(QUESTION, ts=root)))
        await stack.wait_idle()
        follow = message("I am on Atlas 800I A2 with CANN 8.0, does that change anything?", ts="1700000013.000100",
                         thread_ts=root)
        assert (await post_event(stack.base_url, event_callback(follow))).status_code == 200
        await stack.wait_idle()
        # a mention inside the thread fires app_mention and message: still one answer
        ts3 = "1700000014.000100"
        await post_event(stack.base_url, event_callback(message(f"<@{BOT_USER}> thanks, and on A3?", ts=ts3, thread_ts=root)))
        await post_event(stack.base_url, event_callback(mention("thanks, and on A3?", ts=ts3, thread_ts=root)))
        await stack.wait_idle()
    answers = _answers(slack, CHANNEL, root)
    assert len(answers) == 3
    assert all(a.thread_ts == root for a in answers)


async def test_a_retried_event_gets_one_answer(settings, slack: FakeSlack) -> None:
    ts = "1700000015.000100"
    payload = event_callback(mention(QUESTION, ts=ts), event_id="EvRETRY0001")
    async with running_bot(settings()) as stack:
        assert (await post_event(stack.base_url, payload)).status_code == 200
        assert (await post_event(stack.base_url, payload, retry_num=1)).status_code == 200
        await stack.wait_idle()
        assert (await post_event(stack.base_url, payload, retry_num=2)).status_code == 200
        await stack.wait_idle()
    assert len(_answers(slack, CHANNEL, ts)) == 1


async def test_bad_signature_and_stale_timestamp_are_rejected_and_nothing_is_answered(settings, slack: FakeSlack) -> None:
    import time

    ts = "1700000016.000100"
    async with running_bot(settings()) as stack:
        bad = await post_event(stack.base_url, event_callback(mention(QUESTION, ts=ts)), secret="wrong-secret")
        stale = await post_event(stack.base_url, event_callback(mention(QUESTION, ts=ts)), timestamp=int(time.time()) - 301)
        assert (bad.status_code, stale.status_code) == (401, 401)
        await stack.wait_idle()
        assert not await stack.redis.exists(stack.keys.jobs) or await stack.redis.xlen(stack.keys.jobs) == 0
    assert slack.messages == []


async def test_the_bots_own_message_is_ignored(settings, slack: FakeSlack) -> None:
    root = "1700000017.000100"
    async with running_bot(settings()) as stack:
        await post_event(stack.base_url, event_callback(mention(QUESTION, ts=root)))
        await stack.wait_idle()
        [answer] = _answers(slack, CHANNEL, root)
        own = message("the answer text", ts=answer.ts, thread_ts=root, user=BOT_USER, bot_id=BOT_ID)
        assert (await post_event(stack.base_url, event_callback(own))).status_code == 200
        await stack.wait_idle()
        assert jobs_enqueued(stack.components) == 1
    assert len(_answers(slack, CHANNEL, root)) == 1


async def test_clarification_by_button_click(settings, slack: FakeSlack) -> None:
    root = "1700000018.000100"
    async with running_bot(settings()) as stack:
        await post_event(stack.base_url, event_callback(mention(AMBIGUOUS, ts=root)))
        await stack.wait_idle()
        [question] = _answers(slack, CHANNEL, root)
        buttons = question.buttons()
        assert [b["text"]["text"] for b in buttons][:2] == ["MindIE-LLM", "MindIE-SD"]
        pick = buttons[0]
        click = block_action(action_id=pick["action_id"], value=pick["value"], label=pick["text"]["text"],
                             channel=CHANNEL, message_ts=question.ts, thread_ts=root, blocks=question.blocks)
        assert (await post_action(stack.base_url, click)).status_code == 200
        await stack.wait_idle()
        await _eventually(lambda: slack.find(CHANNEL, question.ts).buttons() == [])
    answers = _answers(slack, CHANNEL, root)
    assert len(answers) == 2
    assert "MindIE-LLM" in answers[1].text
    assert [b["action_id"] for b in answers[1].buttons()] == ["aic_feedback_up", "aic_feedback_down", "aic_clarify_escalate"]


async def test_clarification_by_typed_reply_in_the_thread(settings, slack: FakeSlack) -> None:
    root = "1700000019.000100"
    async with running_bot(settings()) as stack:
        await post_event(stack.base_url, event_callback(mention(AMBIGUOUS, ts=root)))
        await stack.wait_idle()
        [question] = _answers(slack, CHANNEL, root)
        assert question.buttons()
        await post_event(stack.base_url, event_callback(message("2", ts="1700000020.000100", thread_ts=root)))
        await stack.wait_idle()
    answers = _answers(slack, CHANNEL, root)
    assert len(answers) == 2 and "MindIE-SD" in answers[1].text


class Failing:
    """A core that starts working, then fails: the user must get a short message, no lingering status."""

    async def handle(self, message: InboundMessage, progress: Callable) -> Reply:
        await progress(Progress("Researching vllm-ascend…"))
        raise RuntimeError("boom: the model went away")


async def test_a_failure_is_a_short_message_and_no_status_lingers(settings, slack: FakeSlack, caplog) -> None:
    import logging

    from core.texts import text as core_text

    caplog.set_level(logging.DEBUG)
    ts = "1700000030.000100"
    async with running_bot(settings(), conversation=Failing()) as stack:
        assert (await post_event(stack.base_url, event_callback(mention("will this fail?", ts=ts)))).status_code == 200
        await stack.wait_idle()
    [notice] = _answers(slack, CHANNEL, ts)
    assert notice.section_text() == core_text("internal_error", "en") and notice.buttons() == []
    assert "boom" not in notice.section_text()
    # the working signs went up, and came down again
    assert slack.calls_to("reactions.add") and slack.reactions[(CHANNEL, ts)] == set()
    statuses = [s["status"] for s in slack.statuses if s["thread_ts"] == ts]
    assert statuses[0] and statuses[-1] == ""
    # requests were logged at DEBUG, but never a token or the signing secret
    assert any("chat.postMessage" in r.getMessage() for r in caplog.records)
    leaked = [r.getMessage() for r in caplog.records if BOT_TOKEN in r.getMessage() or SIGNING_SECRET in r.getMessage()]
    assert leaked == []
