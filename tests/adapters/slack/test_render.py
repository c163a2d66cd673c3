"""Golden tests for the pure Slack renderers: Markdown → mrkdwn, defanging, splitting, blocks (the posted
messages as the responder lays them out)."""
from __future__ import annotations

import re

import pytest

from adapters.slack.blocks import (
    SECTION_LIMIT,
    STREAM_LIMIT,
    reply_markdown,
    stream_pieces,
)
from adapters.slack.render import WORD_JOINER, defang_markdown, plain, to_mrkdwn
from core.messages import Option, Reply, ReplyKind, Source
from tests.support.rendered import slack_messages  # the messages the responder posts

WJ = WORD_JOINER

GOLDEN = [
    ("**bold** and *italic* and ~~gone~~", "*bold* and _italic_ and ~gone~"),
    ("# Install vllm-ascend", "*Install vllm-ascend*"),
    ("## Step **two** ##", "*Step two*"),
    ("a < b && c > d", "a &lt; b &amp;&amp; c &gt; d"),
    ("see [the docs](https://docs.vllm.ai/en/latest/?a=1&b=2)", "see <https://docs.vllm.ai/en/latest/?a=1&amp;b=2|the docs>"),
    ("<https://github.com/vllm-project/vllm-ascend>", "<https://github.com/vllm-project/vllm-ascend>"),
    ("![diagram](https://example.org/d.png)", "<https://example.org/d.png|diagram>"),
    ("[click](javascript:alert)", "click"),  # issue 16: no non-http targets, the label stays
    ("- one\n- two\n  - nested", "• one\n• two\n    • nested"),
    ("- [x] done\n- [ ] todo", "• ☑ done\n• ☐ todo"),
    ("1. first\n2) second", "1. first\n2. second"),
    ("> quoted **text**", "> quoted *text*"),
    ("---", "──────────"),
    ("`a < b` stays code, `**not bold**`", "`a &lt; b` stays code, `**not bold**`"),
    ("```python\nif a < b:\n    print('**x**')\n```", "```\nif a &lt; b:\n    print('**x**')\n```"),
    ("~~~\ntilde fence\n~~~", "```\ntilde fence\n```"),
    ("```\nunclosed block", "```\nunclosed block\n```"),
    ("| a | b |\n|---|---|\n| 1 | 22 |", "```\na  b\n1  22\n```"),
    ("2 * 3 * 4 = 24", "2 * 3 * 4 = 24"),
    ("snake_case_name and __init__", "snake_case_name and __init__"),
]


@pytest.mark.parametrize(("markdown", "expected"), GOLDEN)
def test_markdown_to_mrkdwn_golden(markdown: str, expected: str) -> None:
    assert to_mrkdwn(markdown) == expected


@pytest.mark.parametrize(
    ("markdown", "expected"),
    [
        ("ping <!channel> now", f"ping @{WJ}channel now"),
        ("<!here|here> and <!everyone>", f"@{WJ}here and @{WJ}everyone"),
        ("ask <@U024BE7LH> or <@W123|bob>", f"ask @{WJ}U024BE7LH or @{WJ}bob"),
        ("team <!subteam^SAZ94GDB8|@oncall>", f"team @{WJ}oncall"),
        ("typed @here and @channel and @everyone", f"typed @{WJ}here and @{WJ}channel and @{WJ}everyone"),
        ("in <#C123|general>", "in #general"),
        ("mail me@here.com stays", "mail me@here.com stays"),
    ],
)
def test_mentions_from_model_output_are_defanged(markdown: str, expected: str) -> None:
    out = to_mrkdwn(markdown)
    assert out == expected
    assert not re.search(r"<[!@]", out)


def test_defanged_inside_code_is_shown_literally_not_parsed() -> None:
    out = to_mrkdwn("```\nnotify(<!channel>)\n```")
    assert out == "```\nnotify(&lt;!channel&gt;)\n```"


def test_link_labels_cannot_smuggle_mentions() -> None:
    out = to_mrkdwn("[<!channel> urgent](https://example.org)")
    assert "<!channel>" not in out and f"@{WJ}channel" in out
    assert out.startswith("<https://example.org|")


def test_private_use_placeholders_in_input_cannot_forge_tokens() -> None:
    assert to_mrkdwn("x \ue0000\ue001 `code`") == "x 0 `code`"


def test_defang_markdown_for_streaming() -> None:
    md = "**Note** <!here> see [docs](https://x.org) and `<@U1>`\n```\n<!channel>\n```"
    out = defang_markdown(md)
    assert out == f"**Note** @{WJ}here see [docs](https://x.org) and `@{WJ}U1`\n```\n@{WJ}channel\n```"


def test_plain_status_line() -> None:
    assert plain("**Researching** `vllm-ascend`… <!here>", 200) == f"Researching vllm-ascend… @{WJ}here"
    assert len(plain("x" * 500, 50)) == 50


def _fences_balanced(text: str) -> bool:
    return sum(1 for line in text.split("\n") if line.strip().startswith("```")) % 2 == 0


def test_long_answer_is_split_within_limits_with_code_fences_intact() -> None:
    code = "\n".join(f"    x_{i} = compute({i})  # step {i}" for i in range(400))
    body = ("Intro paragraph. " * 40 + "\n\n") * 6 + f"```python\n{code}\n```\n\n" + ("Closing words. " * 50 + "\n\n") * 6
    assert len(body) > 20_000
    reply = Reply(ReplyKind.ANSWER, body, "en", trace_id="trace-1")
    messages = slack_messages(reply)
    assert len(messages) > 1
    sections = [b["text"]["text"] for m in messages for b in m.blocks if b["type"] == "section"]
    assert all(len(s) <= SECTION_LIMIT for s in sections)
    assert all(len(m.blocks) <= 50 for m in messages)
    assert all(sum(len(b["text"]["text"]) for b in m.blocks if b["type"] == "section") <= 12_000 for m in messages)
    assert all(_fences_balanced(s) for s in sections)
    # every code line arrives once, in order, inside a code block
    joined = "\n".join(sections)
    lines = [ln for ln in joined.split("\n") if ln.startswith("    x_")]
    assert lines == [f"    x_{i} = compute({i})  # step {i}" for i in range(400)]
    # feedback buttons only under the last message
    assert [any(b["type"] == "actions" for b in m.blocks) for m in messages] == [False] * (len(messages) - 1) + [True]


def test_answer_blocks_with_sources_and_feedback() -> None:
    reply = Reply(
        ReplyKind.ANSWER, "Use **vllm-ascend 0.9.1**.", "en",
        sources=(Source("vllm-ascend install", "https://vllm-ascend.readthedocs.io/en/latest/installation.html"),),
        trace_id="abc123",
    )
    [message] = slack_messages(reply)
    assert message.blocks[0] == {
        "type": "section",
        "text": {
            "type": "mrkdwn",
            "text": "Use *vllm-ascend 0.9.1*.\n\n*Sources*\n"
            "• <https://vllm-ascend.readthedocs.io/en/latest/installation.html|vllm-ascend install>",
        },
    }
    actions = message.blocks[1]
    assert [(e["action_id"], e["value"]) for e in actions["elements"]] == [
        ("aic_feedback_up", "abc123"), ("aic_feedback_down", "abc123"),
    ]
    assert message.text.startswith("Use *vllm-ascend 0.9.1*.")


def test_clarification_has_one_button_per_option_and_no_feedback() -> None:
    options = (Option("vllm", "vLLM (upstream)", "vllm-project/vllm"),
               Option("vllm-ascend", "vllm-ascend (Ascend plugin)", "vllm-project/vllm-ascend"))
    reply = Reply(ReplyKind.CLARIFY, "Which one?\n\n1. vLLM (upstream)\n2. vllm-ascend (Ascend plugin)", "en",
                  options=options, trace_id="t")
    [message] = slack_messages(reply)
    buttons = [e for b in message.blocks if b["type"] == "actions" for e in b["elements"]]
    assert [(b["value"], b["text"]["text"]) for b in buttons] == [
        ("vllm", "vLLM (upstream)"), ("vllm-ascend", "vllm-ascend (Ascend plugin)"),
    ]
    assert all(b["action_id"].startswith("aic_clarify_") for b in buttons)
    assert "1. vLLM (upstream)" in message.blocks[0]["text"]["text"]


def test_stream_markdown_keeps_markdown_and_lists_sources() -> None:
    reply = Reply(ReplyKind.ANSWER, "**Yes** <!channel>", "zh", sources=(Source("a [b]", "https://x.org/1"),))
    assert reply_markdown(reply) == f"**Yes** @{WJ}channel\n\n**来源**\n- [a b](https://x.org/1)"
    assert len(reply_markdown(reply)) < STREAM_LIMIT


def test_stream_pieces_cut_at_line_ends() -> None:
    text = "".join(f"line {i}\n" for i in range(300))
    pieces = stream_pieces(text, 100)
    assert "".join(pieces) == text
    assert all(p.endswith("\n") for p in pieces)
    assert all(len(p) <= 100 for p in pieces)


def test_the_sources_list_is_rendered_once_from_the_replys_data() -> None:
    # Reply.text never carries the list (the core keeps body and sources apart)
    reply = Reply(ReplyKind.ANSWER, "Pin vllm 0.9.1.", "en", sources=(Source("vllm-ascend matrix", "https://docs.example.org/matrix"),))
    [message] = slack_messages(reply)
    shown = message.blocks[0]["text"]["text"]
    assert shown.count("https://docs.example.org/matrix") == 1 and shown.index("Pin vllm") < shown.index("Sources")
    assert reply_markdown(reply).count("https://docs.example.org/matrix") == 1