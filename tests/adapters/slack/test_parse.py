"""Slack payload parsing (pure) and the signature scheme (Slack's published known-answer vector)."""
from __future__ import annotations

from slack_sdk.signature import SignatureVerifier

from adapters.slack.parse import clean_user_text, parse_choice, parse_event, parse_feedback, slack_to_plain
from tests.support.fake_slack import (
    BOT_ID,
    BOT_USER,
    TEAM,
    block_action,
    event_callback,
    mention,
    message,
    sign,
)


def test_signature_known_answer_vector_from_slack_docs() -> None:
    body = (
        "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V"
        "&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text="
        "&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN"
        "&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c"
    )
    expected = "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503"
    verifier = SignatureVerifier("8f742231b10e8888abcd99yyyzzz85a5")
    assert verifier.generate_signature(timestamp="1531420618", body=body) == expected
    # our test helper signs the same way the bot verifies
    assert sign(body.encode(), timestamp=1531420618)["x-slack-signature"] == expected


def test_mention_becomes_a_threaded_question_without_the_mention() -> None:
    body = event_callback(mention("how do I install  vllm-ascend?", ts="1700000001.000100"), event_id="Ev1")
    candidate = parse_event(body, BOT_USER, BOT_ID)
    assert candidate is not None and not candidate.needs_engaged_thread
    m = candidate.message
    assert (m.platform, m.workspace, m.channel, m.thread, m.sender) == ("slack", TEAM, "C0CHAN01", "1700000001.000100", "U0USER01")
    assert m.text == "how do I install  vllm-ascend?"
    assert m.event_id == "Ev1" and m.message_id == "1700000001.000100" and not m.is_direct
    assert candidate.dedupe_ids == (f"msg:{TEAM}:C0CHAN01:1700000001.000100",)


def test_mention_inside_a_thread_answers_in_that_thread() -> None:
    body = event_callback(mention("and on A3?", ts="1700000009.000100", thread_ts="1700000001.000100"))
    candidate = parse_event(body, BOT_USER)
    assert candidate is not None and candidate.message.thread == "1700000001.000100"


def test_dm_is_direct_and_needs_no_mention() -> None:
    body = event_callback(message("hello", ts="1700000002.000100", channel="D0DM0001", channel_type="im"))
    candidate = parse_event(body, BOT_USER)
    assert candidate is not None and candidate.message.is_direct and not candidate.needs_engaged_thread
    assert candidate.message.thread == "1700000002.000100"


def test_channel_messages_only_as_thread_follow_ups() -> None:
    top_level = event_callback(message("chat", ts="1700000003.000100"))
    assert parse_event(top_level, BOT_USER) is None
    in_thread = event_callback(message("more", ts="1700000004.000100", thread_ts="1700000001.000100"))
    candidate = parse_event(in_thread, BOT_USER)
    assert candidate is not None and candidate.needs_engaged_thread


def test_own_bots_edits_and_other_subtypes_are_ignored() -> None:
    own = message("my answer", ts="1.1", thread_ts="1.0", user=BOT_USER)
    other_bot = message("beep", ts="1.2", thread_ts="1.0", bot_id="B0OTHER")
    edit = message("x", ts="1.3", thread_ts="1.0", subtype="message_changed")
    joined = message("joined", ts="1.4", channel_type="im", subtype="channel_join")
    bot_post = message("hi", ts="1.5", channel_type="im", subtype="bot_message")
    edited_mention = {**mention("q", ts="1.6"), "edited": {"user": "U0USER01", "ts": "1.7"}}
    for event in (own, other_bot, edit, joined, bot_post, edited_mention):
        assert parse_event(event_callback(event), BOT_USER, BOT_ID) is None, event


def test_malformed_events_are_ignored_not_crashes() -> None:
    for body in ({}, {"event": "x"}, {"event": {"type": "message"}}, event_callback({"type": "app_mention", "user": 5}),
                 event_callback({"type": "message", "user": "U1", "channel": "D1", "ts": "not-a-ts", "channel_type": "im"})):
        assert parse_event(body, BOT_USER) is None


def test_slack_markup_in_questions_becomes_plain_text() -> None:
    assert slack_to_plain("see <https://x.org/a|the docs> and <https://y.org> &lt;tag&gt; &amp;") == (
        "see the docs (https://x.org/a) and https://y.org <tag> &"
    )
    assert slack_to_plain("cc <@U123|bob> in <#C1|general> <!here>") == "cc @bob in #general @here"
    assert clean_user_text(f"<@{BOT_USER}> why\n    indented", BOT_USER) == "why\n    indented"


def test_button_pick_resumes_in_the_question_thread() -> None:
    payload = block_action(action_id="aic_clarify_1", value="vllm-ascend", label="vllm-ascend (plugin)",
                           channel="C0CHAN01", message_ts="1800000002.000002", thread_ts="1700000001.000100")
    candidate = parse_choice(payload)
    assert candidate is not None
    m = candidate.message
    assert (m.choice, m.text, m.thread, m.channel, m.sender) == (
        "vllm-ascend", "vllm-ascend (plugin)", "1700000001.000100", "C0CHAN01", "U0USER01")
    assert m.event_id == f"pick:{TEAM}:C0CHAN01:1800000002.000002:U0USER01"


def test_button_values_are_untrusted() -> None:
    for value in ("", "x" * 65, "a b", "<!channel>"):
        payload = block_action(action_id="aic_clarify_0", value=value, label="l", channel="C1",
                               message_ts="1.2", thread_ts="1.0")
        assert parse_choice(payload) is None
    wrong_action = block_action(action_id="other", value="vllm", label="l", channel="C1", message_ts="1.2", thread_ts="1.0")
    assert parse_choice(wrong_action) is None


def test_feedback_click() -> None:
    payload = block_action(action_id="aic_feedback_down", value="trace42", label="👎", channel="C1",
                           message_ts="1.2", thread_ts="1.0")
    feedback = parse_feedback(payload)
    assert feedback is not None and (feedback.trace_id, feedback.value, feedback.user) == ("trace42", "not_helpful", "U0USER01")
    bad = block_action(action_id="aic_feedback_up", value="x y", label="👍", channel="C1", message_ts="1.2", thread_ts="1.0")
    assert parse_feedback(bad) is None
