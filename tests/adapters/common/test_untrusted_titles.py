"""Passage and issue titles are plain text on every platform (issue 21, item 1).

Anyone can open an issue titled `[click](https://evil.example) *bold* @channel <!here>`. Whether it
reaches a reply as an offline answer's quoted passage or as a research answer's source, no renderer may
show it as a link, as emphasis or as a mention.
"""
from __future__ import annotations

from collections.abc import Callable

import pytest

from core.index.passage import Passage
from core.messages import Reply, ReplyKind, Source
from core.research.citations import Evidence, verify_answer
from core.triage import triage
from tests.support.rendered import SENT

VA = "vllm-project/vllm-ascend"
ISSUE_URL = f"https://github.com/{VA}/issues/77"
HOSTILE = "[click](https://evil.example) *bold* @channel <!here>"

# what each platform sends, laid out by its production path (tests/support/rendered.py)
PLATFORMS: dict[str, Callable[[Reply], str]] = SENT


def assert_plain(rendered: str) -> None:
    assert "evil.example" not in rendered, "a link from the title"
    for emphasis in ("*bold*", "_bold_", "**bold", "<b>bold", "<i>bold", "~bold~"):
        assert emphasis not in rendered, emphasis
    assert "<!here>" not in rendered and "@channel" not in rendered and "@here" not in rendered, "a mention"


def offline_reply() -> Reply:
    passage = Passage(repo=VA, path="issues/77", title=f"#77 {HOSTILE}", url=ISSUE_URL, kind="issue", start_line=1,
                      end_line=9, score=1.0, text="#77 out of memory\n\nreporter @mallory:\nout of memory in graph capture")
    offline = triage("vllm-ascend NPU out of memory during graph capture", (VA,), "en", passages=(passage,))
    assert "out of memory in graph capture" in offline.text
    return Reply(ReplyKind.ANSWER, offline.text, "en", repos=(VA,), sources=offline.sources)


def research_reply() -> Reply:
    """A research answer citing the issue: its source's title is what the issue tool declared."""
    evidence = Evidence()
    evidence.record(f"#77 {HOSTILE}\n{ISSUE_URL}", (Source(f"{VA}#77: {HOSTILE}", ISSUE_URL),), origin="#77")
    verified = verify_answer(f"Upgrade CANN ({ISSUE_URL}).", evidence, "en")
    return Reply(ReplyKind.ANSWER, verified.text, "en", repos=(VA,), sources=verified.sources)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_hostile_issue_title_in_an_offline_answer_is_plain_text(platform: str) -> None:
    assert_plain(PLATFORMS[platform](offline_reply()))


@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_hostile_issue_title_in_a_research_answers_sources_is_plain_text(platform: str) -> None:
    rendered = PLATFORMS[platform](research_reply())
    assert_plain(rendered)
    assert ISSUE_URL in rendered  # the issue itself stays a source


@pytest.mark.parametrize("platform", ["feishu", "telegram", "wecom", "terminal"])
def test_each_renderer_shows_a_source_title_as_plain_text_on_its_own(platform: str) -> None:
    """Defence in depth: a Source built anywhere (not only by the verifier) renders its title plain.

    Slack renders its sources list in adapters/slack/blocks.py; there the core's plain titles are what
    keeps it safe (the test above).
    """
    reply = Reply(ReplyKind.ANSWER, "Upgrade CANN.", "en", sources=(Source(f"{VA}#77: {HOSTILE}", ISSUE_URL),))
    rendered = PLATFORMS[platform](reply)
    assert_plain(rendered)
    assert ISSUE_URL in rendered
