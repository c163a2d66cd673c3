"""Reading the user's environment from pastes and plain words, and keeping it across a thread."""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from core.environment import Environment, environment_from_session, merge_session_env, read_environment, updated
from core.session import Session, session_from_json, session_to_json

FIXTURES = Path(__file__).parents[1] / "fixtures" / "environment"
VA = "vllm-project/vllm-ascend"


def _read(name: str) -> Environment:
    return read_environment((FIXTURES / name).read_text(encoding="utf-8"))


def test_collect_env_output_gives_every_field() -> None:
    env = _read("collect_env_910b.txt")
    assert dict(env.values) == {
        "vllm-ascend": "0.9.1", "vllm": "0.9.1", "cann": "8.1.RC1", "torch": "2.5.1", "torch_npu": "2.5.1.post1",
        "transformers": "4.52.4", "python": "3.10.15", "chip": "910B", "card": "910B4", "cards": "4",
        "driver": "24.1.rc2", "os": "Ubuntu 22.04.5 LTS (aarch64)",
    }  # CMake 3.31.2, GCC 11.4.0 and numpy 1.26.4 are not taken for a product release
    assert env.conflicts == ()
    assert env.summary("en").startswith("read: vllm-ascend 0.9.1, vLLM 0.9.1, CANN 8.1.RC1, torch 2.5.1, torch_npu 2.5.1.post1")
    assert "4× 910B4" in env.summary("en")
    assert env.summary("zh").startswith("已读取：vllm-ascend 0.9.1，vLLM 0.9.1，CANN 8.1.RC1")


def test_npu_smi_of_an_a3_node_reads_as_910c_with_its_card_count() -> None:
    env = _read("npu_smi_a3.txt")
    assert env.get("chip") == "910C" and env.get("cards") == "2" and env.get("driver") == "25.0.rc1"


def test_pip_list_version_cfg_and_a_version_line() -> None:
    env = _read("pip_list.txt")
    assert env.get("vllm-ascend") == "0.11.0rc1" and env.get("vllm") == "0.11.0"
    assert env.get("triton-ascend") == "3.2.0" and env.get("mooncake") == "0.3.5"
    assert env.get("cann") == "8.3.RC1" and env.get("torch_npu") == "2.7.1"
    assert env.get("release") is None  # torchvision 0.22.1 is not "the release"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("pip show vllm-ascend\nName: vllm_ascend\nVersion: 0.9.2rc1\nSummary: vLLM Ascend backend plugin", {"vllm-ascend": "0.9.2rc1"}),
        ("$ vllm --version\n0.10.1.1", {"vllm": "0.10.1.1"}),
        (">>> import torch_npu\n>>> torch_npu.__version__\n'2.5.1.post1.dev20250528'", {"torch_npu": "2.5.1.post1.dev20250528"}),
        ("cat /usr/local/Ascend/driver/version.info\nVersion=24.1.rc3\nascendhal_version=7.35.23", {"driver": "24.1.rc3"}),
        ("path=/usr/local/Ascend/ascend-toolkit/8.0.RC3/aarch64-linux", {"cann": "8.0.RC3"}),
        ("docker run quay.io/ascend/vllm-ascend:v0.11.0rc1-a3 bash", {"vllm-ascend": "0.11.0rc1", "image_target": "910C"}),
        ("image: quay.io/ascend/vllm-ascend:v0.10.0rc1-310p-openeuler", {"vllm-ascend": "0.10.0rc1", "image_target": "310P", "os": "openEuler"}),
        ("FROM quay.io/ascend/vllm-ascend:v0.9.1", {"vllm-ascend": "0.9.1", "image_target": "910B"}),
        (
            "swr.cn-south-1.myhuaweicloud.com/ascendhub/mindie:2.1.RC1-800I-A3-py311-openeuler24.03-lts",
            {"mindie": "2.1.RC1", "image_target": "910C", "python": "3.11", "os": "openEuler"},
        ),
        ("we are on 0.9.1 and it hangs", {"release": "0.9.1"}),
        ("我们版本是 0.11.0rc1，CANN 8.3.RC2，卡是 910B3", {"release": "0.11.0rc1", "cann": "8.3.RC2", "chip": "910B", "card": "910B3"}),
    ],
)
def test_each_kind_of_paste(text: str, expected: dict[str, str]) -> None:
    values = dict(read_environment(text).values)
    assert {k: values.get(k) for k in expected} == expected


def test_an_unnamed_release_belongs_to_the_one_routed_product() -> None:
    env = read_environment("we are on 0.9.1")
    assert env.release_of(VA) is None
    mine = env.with_unnamed_release_as((VA,))
    assert mine.release_of(VA) == "0.9.1" and mine.get("release") is None
    # vLLM and the plugin together: the plugin's release line (it is named after the vLLM release it pairs with)
    assert env.with_unnamed_release_as((VA, "vllm-project/vllm")).release_of(VA) == "0.9.1"
    # two products whose numbers mean different things: which one is not ours to guess
    assert env.with_unnamed_release_as((VA, "verylucky01/MindIE-LLM")).release_of(VA) is None
    assert read_environment("vllm-ascend 0.9.1rc2 with vllm 0.9.1").release_of("vllm-project/vllm") == "0.9.1"
    assert read_environment("MindIE 2.1.RC1").release_of("verylucky01/MindIE-LLM") == "2.1.RC1"
    assert read_environment("vllm-ascend 0.9.1").release_of("sgl-project/sglang") is None


def test_conflicting_versions_the_last_wins_and_the_line_says_so() -> None:
    env = read_environment("I installed vllm 0.9.1 yesterday\n...\n$ pip list | grep vllm\nvllm        0.9.2\nvllm_ascend 0.9.1")
    assert env.get("vllm") == "0.9.2"
    (conflict,) = env.conflicts
    assert conflict.field == "vllm" and conflict.values == ("0.9.1", "0.9.2") and conflict.used == "0.9.2"
    assert "vLLM 0.9.2 (the message also says 0.9.1; the last one is used)" in env.summary("en")
    assert "vLLM 0.9.2（消息中还有 0.9.1，以最后出现的为准）" in env.summary("zh")


@pytest.mark.parametrize(
    ("text", "field", "value"),
    [
        ("CANN 8.2.RC1, not 8.1.RC1", "cann", "8.2.RC1"),
        ("not CANN 8.1.RC1 but CANN 8.2.RC1", "cann", "8.2.RC1"),
        ("不是 910B，是 910C", "chip", "910C"),
        ("it's vllm-ascend 0.9.1rc2 rather than 0.9.1rc1", "vllm-ascend", "0.9.1rc2"),
    ],
)
def test_a_negated_value_yields_without_a_conflict(text: str, field: str, value: str) -> None:
    env = read_environment(text)
    assert env.get(field) == value and env.conflicts == ()


def test_a_correction_in_the_thread_updates_the_environment() -> None:
    first = merge_session_env({}, _read("collect_env_910b.txt"))
    assert first["cann"] == "8.1.RC1"
    corrected = updated(environment_from_session(first), read_environment("actually CANN 8.2.RC1"))
    assert corrected.get("cann") == "8.2.RC1" and corrected.get("vllm-ascend") == "0.9.1"
    assert "CANN 8.2.RC1 (was 8.1.RC1)" in corrected.summary("en")
    chip = updated(environment_from_session(first), read_environment("不是，是 910C"))
    assert chip.get("chip") == "910C" and chip.get("card") is None  # the 910B4 card no longer holds
    assert "（之前为 910B）" in chip.summary("zh")
    # kept in the session document as plain strings
    stored = session_from_json(session_to_json(Session(env=merge_session_env(first, read_environment("不是，是 910C")))))
    assert environment_from_session(stored.env).get("chip") == "910C"


def test_bad_session_values_are_ignored() -> None:
    env = environment_from_session({"chip": "H100", "cann": 8, "nonsense": "x", "vllm": " ", "torch": "2.5.1", "python": "3" * 500})
    assert dict(env.values) == {"torch": "2.5.1", "python": "3" * 120}
    assert environment_from_session({"chip": "910b,310P"}).get("chip") == "910B"  # older sessions kept a list


@pytest.mark.parametrize(
    "text",
    ["vllm-ascend 9.9.9.9.9.9.9", "CANN 8.1.RC1.RC1.RC1 torch_npu ..2.5", "vllm " + "0." * 5000, "\x00\x01 vllm-ascend v", "版本是", ""],
)
def test_garbage_reads_as_nothing_or_a_plain_value(text: str) -> None:
    env = read_environment(text)
    for field, value in env.values:
        assert len(value) <= 120, field
    assert env.get("vllm") is None


def test_a_one_megabyte_paste_is_read_in_linear_time() -> None:
    head = (FIXTURES / "collect_env_910b.txt").read_text(encoding="utf-8")
    noise = "[rank0]: vllm 0.9.1 torch_npu 2.5.1 | 0     910B4               | OK |  npu-smi 24.1.rc2 ascend-toolkit/ on 0.9\n"
    text = head + noise * (1_000_000 // len(noise))
    started = time.process_time()
    env = read_environment(text)
    assert time.process_time() - started < 5.0
    assert env.get("vllm-ascend") == "0.9.1" and env.get("chip") == "910B"
    assert env.get("torch_npu") == "2.5.1" and env.conflicts[0].values[-1] == "2.5.1"  # the paste's last value


@pytest.mark.parametrize(
    ("text", "release"),
    [
        ("v0.9.1 上想用 V1 引擎 + pipeline parallel", "0.9.1"),
        ("0.10.2rc1 跑 Qwen3-32B dense", "0.10.2rc1"),
        ("On v0.21.0rc1 with HDK 25.3 I see warnings", "0.21.0rc1"),
        ("EPLB stopped after we went from 0.11.0 to v0.14.0rc1.", "0.14.0rc1"),
        ("0.11.0 版本上 EPLB 不生效", "0.11.0"),
    ],
)
def test_a_release_named_without_its_product(text: str, release: str) -> None:
    env = read_environment(text)
    assert env.get("release") == release
    assert env.with_unnamed_release_as(("vllm-project/vllm-ascend",)).get("vllm-ascend") == release


@pytest.mark.parametrize(
    "text",
    [
        "Ubuntu 22.04.5 上跑",  # an OS version
        "numpy  1.26.4\ntorch  2.5.1",  # pip list lines
        "see https://github.com/vllm-project/vllm-ascend/blob/v0.9.1/README.md",  # a link's ref
        "HDK 25.3.0 上不行",  # a driver package
        "I use 0.9.1 of something",  # a plain version with no release word after it
    ],
)
def test_other_versions_are_not_read_as_the_release(text: str) -> None:
    assert read_environment(text).get("release") is None


def test_a_products_version_at_the_end_of_a_sentence() -> None:
    env = read_environment("RLHF needs sleep mode. We are pinned to vllm-ascend 0.8.4rc2. Does that work?")
    assert env.get("vllm-ascend") == "0.8.4rc2"
    assert read_environment("vllm-ascend 0.9.1.post1 ok").get("vllm-ascend") == "0.9.1.post1"  # not cut at the dot
    assert read_environment("装了 vllm 0.9.1。然后").get("vllm") == "0.9.1"


def test_an_msmodelslim_version_is_its_repositorys_release() -> None:
    env = read_environment("msModelSlim 8.3.0 量化 Qwen3 报错")
    assert env.get("msmodelslim") == "8.3.0"
    assert env.release_of("verylucky01/MindStudio-ModelSlim") == "8.3.0"
    assert read_environment("pip: msmodelslim==26.0.0.alpha02").get("msmodelslim") == "26.0.0.alpha02"


def test_two_card_models_in_prose_are_shown_and_none_is_called_theirs() -> None:
    env = read_environment("Stuck loading on 8x 910B4 with the v0.17.0rc1 image; the same image starts fine on 910B2.")
    summary = env.summary("en")
    # the failing machine and the working one: neither is shown as the user's
    assert "910B4/910B2 (the message names more than one card: which one is this about?)" in summary
    assert "last one is used" not in summary
    assert "消息中提到多种卡" in env.summary("zh")
    # one machine's npu-smi table lists its cards: no conflict there
    table = read_environment("npu-smi info\n| 0     910B4     | OK |\n| 1     910B4     | OK |")
    assert "more than one card" not in table.summary("en") and "910B4" in table.summary("en")


def test_chips_named_in_prose_are_all_shown_and_a_950_card_is_read() -> None:
    env = read_environment("有没有给 950 卡（CANN 9.1）的预编译镜像？现在只看到 910b 和 a3 的")
    summary = env.summary("zh")
    assert "950/910B/910C（消息中提到多种卡，请说明是哪一台出问题）" in summary
    assert "以最后出现的为准" not in summary
    assert read_environment("两张 950 卡跑 qwen").get("chip") == "950"
