from __future__ import annotations

import pytest

from core.language import detect_language
from core.signals import FEATURE_TOKENS, Guarded, Signals, extract_signals


# ------------------------------------------------------------------ error codes


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("RuntimeError: ACL stream synchronize failed, error code:507015", "507015"),
        ("NPU function error: call aclnnMoeDistributeDispatchV4 failed, error code is 561000", "561000"),
        ("Transfer slice failed with status: 503900", "503900"),
        ("wait for compute device to finish failed, runtime result = 507013.", "507013"),
        ("[rank0]: RuntimeError: EZ9999: Inner Error!", "EZ9999"),
        ("Get_Socket_Timeout(EI0006): Getting socket times out.", "EI0006"),
        ("[ERROR] 2025-09-10-09:46:59 (PID:973, Device:0, RankID:-1) ERR00100 PTA call acl api failed.", "ERR00100"),
        ("capture failed, error code is 207008", "207008"),
        ("错误码 561002 是什么", "561002"),
    ],
)
def test_error_codes(text: str, code: str) -> None:
    assert code in extract_signals(text).error_codes


def test_error_codes_skip_timestamps_pids_and_dates() -> None:
    text = (
        "E20260608 14:45:44.507015 342420 ascend_direct_transport.cpp:836]\n"
        "(Worker_DP0_TP0_EP0 pid=106335) ERROR 05-21 21:41:10 [multiproc_executor.py:932]\n"
        "date 2025-507015 port 8000 model Qwen3-30B-A3B"
    )
    assert extract_signals(text).error_codes == ()


def test_error_codes_in_order_without_duplicates() -> None:
    text = "EZ9999 first, then error code is 507015, again 507015 and EZ9999"
    assert extract_signals(text).error_codes == ("EZ9999", "507015")


# ------------------------------------------------------------------------ chips


@pytest.mark.parametrize(
    ("text", "chip"),
    [
        ("We run on an Atlas 800I A2 with 8 cards", "910B"),
        ("atlas 800t a2 训练服务器", "910B"),
        ("npu-smi shows 910B3", "910B"),
        ("export SOC_VERSION=ascend910b1", "910B"),
        ("A3 超节点上部署", "910C"),
        ("Atlas 800I A3 inference server", "910C"),
        ("export SOC_VERSION=ascend910_9391", "910C"),
        ("quay.io/ascend/vllm-ascend:v0.11.0rc1-a3", "910C"),
        ("昇腾910C上跑", "910C"),
        ("Atlas 300I Duo 推理卡", "310P"),
        ("npu-smi: 310P3", "310P"),
        ("Atlas 200I A2 dev kit", "310B"),
        ("old Ascend 910 Pro B cluster", "910"),
    ],
)
def test_chips(text: str, chip: str) -> None:
    assert chip in extract_signals(text).chips


def test_chip_false_friends() -> None:
    # "A3B" in a model name is not an Atlas A3; Atlas 200I A2 is 310B, not 910B.
    assert extract_signals("Qwen3-30B-A3B on vllm").chips == ()
    assert extract_signals("Atlas 200I A2").chips == ("310B",)


# --------------------------------------------------------------------- versions


def test_versions_from_prose() -> None:
    s = extract_signals("vllm 0.11.0 with vllm-ascend 0.9.1, CANN 8.2.RC1, torch_npu 2.5.1.post1, python 3.10")
    assert s.version("vllm") == "0.11.0"
    assert s.version("vllm-ascend") == "0.9.1"
    assert s.version("cann") == "8.2.RC1"
    assert s.version("torch_npu") == "2.5.1.post1"
    assert s.version("python") == "3.10"
    assert s.version("torch") is None  # torch_npu is not torch


def test_versions_with_leading_v_and_rc() -> None:
    s = extract_signals("升级到 vllm-ascend v0.13.0rc1 之后，vLLM 版本是 v0.13.0")
    assert s.version("vllm-ascend") == "0.13.0rc1"
    assert s.version("vllm") == "0.13.0"


def test_versions_from_pip_freeze_and_pip_list() -> None:
    freeze = "vllm==0.11.0\nvllm-ascend==0.11.0rc1\ntorch==2.7.1\ntorch-npu==2.7.1.post1\ntransformers==4.57.1\n"
    s = extract_signals(freeze)
    assert (s.version("vllm"), s.version("vllm-ascend"), s.version("torch"), s.version("torch_npu"), s.version("transformers")) == (
        "0.11.0", "0.11.0rc1", "2.7.1", "2.7.1.post1", "4.57.1",
    )
    table = "vllm                                     0.11.0+empty\nvllm-ascend                              0.11.0\n"
    s = extract_signals(table)
    assert s.version("vllm") == "0.11.0+empty"
    assert s.version("vllm-ascend") == "0.11.0"


def test_versions_from_collect_env_output() -> None:
    text = (
        "PyTorch version: 2.7.1+cpu\nIs debug build: False\n\nPython version: 3.11.10 (main, Nov  1 2025) (64-bit runtime)\n"
        "Versions of relevant libraries:\n[pip3] numpy==1.26.4\n[pip3] torch==2.7.1+cpu\n[pip3] torch-npu==2.7.1.post1\n"
        "[pip3] transformers==4.57.1\nvLLM Version: 0.11.0\nvLLM Ascend Version: 0.11.0rc1\n\nNPU:\n"
        "| npu-smi 25.2.0                   Version: 25.2.0                                               |\n"
        "CANN:\npackage_name=Ascend-cann-toolkit\nversion=8.3.RC2\ninnerversion=V100R001C23SPC001B235\n"
    )
    s = extract_signals(text)
    assert s.version("vllm") == "0.11.0"
    assert s.version("vllm-ascend") == "0.11.0rc1"
    assert s.version("torch") == "2.7.1+cpu"
    assert s.version("torch_npu") == "2.7.1.post1"
    assert s.version("cann") == "8.3.RC2"
    assert s.version("python") == "3.11.10"
    assert s.version("driver") == "25.2.0"


@pytest.mark.parametrize(
    ("text", "cann"),
    [
        ("CANNVERSION=CANN 8.5.0.B100", "8.5.0.B100"),
        ("source cann8.3.rc1/ascend-toolkit/set_env.sh", "8.3.rc1"),
        ("CANN 版本 8.3.RC2", "8.3.RC2"),
        ("Ascend-cann-toolkit_9.1.0_linux-aarch64.run", "9.1.0"),
    ],
)
def test_cann_versions(text: str, cann: str) -> None:
    assert extract_signals(text).version("cann") == cann


def test_mindie_version_is_not_a_component_version() -> None:
    assert extract_signals("MindIE 2.2.RC1 配套 CANN 8.3.RC2").version("mindie") == "2.2.RC1"
    assert extract_signals("MindIE-Turbo 2.0.0").version("mindie") is None


def test_no_version_from_model_names_or_commands() -> None:
    s = extract_signals("vllm serve Qwen/Qwen2.5-7B-Instruct --tensor-parallel-size 2")
    assert s.versions == ()


# --------------------------------------------------------------------- features


def test_features_graph_mode_family() -> None:
    s = extract_signals("--compilation-config '{\"cudagraph_mode\": \"FULL_DECODE_ONLY\"}' works, torchair does not")
    assert {"graph_mode", "full_decode_only", "torchair"} <= set(s.features)
    assert "enforce_eager" in extract_signals("with --enforce-eager it runs").features
    assert "aclgraph" in extract_signals("ACLGraph capture fails").features


def test_features_next_to_chinese_text() -> None:
    # Han characters are word characters for \b; detection must still work.
    s = extract_signals("开启MTP后报错，关闭MTP正常，用的W8A8权重")
    assert {"mtp", "w8a8", "quantization"} <= set(s.features)


def test_nz_on_and_off() -> None:
    assert "nz" in extract_signals("export VLLM_ASCEND_ENABLE_NZ=1").features
    off = extract_signals("export VLLM_ASCEND_ENABLE_NZ=0")
    assert "nz_off" in off.features and "nz" not in off.features
    assert "nz" in extract_signals("NZ格式和强化学习一起用").features


def test_features_misc() -> None:
    s = extract_signals(
        "PD disaggregation with mooncake, multi-LoRA, Qwen2.5-VL images, NPU out of memory, output is garbled !!!!, "
        "speculative decoding with eagle3, verl rollout"
    )
    assert {"pd_disaggregation", "mooncake", "lora", "multimodal", "oom", "garbled_output", "speculative", "eagle", "rl_training"} <= set(s.features)


def test_max_model_len_value() -> None:
    assert extract_signals("--max-model-len 32768").max_model_len == 32768
    assert extract_signals('"max_model_len": 131072').max_model_len == 131072
    assert extract_signals("max_model_len=32k").max_model_len == 32 * 1024
    assert "max_model_len" in extract_signals("--max-model-len 8192").tokens


def test_feature_names_are_declared() -> None:
    s = extract_signals(
        "graph mode ACLGraph FULL_DECODE_ONLY torchair --enforce-eager MTP speculative eagle NZ W8A8 W4A8 W4A4 "
        "PD分离 mooncake LoRA 多模态 OOM 乱码 多机 HCCL verl MLA prefix caching fp16 async scheduling pip install MoE error"
    )
    assert set(s.features) <= FEATURE_TOKENS


# ------------------------------------------------------------------ path hints


def test_traceback_path_hints() -> None:
    text = (
        'File "/usr/local/python3.11.13/lib/python3.11/site-packages/vllm/v1/engine/core.py", line 702\n'
        'File "/vllm-workspace/vllm-ascend/vllm_ascend/worker/model_runner_v1.py", line 3240\n'
        "from mindie_llm.text_generator import Generator\n"
    )
    assert extract_signals(text).path_hints == ("vllm", "vllm_ascend", "mindie_llm")


# ------------------------------------------------------------------ robustness


def test_large_paste_is_handled_and_finds_late_signals() -> None:
    filler = "(Worker pid=1) INFO 09-04 09:50:12 [core.py:702] step ok, tokens=128 vllm serve\n" * 2700
    text = filler + "RuntimeError: ACL stream synchronize failed, error code:507015 on 910B\n"
    assert len(text) > 200_000
    s = extract_signals(text)
    assert "507015" in s.error_codes
    assert "910B" in s.chips


@pytest.mark.parametrize(
    "text",
    [
        "a" * 200_000,
        "vllm " * 40_000,
        "error code: " * 20_000,
        "1.2." * 50_000,
        "max_model_len=" * 14_000,
        "\x00\x01\x02\x1b[31m\x7f" * 1000,
        "🙂🚀🔥" * 1000,
        "\ud800 lone surrogate",
    ],
)
def test_pathological_inputs_do_not_blow_up(text: str) -> None:
    assert isinstance(extract_signals(text), Signals)


def test_empty_and_non_text_inputs() -> None:
    assert extract_signals("").is_empty
    assert extract_signals("   \n\t").is_empty
    assert extract_signals(None).is_empty  # type: ignore[arg-type]
    assert extract_signals("error code:507015".encode()).error_codes == ("507015",)  # type: ignore[arg-type]


def test_with_env_fills_missing_values_only() -> None:
    s = extract_signals("vllm-ascend 0.9.1").with_env({"vllm": "v0.11.0", "vllm-ascend": "0.11.0", "chip": "910b"})
    assert s.version("vllm") == "0.11.0"
    assert s.version("vllm-ascend") == "0.9.1"  # the message wins
    assert s.chips == ("910B",)
    assert extract_signals("x").with_env({"unknown_pkg": "1.0", "chip": "H100"}).versions == ()


# -------------------------------------------------------------------- language


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("How do I install vllm-ascend?", "en"),
        ("vllm-ascend 怎么安装？", "zh"),
        ("部署报错了，帮忙看看\nTraceback (most recent call last):\n  File \"x.py\", line 1\nRuntimeError: something failed badly in the engine core process", "zh"),
        ("What does 昇腾 mean in the docs?", "en"),
        ("MindIE 报错", "zh"),
        ("vllm-ascend 0.11.0 启动 … 报 ModuleNotFoundError: No module named 'vllm_ascend.ops' while loading the model", "zh"),
        ("Running on 昇腾 and 华为 servers, the engine fails to start after loading weights", "en"),
        ("", "en"),
        ("🙂🙂", "en"),
        ("12345", "en"),
    ],
)
def test_detect_language(text: str, language: str) -> None:
    assert detect_language(text) == language


# ---------------------------------------------------------- guarded patterns


def _all_guarded() -> list[tuple[str, Guarded]]:
    import core.router as router
    import core.signals as signals
    from core.knowledge.loader import load_knowledge_base

    found: list[tuple[str, Guarded]] = []
    for module in (signals, router):
        for name, value in vars(module).items():
            if isinstance(value, Guarded):
                found.append((f"{module.__name__}.{name}", value))
            elif isinstance(value, tuple):
                for item in value:
                    if isinstance(item, tuple) and item and isinstance(item[-1], Guarded):
                        found.append((f"{module.__name__}.{name}[{item[0]}]", item[-1]))
                    elif isinstance(item, Guarded):
                        found.append((f"{module.__name__}.{name}", item))
    for repo, checks in router._matcher(load_knowledge_base()).repos:
        found += [(f"repo {repo.key}", c) for c in checks]
    return found


def _corpus() -> list[str]:
    import json
    from pathlib import Path

    lines = (Path(__file__).resolve().parents[2] / "tests" / "data" / "routing_devset.jsonl").read_text(encoding="utf-8").splitlines()
    texts = [json.loads(line)["q"] for line in lines if line.strip()]
    texts += [
        "VLLM_ASCEND_ENABLE_NZ=1 FRACTAL_NZ NZ格式 weight_nz_mode: 2", "Atlas 800I A2 A3 A2 -a3 ascend910_9391 910ProB 200I A2",
        "CANNVERSION=CANN 8.5.0.B100 Ascend-cann-toolkit_9.1.0_linux", "2P1D xPyD P/D kv_consumer KV Producer",
        "Qwen2.5-VL InternVL omni llava 图片输入 image_url", "NPU Out-Of-Memory OOM 207018 显存溢出",
        "MLA only support {32, 64, 128} numHeads / numKvHeads", "--no-enable-prefix-caching Prefix Caching 前缀缓存",
        "EZ9999 EI0006 ERR00100 error code:507015 status: 503900 161002", "ACL Graph acl_graph AclGraph npugraph Torchair",
        "python3.11 Python version: 3.10.2 npu-smi 24.1.rc3 driver version: 25.0.rc1", "RL verl GRPO rollout 训推",
    ]
    return texts


def test_guarding_never_changes_a_result() -> None:
    guards = _all_guarded()
    assert len(guards) > 40
    for text in _corpus():
        low = text.lower()
        for name, g in guards:
            raw = g.pattern.search(text)
            assert (g.search(text, low) is None) == (raw is None), (name, text, raw)


def test_the_session_env_round_trips_through_with_env() -> None:
    from core.environment import merge_session_env, read_environment

    env = merge_session_env({}, read_environment("vllm-ascend 0.9.1 on Atlas 800I A2 with CANN 8.2.RC1"))
    assert env == {"vllm-ascend": "0.9.1", "cann": "8.2.RC1", "chip": "910B"}
    later = extract_signals("still failing").with_env(env)
    assert later.version("vllm-ascend") == "0.9.1" and later.chips == ("910B",)


def test_with_env_accepts_several_remembered_chips() -> None:
    assert extract_signals("x").with_env({"chip": "910B, 310p ,H100"}).chips == ("910B", "310P")


@pytest.mark.parametrize("text", ["vllm-ascend raises InvalidVersion", "ValueError: max_model_len too large", "it throws on start"])
def test_exception_names_and_raise_words_count_as_errors(text: str) -> None:
    assert "error" in extract_signals(text).tokens


def test_bare_versions_main_branch_env_names_and_flags() -> None:
    from core.signals import find_env_names, find_flags, find_versions, mentions_main_branch

    assert find_versions("vllm-ascend v0.11.0rc1 和 v0.11.0, vllm 0.8.5.post1; python 3.10, CANN 8.3.RC2, 10.0.0.1") == (
        "0.11.0rc1", "0.11.0", "0.8.5.post1",
    )
    assert mentions_main_branch("main 分支要配哪个 vllm commit") and mentions_main_branch("I build from main")
    assert not mentions_main_branch("the main problem is decode speed")
    assert find_env_names("export VLLM_ASCEND_ENABLE_NZ=1 and HCCL_IF_IP, not Qwen3") == ("VLLM_ASCEND_ENABLE_NZ", "HCCL_IF_IP")
    assert find_flags("vllm serve m --enforce-eager --quantization ascend") == ("--enforce-eager", "--quantization")
