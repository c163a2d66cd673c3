"""Directory and file names as vocabulary: "laser attention" is MindIE-SD's csrc/ops/laser_attention/."""
from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from core.router import route
from core.vocabulary.build import FILE_NAME, SCHEMA, build_vocabulary
from core.vocabulary.map import VocabularyMap, load_vocabulary
from core.vocabulary.paths import feature_name, path_names, phrase_names
from tests.fixtures.git_repos import make_repo

SD = "verylucky01/MindIE-SD"
VLLM_ASCEND = "vllm-project/vllm-ascend"
LLM = "verylucky01/MindIE-LLM"

SD_FILES = {
    "csrc/ops/laser_attention/op_host/laser_attention_tiling.cpp": "int tiling() { return 0; }\n",
    "csrc/ops/laser_attention/op_kernel/kernel.h": "#pragma once\n",
    "csrc/ops/shared_kernels/op_host/tiling.cpp": "int f() { return 1; }\n",
    "mindiesd/models/deepseek_v3/modeling.py": "x = 1\n",
}
PLUGIN_FILES = {
    "tests/e2e/one_card/model_runner_v2/test_basic.py": "def test_it():\n    pass\n",
    "docs/source/design/model_runner_v2_eplb.md": "# design\n",
    "csrc/ops/op_host/tiling.cpp": "int g() { return 2; }\n",
    "third_party/vendored_lib/vendored_thing.cpp": "int h() { return 3; }\n",
}
LLM_FILES = {"src/shared_kernels/readme.md": "# shared\n"}


@pytest.fixture(scope="module")
def vocab(tmp_path_factory: pytest.TempPathFactory) -> VocabularyMap:
    root = tmp_path_factory.mktemp("paths")
    for name, files in (("sd", SD_FILES), ("plugin", PLUGIN_FILES), ("llm", LLM_FILES)):
        make_repo(root / name, files)
    build_vocabulary(root / "index", [(SD, root / "sd"), (VLLM_ASCEND, root / "plugin"), (LLM, root / "llm")])
    return load_vocabulary(root / "index")


def test_a_prose_phrase_routes_to_the_directory_owner_with_an_ascend_signal(vocab: VocabularyMap) -> None:
    question = "laser attention 在 910B 上的精度问题"
    assert route(question).repos != (SD,)  # without the map nothing names MindIE-SD
    d = route(question, vocabulary=vocab)
    assert d.action == "research" and d.repos == (SD,)
    assert vocab.votes("Is model-runner-v2 on by default on Ascend?", ascend=True).ranked()[0][0] == VLLM_ASCEND


def test_a_prose_phrase_does_not_vote_without_an_ascend_signal(vocab: VocabularyMap) -> None:
    assert vocab.votes("how does laser attention scale with sequence length").scores == {}
    assert route("how does model runner v2 schedule requests?", vocabulary=vocab).repos != (VLLM_ASCEND,)


def test_a_written_name_votes_without_an_ascend_signal(vocab: VocabularyMap) -> None:
    scores = vocab.votes("what does laser_attention compute").scores
    assert set(scores) == {SD} and 0 < scores[SD] <= 1.0  # no more than a module path


def test_layout_shared_vendored_and_model_directories_do_not_vote(vocab: VocabularyMap) -> None:
    for text in ("op host tiling on the 910B", "shared kernels on Ascend", "vendored lib on Ascend",
                 "deepseek v3 on Ascend", "`op_host` and `shared_kernels` and `deepseek_v3`"):
        assert vocab.votes(text, ascend=True).scores == {}, text
    assert vocab.owners("path", "shared_kernels") == []  # two products have it: it names neither


def test_one_feature_written_three_ways_is_capped(vocab: VocabularyMap) -> None:
    # model_runner_v2 and model_runner_v2_eplb are both the plugin's; the phrase offers both.
    scores = vocab.votes("model runner v2 eplb, model_runner_v2, model-runner-v2 on NPU", ascend=True).scores
    assert scores == {VLLM_ASCEND: 1.0}


def test_names_of_paths_and_prose() -> None:
    assert list(path_names("tests/e2e/one_card/model_runner_v2/test_basic.py")) == ["model_runner_v2"]
    assert feature_name("test_laser_attention") == "laser_attention"
    assert feature_name("user_guide") is None and feature_name("qwen2_5") is None
    assert list(path_names(".github/workflow_files/run_ci.yml")) == []
    # A written identifier is no prose; a sentence's full stop does not join words to it.
    assert "laser_attention" in phrase_names("Why is laser attention.")
    assert not [p for p in phrase_names("see laser_attention and vllm_ascend.worker") if "laser" in p or "worker" in p]


def test_an_older_vocabulary_file_is_ignored_and_rebuilt(tmp_path: Path) -> None:
    make_repo(tmp_path / "sd", SD_FILES)
    index = tmp_path / "index"
    build_vocabulary(index, [(SD, tmp_path / "sd")])
    data = json.loads((index / FILE_NAME).read_text(encoding="utf-8"))
    for entry in data["clones"].values():
        entry["owners"][SD].pop("path")  # what the previous schema cached
    data["schema"] = SCHEMA - 1
    (index / FILE_NAME).write_text(json.dumps(data), encoding="utf-8")
    assert len(load_vocabulary(index)) == 0  # the router ignores it until index rebuilds it
    report = build_vocabulary(index, [(SD, tmp_path / "sd")])
    assert report.rebuilt == (SD,)  # same commit, but the cached tokens are of the old schema
    assert load_vocabulary(index).owners("path", "laser_attention") == [SD]


def test_phrases_are_linear_on_a_huge_paste() -> None:
    started = time.process_time()
    list(phrase_names(("word " * 40000) + ("a-" * 40000) + ("x_" * 40000) + ("B" * 100000)))
    assert time.process_time() - started < 5.0


def test_a_name_inside_another_products_longer_name_is_shared(tmp_path: Path) -> None:
    make_repo(tmp_path / "llm", {"examples/offline_inference/run.py": "x = 1\n"})
    make_repo(tmp_path / "plugin", {"examples/offline_inference_npu.py": "x = 1\n"})
    build_vocabulary(tmp_path / "index", [(LLM, tmp_path / "llm"), (VLLM_ASCEND, tmp_path / "plugin")])
    vocab = load_vocabulary(tmp_path / "index")
    assert vocab.owners("path", "offline_inference") == []
    assert vocab.owners("path", "offline_inference_npu") == [VLLM_ASCEND]
