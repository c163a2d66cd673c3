"""Issue 12: product-aware offline answers, no example values, honest shape, named-entity lookups, passages."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from core.index.passage import Passage
from core.knowledge.loader import load_knowledge_base
from core.language import detect_language
from core.product_scope import command_markers, forbidden_markers, leaked_markers, scoped_advice
from core.router import route
from core.environment import read_environment
from core.release_check import check_release
from core.triage import diagnose, passage_excerpt, triage

VLLM = "vllm-project/vllm"
VA = "vllm-project/vllm-ascend"
SGLANG = "sgl-project/sglang"
LLM = "verylucky01/MindIE-LLM"
MOTOR = "verylucky01/MindIE-Motor"
SLIM = "verylucky01/MindStudio-ModelSlim"
DATA = Path(__file__).resolve().parents[2] / "tests" / "data"
_CODE_BLOCK = re.compile(r"```[a-z]*\n(.*?)```", re.S)
_INLINE_CODE = re.compile(r"`([^`\n]{1,200})`")
_VERSION_LITERAL = re.compile(r"(?<![\w.<-])v?\d+\.\d+\.\d+(?:rc\d+)?(?:\.post\d+)?(?![\w.>])")


def _questions() -> list[tuple[str, tuple[str, ...]]]:
    """Every dev and held-out routing question with the repositories the router gives it.

    A clarification is answered the way the conversation does after one round: what is settled
    plus the most likely option. Out-of-scope questions get no offline answer.
    """
    out = []
    for name in ("routing_devset.jsonl", "routing_heldout.jsonl"):
        for line in (DATA / name).read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            q = json.loads(line)["q"]
            decision = route(q)
            if decision.action == "out_of_scope":
                continue
            repos = decision.repos
            if decision.action == "clarify":
                repos = tuple(dict.fromkeys((*decision.repos, decision.options[0].repo)))
            out.append((q, repos))
    return out


QUESTIONS = _questions()


def _advice(answer: str) -> str:
    """The parts of an answer a user would copy and run: code blocks and inline code."""
    return "\n".join(_CODE_BLOCK.findall(answer) + _INLINE_CODE.findall(answer))


# ------------------------------------------------------------ no wrong product


def test_the_sets_are_big_enough_to_mean_something() -> None:
    products = {r for _, repos in QUESTIONS for r in repos}
    assert len(QUESTIONS) >= 150 and len(products) >= 8


def test_no_answer_carries_another_products_commands_flags_or_rules() -> None:
    leaks = []
    for q, repos in QUESTIONS:
        for language in ("en", "zh"):
            answer = triage(q, repos, language).text
            found = leaked_markers(answer, repos)
            if found:
                leaks.append((q[:60], repos, language, found))
    assert leaks == []


def test_the_markers_come_from_the_knowledge_base_and_catch_a_planted_leak() -> None:
    kb = load_knowledge_base()
    graph = next(p for p in kb.patterns if p.id == "graph_mode_failure")
    planted = "\n".join(c.run for c in graph.commands)
    own = scoped_advice(kb)  # the knowledge base's own entries, without the per-product facts
    for repos in ((LLM,), (MOTOR,), (SLIM,), (SGLANG,), (VLLM,)):
        allowed = {m for s in own if s.products & set(repos) for m in s.markers}
        markers = {m for s in own if not s.products & set(repos) for m in s.markers} - allowed
        assert {"vllm serve", "--enforce-eager", "--quantization ascend", "VLLM_VERSION="} <= markers, repos
        assert "--enforce-eager" in forbidden_markers(repos), repos
        assert leaked_markers(planted, repos), repos
    assert "--enforce-eager" not in forbidden_markers((VA,))
    # A marker shared by a product's own advice is never forbidden for it (npu-smi is every Ascend product's tool).
    assert "npu-smi info" not in forbidden_markers((LLM,)) and "npu-smi info" in forbidden_markers((VLLM,))


@pytest.mark.parametrize("repos", [(LLM,), (MOTOR,), (SLIM,), (SGLANG,), (VLLM,)])
def test_vllm_ascend_advice_never_reaches_other_products(repos: tuple[str, ...]) -> None:
    q = "graph mode fails with --enforce-eager off, error code:507015, InvalidVersion, w8a8 quantization OOM on 910B"
    for language in ("en", "zh"):
        answer = triage(q, repos, language).text
        for marker in ("vllm serve", "--enforce-eager", "--quantization ascend", "VLLM_VERSION", "compatibility matrix"):
            assert marker not in answer, (repos, marker)


def test_a_knowledge_base_note_never_names_advice_outside_its_own_products() -> None:
    kb = load_knowledge_base()
    notes = [n for p in kb.patterns for n in (*p.steps, *p.causes)] + [n for c in kb.error_codes for n in c.steps]
    for note in notes:
        assert leaked_markers(note.text.en + "\n" + note.text.zh, note.products) == [], note.text.en


def test_two_products_get_each_part_under_its_name() -> None:
    q = "MindIE-LLM and vllm-ascend both fail with error code:507015; which env vars like VLLM_ASCEND_ENABLE_NZ matter?"
    answer = triage(q, (LLM, VA), "en").text
    assert "**vllm-ascend:**" in answer
    shared, _, own = answer.partition("**vllm-ascend:**")
    assert "`507015`" in shared  # the error code applies to both: said once, before the product parts
    assert "VLLM_ASCEND_ENABLE_NZ" in own and "VLLM_ASCEND_ENABLE_NZ" not in shared


# -------------------------------------------------------- no literal examples


def test_no_knowledge_base_example_value_is_printed_as_advice() -> None:
    kb = load_knowledge_base()
    user_values = [(v.name, v.example) for v in kb.env_vars if v.value == "user"]
    assert ("VLLM_VERSION", "0.11.0") in user_values
    for q, repos in QUESTIONS:
        for language in ("en", "zh"):
            advice = _advice(triage(q, repos, language).text)
            for literal in _VERSION_LITERAL.findall(advice):
                assert literal.lstrip("v") in q, (q[:60], literal)
            for name, example in user_values:
                assert f"{name}={example}" not in advice or f"{name}={example}" in q, (q[:60], name)


def test_vllm_version_step_only_for_invalid_version_with_the_users_version() -> None:
    plain = triage("vllm 0.11.0 with vllm-ascend 0.11.0 fails to start", (VA,), "en").text
    assert "VLLM_VERSION" not in plain
    bare = triage("vllm-ascend raises InvalidVersion after I installed vLLM from source", (VA,), "en").text
    assert "export VLLM_VERSION=<vllm-version>" in bare and "stale" in bare
    mine = triage("vllm 0.13.0 editable install, vllm-ascend 0.13.0 raises InvalidVersion: Invalid version", (VA,), "en").text
    assert "export VLLM_VERSION=0.13.0" in mine
    assert "0.11.0" not in mine


# ----------------------------------------------------------------- shape


def test_conclusion_only_when_a_signature_matched() -> None:
    matched = triage("RuntimeError: ACL stream synchronize failed, error code:507015", (VA,), "en").text
    assert matched.startswith("**Conclusion:**")
    vague = triage("vllm-ascend does not work well for me, any idea?", (VA,), "en").text
    assert not vague.startswith("**Conclusion:**") and "This looks like" not in vague
    assert vague.splitlines()[0] in (
        "Nothing in the built-in knowledge base matched this question specifically.",
        "No known failure signature matched; here is what the knowledge base has on what you mention.",
    )


@pytest.mark.parametrize(
    "q",
    [
        "How do I enable FULL_DECODE_ONLY graph mode in vllm-ascend?",
        "Where is the ACL graph wrapper implemented in vllm-ascend?",
        "vllm-ascend 的 KV connector 代码在哪个文件？",
    ],
)
def test_how_to_and_code_questions_get_no_troubleshooting_checklist(q: str) -> None:
    answer = triage(q, (VA,), detect_language(q)).text
    for troubleshooting in ("Next steps", "下一步", "`details`", "`详细`", "checklist", "排查清单", "Conclusion", "结论"):
        assert troubleshooting not in answer, troubleshooting


def test_code_location_questions_get_the_map() -> None:
    r = triage("Where is the ACL graph wrapper implemented in vllm-ascend?", (VA,), "en")
    assert "`vllm_ascend/compilation/acl_graph.py`" in r.text
    assert any(s.url.endswith("vllm_ascend/compilation/acl_graph.py") for s in r.sources)
    zh = triage("vllm-ascend 的 KV connector 代码在哪个文件？", (VA,), "zh").text
    assert "vllm_ascend/distributed/kv_transfer" in zh


def test_answers_are_short_and_each_command_appears_once() -> None:
    for q, repos in QUESTIONS:
        answer = triage(q, repos, "en").text
        assert len(answer) < 1800, q[:60]
        lines = [ln for block in _CODE_BLOCK.findall(answer) for ln in block.splitlines() if ln.strip()]
        assert len(lines) == len(set(lines)), q[:60]


# ------------------------------------------------------- named-entity lookups


def test_env_var_is_looked_up_without_the_repository_named() -> None:
    r = triage("what does VLLM_ASCEND_ENABLE_MLAPO do?", (VA,), "en")
    assert "`VLLM_ASCEND_ENABLE_MLAPO`" in r.text or "VLLM_ASCEND_ENABLE_MLAPO" in r.text
    assert "DeepSeek W8A8" in r.text or "MLA" in r.text


def test_user_value_env_var_says_the_value_is_yours_not_an_example() -> None:
    text = triage("how should I set HCCL_IF_IP for two nodes?", (VA,), "en").text
    assert "HCCL_IF_IP" in text and "depends on your setup" in text and "<node ip>" not in text


def test_a_version_pair_is_looked_up_row_by_row() -> None:
    r = triage("vllm-ascend v0.11.0rc1 和 v0.11.0 有什么区别？", (VA,), "zh")
    assert "vllm-ascend 0.11.0rc1 对应 vLLM **0.11.0**" in r.text and "CANN 8.3.RC1" in r.text
    assert "vllm-ascend 0.11.0 对应 vLLM **0.11.0**" in r.text and "CANN 8.3.RC2" in r.text


def test_a_pairing_with_different_numbers_is_reported_from_the_row() -> None:
    text = triage("Which vLLM goes with vllm-ascend v0.14.0rc1?", (VA,), "en").text
    assert "vllm-ascend 0.14.0rc1 pairs with vLLM **0.14.1**" in text


def test_versions_without_a_row_say_so_instead_of_guessing() -> None:
    text = triage("is v0.30.2 out yet?", (VA,), "en").text
    assert "0.30.2 has no documented row" in text


def test_main_branch_has_no_row_but_a_verified_commit() -> None:
    kb = load_knowledge_base()
    text = triage("请问 vllm-ascend 的 main 分支要配哪个 vllm commit", (VA,), "zh").text
    assert ".github/vllm-main-verified.commit" in text and kb.matrix.main_branch.commit[:8] in text
    assert "vllm-main-verified.commit" not in triage("the main problem is slow decode on vllm-ascend", (VA,), "en").text


def test_incompatibility_found_without_the_repository_named() -> None:
    r = triage("DeepSeek-V2-Lite in graph mode fails: MLA only support {32, 64, 128}", (VA,), "en")
    assert r.text.startswith("**Conclusion:**") and "head count" in r.text


def test_error_code_lookup_for_a_mindie_question_uses_the_code_not_vllm_ascend_steps() -> None:
    r = triage("MindIE-LLM 服务报错 error code is 507015", (LLM,), "zh")
    assert "507015" in r.text and "ASCEND_LAUNCH_BLOCKING" in r.text
    assert "--enforce-eager" not in r.text and "vllm-ascend" not in r.text.split("**更多")[0]


def test_diagnose_without_repositories_labels_each_entry_for_the_research_tool() -> None:
    md = diagnose("error code:507015 with VLLM_ASCEND_ENABLE_NZ=1").to_markdown("en")
    assert "(applies to vllm-ascend)" in md and "507015" in md


# ---------------------------------------------------------------- passages


def _passage(text: str, n: int = 1) -> Passage:
    return Passage(
        repo=VA, path=f"docs/source/faq{n}.md", title=f"FAQ {n}", url=f"https://github.com/{VA}/blob/abc/docs/source/faq{n}.md#L1-L9",
        kind="doc", start_line=1, end_line=9, score=1.0, text=text,
    )


def test_passages_render_relevant_lines_with_a_permalink() -> None:
    body = "Intro line about nothing.\nSet PYTORCH_NPU_ALLOC_CONF to reduce fragmentation.\nUnrelated closing words.\n" + "filler\n" * 50
    passages = [_passage(body, i) for i in range(1, 5)]
    r = triage("how to reduce fragmentation with PYTORCH_NPU_ALLOC_CONF", (VA,), "en", passages=passages)
    assert r.text.count("> ") == 3  # at most three passages
    assert "reduce fragmentation" in r.text and "Unrelated closing words" not in r.text and "filler" not in r.text
    urls = {s.url for s in r.sources}
    assert "https://github.com/vllm-project/vllm-ascend/blob/abc/docs/source/faq1.md#L1-L9" in urls
    assert "https://github.com/vllm-project/vllm-ascend/blob/abc/docs/source/faq4.md#L1-L9" not in urls


def test_passage_excerpt_is_bounded_and_falls_back_to_the_first_lines() -> None:
    p = _passage("first line\nsecond line\n" + "x" * 5000)
    assert passage_excerpt(p, {"nothing-shared"}) == "first line … second line"
    long = _passage("match " + "y" * 5000)
    assert len(passage_excerpt(long, {"match"})) <= 320


def test_passage_excerpts_keep_link_words_but_never_a_url_from_the_quoted_text() -> None:
    p = _passage("See the [graph mode guide](https://example.com/a/very/long/path#x) and https://evil.example/x?y=1 now")
    excerpt = passage_excerpt(p, {"graph"})
    assert "graph mode guide" in excerpt and "now" in excerpt
    assert "http" not in excerpt and "](" not in excerpt


def test_no_passages_and_nothing_matched_says_so_and_points_to_the_docs() -> None:
    # (the scheduler question this used to ask now finds the deploy_mode / scheduler_type fact by meaning)
    text = triage("Is there a user group or mailing list for MindIE-Motor?", (MOTOR,), "en").text
    assert "No indexed passage was available" in text
    assert "https://github.com/verylucky01/MindIE-Motor/blob/HEAD/docs/zh/User_Guide/FAQ.md" in text


def test_command_markers_are_program_flags_and_settings() -> None:
    assert command_markers("vllm serve <model> --quantization ascend --enforce-eager") == frozenset(
        {"vllm serve", "--quantization ascend", "--enforce-eager"}
    )
    assert command_markers("export VLLM_VERSION=<vllm-version>") == frozenset({"VLLM_VERSION="})


def test_a_named_flag_is_explained_from_the_knowledge_base() -> None:
    text = triage("what does --enforce-eager change on vllm-ascend?", (VA,), "en").text
    assert "`--enforce-eager`" in text and "graph capture" in text
    assert "--enforce-eager" not in triage("what does --enforce-eager change?", (LLM,), "en").text


def test_a_version_series_lists_its_rows_and_is_not_a_mismatch() -> None:
    text = triage("vllm 0.11 on NPU, which vllm-ascend?", (VA,), "en").text
    assert "vLLM 0.11.x appears in the matrix rows of vllm-ascend" in text and "v0.11.0rc3" in text
    (v, *_) = check_release(read_environment("vllm-ascend 0.11.0 with vllm 0.11"), load_knowledge_base()).verdicts
    assert v.status == "match"


def test_each_setting_is_said_once_when_steps_already_carry_it() -> None:
    text = triage("vllm 0.11 在 NPU 上 OOM", (VA,), "zh").text
    assert text.count("PYTORCH_NPU_ALLOC_CONF=expandable_segments:True") <= 2  # the step and its command line
    assert text.count("--gpu-memory-utilization") <= 2


def test_passages_share_the_answer_budget() -> None:
    body = "\n".join(f"graph capture failed line {i} with 507015 and graph mode details" for i in range(40))
    passages = [_passage(body, i) for i in range(1, 4)]
    q = "vllm 0.11.0 with vllm-ascend 0.9.1: graph capture failed, error code:507015 in graph mode"
    with_passages = triage(q, (VA,), "en", passages=passages).text
    without = triage(q, (VA,), "en").text
    assert with_passages.count("> ") == 3
    assert len(with_passages) - len(without) <= 3 * (160 + 120)  # each excerpt shrank to the floor


def test_a_torch_pin_in_the_question_is_not_reported_as_a_missing_product_row() -> None:
    q = "pip install vllm==0.11.0 pulls torch 2.8.0 but vllm-ascend 0.11.0rc3 wants torch 2.7.1"
    text = triage(q, (VA,), "en").text
    assert "2.7.1 has no documented row" not in text and "no documented row" not in text
    assert "0.11.0rc3" in text  # the product versions are still looked up


def test_a_release_without_its_own_row_names_the_rows_of_its_line() -> None:
    text = triage("vllm-ascend 0.8.4 works with which vllm version?", (VA,), "en").text
    assert "0.8.4 itself has no row" in text and "v0.8.4rc2 (vLLM 0.8.4)" in text
    assert "no documented row" not in text  # the line has rows: never "nothing documented"
    unknown = triage("vllm-ascend 0.2.0 works with which vllm version?", (VA,), "en").text
    assert "vllm-ascend 0.2.0 has no documented row" in unknown
