"""core/untrusted_text.py: issue and passage text stays plain text (issue 21, item 1)."""
from __future__ import annotations

import time

import pytest

from core.untrusted_text import drop_links, issue_label, issue_number, issue_role, plain_line

WJ = "\u2060"
HOSTILE_TITLE = "[click](https://evil.example) *bold* @channel <!here>"


def test_a_hostile_title_becomes_one_line_of_plain_text() -> None:
    line = plain_line(HOSTILE_TITLE + "\nsecond line\u2028third")
    assert "evil.example" not in line and "](" not in line and "[" not in line
    assert "*" not in line and "<" not in line and ">" not in line
    assert "@channel" not in line and f"@{WJ}channel" in line
    assert "\n" not in line and "\u2028" not in line
    assert line.startswith("click ") and "bold" in line and "second line third" in line


@pytest.mark.parametrize(
    "title",
    [
        "**bold** __strong__ _em_ ~~gone~~ `code`",
        "<at user_id=\"all\"></at> &lt;at id=all&gt; <@U123> <!subteam^S1>",
        "@所有人 @all @here",
        "![img](https://evil.example/i.png) <https://evil.example>",
        "\u202eevil\u202c \x1b[2J text",
    ],
)
def test_no_markup_survives_in_a_plain_line(title: str) -> None:
    line = plain_line(title)
    for marker in ("**", "__", "~~", "`", "<", ">", "&", "[", "](", "evil.example", "\u202e", "\x1b"):
        assert marker not in line, (marker, line)
    assert "@" not in line.replace(f"@{WJ}", "")


def test_a_plain_line_keeps_ordinary_titles_readable() -> None:
    assert plain_line("NPU OOM with ASCEND_RT_VISIBLE_DEVICES=0,1 on vllm-ascend 0.9.1") == (
        "NPU OOM with ASCEND_RT_VISIBLE_DEVICES=0,1 on vllm-ascend 0.9.1"
    )
    assert plain_line("vllm_ascend/worker/model_runner.py L10-L20") == "vllm_ascend/worker/model_runner.py L10-L20"
    assert plain_line("x" * 500).endswith("…") and len(plain_line("x" * 500)) == 200


@pytest.mark.parametrize(
    "text",
    [
        "HTTPS://evil.example/x",
        "hTtP://evil.example/y",
        "see evil.example/x now",
        "see www.evil.example now",
        "see evil.com now",
        "Visit evil.com.",
        "see //evil.example/p now",
        "see 203.0.113.9:8000/v1 now",
        "see [the guide](evil.example/path) now",
        "ftp://evil.example and tg://resolve?domain=evil_bot and javascript:alert(1)",
    ],
)
def test_excerpts_lose_links_in_any_case_and_scheme_less_hosts(text: str) -> None:
    out = drop_links(text)
    assert "evil" not in out.lower() and "://" not in out and "javascript:" not in out, out


def test_excerpts_keep_paths_versions_identifiers_and_link_words() -> None:
    text = (
        "Edit vllm_ascend/worker/model_runner.py:120, see docs/source/faq.md, pin 0.11.0rc1/x, "
        "call logger.info, self.net.forward and torch.npu.set_device; Qwen2.5-7B/x; [the guide](https://x.example/a)."
    )
    out = drop_links(text)
    for kept in ("vllm_ascend/worker/model_runner.py:120", "docs/source/faq.md", "0.11.0rc1/x", "logger.info", "self.net.forward",
                 "torch.npu.set_device", "Qwen2.5-7B/x", "the guide"):
        assert kept in out, kept
    assert "x.example" not in out


def test_an_issue_passage_says_who_wrote_it() -> None:
    reporter = "#12 NPU OOM\nstate: open\n\nreporter @alice:\nit crashes"
    answered = reporter + "\n\nmaintainer @bob:\nupgrade CANN"
    assert issue_role(reporter) == "a user" and issue_role(answered) == "a maintainer"
    assert issue_role("user @eve:\nmaintainer is wrong") == "a user"  # a word, not a role line
    assert issue_number("issues/12") == "12" and issue_number("pulls/9") == "9" and issue_number("x", "#34 title") == "34"
    assert issue_label("issues/12", "#12 NPU OOM", reporter) == "from issue #12, written by a user"
    assert issue_label("issues/12", "#12 NPU OOM", answered) == "from issue #12, written by a maintainer"
    assert issue_label("issues/12", "#12", answered, "zh") == "来自 issue #12，由维护者撰写"


@pytest.mark.parametrize(
    "unit",
    ["[", "[a](", "](", "http://", "HTTPS://", "www.", "a.", "a-", "a.b/", "1.2.3.4:", "@", "_a", "*", "<", "tg:", "a." * 70 + " "],
)
def test_hostile_input_stays_linear(unit: str) -> None:
    """200 KB of one repeated unit, as one line and as many lines: well under a second each (bench/render_bench.py)."""
    for text in (unit * (200_000 // len(unit)), (unit * 40 + "\n") * (200_000 // (len(unit) * 40 + 1))):
        started = time.process_time()
        drop_links(text)
        plain_line(text, limit=10**9)
        assert time.process_time() - started < 5.0, unit  # generous on shared cores: a backtracking regex takes minutes
