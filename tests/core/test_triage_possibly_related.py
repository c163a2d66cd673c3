"""A problem pattern matched on the question's words is "possibly related", never the conclusion: its
usual causes are a guess for this user (the answer standard: a conclusion first only on evidence)."""
from core.triage import triage

PLUGIN = ("vllm-project/vllm-ascend",)


def test_a_pattern_matched_on_words_is_only_possibly_related() -> None:
    for text, language, label in (
        ("vllm-ascend server fails at startup when loading the model: ModuleNotFoundError: No module named 'foo_bar'",
         "en", "**Possibly related:**"),
        ("vllm-ascend 启动时加载模型失败：ModuleNotFoundError: No module named 'foo_bar'", "zh", "**可能相关：**"),
    ):
        result = triage(text, PLUGIN, language)  # type: ignore[arg-type]
        assert result.text.startswith(label), result.text[:120]
        assert "Conclusion" not in result.text and "结论" not in result.text
        assert not result.concluded  # so the answer's confidence is not "high" on a guess


def test_an_error_code_is_still_a_conclusion() -> None:
    result = triage("vllm-ascend 0.9.1: RuntimeError: ACL stream synchronize failed, error code:507015", PLUGIN, "en")
    assert result.text.startswith("**Conclusion:** Error 507015") and result.concluded


def test_the_chinese_label_and_title_do_not_run_into_each_other() -> None:
    # "**可能相关：****标题**" has no space between the two bold runs: chat renderers show the asterisks
    result = triage("vllm-ascend 启动时加载模型失败：ModuleNotFoundError: No module named 'foo_bar'", PLUGIN, "zh")
    assert "****" not in result.text and result.text.startswith("**可能相关：**【")


def test_the_reinstall_step_is_only_for_a_missing_plugin_module() -> None:
    # A module upstream vLLM's package lacks (vllm.benchmarks.serve) is not fixed by rebuilding the plugin.
    upstream = triage("vllm serve on the NPU: ModuleNotFoundError: No module named 'vllm.benchmarks.serve'", PLUGIN, "en")
    assert "reinstall vllm-ascend" not in upstream.text
    plugin = triage("vllm serve on 910B: ModuleNotFoundError: No module named 'vllm_ascend.vllm_ascend_C'", PLUGIN, "en")
    assert "reinstall vllm-ascend" in plugin.text


def test_a_missing_libatb_names_the_separate_nnal_package() -> None:
    result = triage("Installed CANN toolkit and kernels, still ImportError: libatb.so: cannot open shared object file", PLUGIN, "en")
    assert "NNAL" in result.text and "separate from the CANN toolkit" in result.text


def test_an_operator_the_chip_lacks_is_not_only_a_missing_package() -> None:
    text = ("Atlas 300I Duo: call aclnnMoeGatingTopKSoftmax failed, detail:EZ1001: The binary_info_config.json of "
            "socVersion [ascend310p] does not support opType [MoeGatingTopKSoftmax].")
    result = triage(text, PLUGIN, "en")
    assert "no kernel for that operator" in result.text


def test_no_memory_for_the_cache_blocks_is_not_told_to_lower_the_memory_share() -> None:
    # The error itself asks for more memory for the KV cache: "lower --gpu-memory-utilization" would make it worse.
    startup = triage("vllm-ascend on 910B: ValueError: No available memory for the cache blocks. Try increasing "
                     "gpu_memory_utilization when initializing the engine.", PLUGIN, "en")
    assert "Lower --gpu-memory-utilization" not in startup.text and "raise --gpu-memory-utilization" in startup.text
    runtime = triage("vllm-ascend on 910B: RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB", PLUGIN, "en")
    assert "Lower --gpu-memory-utilization" in runtime.text and "raise --gpu-memory-utilization" not in runtime.text


def test_the_oom_fact_tells_the_cache_blocks_error_to_raise_the_share() -> None:
    result = triage("NPU 显存不够，vllm-ascend 报 ValueError: No available memory for the cache blocks. Try increasing "
                    "gpu_memory_utilization", PLUGIN, "zh")
    # "显存不够" is also how users describe OOM while serving: the cache-blocks error still decides the advice
    assert "调高 --gpu-memory-utilization" in result.text and "调低 --gpu-memory-utilization" not in result.text
