from __future__ import annotations

import pytest

from core.knowledge_base import load_knowledge_base
from core.messages import Option
from core.router import RouteDecision, named_repositories, resolve_choice, route

VLLM = "vllm-project/vllm"
VLLM_ASCEND = "vllm-project/vllm-ascend"
SGLANG = "sgl-project/sglang"
LLM = "verylucky01/MindIE-LLM"
SD = "verylucky01/MindIE-SD"
MOTOR = "verylucky01/MindIE-Motor"
PYMOTOR = "verylucky01/MindIE-PyMotor"
TURBO = "verylucky01/MindIE-Turbo"
SLIM = "verylucky01/MindStudio-ModelSlim"


def _research(text: str, **kw: object) -> tuple[str, ...]:
    decision = route(text, **kw)  # type: ignore[arg-type]
    assert decision.action == "research", decision
    return decision.repos


# ----------------------------------------------------------------- aliases


@pytest.mark.parametrize(
    ("text", "repo"),
    [
        ("vllm-ascend install guide", VLLM_ASCEND),
        ("VLLM-ASCEND docker tags", VLLM_ASCEND),
        ("vLLM Ascend 的图模式", VLLM_ASCEND),
        ("vllm_ascend worker", VLLM_ASCEND),
        ("SGLang on NPU", SGLANG),
        ("MindIE-LLM 调度", LLM),
        ("mindie llm 调度", LLM),
        ("MindIE_SD cache", SD),
        ("mindiesd wheel", SD),
        ("MindIE-Motor 打包", MOTOR),
        ("MindIE-PyMotor coordinator", PYMOTOR),
        ("pymotor coordinator", PYMOTOR),
        ("MindIE-Turbo patch", TURBO),
        ("msmodelslim W8A8", SLIM),
        ("ModelSlim 一键量化", SLIM),
        ("MindStudio-ModelSlim 敏感层分析", SLIM),
        ("昇腾模型压缩工具怎么用", SLIM),
        ("ＭｉｎｄＩＥ－ＬＬＭ 全角", LLM),
    ],
)
def test_aliases_settle_the_repository(text: str, repo: str) -> None:
    assert _research(text) == (repo,)


def test_motor_and_pymotor_are_told_apart_by_py() -> None:
    assert _research("MindIE-Motor only") == (MOTOR,)
    assert _research("MindIE-PyMotor only") == (PYMOTOR,)
    assert set(_research("MindIE-PyMotor vs MindIE-Motor")) == {PYMOTOR, MOTOR}


@pytest.mark.parametrize(
    ("text", "repo"),
    [
        ('  File "/usr/lib/python3.11/site-packages/vllm_ascend/ops/fused_moe.py", line 12\nRuntimeError: boom', VLLM_ASCEND),
        ("export VLLM_ASCEND_ENABLE_NZ=0 then restart", VLLM_ASCEND),
        ("the NPUModelRunner dummy run hangs", VLLM_ASCEND),
        ("ACLGraph capture is slow", VLLM_ASCEND),
        ("VLLM_OPTIMIZATION_LEVEL=3 breaks sampling", TURBO),
        ("from mindie_llm.text_generator import x", LLM),
    ],
)
def test_evidence_settles_without_a_question(text: str, repo: str) -> None:
    assert repo in _research(text)


def test_several_named_repositories_are_all_kept_in_order() -> None:
    assert _research("Compare SGLang and vllm-ascend on A3") == (SGLANG, VLLM_ASCEND)
    assert _research("vllm vs vllm-ascend model runner differences") == (VLLM, VLLM_ASCEND)


def test_vllm_only_as_version_or_command_next_to_vllm_ascend_is_not_upstream() -> None:
    assert _research("vllm==0.11.0 with vllm-ascend==0.9.1 fails") == (VLLM_ASCEND,)
    assert _research("vllm serve Qwen3-8B with vllm-ascend 0.11.0 crashes") == (VLLM_ASCEND,)


def test_named_repositories_helper() -> None:
    kb = load_knowledge_base()
    assert named_repositories("msmodelslim then MindIE-SD", kb) == (SLIM, SD)
    assert named_repositories("nothing here", kb) == ()


# -------------------------------------------------------------- clarification


def test_bare_vllm_with_ascend_context_asks_vllm_or_vllm_ascend() -> None:
    for text in ("How do I run vllm on Ascend 910B?", "vllm 在昇腾上报错", "vllm + CANN 8.3", "vllm with torch_npu"):
        d = route(text)
        assert d.action == "clarify", text
        assert [o.repo for o in d.options] == [VLLM_ASCEND, VLLM]
        assert [o.key for o in d.options] == ["vllm-ascend", "vllm"]
        assert d.question_en and d.question_zh
        assert "vllm-ascend" in d.question("en") and "vllm-ascend" in d.question("zh")


def test_bare_vllm_without_ascend_context_is_upstream() -> None:
    assert _research("How does vLLM's scheduler handle chunked prefill on A100?") == (VLLM,)


def test_bare_mindie_asks_for_the_component() -> None:
    d = route("MindIE 怎么部署 Qwen3？")
    assert d.action == "clarify"
    assert [o.repo for o in d.options] == [LLM, SD, MOTOR, PYMOTOR, TURBO]
    assert [o.key for o in d.options] == ["mindie-llm", "mindie-sd", "mindie-motor", "mindie-pymotor", "mindie-turbo"]
    assert "MindIE" in d.question_zh


def test_mindie_with_diffusion_work_is_mindie_sd() -> None:
    assert _research("MindIE 跑 Stable Diffusion XL 出图全黑") == (SD,)


def test_component_named_with_mindie_umbrella_needs_no_question() -> None:
    assert _research("mindie-turbo 和 mindie 有什么区别") == (TURBO,)


def test_ascend_alone_offers_all_nine_projects() -> None:
    kb = load_knowledge_base()
    d = route("昇腾上推理 Qwen3 用什么框架好？", kb=kb)
    assert d.action == "clarify"
    assert [o.repo for o in d.options] == [r.repo for r in kb.repositories]
    assert len(d.options) == 9
    for o in d.options:
        assert o.key.isascii() and len(o.key.encode()) <= 32 and o.label


@pytest.mark.parametrize("text", ["error code 561000 是什么意思", "torch_npu 报错 EZ9999", "Atlas 300I Duo 能跑什么"])
def test_ascend_signals_without_a_project_ask(text: str) -> None:
    assert route(text).action == "clarify"


def test_clarify_keeps_what_is_already_settled() -> None:
    d = route("MindIE 和 vllm 在 910B 上跑 Qwen3 哪个快？")
    assert d.action == "clarify"
    assert d.repos == (VLLM_ASCEND,)
    assert LLM in [o.repo for o in d.options]


# ------------------------------------------------------------------ sessions


def test_session_settles_follow_ups() -> None:
    assert _research("那 max_model_len 应该设多少？", session_repos=(VLLM_ASCEND,)) == (VLLM_ASCEND,)
    assert _research("在 NPU 上也一样吗", session_repos=(VLLM_ASCEND,)) == (VLLM_ASCEND,)
    assert _research("vllm 在昇腾上呢", session_repos=(VLLM_ASCEND, SLIM)) == (VLLM_ASCEND,)
    assert _research("MindIE 日志又报错了", session_repos=(MOTOR,)) == (MOTOR,)


def test_session_does_not_override_an_explicit_repository() -> None:
    assert _research("and in SGLang?", session_repos=(VLLM_ASCEND,)) == (SGLANG,)


def test_session_ignores_unknown_repositories_and_off_topic_drift() -> None:
    assert route("what about that?", session_repos=("evil/repo",)).action == "out_of_scope"
    d = route("能不能给我讲个笑话", session_repos=(VLLM_ASCEND,))
    assert d.action == "out_of_scope" and d.repos == ()


# -------------------------------------------------------------- out of scope


@pytest.mark.parametrize(
    "text",
    [
        "What's the weather in Shenzhen tomorrow?",
        "write a React app with a login page",
        "How to bake sourdough bread at home?",
        "What is PagedAttention and why does it help LLM inference?",
        "大模型推理时 KV cache 的量化有什么好处？",
        "sort in ascending order with pandas",
        "Use the MongoDB Atlas connection string",
    ],
)
def test_out_of_scope(text: str) -> None:
    d = route(text)
    assert d.action == "out_of_scope" and d.repos == () and d.options == ()


@pytest.mark.parametrize("text", ["", "   ", "\x00\x01\x1b[0m", "🙂🚀", None, "?" * 10])
def test_odd_input_is_out_of_scope_not_a_crash(text: object) -> None:
    d = route(text)  # type: ignore[arg-type]
    assert isinstance(d, RouteDecision) and d.action == "out_of_scope"


def test_large_paste_routes_by_its_content() -> None:
    log = "INFO step ok tokens=128\n" * 9000 + '  File "/x/vllm_ascend/worker/worker.py", line 1\nRuntimeError: error code:507015\n'
    assert len(log) > 200_000
    assert _research(log) == (VLLM_ASCEND,)


# --------------------------------------------------------------- resolve_choice

OPTIONS = (
    Option("vllm-ascend", "vllm-ascend", VLLM_ASCEND),
    Option("vllm", "vLLM", VLLM),
)
MINDIE = route("MindIE 怎么部署？").options


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1", VLLM_ASCEND),
        ("2", VLLM),
        ("２", VLLM),
        ("2.", VLLM),
        ("#2", VLLM),
        ("option 2", VLLM),
        ("第2个", VLLM),
        ("第二个", VLLM),
        ("选1", VLLM_ASCEND),
        ("the second one", VLLM),
        ("vllm-ascend", VLLM_ASCEND),
        ("VLLM_ASCEND", VLLM_ASCEND),
        ("vLLM", VLLM),
        ("upstream", VLLM),
        ("上游的", VLLM),
        ("I mean the vllm ascend plugin", VLLM_ASCEND),
        ("ｖｌｌｍ－ａｓｃｅｎｄ", VLLM_ASCEND),
    ],
)
def test_resolve_choice_vllm(text: str, expected: str) -> None:
    choice = resolve_choice(text, OPTIONS)
    assert choice is not None and choice.repo == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("3", MOTOR),
        ("SD", SD),
        ("sd", SD),
        ("PyMotor", PYMOTOR),
        ("motor", MOTOR),
        ("MindIE-Turbo", TURBO),
        ("mindie llm", LLM),
        ("mindie_llm", LLM),
        ("第五个", TURBO),
    ],
)
def test_resolve_choice_mindie(text: str, expected: str) -> None:
    choice = resolve_choice(text, MINDIE)
    assert choice is not None and choice.repo == expected


@pytest.mark.parametrize("text", ["", "   ", "0", "3", "99", "hello", "both", "vllm-ascend and vllm", "🙂", "x" * 500])
def test_resolve_choice_none(text: str) -> None:
    assert resolve_choice(text, OPTIONS) is None


def test_resolve_choice_without_options() -> None:
    assert resolve_choice("1", ()) is None
