"""Markdown → Feishu card rendering (golden) and splitting under the 30 KB body limit."""
import json
import re

from adapters.feishu.parse import parse_message_event
from adapters.feishu.render import CARD_BODY_LIMIT, defang, to_card_markdown
from adapters.feishu.responder import card_markdown
from adapters.feishu.split import double_json_cost, split_markdown
from core.messages import Option, Reply, ReplyKind, Source
from tests.support.fake_feishu import message_event
from tests.support.rendered import feishu_cards  # the cards the responder posts

QUESTION = parse_message_event(message_event("q", message_id="om_q"), "ou_bot")

GOLDEN_IN = """# 结论
In **vllm-ascend**, set `max_model_len`:

- step one
  - nested detail
- see [docs](https://docs.vllm.ai/en/latest/) or [local](file:///etc/passwd)
![diagram](https://example.com/d.png)

```python
llm = LLM(model="Qwen", max_model_len=8192)  # <at id=all></at>
```
<at user_id="all">everyone</at>"""

GOLDEN_OUT = """# 结论
In **vllm-ascend**, set `max_model_len`:

- step one
    - nested detail
- see [docs](https://docs.vllm.ai/en/latest/) or local
[diagram](https://example.com/d.png)

```python
llm = LLM(model="Qwen", max_model_len=8192)  # <\u200bat id=all><\u200b/at>
```
<\u200bat user_id="all">everyone<\u200b/at>"""


def test_golden_card_markdown():
    assert to_card_markdown(GOLDEN_IN) == GOLDEN_OUT


def test_defang_breaks_every_at_tag_spelling():
    for raw in ['<at id=all></at>', '<AT user_id="all">x</AT>', '< at id=all>', "<at id='ou_1'>"]:
        out = defang(raw)
        assert not re.search(r"<\s*at\b", out, re.IGNORECASE), out
    assert defang("<attention> a<b") == "<attention> a<b"


def sent_body(card: dict) -> bytes:
    """The exact reply request body the client sends for this card (compact JSON, uuid, thread flag)."""
    body = {"msg_type": "interactive", "content": json.dumps(card, ensure_ascii=False, separators=(",", ":")),
            "uuid": "0" * 36, "reply_in_thread": True}
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()


def answer(text: str, **kw) -> Reply:
    return Reply(ReplyKind.ANSWER, text, kw.pop("language", "en"), **kw)


def test_short_answer_is_one_card_with_sources_and_update_multi():
    cards = feishu_cards(answer("Use `--enforce-eager`.", sources=(Source("vllm-ascend#123", "https://github.com/vllm-project/vllm-ascend/issues/123"), Source("bad", "javascript:x"))), QUESTION)
    assert len(cards) == 1
    card = cards[0]
    assert card["schema"] == "2.0" and card["config"]["update_multi"] is True
    md = card["body"]["elements"][0]["content"]
    assert md == "Use `--enforce-eager`.\n\n**Sources**\n- [vllm-ascend#123](https://github.com/vllm-project/vllm-ascend/issues/123)"
    assert card["config"]["summary"]["content"] == "Use --enforce-eager."


def fences_balanced(md: str) -> bool:
    return sum(1 for line in md.split("\n") if line.lstrip().startswith("```")) % 2 == 0


def test_60kb_answer_splits_into_cards_under_30kb_without_breaking_code():
    paragraph = "The HCCL timeout on Atlas 800I A2 comes from ... " * 8
    code = "```bash\n" + "\n".join(f"export ASCEND_VAR_{i}=value_{i}  # \"quoted\" \\ backslash" for i in range(400)) + "\n```"
    text = "\n\n".join([paragraph] * 60 + [code] + [paragraph] * 40)
    assert len(text.encode()) > 60_000
    cards = feishu_cards(answer(text, sources=(Source("s", "https://a.b/c"),)), QUESTION)
    assert len(cards) >= 3
    for i, card in enumerate(cards, 1):
        assert len(sent_body(card)) <= CARD_BODY_LIMIT
        md = card["body"]["elements"][0]["content"]
        assert fences_balanced(md)
        assert md.endswith(f"(part {i}/{len(cards)})")
    joined = "\n".join(c["body"]["elements"][0]["content"] for c in cards)
    for i in range(400):  # nothing lost at the cuts
        assert f"export ASCEND_VAR_{i}=value_{i}" in joined
    assert "**Sources**" in cards[-1]["body"]["elements"][0]["content"]


def test_chinese_answer_is_measured_in_bytes():
    text = "昇腾推理问题的回答。" * 6000  # 60,000 chars, 180 KB of UTF-8, one line
    cards = feishu_cards(answer(text, language="zh"), QUESTION)
    assert all(len(sent_body(c)) <= CARD_BODY_LIMIT for c in cards)
    joined = "".join(re.sub(r"\n\n（第 \d+/\d+ 部分）$", "", c["body"]["elements"][0]["content"]) for c in cards)
    assert joined == text


def test_split_keeps_paragraphs_and_reopens_fences():
    text = "para one\n\n```python\n" + "\n".join(f"x_{i} = {i}" for i in range(50)) + "\n```\n\nend"
    chunks = split_markdown(text, 200, len)
    assert len(chunks) > 2
    assert all(len(c) <= 200 for c in chunks)
    assert all(fences_balanced(c) for c in chunks)
    assert all(c.startswith("```python") for c in chunks[1:-1])
    body = "\n".join(chunks)
    assert all(f"x_{i} = {i}" in body for i in range(50))


def test_double_json_cost_is_exact():
    for sample in ['a"b\\c\nd', "中文\t", "plain"]:
        once = json.dumps(sample, ensure_ascii=False)
        assert double_json_cost(sample) == len(json.dumps(once, ensure_ascii=False).encode()) - 6  # both quote pairs


def test_clarification_card_has_buttons_and_a_typed_fallback():
    reply = Reply(
        ReplyKind.CLARIFY, "Which MindIE?", "en",
        options=(Option("mindie-llm", "MindIE-LLM", "Ascend/MindIE-LLM"), Option("mindie-sd", "MindIE-SD", "Ascend/MindIE-SD")),
    )
    [card] = feishu_cards(reply, QUESTION)
    elements = card["body"]["elements"]
    assert "1. MindIE-LLM\n2. MindIE-SD" in elements[0]["content"]
    buttons = [e for e in elements if e["tag"] == "button"]
    assert [b["text"]["content"] for b in buttons] == ["MindIE-LLM", "MindIE-SD"]
    value = buttons[1]["behaviors"][0]["value"]
    assert value["key"] == "mindie-sd" and value["thread"] == QUESTION.thread and value["reply_to"] == "om_q"


def test_text_fallback_keeps_everything_and_defangs():
    reply = Reply(ReplyKind.ANSWER, "hi <at user_id=\"all\"></at>", "en", sources=(Source("t", "https://x.y"),))
    [chunk] = [card_markdown(c) for c in feishu_cards(reply, QUESTION)]  # a refused card is re-sent as its text
    assert "<at" not in chunk and "https://x.y" in chunk


def test_split_properties_on_random_markdown():
    import random

    rng = random.Random(7)
    for _ in range(200):
        lines: list[str] = []
        for _ in range(rng.randint(1, 60)):
            r = rng.random()
            if r < 0.1:
                lines += ["```py", *("c" * rng.randint(0, 300) for _ in range(rng.randint(0, 5))), "```"]
            elif r < 0.25:
                lines.append("")
            else:
                lines.append("w " * rng.randint(0, 200))
        text = "\n".join(lines)
        for budget in (60, 400, 3000):
            chunks = split_markdown(text, budget, len)
            assert all(len(c) <= budget for c in chunks)
            assert all(fences_balanced(c) for c in chunks)
            # nothing but whitespace-only chunks and the added fence lines may differ
            strip = lambda s: "".join(s.replace("```py", "").replace("```", "").split())  # noqa: E731
            assert strip("".join(chunks)) == strip(text)


def test_options_are_not_listed_twice_when_the_core_already_numbered_them():
    options = (Option("a", "vLLM", "vllm-project/vllm"), Option("b", "vllm-ascend", "vllm-project/vllm-ascend"))
    reply = Reply(ReplyKind.CLARIFY, "Which one?\n\n1. vLLM\n2. vllm-ascend\n\nReply with a number.", "en", options=options)
    [card] = feishu_cards(reply, QUESTION)
    md = card["body"]["elements"][0]["content"]
    assert md.count("1. vLLM") == 1 and "Pick one" not in md
    assert len([e for e in card["body"]["elements"] if e["tag"] == "button"]) == 2


def test_the_sources_list_is_rendered_once_from_the_replys_data():
    # Reply.text never carries the list (the core keeps body and sources apart)
    reply = Reply(ReplyKind.ANSWER, "Set `max_model_len`.", "en", sources=(Source("vllm-ascend docs", "https://vllm-ascend.readthedocs.io/"),))
    [card] = feishu_cards(reply, QUESTION)
    shown = card["body"]["elements"][0]["content"]
    assert shown.count("Sources") == 1 and shown.count("readthedocs") == 1
