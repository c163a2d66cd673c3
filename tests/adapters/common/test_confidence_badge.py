"""The confidence line on every platform: under the answer, above the sources, once, in each platform's markup."""
from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from adapters.common.confidence import answer_body
from adapters.feishu.responder import card_markdown
from adapters.slack.blocks import reply_markdown as slack_markdown, reply_mrkdwn
from adapters.telegram.render import render_blocks, reply_markdown as telegram_markdown
from adapters.terminal.render import render_json, render_text
from adapters.wecom.render import render_reply
from core.confidence import Confidence, NextStep
from core.messages import InboundMessage, Reply, ReplyKind, Source
from tests.support.rendered import feishu_cards, slack_messages  # what the responders send

TRACKER = "https://github.com/vllm-project/vllm-ascend/issues"
LOW = Confidence("low", "nothing", (NextStep("version"), NextStep("upstream", "vllm-ascend", TRACKER)))
HIGH = Confidence("high", "resolution")
FAQ = Source("vllm-ascend FAQ", "https://github.com/vllm-project/vllm-ascend/blob/main/docs/source/faqs.md")
FEISHU_MESSAGE = InboundMessage("feishu", "tenant", "chat", "root", "ou_1", "q", "om_1", "ev_1", False)


def answer(confidence: Confidence | None, language: str = "en") -> Reply:
    return Reply(ReplyKind.ANSWER, "Upgrade to v0.11.0rc1.", language, repos=("vllm-project/vllm-ascend",),  # type: ignore[arg-type]
                 sources=(FAQ,), trace_id="t1", confidence=confidence)


def feishu_card_text(reply: Reply) -> str:
    return "\n".join(e["content"] for card in feishu_cards(reply, FEISHU_MESSAGE) for e in card["body"]["elements"] if e.get("tag") == "markdown")


def slack_blocks_text(reply: Reply) -> str:
    return "\n".join(b["text"]["text"] for m in slack_messages(reply) for b in m.blocks if b["type"] == "section")


# (platform, renderer, how the badge reads there, how the tracker link reads there)
RENDERERS: list[tuple[str, Callable[[Reply], str], str, str]] = [
    ("terminal", render_text, "🔴 **Confidence: low**", f"[vllm-ascend]({TRACKER})"),
    ("slack mrkdwn", reply_mrkdwn, "🔴 *Confidence: low*", f"<{TRACKER}|vllm-ascend>"),
    ("slack blocks", slack_blocks_text, "🔴 *Confidence: low*", f"<{TRACKER}|vllm-ascend>"),
    ("slack stream", slack_markdown, "🔴 **Confidence: low**", f"[vllm-ascend]({TRACKER})"),
    ("telegram", lambda r: "\n".join(render_blocks(telegram_markdown(r))), "🔴 <b>Confidence: low</b>", f'<a href="{TRACKER}">vllm-ascend</a>'),
    ("feishu card", feishu_card_text, "🔴 **Confidence: low**", f"[vllm-ascend]({TRACKER})"),
    ("feishu text", lambda r: "\n".join(card_markdown(c) for c in feishu_cards(r, FEISHU_MESSAGE)), "🔴 **Confidence: low**", f"[vllm-ascend]({TRACKER})"),
    ("wecom", render_reply, "🔴 **Confidence: low**", f"[vllm-ascend]({TRACKER})"),
]


@pytest.mark.parametrize(("platform", "render", "badge", "link"), RENDERERS, ids=[r[0] for r in RENDERERS])
def test_every_platform_shows_the_line_under_the_answer_and_above_the_sources(platform, render, badge, link) -> None:
    shown = render(answer(LOW))
    assert shown.count(badge) == 1, platform
    assert shown.index("Upgrade to v0.11.0rc1.") < shown.index(badge) < shown.index("FAQ"), platform
    assert link in shown, platform  # a low answer's way upstream is a working link
    assert "Confidence" not in render(answer(None)), platform  # a reply without a level shows none


@pytest.mark.parametrize(("platform", "render", "badge", "link"), RENDERERS, ids=[r[0] for r in RENDERERS])
def test_every_platform_shows_it_in_chinese_for_a_chinese_answer(platform, render, badge, link) -> None:
    shown = render(answer(HIGH, "zh"))
    assert "置信度：高" in shown and "维护者的修复与你的报错行匹配" in shown, platform
    assert "Confidence" not in shown, platform


def test_one_shared_body_feeds_them_all() -> None:
    body = answer_body(answer(HIGH))
    assert body == "Upgrade to v0.11.0rc1.\n\n🟢 **Confidence: high** — a maintainer's fix matched on your error line."
    assert answer_body(Reply(ReplyKind.NOTICE, "Done.", "en")) == "Done."


def test_ask_json_carries_the_level_and_null_for_other_replies() -> None:
    assert render_json(answer(LOW))["confidence"] == "low"
    assert render_json(Reply(ReplyKind.CLARIFY, "Which one?", "en"))["confidence"] is None
    assert json.loads(json.dumps(render_json(answer(HIGH))))["confidence"] == "high"
