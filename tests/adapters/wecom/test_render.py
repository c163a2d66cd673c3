"""Rendering and splitting for WeCom stream bubbles (pure, golden)."""
from __future__ import annotations

import re

import pytest

from adapters.wecom.cards import chosen_card, clarification_card, option_key_of
from adapters.wecom.render import (
    STREAM_LIMIT_BYTES,
    byte_len,
    defang,
    join_for_one_message,
    lay_out,
    render_progress,
    render_reply,
    split_utf8,
    to_wecom_markdown,
)
from core.messages import Option, Progress, Reply, ReplyKind, Source


def test_answer_with_sources_golden() -> None:
    reply = Reply(
        ReplyKind.ANSWER,
        "**结论**：在 vllm-ascend 中启用图模式。\r\n\n![arch](https://x/a.png) @all 请看",
        "zh",
        sources=(Source("vllm-ascend [docs]", "https://github.com/vllm-project/vllm-ascend/blob/main/a (1).md"),),
    )
    assert render_reply(reply) == (
        "**结论**：在 vllm-ascend 中启用图模式。\n\n[arch](https://x/a.png) @\u200ball 请看\n\n"
        "**来源**\n1. [vllm-ascend (docs)](https://github.com/vllm-project/vllm-ascend/blob/main/a%20%281%29.md)"
    )


def test_clarification_does_not_repeat_the_core_numbered_options() -> None:
    options = (Option("vllm", "vLLM (upstream)", "vllm-project/vllm"),
               Option("vllm-ascend", "vllm-ascend", "vllm-project/vllm-ascend"))
    core_text = "Which one do you mean?\n\n1. vLLM (upstream)\n2. vllm-ascend\n\nReply with a number or a name."
    assert render_reply(Reply(ReplyKind.CLARIFY, core_text, "en", options=options)) == core_text
    bare = render_reply(Reply(ReplyKind.CLARIFY, "Which one?", "en", options=options))
    assert bare == "Which one?\n\n1. vLLM (upstream)\n2. vllm-ascend\n\nReply with the number, or press a button."


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("@all look", "@\u200ball look"),
        ("ping @所有人 now", "ping @\u200b所有人 now"),
        ("@所有人请看", "@\u200b所有人请看"),  # no space after a CJK mention: still defanged
        ("@全体成员注意", "@\u200b全体成员注意"),
        ("<@all>", "<\u200b@\u200ball>"),
        ("<@zhangsan> hi", "<\u200b@zhangsan> hi"),
        ("mail me at a@allthings.com", "mail me at a@allthings.com"),
        ("ctrl\x00\x07chars\tkept\n", "ctrlchars\tkept"),
    ],
)
def test_defang_and_cleanup(raw: str, expected: str) -> None:
    assert to_wecom_markdown(raw) == expected


def test_progress_shows_latest_steps_within_budget() -> None:
    history = [Progress(f"step {i} @all") for i in range(50)]
    out = render_progress(history, "en", limit=200)
    assert out.startswith("🔎 Researching…\n\n")
    assert out.endswith("> step 49 @\u200ball")
    assert byte_len(out) <= 200 and "step 0 " not in out
    assert render_progress([], "zh") == "🔎 正在研究…"


def _fences_balanced(chunk: str) -> bool:
    return sum(1 for line in chunk.split("\n") if re.match(r"^\s{0,3}```", line)) % 2 == 0


def test_split_respects_byte_limit_fences_and_content() -> None:
    code = "\n".join(f"print('第{i}行')  # 注释" for i in range(400))
    text = "# 标题\n\n" + "段落。" * 300 + "\n\n```python\n" + code + "\n```\n\n结尾 " + "🙂" * 3000
    limit = 1000
    chunks = split_utf8(text, limit)
    assert len(chunks) > 5
    assert all(byte_len(c) <= limit for c in chunks)
    assert all(_fences_balanced(c) for c in chunks)
    # every chunk inside the code block re-opens it with its language tag
    inside = [c for c in chunks if "print('第" in c]
    assert all("```python" in c for c in inside)
    # nothing lost: strip the added fences and compare the characters
    joined = "".join(chunks).replace("```python", "").replace("```", "").replace("\n", "")
    assert joined == text.replace("```python", "").replace("```", "").replace("\n", "")


def test_split_of_short_text_is_identity_and_long_line_is_cut_at_characters() -> None:
    assert split_utf8("short", 200) == ["short"]
    chunks = split_utf8("中" * 1000, 200)  # 3 bytes each, no newlines
    assert all(byte_len(c) <= 200 for c in chunks) and "".join(chunks) == "中" * 1000


def test_lay_out_and_one_message_fallback() -> None:
    body = ("结论。" + "详细说明" * 50 + "\n") * 200  # ~ 122 KB
    layout = lay_out(body, "zh")
    assert byte_len(layout.first) <= STREAM_LIMIT_BYTES and layout.first.endswith("（未完，见下一条）")
    assert layout.rest and all(byte_len(c) <= STREAM_LIMIT_BYTES for c in layout.rest)
    one = join_for_one_message(layout.rest, "zh")
    assert byte_len(one) <= STREAM_LIMIT_BYTES and one.endswith("（回答过长，已截断）")
    short = lay_out("ok", "en")
    assert short.first == "ok" and short.rest == ()


def test_clarification_card() -> None:
    options = tuple(Option(f"k{i}", f"Option number {i} @all", f"r/{i}") for i in range(8))
    card = clarification_card("vllm 在 NPU 上怎么跑？", options, "zh", "clarify_abc")
    assert card["card_type"] == "button_interaction" and card["task_id"] == "clarify_abc"
    assert len(card["button_list"]) == 6  # WeCom's limit; the numbered text lists all of them
    assert card["button_list"][0] == {"text": "Option numb…", "style": 1, "key": "clarify:k0"}
    assert card["main_title"]["title"] == "请选择项目"
    assert option_key_of("clarify:k3") == "k3" and option_key_of("other:k3") is None
    done = chosen_card("vllm-ascend", "en", "clarify_abc")
    assert done["task_id"] == "clarify_abc" and "vllm-ascend" in done["sub_title_text"]
    assert defang("@all") != "@all"


def test_the_sources_list_is_rendered_once_from_the_replys_data() -> None:
    # Reply.text never carries the list (the core keeps body and sources apart)
    reply = Reply(ReplyKind.ANSWER, "在 vllm-ascend 中启用图模式。", "zh", sources=(Source("docs", "https://vllm-ascend.readthedocs.io/"),))
    shown = render_reply(reply)
    assert shown.count("readthedocs") == 1 and shown.index("图模式") < shown.index("来源")
