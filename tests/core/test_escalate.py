"""The escalation draft: the pre-filled new-issue URL parsed back, per forge, secrets out, bounded."""
from __future__ import annotations

import re
from urllib.parse import parse_qs, quote, urlsplit

import pytest

from core.escalate import (
    MAX_URL_CHARS,
    NoProduct,
    NoQuestion,
    build_escalation,
    escalation_text,
    new_issue_url,
    paste_body,
)
from core.research.redact import Redactor
from core.session import Session, Turn, session_from_json, session_to_json

CONFIGURED_SECRET = "s3cr3t-Configured-Value-42"  # a SecretStr setting's value (not a known token shape)
GITHUB_TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
PASTE = f"""vllm-ascend serve dies on our 910B, @alice and <!channel> please look
$ vllm serve /models/Qwen2-7B --tensor-parallel-size 2 --api-key {CONFIGURED_SECRET}
INFO 05-01 10:00:00 [api_server.py:1] starting
Traceback (most recent call last):
  File "/usr/lib/python3.11/site-packages/vllm_ascend/worker.py", line 12, in init
    torch.npu.synchronize()
RuntimeError: ACL stream synchronize failed, error code:507015 (auth {GITHUB_TOKEN})
"""
ENV = {"vllm-ascend": "0.9.1", "cann": "8.1.RC1", "chip": "910B"}
CHECKED = ({"title": "vllm-project/vllm-ascend#5661", "url": "https://github.com/vllm-project/vllm-ascend/issues/5661"},
           {"title": "FAQ", "url": "https://github.com/vllm-project/vllm-ascend/blob/main/docs/source/faqs.md"})


def params(url: str) -> dict[str, str]:
    """The query of `url` decoded the way a browser's form fill reads it (each key once)."""
    parsed = parse_qs(urlsplit(url).query, keep_blank_values=True, strict_parsing=True)
    assert all(len(v) == 1 for v in parsed.values())
    return {k: v[0] for k, v in parsed.items()}


def redactor() -> Redactor:
    return Redactor([CONFIGURED_SECRET])


def test_github_url_carries_title_body_and_labels_exactly_as_built():
    esc = build_escalation(PASTE, ("vllm-project/vllm-ascend",), ENV, CHECKED, redactor())
    parts = urlsplit(esc.url)
    assert (parts.scheme, parts.netloc, parts.path) == ("https", "github.com", "/vllm-project/vllm-ascend/issues/new")
    got = params(esc.url)
    assert got == {"title": esc.title, "body": esc.body, "labels": "bug"}
    assert not esc.trimmed and len(esc.url) <= MAX_URL_CHARS
    body = got["body"]
    assert "RuntimeError: ACL stream synchronize failed, error code:507015" in got["title"]
    assert "- vllm-ascend: 0.9.1" in body and "- cann: 8.1.RC1" in body and "- chip: 910B" in body
    assert "vllm serve /models/Qwen2-7B --tensor-parallel-size 2" in body  # the command
    assert "~~~\nRuntimeError: ACL stream synchronize failed" in body  # the decisive line, fenced
    assert "[vllm-project/vllm-ascend#5661](https://github.com/vllm-project/vllm-ascend/issues/5661)" in body
    assert "torch.npu.synchronize()" not in body  # the decisive lines, not the whole paste


def test_secrets_never_reach_the_url_in_any_form():
    esc = build_escalation(PASTE, ("vllm-project/vllm-ascend",), ENV, CHECKED, redactor())
    decoded = params(esc.url)
    for secret in (CONFIGURED_SECRET, GITHUB_TOKEN):
        assert secret not in esc.url and quote(secret, safe="") not in esc.url
        assert all(secret not in value for value in decoded.values())
        assert secret not in esc.body
    assert "[redacted]" in decoded["body"] and "[redacted]" in decoded["title"]


def test_mentions_are_defanged_so_a_filed_issue_notifies_nobody():
    esc = build_escalation(PASTE, ("vllm-project/vllm-ascend",), ENV, CHECKED, redactor())
    body = params(esc.url)["body"]
    assert not re.search(r"(?<![\w.])@alice", body) and "@\u200balice" in body
    assert "<!channel>" not in body


def test_gitcode_product_goes_to_gitcode_create_page_with_title_and_body():
    question = "MindIE-LLM 启动报错 507015，怎么办？\nRuntimeError: ACL stream synchronize failed, error code:507015"
    esc = build_escalation(question, ("verylucky01/MindIE-LLM",), {"mindie": "2.1.RC1"}, (), redactor())
    parts = urlsplit(esc.url)
    assert (parts.netloc, parts.path) == ("gitcode.com", "/Ascend/MindIE-LLM/issues/create")
    got = params(esc.url)
    assert got == {"title": esc.title, "body": esc.body}  # GitCode documents no labels parameter
    assert "### 问题" in got["body"] and "- mindie: 2.1.RC1" in got["body"]
    # GitCode documents no pre-fill: the reply also carries the title and the body to paste
    shown = escalation_text(esc, "zh", None)
    assert esc.url in shown and f"**标题:** {esc.title}" in shown and paste_body(esc) in shown
    assert shown.count("```") == 2  # one fenced block: the body's own fences are ~~~


def test_msmodelslim_is_a_gitcode_repository_too():
    esc = build_escalation("msmodelslim W8A8 quantization fails", ("verylucky01/MindStudio-ModelSlim",), {}, (), redactor())
    assert esc.url.startswith("https://gitcode.com/Ascend/msmodelslim/issues/create?")
    assert "线程中未提供" in esc.body  # no environment stated


def test_a_huge_paste_is_cut_to_fit_and_says_trimmed():
    log = "\n".join(f"ERROR 05-01 10:00:{i % 60:02d} [x.py:1] 第{i}行 NPU 内存不足 out of memory" for i in range(3_000))
    question = "vllm-ascend 长日志，请帮忙看看。" + "说明" * 2_000 + "\n" + log
    esc = build_escalation(question, ("vllm-project/vllm-ascend",), ENV, CHECKED * 4, redactor())
    assert esc.trimmed and len(esc.url) <= MAX_URL_CHARS
    body = params(esc.url)["body"]
    # the user's words are cut first: every section a maintainer needs is still in the link
    question, rest = body.split("### Environment")
    assert question.rstrip().endswith("… (trimmed)") and len(question) < 700
    assert "- vllm-ascend: 0.9.1" in rest and "vllm-project/vllm-ascend#5661" in rest and rest.endswith("secrets redacted.")
    assert "The body was too long" in escalation_text(esc, "en", None)


def test_when_even_the_sections_do_not_fit_the_end_is_cut_and_fences_stay_closed():
    long_titles = [{"title": "很长的标题" * 40, "url": f"https://github.com/vllm-project/vllm-ascend/issues/{n}"} for n in range(8)]
    esc = build_escalation(PASTE, ("vllm-project/vllm-ascend",), ENV, long_titles, redactor())
    assert esc.trimmed and len(esc.url) <= MAX_URL_CHARS
    body = params(esc.url)["body"]
    assert body.endswith("(trimmed)") and "### Decisive log lines" in body
    tail = body.removesuffix("\n\n(trimmed)").removesuffix("\n~~~").split("### Environment")[1]
    assert esc.body.split("### Environment")[1].startswith(tail)  # the sections as in the full draft, cut at the end
    assert len(re.findall(r"(?m)^~~~$", body)) % 2 == 0  # a cut code block is closed again
    assert esc.body.count("issues/7") == 1 and "issues/7" not in body  # the full draft keeps what the link drops


def test_question_in_the_title_when_nothing_decisive_was_pasted():
    esc = build_escalation("How do I enable graph mode in vllm-ascend 0.9.1?\nmore words", ("vllm-project/vllm-ascend",), {}, (), redactor())
    assert esc.title == "How do I enable graph mode in vllm-ascend 0.9.1?"
    assert esc.labels == ("question",)
    assert params(esc.url)["labels"] == "question"


def test_an_unclosed_fence_in_the_question_cannot_swallow_the_other_sections():
    esc = build_escalation("vllm-ascend fails:\n```\nsome output", ("vllm-project/vllm-ascend",), {}, (), redactor())
    question_part = esc.body.split("### Environment")[0]
    assert question_part.count("```") == 2


def test_nothing_to_take_upstream_is_a_clear_refusal():
    with pytest.raises(NoQuestion):
        build_escalation("   ", ("vllm-project/vllm-ascend",), {}, ())
    with pytest.raises(NoProduct):
        build_escalation("what is the weather", (), {}, ())
    with pytest.raises(NoProduct):
        build_escalation("odd repo", ("evil/repo", "../../x"), {}, ())


def test_session_keeps_sources_and_escalations_and_survives_odd_stored_values():
    session = Session(turns=(Turn("user", "q", 1.0),), last_sources=({"title": "t", "url": "https://x"},),
                      escalations=({"repo": "r", "url": "https://github.com/r/issues/new?x", "question": "abc", "filed": "", "at": "1"},))
    assert session_from_json(session_to_json(session)) == session
    odd = '{"version": 3, "turns": [], "last_sources": "nope", "escalations": [1, "x", {"url": 5}]}'
    loaded = session_from_json(odd)
    assert loaded.last_sources == () and loaded.escalations == ({"url": "5"},)


def test_a_cut_inside_a_log_block_closes_the_block():
    body = "### Logs\n\n~~~\n" + "\n".join(f"line {n} " + "x" * 60 for n in range(200)) + "\n~~~\n\nafter"
    url, cut = new_issue_url("github", "vllm-project/vllm", "t", body, ("bug",))
    shown = params(url)["body"]
    assert cut and len(url) <= MAX_URL_CHARS
    assert shown.endswith("\n~~~\n\n(trimmed)") and len(re.findall(r"(?m)^~~~$", shown)) == 2
