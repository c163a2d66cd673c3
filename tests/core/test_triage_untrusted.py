"""The offline answer quotes issue passages as plain text (issue 21, item 1).

Anyone can open an issue; after `sync --issues` and `index` its title and body are quoted in offline
answers. A title must not become a bold, clickable link or a mention, an excerpt must not keep a link in
any spelling, and an issue passage says who wrote it.
"""
from __future__ import annotations

import pytest

from core.index.passage import Passage
from core.triage import passage_excerpt, triage

VA = "vllm-project/vllm-ascend"
HOSTILE_TITLE = "#77 [click](https://evil.example) *bold* @channel <!here>"
QUESTION = "vllm-ascend NPU out of memory during graph capture, how to fix?"


def issue_passage(text: str, title: str = HOSTILE_TITLE) -> Passage:
    return Passage(
        repo=VA, path="issues/77", title=title, url=f"https://github.com/{VA}/issues/77", kind="issue",
        start_line=1, end_line=9, score=1.0, text=text,
    )


def passage_lines(answer: str) -> list[str]:
    """The passages block of an offline answer: its item and quote lines."""
    block = answer[answer.index("Related passages"):]
    return [line for line in block.split("\n\n")[0].splitlines()[1:]]


def test_a_hostile_issue_title_is_plain_text_in_the_offline_answer() -> None:
    passage = issue_passage("#77 out of memory during graph capture\nstate: open\n\nreporter @mallory:\nout of memory")
    answer = triage(QUESTION, (VA,), "en", passages=(passage,)).text
    item = passage_lines(answer)[0]
    assert item.startswith("- **#77 click ")  # the bold wrapper is ours, the title inside is plain
    assert "evil.example" not in answer and "](" not in item
    assert "*bold*" not in item and item.count("**") == 2
    assert "<!here>" not in answer and "@channel" not in answer


@pytest.mark.parametrize(
    "link",
    ["HTTPS://evil.example/x", "hTtP://evil.example/x", "evil.example/x", "www.evil.example", "//evil.example/x",
     "[memory guide](evil.example/x)"],
)
def test_excerpts_drop_links_whatever_the_case_and_scheme_less_hosts(link: str) -> None:
    passage = issue_passage(f"out of memory during graph capture: fixed, see {link} for the patch")
    excerpt = passage_excerpt(passage, {"memory"})
    assert "memory" in excerpt and "patch" in excerpt
    assert "evil" not in excerpt.lower(), excerpt


def test_an_issue_passage_says_who_wrote_it_in_the_readers_language() -> None:
    by_user = issue_passage("#77 out of memory\n\nreporter @mallory:\nout of memory, see evil.example/x", "#77 OOM")
    by_maintainer = issue_passage("#77 out of memory\n\nmaintainer @bob:\nout of memory: set max_model_len", "#77 OOM")
    en_user = triage(QUESTION, (VA,), "en", passages=(by_user,)).text
    en_maintainer = triage(QUESTION, (VA,), "en", passages=(by_maintainer,)).text
    zh = triage("vllm-ascend 图模式下 NPU out of memory 怎么办", (VA,), "zh", passages=(by_maintainer,)).text
    assert "(vllm-project/vllm-ascend: `issues/77`, from issue #77, written by a user)" in en_user
    assert "from issue #77, written by a maintainer" in en_maintainer
    assert "来自 issue #77，由维护者撰写" in zh


def test_doc_passages_keep_their_plain_titles_and_get_no_issue_label() -> None:
    doc = Passage(
        repo=VA, path="docs/source/faq.md", title="FAQ > Out of memory", url=f"https://github.com/{VA}/blob/abc/docs/source/faq.md#L1-L9",
        kind="doc", start_line=1, end_line=9, score=1.0, text="Out of memory: lower gpu_memory_utilization.",
    )
    answer = triage(QUESTION, (VA,), "en", passages=(doc,)).text
    assert "- **FAQ › Out of memory** (vllm-project/vllm-ascend: `docs/source/faq.md`)" in answer
    assert "written by" not in answer
