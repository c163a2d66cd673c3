"""Markdown → Telegram HTML (golden tests) and splitting at 4,096 characters."""
from __future__ import annotations

import re

import pytest

from adapters.telegram.render import inline, render_blocks, reply_markdown
from adapters.telegram.split import html_to_plain, split_html, split_oversized, split_plain, tg_len, visible_len
from core.messages import Reply, ReplyKind, Source
from tests.support.fake_telegram import EntityError, parse_html


def render(md: str) -> str:
    return "\n".join(render_blocks(md))


@pytest.mark.parametrize(
    ("markdown", "expected"),
    [
        ("plain text", "plain text"),
        ("a < b && c > d", "a &lt; b &amp;&amp; c &gt; d"),
        ("**bold** and __bold__", "<b>bold</b> and <b>bold</b>"),
        ("*it* and _it_", "<i>it</i> and <i>it</i>"),
        ("snake_case_name and 2*3*4", "snake_case_name and 2*3*4"),
        ("~~gone~~", "<s>gone</s>"),
        ("use `a<b>` here", "use <code>a&lt;b&gt;</code> here"),
        ("``code with ` tick``", "<code>code with ` tick</code>"),
        ("[vLLM](https://github.com/vllm-project/vllm)", '<a href="https://github.com/vllm-project/vllm">vLLM</a>'),
        ('[q](https://x.org/?a=1&b="2")', '<a href="https://x.org/?a=1&amp;b=&quot;2&quot;">q</a>'),
        ("[rel](docs/a.md)", "rel"),  # issue 16: only http(s) targets become links
        ("[js](javascript:alert(1))", "js"),
        ("<https://e.org/x>", '<a href="https://e.org/x">https://e.org/x</a>'),
        ("**bold [link](https://a.b) `c`**", '<b>bold <a href="https://a.b">link</a> <code>c</code></b>'),
        ("<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"),
        ("ping @channel and @all", "ping @\u2060channel and @\u2060all"),
        ("mail me at a@b.org", "mail me at a@b.org"),
        ("`@all` in code", "<code>@all</code> in code"),
        ("**unclosed bold", "**unclosed bold"),
    ],
)
def test_inline_golden(markdown: str, expected: str) -> None:
    assert inline(markdown) == expected


def test_block_golden() -> None:
    markdown = """## Conclusion
vllm-ascend **0.9.1** needs vLLM 0.9.1.

- first point
  - nested point
* star bullet
1. step one
2) step two

> quoted *text*
> second line

```bash
pip install vllm==0.9.1 && echo "<ok>"
```

| chip | ok |
|---|---|
| 910B | yes |

---
Done."""
    assert render(markdown) == (
        "<b>Conclusion</b>\n"
        "vllm-ascend <b>0.9.1</b> needs vLLM 0.9.1.\n"
        "\n"
        "• first point\n"
        "  • nested point\n"
        "• star bullet\n"
        "1. step one\n"
        "2. step two\n"
        "\n"
        "<blockquote>quoted <i>text</i>\nsecond line</blockquote>\n"
        "\n"
        '<pre><code class="language-bash">pip install vllm==0.9.1 &amp;&amp; echo "&lt;ok&gt;"</code></pre>\n'
        "\n"
        "<pre>| chip | ok |\n|---|---|\n| 910B | yes |</pre>\n"
        "\n"
        "──────────\n"
        "Done."
    )


def test_unclosed_fence_runs_to_the_end_and_blank_runs_collapse() -> None:
    assert render("text\n\n\n\n```\nx = 1\ny < 2") == "text\n\n<pre>x = 1\ny &lt; 2</pre>"


def test_every_rendered_block_is_valid_telegram_html() -> None:
    nasty = "**a *b* `c` [d](https://e.f) <g> & h**\n```\n</pre><b>\n```\n> *q* <x>\n# head & <tail>"
    for unit in render_blocks(nasty):
        parse_html(unit)  # raises EntityError if Telegram would refuse it


def test_sources_are_appended_as_links() -> None:
    reply = Reply(ReplyKind.ANSWER, "Answer.", "en", sources=(Source("vllm docs [v1]", "https://docs.vllm.ai"),))
    assert render(reply_markdown(reply)) == 'Answer.\n\n<b>Sources</b>\n1. <a href="https://docs.vllm.ai">vllm docs (v1)</a>'
    zh = Reply(ReplyKind.ANSWER, "回答。", "zh", sources=(Source("a", "https://a.b"),))
    assert "<b>来源</b>" in render(reply_markdown(zh))


# --- splitting ------------------------------------------------------------------------------------


def _assert_valid_chunks(chunks: list[str], limit: int) -> None:
    for chunk in chunks:
        assert tg_len(parse_html(chunk)) <= limit  # Telegram counts the text after entity parsing
        assert chunk.strip()


def test_short_text_is_one_chunk() -> None:
    assert split_html(["a", "", "b"]) == ["a\n\nb"]


def test_units_pack_greedily_at_line_boundaries() -> None:
    units = [f"line {n:03d}" for n in range(30)]  # 8 characters each
    chunks = split_html(units, limit=40)
    _assert_valid_chunks(chunks, 40)
    assert all(len(c.split("\n")) == 4 for c in chunks[:-1])
    assert "\n".join(chunks).split("\n") == units


def test_long_code_block_is_closed_and_reopened_at_line_boundaries() -> None:
    code = "\n".join(f"x{n} = call({n}) & more" for n in range(200))
    [unit] = render_blocks(f"```python\n{code}\n```")
    chunks = split_oversized(unit, limit=500)
    _assert_valid_chunks(chunks, 500)
    assert len(chunks) > 5
    for chunk in chunks:
        assert chunk.startswith('<pre><code class="language-python">') and chunk.endswith("</code></pre>")
        body = parse_html(chunk)
        assert all(re.fullmatch(r"x\d+ = call\(\d+\) & more", line) for line in body.strip("\n").split("\n"))
    assert "".join(parse_html(c) for c in chunks).strip("\n") == code


def test_long_bold_paragraph_splits_between_words_with_tags_reopened() -> None:
    words = " ".join(f"w{n}" for n in range(400))
    [unit] = render_blocks(f"**{words}** tail")
    chunks = split_oversized(unit, limit=300)
    _assert_valid_chunks(chunks, 300)
    assert all(c.startswith("<b>") for c in chunks[:-1])
    joined = " ".join(parse_html(c).strip() for c in chunks)
    assert joined.split() == (words + " tail").split()


def test_a_single_huge_word_is_cut_but_never_inside_an_entity() -> None:
    unit = "<code>" + "&amp;" * 300 + "</code>"
    chunks = split_oversized(unit, limit=100)
    _assert_valid_chunks(chunks, 100)
    assert "".join(parse_html(c) for c in chunks) == "&" * 300


def test_no_empty_tag_pairs_left_at_a_cut() -> None:
    unit = "a" * 90 + "<b>" + "b" * 50 + "</b>"
    chunks = split_oversized(unit, limit=100)
    _assert_valid_chunks(chunks, 100)
    assert "<b></b>" not in "".join(chunks)


def test_markup_does_not_count_against_the_limit() -> None:
    links = [f"{n}. [source {n}](https://github.com/vllm-project/vllm-ascend/blob/main/docs/{'x' * 80}/{n}.md)" for n in range(40)]
    units = render_blocks("\n".join(links))
    assert sum(len(u) for u in units) > 4096 > sum(len(parse_html(u)) + 1 for u in units)
    assert len(split_html(units)) == 1
    assert visible_len("<b>a&amp;b</b>") == 3


def test_utf16_length_counts_emoji_twice() -> None:
    assert tg_len("😀") == 2 and tg_len("中文") == 2
    chunks = split_html(["😀" * 3000])
    _assert_valid_chunks(chunks, 4096)
    assert len(chunks) == 2


def test_ten_thousand_character_answer_with_code_blocks() -> None:
    parts = []
    for n in range(12):
        parts.append(f"### Step {n}\nRun **this** with `flag-{n}` & check <output>.")
        parts.append("```python\n" + "\n".join(f"print({n}, {i}, 'a < b')" for i in range(40)) + "\n```")
    markdown = "\n\n".join(parts)
    assert len(markdown) > 10_000
    chunks = split_html(render_blocks(markdown))
    _assert_valid_chunks(chunks, 4096)
    assert len(chunks) >= 3
    visible = "".join(parse_html(c) for c in chunks)
    for n in range(12):
        assert f"Step {n}" in visible and f"print({n}, 39, 'a < b')" in visible
    for chunk in chunks:  # every code block in every chunk is complete
        assert chunk.count("<pre>") == chunk.count("</pre>")


def test_plain_fallback_text() -> None:
    chunk = '<b>Use</b> <a href="https://a.b/?x=1&amp;y=2">the docs</a> &amp; <code>a&lt;b</code> <a href="https://c.d">https://c.d</a>'
    assert html_to_plain(chunk) == "Use the docs (https://a.b/?x=1&y=2) & a<b https://c.d"


def test_split_plain() -> None:
    text = "\n".join("word " * 30 for _ in range(10))
    chunks = split_plain(text, limit=200)
    assert all(tg_len(c) <= 200 for c in chunks)
    assert " ".join(chunks).split() == text.split()


def test_fake_api_html_checker_is_strict() -> None:
    for bad in ("<b>x", "a < b", "<div>x</div>", "<b><i>x</b></i>", "x & y"):
        with pytest.raises(EntityError):
            parse_html(bad)
    assert parse_html('<a href="u">x</a> &lt;&amp;') == "x <&"


def test_the_sources_list_is_rendered_once_from_the_replys_data() -> None:
    # Reply.text never carries the list (the core keeps body and sources apart)
    reply = Reply(ReplyKind.ANSWER, "Pin vllm 0.9.1.", "en", sources=(Source("vllm-ascend matrix", "https://docs.example.org/matrix"),))
    shown = html_to_plain(render(reply_markdown(reply)))
    assert shown.count("vllm-ascend matrix") == 1 and shown.index("Pin vllm") < shown.index("Sources")