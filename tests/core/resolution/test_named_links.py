"""Links in thread text are named in plain words, never kept as links (core/resolution/untrusted.py)."""
from __future__ import annotations

from core.resolution.untrusted import plain_sentence


def test_code_host_links_become_plain_references() -> None:
    assert plain_sentence("Described here: https://github.com/OpenRLHF/OpenRLHF/issues/741#issuecomment-1") == \
        "Described here: OpenRLHF/OpenRLHF#741"
    assert plain_sentence("track this [PR](https://github.com/o/n/pull/884) for ray") == "track this PR (o/n#884) for ray"
    assert plain_sentence("Follow https://gitcode.com/Ascend/MindIE-LLM/blob/master/docs/zh/faq.md first") == \
        "Follow `docs/zh/faq.md` first"


def test_docs_pages_are_named_and_other_links_still_go() -> None:
    assert plain_sentence("see https://vllm-ascend.readthedocs.io/en/latest/tutorials/multi_npu.html#run") == \
        "see vllm-ascend docs: tutorials/multi_npu"
    assert plain_sentence("see https://docs.vllm.ai/en/latest/usage/faq.html") == "see vLLM docs: usage/faq"
    assert plain_sentence("Per https://docs.vllm.ai/projects/ascend/en/latest/faqs.html#x") == "Per vllm-ascend docs: faqs"
    out = plain_sentence("[click](https://evil.example/github.com/a/b/issues/1) or https://github.com/a/b/issues/x now")
    assert "evil" not in out and "://" not in out and "(link in the thread)" in out


def test_hostile_link_text_stays_linear_and_inert() -> None:
    long = "https://github.com/" + "a" * 5000 + "/b/issues/1 " + "[" * 3000 + "](" * 3000
    out = plain_sentence(long, limit=400)
    assert "://" not in out and len(out) <= 400


def test_a_link_in_brackets_leaves_no_empty_brackets() -> None:
    line = plain_sentence("Upgrade to the most recent release or rc build (https://pypi.example.org/project/x/#history); thanks")
    assert "()" not in line
    assert line == "Upgrade to the most recent release or rc build (link in the thread); thanks"
