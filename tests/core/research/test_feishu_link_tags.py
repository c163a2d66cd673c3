"""Feishu link tags in model text are verified like Markdown links (issue 21, item 8).

Feishu card markdown (JSON 2.0) links with `<a href='…'>label</a>` and `<link url='…' pc_url='…'
ios_url='…' android_url='…'>label</link>` as well as `[label](url)`. Verification knew only the
Markdown form, so a tag slipped a phishing link through a verified answer, and the Feishu renderer
let it through too.
"""
from __future__ import annotations

import time

from adapters.feishu.render import to_card_markdown
from adapters.feishu.responder import card_markdown
from core.messages import InboundMessage, Reply, ReplyKind, Source
from core.research.citations import Evidence, verify_answer
from tests.support.rendered import feishu_cards

REPO = "https://github.com/vllm-project/vllm-ascend"
ISSUE = f"{REPO}/issues/1234"


def evidence() -> Evidence:
    e = Evidence([REPO])
    e.record(f"#1234 ACL error\n{ISSUE}", [Source("#1234 ACL error", ISSUE)])
    return e


def test_unverified_tag_links_keep_their_words_and_lose_the_target() -> None:
    answer = (
        "Get <a href=\"https://evil.example/fix\">the fix</a>, <A HREF=https://evil.example/b>bare</A>, "
        "<link icon='chat_outlined' url='https://evil.example/l' pc_url='' ios_url='' android_url=''>the chat</link>, "
        "<a href='javascript:alert(1)'>run</a>, a lone <a href='https://evil.example/open'> opener and [jump]($urlVal)."
    )
    result = verify_answer(answer, evidence(), "en")
    assert "evil.example" not in result.text and "javascript" not in result.text and "$urlVal" not in result.text
    assert "<a" not in result.text.lower() and "<link" not in result.text
    assert "the fix *(unverified link removed)*" in result.text and "the chat *(unverified link removed)*" in result.text
    assert "run *(unverified link removed)*" in result.text and "jump" in result.text
    assert result.removed_urls == 6 and result.sources == ()


def test_a_tag_with_one_unverified_target_among_verified_ones_is_unverified() -> None:
    answer = f"<link url='{ISSUE}' pc_url='{ISSUE}' ios_url='' android_url='https://evil.example/a'>#1234</link>"
    result = verify_answer(answer, evidence(), "en")
    assert "evil.example" not in result.text and ISSUE not in result.text and result.removed_urls == 1


def test_a_verified_tag_becomes_the_markdown_link_every_platform_renders() -> None:
    answer = f"See <a href='{ISSUE}'>issue [1234]</a> and <link url=\"{ISSUE}\" pc_url=\"\">again</link>."
    result = verify_answer(answer, evidence(), "en")
    assert result.text == f"See [issue (1234)]({ISSUE}) and [again]({ISSUE})."
    assert [s.url for s in result.sources] == [ISSUE] and result.removed_urls == 0
    # …and Feishu shows it as a link, while a raw tag (never verified) stays text.
    card = to_card_markdown(result.text + " <a href='https://evil.example'>x</a> <link url='https://evil.example'>y</link>")
    assert f"[again]({ISSUE})" in card and "<\u200ba href" in card and "<\u200blink url" in card


def test_the_feishu_cards_and_text_fallback_never_carry_a_raw_link_tag() -> None:
    text = "<a href='https://evil.example'>x</a> <LINK url='https://evil.example'>y</LINK> < a href=x>z</a>"
    message = InboundMessage(
        platform="feishu", workspace="t1", channel="oc_1", thread="om_1", sender="ou_1", text="q",
        message_id="om_1", event_id="e1", is_direct=True,
    )
    # a refused card is re-sent as text: its Markdown, so the cards' Markdown is both
    for out in [card_markdown(c) for c in feishu_cards(Reply(ReplyKind.ANSWER, text, "en"), message)]:
        lowered = out.lower()
        assert "<a " not in lowered and "<link" not in lowered and "< a " not in lowered, out


def test_tag_patterns_are_linear_on_hostile_text() -> None:
    for hostile in ["<a " * 30_000, "<a href='" + "x" * 90_000, "<link url=" * 10_000, "<a>" + "y" * 90_000 + "</a"]:
        started = time.process_time()
        verify_answer(hostile, evidence(), "en")
        assert time.process_time() - started < 3.0
