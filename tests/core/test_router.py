from __future__ import annotations

import pytest

from core.knowledge.loader import load_knowledge_base
from core.messages import Option
from core.router import RouteDecision, named_repositories, resolve_choice, route
from core.vocabulary.map import VocabularyMap

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


def test_bare_vllm_with_ascend_context_is_the_plugin() -> None:
    # vLLM runs on an NPU only through vllm-ascend (issue 22): no "which vLLM?" question.
    for text in ("How do I run vllm on Ascend 910B?", "vllm 在昇腾上报错", "vllm + CANN 8.3", "vllm with torch_npu"):
        assert _research(text) == (VLLM_ASCEND,), text


def test_upstream_said_next_to_ascend_answers_about_both() -> None:
    assert set(_research("is upstream vllm's prefix caching the same on the NPU?")) == {VLLM_ASCEND, VLLM}


def test_bare_vllm_without_ascend_context_is_upstream() -> None:
    assert _research("How does vLLM's scheduler handle chunked prefill on A100?") == (VLLM,)


def test_bare_mindie_about_serving_is_its_llm_service() -> None:
    assert _research("MindIE 怎么部署 Qwen3？") == (LLM,)
    assert _research("does mindie support qwen3-moe") == (LLM,)
    assert _research("MindIE 服务起来了，curl 一直没响应") == (LLM,)


def test_bare_mindie_with_cluster_words_is_motor_or_pymotor() -> None:
    assert _research("requests through the MindIE coordinator time out after 10 minutes") == (MOTOR,)
    assert _research("MindIE 那个 Python 写的集群管理框架怎么装") == (PYMOTOR,)


def test_bare_mindie_with_nothing_to_go_on_asks_for_the_component() -> None:
    d = route("MindIE 报 undefined symbol，怎么排查")
    assert d.action == "clarify"
    assert [o.repo for o in d.options] == [LLM, SD, MOTOR, PYMOTOR, TURBO]
    assert [o.key for o in d.options] == ["mindie-llm", "mindie-sd", "mindie-motor", "mindie-pymotor", "mindie-turbo"]
    assert "MindIE" in d.question_zh


def test_mindie_with_diffusion_work_is_mindie_sd() -> None:
    assert _research("MindIE 跑 Stable Diffusion XL 出图全黑") == (SD,)


def test_component_named_with_mindie_umbrella_needs_no_question() -> None:
    assert _research("mindie-turbo 和 mindie 有什么区别") == (TURBO,)


def test_which_framework_on_ascend_compares_the_serving_stacks() -> None:
    assert _research("昇腾上推理 Qwen3 用什么框架好？") == (VLLM_ASCEND, LLM, SGLANG)
    assert _research("Our Atlas 300I Duo cards, what can I use them for LLM serving?") == (VLLM_ASCEND, LLM, SGLANG)


def test_serving_an_llm_on_ascend_with_nothing_deciding_asks_among_the_serving_stacks() -> None:
    # The stacks' answers differ and nothing says which runs: never the nine-product menu (issue 22).
    for text in ("ascend 910b 跑 deepseek-r1 需要几台机器", "Help! inference on Ascend crashes after 2 hours with HCCL timeout"):
        d = route(text)
        assert d.action == "clarify", text
        assert {o.repo for o in d.options} == {VLLM_ASCEND, LLM, SGLANG}
        assert "vllm-ascend" in d.question("en") and "MindIE-LLM" in d.question("zh")


def test_quantizing_on_ascend_is_msmodelslim_and_diffusion_is_mindie_sd() -> None:
    assert _research("910B 上怎么量化 Qwen3 的权重，校准数据用多少条") == (SLIM,)
    assert _research("wan2.1 视频生成在 800I A2 上单卡要多久") == (SD,)


def test_ascend_alone_offers_what_runs_on_an_npu_not_the_whole_menu() -> None:
    kb = load_knowledge_base()
    d = route("Atlas 300I Duo 能跑什么", kb=kb)
    assert d.action == "clarify"
    assert {o.repo for o in d.options} == {VLLM_ASCEND, LLM, SGLANG, SD, SLIM}
    for o in d.options:
        assert o.key.isascii() and len(o.key.encode()) <= 32 and o.label


@pytest.mark.parametrize("text", ["error code 561000 是什么意思", "torch_npu 报错 EZ9999", "Atlas 300I Duo 能跑什么"])
def test_ascend_signals_without_a_project_ask(text: str) -> None:
    assert route(text).action == "clarify"


def test_a_comparison_answers_about_both() -> None:
    # "MindIE" next to another framework is MindIE-LLM's service, never a component question.
    assert set(_research("MindIE 和 vllm 在 910B 上跑 Qwen3 哪个快？")) == {VLLM_ASCEND, LLM}
    assert set(_research("Is vllm-ascend faster than MindIE?")) == {VLLM_ASCEND, LLM}
    assert set(_research("sglang vs vllm-ascend on A3 for DeepSeek")) == {SGLANG, VLLM_ASCEND}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("https://github.com/vllm-project/vllm-ascend/issues/1234", (VLLM_ASCEND,)),
        ("https://gitcode.com/Ascend/MindIE-LLM/issues/5", (LLM,)),
        ("910B で vllm を動かすと 报错 OOM, what should I do", (VLLM_ASCEND,)),
        ('Traceback (most recent call last):\n  File "/x/site-packages/vllm_ascend/worker/worker.py", line 88\n'
         "RuntimeError: call aclnnMatmul failed, error code 561103", (VLLM_ASCEND,)),
    ],
)
def test_a_bare_url_a_bare_log_or_three_languages_route_by_what_they_hold(text: str, expected: tuple[str, ...]) -> None:
    assert _research(text) == expected


def test_a_log_with_no_words_and_no_product_gets_one_short_question() -> None:
    d = route("EZ9999: Inner Error!\nEZ9999[PID: 1] The error from device(chipId:0, dieId:0)")
    assert d.action == "clarify" and len(d.options) <= 5 and len(d.question("en")) < 120


def test_many_products_named_at_once_get_one_short_question() -> None:
    text = "vllm-ascend sglang mindie-llm mindie-sd mindie-motor pymotor mindie-turbo modelslim " * 3
    d = route(text)
    assert d.action == "clarify" and 2 <= len(d.options) <= 9
    assert "MindIE-SD" in d.question("en") and len(d.question("en")) < 200


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
        "TensorRT-LLM engine build fails for Llama 3 on H100",
        "llama.cpp on my MacBook is slow with a 7B model",
        "LlamaFactory LoRA 微调 Qwen2.5-7B 在 4090 上显存不够",
        "sort in ascending order with pandas",
        "Use the MongoDB Atlas connection string",
    ],
)
def test_out_of_scope(text: str) -> None:
    d = route(text)
    assert d.action == "out_of_scope" and d.repos == () and d.options == ()


@pytest.mark.parametrize(
    "text",
    [
        "What is PagedAttention and why does it help LLM inference?",
        "大模型推理时 KV cache 的量化有什么好处？",
        "--reasoning-parser qwen3 puts the thinking into content instead of reasoning_content",
    ],
)
def test_an_inference_question_without_a_product_is_upstream_vllm(text: str) -> None:
    # vLLM is in scope: never declined for want of a product name (issue 22).
    assert _research(text) == (VLLM,)


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
MINDIE = route("MindIE 报 undefined symbol").options


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


# ------------------------------------------- issue 12: evidence instead of a question


@pytest.mark.parametrize(
    ("text", "repo"),
    [
        # vllm-ascend: flags, config keys, classes and log lines only the plugin has
        ("vllm serve /models/qwen --quantization ascend gives garbage", VLLM_ASCEND),
        ('additional_config={"torchair_graph_config": {"enabled": true}} hangs', VLLM_ASCEND),
        ("ascend_compilation_config 怎么关掉融合", VLLM_ASCEND),
        ("INFO Platform plugin ascend is activated, then nothing", VLLM_ASCEND),
        ("AscendMLAMetadataBuilder build fails for chunked prefill", VLLM_ASCEND),
        ("NPUWorker.determine_available_memory returns a negative number", VLLM_ASCEND),
        # MindIE-LLM: the server's config.json keys, its env vars and modules
        ("maxPrefillTokens 和 maxSeqLen 怎么配合", LLM),
        ("ATB_LLM_HCCL_ENABLE=1 之后多卡卡住", LLM),
        ("mindieservice_daemon 起不来", LLM),
        ("NPU_MEMORY_FRACTION 设成 0.9 还是 warmup 失败", LLM),
        # MindIE-Motor: MindIE MS
        ("ms_coordinator keeps returning 503 to clients", MOTOR),
        ("MINDIEMS_LOG_LEVEL 在哪设置", MOTOR),
        ("MIES_INSTALL_PATH 是哪个目录", MOTOR),
        # MindIE-PyMotor
        ("motor_deploy_config 的 tls 配置怎么写", PYMOTOR),
        ("File \"/opt/x/motor/node_manager/heartbeat.py\", line 3", PYMOTOR),
        # MindIE-SD, msModelSlim, MindIE-Turbo, SGLang
        ("RainFusion 的稀疏度怎么设", SD),
        ("from msmodelslim.pytorch.llm_ptq.anti_outlier import AntiOutlierConfig", SLIM),
        ("Calibrator(model, cfg, calib_data=d).run() 卡住", SLIM),
        ("from mindie_turbo.adaptor import vllm_turbo", TURBO),
        ("SGLANG_USE_FIA_NZ 和 MLAPO 要一起开吗", SGLANG),
        ("--attention-backend ascend --disable-radix-cache 报错", SGLANG),
    ],
)
def test_product_only_evidence_settles_the_repository(text: str, repo: str) -> None:
    assert _research(text) == (repo,)


@pytest.mark.parametrize(
    "text",
    [
        "the Ascend plugin for vLLM: how do I install it?",
        "Is the vLLM Ascend plugin faster than MindIE-LLM?",
        "昇腾的vllm插件支持 Qwen3 吗",
        "昇腾 vLLM 插件怎么装",
        "vllm 的昇腾插件怎么编译",
        "华为的 vLLM 插件支持 300I Duo 吗",
        "vLLM's NPU plugin and CANN 8.3",
    ],
)
def test_descriptive_names_of_vllm_ascend_are_aliases(text: str) -> None:
    repos = _research(text)
    assert VLLM_ASCEND in repos
    # The "vLLM" inside the name is not a question about upstream vLLM.
    assert VLLM not in repos


@pytest.mark.parametrize(
    ("text", "repo"),
    [
        ("华为的量化工具支持 W4A4 吗", SLIM),
        ("昇腾量化工具怎么装", SLIM),
        ("Ascend quantization tool for Qwen3", SLIM),
        ("MindIE MS 的 controller 挂了", MOTOR),
        ("mindie-service 的日志在哪", LLM),
    ],
)
def test_descriptive_names_of_other_products(text: str, repo: str) -> None:
    assert _research(text) == (repo,)


def test_descriptive_name_resolves_a_clarification_choice() -> None:
    choice = resolve_choice("the Ascend plugin for vLLM", OPTIONS)
    assert choice is not None and choice.repo == VLLM_ASCEND


@pytest.mark.parametrize(
    "text",
    [
        "Running vllm on the NPU: call aclnnMatmul failed, error code is 161002",
        "vllm serve 报 EZ9999: Inner Error!",
        "vllm crashed: NPU out of memory. Tried to allocate 2.00 GiB",
        "vllm 多机 HCCL 建链超时",
        "vllm 0.9.1 torchair 图编译失败",
        "vllm: Cannot run aclop operators during NPU graph capture",
    ],
)
def test_vllm_failing_with_an_ascend_error_is_vllm_ascend(text: str) -> None:
    assert _research(text) == (VLLM_ASCEND,)


def test_vllm_on_ascend_without_an_error_is_still_the_plugin() -> None:
    for text in ("vllm 能在 910C 上跑吗", "Can vllm use torch_npu directly without any plugin?"):
        assert _research(text) == (VLLM_ASCEND,), text


@pytest.mark.parametrize(
    "text",
    [
        "ERR00100 PTA call acl api failed",
        "EL0004 Failed to allocate memory requested by GE module",
        "call aclnnFlashAttentionScore failed",
        "aclrtMemcpy returned 507899",
        "RuntimeError: NPU out of memory",
        "Cannot run aclop operators during capture",
        "HCCL timeout after 1800s",
        "vNPU 切分后吞吐下降",
    ],
)
def test_ascend_error_strings_are_never_out_of_scope(text: str) -> None:
    assert route(text).action != "out_of_scope"


def test_mindie_with_component_evidence_needs_no_question() -> None:
    assert _research("MindIE 的 config.json 里 npuMemSize 设 -1 是什么意思") == (LLM,)
    assert _research("MindIE 的 ms_controller 起不来") == (MOTOR,)
    assert _research("mindie 跑 Wan2.1 开 DiTCache") == (SD,)
    # A variable every component shares does not settle it.
    assert route("MINDIE_LOG_TO_STDOUT 不生效").action == "clarify"


def test_vllm_as_a_pymotor_config_value_is_not_a_repository() -> None:
    assert _research('PyMotor user_config.json 里 "engine_type": "vllm" 启动失败') == (PYMOTOR,)


@pytest.mark.parametrize(
    "text",
    [
        "ServerConfig in my Spring Boot app is null",
        "How do I write a plugin for vite?",
        "my kubernetes controller and coordinator pods restart",
        "calibrator for my thermometer",
        "I need block storage for a database",
        "maxseqlen in my keras model",
        "my tensorflow serving model returns 500",
    ],
)
def test_generic_words_do_not_settle_a_product(text: str) -> None:
    assert route(text).action == "out_of_scope"


# --------------------------------------------------- the evidence regexes themselves


def _nested_repeat(pattern: str) -> str | None:
    """A repeat (max > 1) whose body holds another repeat: the shape of catastrophic backtracking."""
    import re._parser as sre_parse  # the stdlib parser; the public API has no tree

    def has_repeat(items: object) -> bool:
        for op, av in items:  # type: ignore[attr-defined]
            if op in (sre_parse.MAX_REPEAT, sre_parse.MIN_REPEAT, sre_parse.POSSESSIVE_REPEAT):
                return True
            if walk_children(op, av, has_repeat):
                return True
        return False

    def walk_children(op: object, av: object, fn: object) -> bool:
        if op is sre_parse.SUBPATTERN:
            return fn(av[-1])  # type: ignore[index,operator]
        if op is sre_parse.BRANCH:
            return any(fn(b) for b in av[1])  # type: ignore[index,operator]
        if op in (sre_parse.ASSERT, sre_parse.ASSERT_NOT):
            return fn(av[1])  # type: ignore[index,operator]
        return False

    def check(items: object) -> str | None:
        for op, av in items:  # type: ignore[attr-defined]
            if op in (sre_parse.MAX_REPEAT, sre_parse.MIN_REPEAT, sre_parse.POSSESSIVE_REPEAT):
                low, high, body = av
                if high > 1 and has_repeat(body):
                    return f"{pattern!r}: nested quantifier"
                found = check(body)
            elif op is sre_parse.SUBPATTERN:
                found = check(av[-1])
            elif op is sre_parse.BRANCH:
                found = next((f for b in av[1] if (f := check(b))), None)
            elif op in (sre_parse.ASSERT, sre_parse.ASSERT_NOT):
                found = check(av[1])
            else:
                found = None
            if found:
                return found
        return None

    return check(sre_parse.parse(pattern))


def test_nested_quantifier_detector_works() -> None:
    assert _nested_repeat(r"(a+)+b")
    assert _nested_repeat(r"(?:x\w{0,3})*")
    assert _nested_repeat(r"ab{0,3}(?:cd)?") is None


def test_every_evidence_and_router_regex_is_linear() -> None:
    import core.router as router
    from core.signals import Guarded

    kb = load_knowledge_base()
    patterns = [e.pattern for r in kb.repositories for e in r.evidence]
    patterns += [v.pattern.pattern for v in vars(router).values() if isinstance(v, Guarded)]
    assert len(patterns) > 30
    problems = [p for p in (_nested_repeat(x) for x in patterns) if p]
    assert not problems, problems


def test_evidence_needles_never_hide_a_match() -> None:
    """The guard skips a regex when no needle is present; that must never change a result."""
    import json
    import re
    from pathlib import Path

    kb = load_knowledge_base()
    data = Path(__file__).resolve().parents[2] / "tests" / "data"
    texts = [
        json.loads(line)["q"]
        for name in ("routing_devset.jsonl", "routing_heldout.jsonl", "routing_heldout2.jsonl")
        for line in (data / name).read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    checked = 0
    for repo in kb.repositories:
        for e in repo.evidence:
            compiled = re.compile(e.pattern, re.IGNORECASE)
            for text in texts:
                for m in compiled.finditer(text):
                    checked += 1
                    assert any(n in m.group(0).lower() for n in e.needles), (repo.repo, e.pattern, m.group(0))
    assert checked > 50


def test_every_evidence_entry_names_its_source() -> None:
    import json
    import os
    import re
    from pathlib import Path

    from core.knowledge.loader import KNOWLEDGE_DIR

    raw = json.loads((KNOWLEDGE_DIR / "repositories.json").read_text(encoding="utf-8"))
    entries = [e for r in raw["repositories"] for e in r["evidence"]]
    assert len(entries) >= 25
    repos_dir = Path(os.environ.get("REPOS_DIR", "/work/repos"))
    for e in entries:
        source = e.get("source", "")
        m = re.fullmatch(r"([\w.\-]+/[\w.\-]+):(\S+)", source)
        assert m or source.startswith("https://"), e
        # Where a clone of the product is at hand, the file the evidence came from exists.
        if m and (repos_dir / m.group(1)).is_dir():
            assert (repos_dir / m.group(1) / m.group(2)).exists(), source


@pytest.mark.parametrize(
    "text",
    [
        "structured output with the xgrammar backend on the 910B: supported yet?",
        "vllm-ascend 0.9.1 with --reasoning-parser qwen3 leaves reasoning_content null",
    ],
)
def test_an_upstream_vllm_feature_used_on_an_npu_answers_about_both(text: str) -> None:
    assert set(_research(text)) == {VLLM_ASCEND, VLLM}


def test_a_plugin_release_tag_next_to_mindie_joins_the_comparison() -> None:
    text = "mindie 镜像 14 tok/s，vllm-ascend 的 v0.11.0rc1 镜像只有 1.4 tok/s，正常吗"
    assert set(_research(text)) == {LLM, VLLM_ASCEND}
    assert set(_research("mindie 镜像 14 tok/s，0.11.0rc1 的镜像只有 1.4 tok/s，正常吗")) == {LLM, VLLM_ASCEND}


@pytest.mark.parametrize(
    "text",
    [
        "llama-server -m qwen-7b.gguf --device CANN0 on a 910b fails with EZ9903",
        "用 mindformers 的脚本在 910B 上推 qwen1.5，6 tokens/s 正常吗",
        "LMDeploy 的 Ascend 后端镜像起 qwen3，--device ascend 不认",
    ],
)
def test_another_stack_on_an_npu_is_still_out_of_scope(text: str) -> None:
    assert route(text).action == "out_of_scope"


def test_which_of_many_named_products_is_answered_by_the_serving_stacks() -> None:
    text = "Qwen3-Next 哪个能跑：vllm-ascend / sglang / mindie-llm / mindie-turbo / msmodelslim / mindie-sd ?"
    assert set(_research(text)) == {VLLM_ASCEND, LLM, SGLANG}


def test_mindie_turbo_on_an_npu_brings_its_host_plugin() -> None:
    assert set(_research("910B 上 pip 装了 mindie_turbo 之后 Qwen2.5 报 ERR99999")) == {TURBO, VLLM_ASCEND}


def test_modelslim_as_sglangs_quantization_value_is_not_a_modelslim_question() -> None:
    assert _research("--mem-fraction-static 0.9 --quantization modelslim, NPU out of memory") == (SGLANG,)
    assert SLIM in _research("msmodelslim 量化后用 sglang --quantization modelslim 起不来")


@pytest.mark.parametrize("flags", ["--tp-size 4 --moe-a2a-backend deepep", "--chunked-prefill-size 8192 --max-running-requests 64",
                                   "--speculative-algorithm EAGLE3", "--dp-size 2 --ep-size 16 --deepep-mode auto"])
def test_sglang_only_launch_flags_name_sglang(flags: str) -> None:
    # vLLM spells these --tensor-parallel-size, --max-num-seqs, --speculative-config: only SGLang takes them.
    assert _research(f"Qwen3-235B on 910B with {flags}: the server hangs after warmup") == (SGLANG,)


def test_a_size_flag_vllm_shares_settles_nothing_for_sglang() -> None:
    assert SGLANG not in route("--tensor-parallel-size 4 --max-model-len 8192 on 910B hangs").repos


@pytest.mark.parametrize("text", ["Planning speculative decoding on Ascend with the V0 engine: any extra env var?",
                                  "910B 上 V1 引擎开 chunked prefill 有什么限制", "NPU 上 v0/v1 engine 哪个更快"])
def test_vllms_engine_generations_on_an_npu_mean_the_plugin(text: str) -> None:
    assert _research(text) == (VLLM_ASCEND,)


def test_sglang_server_args_as_a_log_prints_them_name_sglang() -> None:
    assert _research("ep_size=32, moe_a2a_backend='deepep', deepep_mode='auto', ep_num_redundant_experts=0 ... NPU out of memory") == (SGLANG,)


@pytest.mark.parametrize(("text", "repo"), [
    ("[MIE04E02011C] [endpoint] Failed to init infer backend manager, two 910B nodes", LLM),
    ("MIE05E000002 on 910B while the service loads the weights", LLM),
    ("mindieclient 报 MIE02E000401 连接失败", "verylucky01/MindIE-Motor"),
])
def test_a_mindie_error_code_names_its_component(text: str, repo: str) -> None:
    # MIE<component><level><number>: 01/02 the service tools and client (MindIE-Motor), 04/05 the LLM server and runtime.
    assert _research(text) == (repo,)


def test_a_second_mindie_instance_is_a_service_question() -> None:
    assert _research("同一台 8 卡机想起两个 MindIE 实例，第二个起不来") == (LLM,)


# ----------------------------------------------------------------- issue 22, third dev set (routing_real_dev3)


def test_an_acronym_a_fact_mentions_settles_nothing() -> None:
    # "MTP" is a technique every stack implements; a MindIE-LLM fact naming it does not make the question MindIE's.
    decision = route("昇腾 A3 上投机解码（EAGLE / MTP）现在能开吗，开了精度会不会掉")
    assert decision.action == "clarify" and LLM in {o.repo for o in decision.options}


def test_vllm_in_an_install_line_next_to_the_plugin_is_its_dependency() -> None:
    assert _research("pip install vllm vllm-ascend 装完一启动就报错") == (VLLM_ASCEND,)
    assert _research("uv pip install vllm==0.9.1 vllm-ascend, then it fails") == (VLLM_ASCEND,)
    assert set(_research("vllm vs vllm-ascend: which one do I install?")) == {VLLM, VLLM_ASCEND}


def test_vllm_module_paths_in_a_traceback_on_an_npu_are_the_plugin_alone() -> None:
    vocabulary = VocabularyMap({"module": {"vllm.engine": [VLLM]}, "flag": {"--upstream-only-flag": [VLLM]}})
    frame = 'ERR00100 PTA call acl api failed\n  File ".../site-packages/vllm/engine/multiprocessing/engine.py", line 391'
    assert _research(frame, vocabulary=vocabulary) == (VLLM_ASCEND,)
    # a name only upstream vLLM owns, typed by the user, still brings vLLM in
    assert set(_research("vllm on 910B with --upstream-only-flag fails", vocabulary=vocabulary)) == {VLLM_ASCEND, VLLM}


@pytest.mark.parametrize(
    "text",
    [
        "llama-cli -ngl 33 on 910B2 crashes with CANN error: E89999: Inner Error! QwQ-32B Q4_0",
        "RuntimeError: FlashAttention only supports Ampere GPUs or newer. Wan2.1 t2v-1.3B on a V100",
        "stable diffusion xl is slow on my RTX 3060, any flags to speed it up?",
    ],
)
def test_another_stacks_cli_and_diffusion_off_ascend_are_out_of_scope(text: str) -> None:
    assert route(text).action == "out_of_scope"


def test_a_bare_mindie_in_a_long_list_counts_as_its_serving_stack() -> None:
    text = "vllm / vllm-ascend / sglang / mindie / mindie-sd / mindie-motor / mindie-turbo / msmodelslim 哪个能跑 Kimi-K2.5？"
    assert set(_research(text)) == {VLLM_ASCEND, LLM, SGLANG}


def test_the_decision_says_whether_the_text_names_an_identifier_and_an_npu() -> None:
    plain = route("Can a 910B4 run Qwen3.5-35B-A3B?")
    assert plain.ascend and not plain.specific
    keyed = route("910B 上 max_num_seqs=1 只有 8 tok/s")
    assert keyed.ascend and keyed.specific
    upstream = route("--max-logprobs 20 is ignored by the OpenAI server")
    assert not upstream.ascend and upstream.specific


def test_a_technical_message_naming_nothing_is_asked_about_not_declined() -> None:
    # Declining needs positive evidence of another stack: a source file, an env var or an error with
    # no product named is asked about (the runtimes and upstream vLLM), never refused.
    for text in ("[error] [block_alloc_solver.cpp:63] can't find block, free fail", "sleep(level=1) frees nothing with PYTORCH_CUDA_ALLOC_CONF set"):
        decision = route(text)
        assert decision.action == "clarify" and "vllm-project/vllm" in [o.repo for o in decision.options]
    assert route("How do I set NCCL_P2P_DISABLE for two RTX 4090s?").action == "out_of_scope"  # a GPU-only setting
    assert route("thanks, see you tomorrow").action == "out_of_scope"  # nothing technical: not ours


def test_vllms_own_camelcase_names_in_a_log_name_vllm() -> None:
    died = "ERROR Worker proc VllmWorker-3 died unexpectedly, shutting down executor."
    assert route(died).repos == ("vllm-project/vllm",)
    assert route(f"{died}\n8 卡 910B 起 qwen3-235b").repos == ("vllm-project/vllm-ascend",)
    assert route("Vllmx 910B").repos != ("vllm-project/vllm",)  # not a vLLM name
