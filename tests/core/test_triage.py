from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from core.knowledge.loader import KNOWLEDGE_DIR, KnowledgeBaseError, load_knowledge_base
from core.messages import Source
from core.environment import read_environment
from core.release_check import check_release
from core.triage import DiagnosticReport, diagnose, triage, triage_details

VLLM_ASCEND = "vllm-project/vllm-ascend"
MATRIX_URL = "https://github.com/vllm-project/vllm-ascend/blob/main/docs/source/community/versioning_policy.md"
HAN = re.compile(r"[\u4e00-\u9fff]")


def _urls(sources: tuple[Source, ...]) -> set[str]:
    return {s.url for s in sources}


# ----------------------------------------------------------- version verdicts


def test_version_mismatch_verdict_in_conclusion_with_matrix_source() -> None:
    q = "I run vllm 0.11.0 with vllm-ascend 0.9.1 and the engine won't start"
    r = triage(q, (VLLM_ASCEND,), "en")
    conclusion = r.text.split("\n\n", 1)[0]
    assert conclusion.startswith("**Conclusion:**")
    assert "Version misalignment" in conclusion
    assert "vLLM 0.9.1" in conclusion and "vLLM 0.11.0" in conclusion
    assert "**Mismatch:**" in r.text
    assert "CANN 8.2.RC1" in r.text  # the row's other pins are shown
    assert MATRIX_URL in _urls(r.sources)


def test_matching_versions_are_confirmed_not_flagged() -> None:
    kb = load_knowledge_base()
    verdicts = check_release(read_environment("vllm 0.11.0, vllm-ascend 0.11.0, CANN 8.3.RC2, torch_npu 2.7.1.post1"), kb).verdicts
    assert [(v.component, v.status) for v in verdicts] == [("vllm", "match"), ("cann", "match"), ("torch_npu", "match")]
    assert "Version misalignment" not in triage("vllm 0.11.0 and vllm-ascend 0.11.0 crash with error", (VLLM_ASCEND,), "en").text


@pytest.mark.parametrize(
    ("text", "status"),
    [
        ("vllm-ascend v0.18.0rc1 with vllm v0.18.0", "match"),
        # The rule is "the same row", not "the same number" (issue 12): these rows pair different numbers.
        ("vllm-ascend v0.14.0rc1 with vllm v0.14.1", "match"),
        ("vllm-ascend v0.14.0rc1 with vllm v0.14.0", "mismatch"),
        ("vllm-ascend 0.11.0rc0 with vllm 0.11.0rc3", "match"),
        ("vllm-ascend 0.8.5rc1 with vllm 0.8.5.post1", "match"),
    ],
)
def test_compatibility_is_the_same_row_of_the_matrix(text: str, status: str) -> None:
    (v,) = check_release(read_environment(text), load_knowledge_base()).verdicts
    assert v.status == status


def test_policy_wording_states_the_same_row_rule() -> None:
    kb = load_knowledge_base()
    for language in ("en", "zh"):
        policy = kb.matrix.policy.text.of(language)  # type: ignore[arg-type]
        assert "0.14.1" in policy and "0.11.0rc3" in policy and "0.8.5.post1" in policy
    for name in ("checklist.json", "collect_env.json", "problem_patterns.json", "version_matrix.json"):
        raw = (KNOWLEDGE_DIR / name).read_text(encoding="utf-8")
        for wrong in ("1:1", "final release", "一一对应", "正式版", "cmake>=3.26.1"):
            assert wrong not in raw, (name, wrong)
    assert "cmake>=3.26 not found" in (KNOWLEDGE_DIR / "problem_patterns.json").read_text(encoding="utf-8")


def test_cann_and_python_mismatch_against_the_row() -> None:
    kb = load_knowledge_base()
    verdicts = {v.component: v for v in check_release(read_environment("vllm-ascend 0.13.0 CANN 8.3.RC2 python 3.12"), kb).verdicts}
    assert verdicts["cann"].status == "mismatch" and verdicts["cann"].expected == "8.5.0"
    assert verdicts["python"].status == "mismatch"
    text = triage("vllm-ascend 0.13.0 with CANN 8.3.RC2 fails", (VLLM_ASCEND,), "en").text
    assert "CANN 8.3.RC2" in text and "8.5.0" in text


def test_unknown_version_says_so_and_points_to_the_policy() -> None:
    r = triage("vllm-ascend 0.99.0 fails to start", (VLLM_ASCEND,), "en")
    assert "no documented row" in r.text and "instead of guessing" in r.text
    assert MATRIX_URL in _urls(r.sources)


def test_vllm_version_alone_lists_matching_vllm_ascend_releases() -> None:
    kb = load_knowledge_base()
    (v,) = check_release(read_environment("vllm 0.11.0 on 910B"), kb).verdicts
    assert v.status == "info"
    assert "v0.11.0" in v.expected and "v0.11.0rc1" in v.expected
    assert "v0.9.1" not in v.expected


def test_known_env_from_the_session_is_used() -> None:
    r = triage("it still crashes", (VLLM_ASCEND,), "en", known_env={"vllm": "0.11.0", "vllm-ascend": "0.9.1", "chip": "910B"})
    assert "Version misalignment" in r.text
    assert r.signals.chips == ("910B",)
    assert "Atlas A2" not in r.text  # a remembered, supported chip is not worth a line of its own


# ---------------------------------------------------------------- error codes


def test_error_code_507015_gives_concrete_steps_and_sources() -> None:
    r = triage("RuntimeError: ACL stream synchronize failed, error code:507015", (VLLM_ASCEND,), "en")
    conclusion = r.text.split("\n\n", 1)[0]
    assert "507015" in conclusion and "ACL_ERROR_RT_AICORE_EXCEPTION" in conclusion
    assert "export ASCEND_LAUNCH_BLOCKING=1" in r.text
    assert "--enforce-eager" in r.text
    assert "plog" in r.text
    urls = _urls(r.sources)
    assert "https://github.com/vllm-project/vllm-ascend/issues/5661" in urls
    assert any(u.endswith("rt_error_codes.h") for u in urls)


def test_unknown_code_is_reported_honestly() -> None:
    report = diagnose("error code is 507777")
    assert report.unknown_codes == ("507777",)
    assert "not in the built-in table" in report.to_markdown("en")


def test_incompatible_combination_is_the_conclusion() -> None:
    q = 'vllm-ascend with --speculative-config {"method":"mtp"} and cudagraph_mode FULL_DECODE_ONLY raises NotImplementedError'
    r = triage(q, (VLLM_ASCEND,), "en")
    assert "MTP + FULL_DECODE_ONLY" in r.text.split("\n\n", 1)[0]
    assert "https://github.com/vllm-project/vllm-ascend/issues/6085" in _urls(r.sources)


def test_unsupported_chip_conclusion() -> None:
    r = triage("vllm-ascend on Atlas 200I A2 fails", (VLLM_ASCEND,), "en")
    assert "not supported" in r.text.split("\n\n", 1)[0]


def test_oom_pattern_suggests_lowering_max_model_len() -> None:
    r = triage("NPU out of memory when serving Qwen3-32B with --max-model-len 131072 on vllm-ascend", (VLLM_ASCEND,), "en")
    assert "--max-model-len" in r.text
    assert "PYTORCH_NPU_ALLOC_CONF=expandable_segments:True" in r.text
    assert "8192" not in r.text and "0.85" not in r.text  # no example values from the knowledge base


# ---------------------------------------------------------------- language


def test_chinese_question_gets_an_entirely_chinese_answer() -> None:
    r = triage("vllm 0.11.0 配 vllm-ascend 0.9.1，报错 error code:507015", (VLLM_ASCEND,), "zh")
    assert r.text.startswith("**结论：**")
    for heading in ("**知识库中的相关信息：**", "**下一步：**", "`详细`"):
        assert heading in r.text
    for english in ("**Conclusion:**", "What the knowledge base says", "Next steps", "Offline answer", "details"):
        assert english not in r.text
    assert "ANTHROPIC_API_KEY" in r.text.splitlines()[-1]


def test_english_question_gets_no_chinese_text() -> None:
    r = triage("vllm 0.11.0 with vllm-ascend 0.9.1 on 300I Duo, EZ3002 TransData, MTP and NZ", (VLLM_ASCEND,), "en")
    assert not HAN.search(r.text)
    assert "ANTHROPIC_API_KEY" in r.text.splitlines()[-1]


def test_both_languages_carry_the_same_findings() -> None:
    q = "vllm-ascend 0.9.1 vllm 0.11.0 error code:561000 verl rollout VLLM_ASCEND_ENABLE_NZ=1"
    en, zh = triage(q, (VLLM_ASCEND,), "en"), triage(q, (VLLM_ASCEND,), "zh")
    assert _urls(en.sources) == _urls(zh.sources)
    assert en.text.count("`561000`") == zh.text.count("`561000`")


# ------------------------------------------------------------ what to send


def test_details_ask_for_collect_env_with_key_fields() -> None:
    short = triage("vllm-ascend crashes", (VLLM_ASCEND,), "en").text
    assert "What to send" not in short and "Quick diagnostic checklist" not in short  # on request only
    assert "`details`" in short
    text = triage_details("vllm-ascend crashes", (VLLM_ASCEND,), "en").text
    send = text.split("### What to send", 1)[1]
    assert "python collect_env.py" in send and "root of a vllm-ascend checkout" in send
    for field in ("vLLM Ascend Version", "vLLM Version", "CANN", "NPU"):
        assert f"`{field}`" in send
    assert "chip" in send.lower()  # no chip was given
    assert "### Quick diagnostic checklist" in text


def test_how_to_question_gets_no_failure_talk() -> None:
    r = triage("How do I enable prefix caching in MindIE-LLM?", ("verylucky01/MindIE-LLM",), "en")
    assert "full error log" not in r.text and "`details`" not in r.text and "Next steps" not in r.text
    assert "collect_env" not in r.text  # a vllm-ascend tool; not for MindIE-LLM
    assert "https://github.com/verylucky01/MindIE-LLM/blob/HEAD/docs/zh/faq/faq.md" in r.text


def test_sources_are_only_the_facts_used() -> None:
    r = triage("capture failed, error code is 207008", (VLLM_ASCEND,), "en")
    urls = _urls(r.sources)
    assert "https://github.com/vllm-project/vllm-ascend/blob/main/docs/source/faqs.md" in urls
    assert not any("lora.md" in u or "quantization.md" in u for u in urls)
    assert all(u.startswith("https://") for u in urls)
    assert len(urls) == len(r.sources)


# ---------------------------------------------------------------- robustness


def test_huge_paste() -> None:
    log = "INFO 09-04 09:50:12 [core.py:702] step ok tokens=128\n" * 4000
    log += "vllm==0.11.0\nvllm-ascend==0.9.1\nRuntimeError: ACL stream synchronize failed, error code:507015\n"
    assert len(log) > 200_000
    r = triage(log, (VLLM_ASCEND,), "en")
    assert "507015" in r.text and "Version misalignment" in r.text
    assert len(r.text) < 20_000  # the paste is never echoed back


@pytest.mark.parametrize("text", ["", "\x00\x07\x1b[31mred\x1b[0m", "🙂🚀🔥", "\ud800", "?" * 1000, None])
@pytest.mark.parametrize("language", ["en", "zh"])
def test_odd_input_still_gives_a_complete_answer(text: object, language: str) -> None:
    r = triage(text, (), language)  # type: ignore[arg-type]
    # Nothing matched: one honest line, no conclusion (issue 12).
    assert r.text.startswith("内置知识库中没有" if language == "zh" else "Nothing in the built-in knowledge base")
    assert "ANTHROPIC_API_KEY" in r.text
    assert "\x00" not in r.text and "\x1b" not in r.text


def test_user_text_is_not_echoed() -> None:
    r = triage("<!channel> @all please help, vllm-ascend crashes", (VLLM_ASCEND,), "en")
    assert "<!channel>" not in r.text and "@all" not in r.text


# ----------------------------------------------------------------- diagnose


def test_diagnose_report_for_the_research_tool() -> None:
    report = diagnose("vllm 0.11.0 vllm-ascend 0.9.1 on 300I Duo, EZ3002 TransData, VLLM_ASCEND_ENABLE_NZ=1")
    assert isinstance(report, DiagnosticReport)
    assert [c.code for c in report.error_codes] == ["EZ3002"]
    assert [i.id for i in report.incompatibilities] == ["nz_310p"]
    assert any(v.status == "mismatch" for v in report.version_verdicts)
    assert report.chips[0].id == "310P"
    for language in ("en", "zh"):
        md = report.to_markdown(language)
        assert "EZ3002" in md
        assert "https://github.com/vllm-project/vllm-ascend/issues/1383" in md
        assert md.count("](https://") == len(report.sources)


def test_diagnose_nothing() -> None:
    report = diagnose("hello there")
    assert not report.has_findings and report.sources == ()
    assert "No known error code" in report.to_markdown("en")


# ------------------------------------------------------------ knowledge base


def test_knowledge_base_loads_once_and_holds_the_facts() -> None:
    kb = load_knowledge_base()
    assert kb is load_knowledge_base()
    assert [r.key for r in kb.repositories] == [
        "vllm", "vllm-ascend", "sglang", "mindie-llm", "mindie-sd", "mindie-motor", "mindie-pymotor", "mindie-turbo", "msmodelslim",
    ]
    slim = kb.repository("verylucky01/MindStudio-ModelSlim")
    assert slim is not None and slim.issue_tracker.kind == "gitcode" and slim.issue_tracker.api_repo == "Ascend/msmodelslim"
    assert slim.origin_url == "https://gitcode.com/Ascend/msmodelslim"
    llm = kb.repository("mindie-llm")
    assert llm is not None and llm.issue_tracker.api_repo == "Ascend/MindIE-LLM"
    assert kb.repository("vllm-ascend").issue_tracker.kind == "github"  # type: ignore[union-attr]
    assert kb.error_code("EL0009") is kb.error_code("207008")
    assert {c.id: c.support for c in kb.chips}["310B"] == "unsupported"
    row = next(r for r in kb.matrix.rows if r.vllm_ascend == "0.9.1")
    assert (row.vllm, row.cann, row.torch_npu) == (("0.9.1",), "8.2.RC1", "2.5.1.post1")
    assert [item.number for item in kb.checklist] == [1, 2, 3, 4, 5, 6, 7]


def test_every_fact_source_resolves_to_a_link() -> None:
    kb = load_knowledge_base()
    refs = [r.source for r in kb.repositories] + [c.source for c in kb.chips] + [kb.soc_version.source]
    refs += [s for c in kb.error_codes for s in c.sources] + [s for i in kb.incompatibilities for s in i.sources]
    refs += [s for p in kb.patterns for s in p.sources] + [s for c in kb.checklist for s in c.sources]
    refs += [r.source for r in kb.matrix.rows] + [kb.matrix.policy.source, kb.collect_env.source]
    refs += [v.source for v in kb.env_vars]
    for ref in refs:
        source = kb.source(ref)
        assert source.url.startswith("https://") and source.title, ref
    assert kb.source("vllm-project/vllm-ascend:docs/source/faqs.md").url == (
        "https://github.com/vllm-project/vllm-ascend/blob/main/docs/source/faqs.md"
    )
    assert kb.source("verylucky01/MindIE-LLM:README.md").url == "https://github.com/verylucky01/MindIE-LLM/blob/HEAD/README.md"


def _broken_copy(tmp_path: Path, name: str, mutate) -> Path:  # type: ignore[no-untyped-def]
    target = tmp_path / "knowledge"
    shutil.copytree(KNOWLEDGE_DIR, target)
    path = target / name
    data = json.loads(path.read_text(encoding="utf-8"))
    mutate(data)
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return target


def test_intact_copy_loads(tmp_path: Path) -> None:
    target = tmp_path / "knowledge"
    shutil.copytree(KNOWLEDGE_DIR, target)
    assert len(load_knowledge_base(target).repositories) == 9


@pytest.mark.parametrize(
    ("name", "mutate", "message"),
    [
        ("error_codes.json", lambda d: d["codes"][0].pop("meaning_zh"), "meaning_zh"),
        ("error_codes.json", lambda d: d["codes"][0].__setitem__("sources", ["see the docs"]), "neither a URL"),
        ("error_codes.json", lambda d: d["codes"][0]["steps"][0].pop("zh"), "zh"),
        ("error_codes.json", lambda d: d["codes"][0].__setitem__("products", ["vllm-project/vllm-ascnd"]), "vllm-ascnd"),
        ("problem_patterns.json", lambda d: d["patterns"][0].pop("products"), "products"),
        ("problem_patterns.json", lambda d: d["patterns"][0]["steps"][0].__setitem__("products", ["sgl-project/sglang"]), "not one of its entry's products"),
        ("problem_patterns.json", lambda d: d["patterns"][0]["steps"][0].__setitem__("when", ["InvalidVersion"]), "lowercase"),
        ("checklist.json", lambda d: d["items"][0]["commands"].append({"run": "x", "products": ["nobody/none"]}), "nobody/none"),
        ("env_vars.json", lambda d: d["variables"][0].__setitem__("value", "example"), "value"),
        ("collect_env.json", lambda d: d["docs"].append(dict(d["docs"][0])), "duplicate"),
        ("code_map.json", lambda d: d["entries"][0].__setitem__("paths", ["../etc/passwd"]), "paths"),
        ("version_matrix.json", lambda d: d["main_branch"].__setitem__("commit", "main"), "git hash"),
        ("repositories.json", lambda d: d["repositories"][1].__setitem__("key", "Not ASCII é"), "key"),
        ("repositories.json", lambda d: d["repositories"].append(dict(d["repositories"][0])), "duplicate"),
        ("repositories.json", lambda d: d["repositories"][1]["evidence"][0].__setitem__("pattern", "(unclosed"), "does not compile"),
        ("incompatibilities.json", lambda d: d["combinations"][0]["requires_all"].append("warp_drive"), "warp_drive"),
        ("problem_patterns.json", lambda d: d["patterns"][0]["error_codes"].append("999999"), "999999"),
        ("version_matrix.json", lambda d: d["rows"][0].__setitem__("vllm_ascend", "v0.24.0"), "leading 'v'"),
        ("hardware.json", lambda d: d["chips"][0].__setitem__("id", "H100"), "H100"),
        ("checklist.json", lambda d: d.__setitem__("items", []), "items"),
    ],
)
def test_malformed_knowledge_raises_a_clear_error(tmp_path: Path, name: str, mutate, message: str) -> None:  # type: ignore[no-untyped-def]
    target = _broken_copy(tmp_path, name, mutate)
    with pytest.raises(KnowledgeBaseError) as info:
        load_knowledge_base(target)
    assert name in str(info.value) and message in str(info.value)


def test_invalid_json_and_missing_file(tmp_path: Path) -> None:
    target = tmp_path / "knowledge"
    shutil.copytree(KNOWLEDGE_DIR, target)
    (target / "env_vars.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(KnowledgeBaseError, match="env_vars.json: not valid JSON"):
        load_knowledge_base(target)
    (target / "env_vars.json").unlink()
    with pytest.raises(KnowledgeBaseError, match="env_vars.json: file not found"):
        load_knowledge_base(target)
