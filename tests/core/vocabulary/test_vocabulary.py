"""The vocabulary map: built from small fixture clones, read by the router (issue 22)."""
from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from core.router import route
from core.vocabulary.build import FILE_NAME, build_vocabulary
from core.vocabulary.map import VocabularyMap, load_vocabulary, vocabulary_file
from core.vocabulary.tokens import question_tokens

VLLM = "vllm-project/vllm"
VLLM_ASCEND = "vllm-project/vllm-ascend"
SLIM = "verylucky01/MindStudio-ModelSlim"
MOTOR = "verylucky01/MindIE-Motor"


def _clone(root: Path, name: str, files: dict[str, str], tags: tuple[str, ...] = ()) -> Path:
    path = root / name
    for rel, text in files.items():
        (path / rel).parent.mkdir(parents=True, exist_ok=True)
        (path / rel).write_text(text, encoding="utf-8")
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e"}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "x"], *(["tag", t] for t in tags)):
        subprocess.run(["git", "-C", str(path), *args], check=True, env=env, capture_output=True)
    return path


PLUGIN = {
    "vllm_ascend/worker/npu_runner.py": (
        "from vllm.v1.engine.core import EngineCoreProc, EngineCoreRequest\n"
        "class NPUSchedulerGlue:\n    pass\n"
        "def enable_fused_rope_cache():\n"
        "    if os.getenv('VLLM_ASCEND_FUSED_ROPE_LEVEL'):\n"
        "        raise ValueError('fused rope level must be between zero and three inclusive for this chip')\n"
    ),
    "docs/serve.md": "```\nvllm serve Qwen/Qwen3-8B --max-num-seqs 16\n```\nAlso try `--compile-npu-graph-level 2`.\n"
                     "Image: quay.io/ascend/vllm-ascend:v0.9.1rc1\n",
    "tests/test_x.py": "class OnlyInTestsHelper:\n    pass\n",
}
SLIM_FILES = {
    "msmodelslim/pytorch/calib.py": (
        "class AntiOutlierTuner:\n    pass\n"
        "parser.add_argument('--outlier-suppression-mode', type=str)\n"
        "class ShapeGuard:\n    pass\n"
    ),
    "config/quant.yaml": "calib_sample_count: 128\n",
}
MOTOR_FILES = {"mindie_motor/guard.py": "class ShapeGuard:\n    pass\nclass CoordinatorHeartbeat:\n    pass\n"}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, VocabularyMap]:
    root = tmp_path_factory.mktemp("vocab")
    clones = [
        (VLLM_ASCEND, _clone(root, "plugin", PLUGIN, tags=("v0.9.1rc1",))),
        (SLIM, _clone(root, "slim", SLIM_FILES)),
        (MOTOR, _clone(root, "motor", MOTOR_FILES)),
    ]
    report = build_vocabulary(root / "index", clones)
    assert report.repos == 3 and report.rebuilt == (VLLM_ASCEND, SLIM, MOTOR) and report.bytes > 0
    return root, VocabularyMap.from_file(root / "index" / FILE_NAME)


def test_owners_come_from_definitions_docs_imports_and_tags(built: tuple[Path, VocabularyMap]) -> None:
    _, vocab = built
    assert vocab.owners("class", "npuschedulerglue") == [VLLM_ASCEND]
    assert vocab.owners("env", "vllm_ascend_fused_rope_level") == [VLLM_ASCEND]
    assert vocab.owners("flag", "--outlier-suppression-mode") == [SLIM]
    assert vocab.owners("key", "calib_sample_count") == [SLIM]
    assert vocab.owners("release", "0.9.1rc1") == [VLLM_ASCEND]
    assert vocab.owners("image", "ascend/vllm-ascend:v0.9.1rc1") == [VLLM_ASCEND]
    # Imported from vLLM: vLLM's own names, although only the plugin's clone is present.
    assert vocab.owners("class", "enginecoreproc") == [VLLM]
    assert vocab.owners("module", "engine.core") == [VLLM]
    # A flag on a `vllm serve` line is vLLM's; a flag only the plugin's docs show is shared.
    assert vocab.owners("flag", "--max-num-seqs") == [VLLM]
    assert set(vocab.owners("flag", "--compile-npu-graph-level")) == {VLLM, VLLM_ASCEND}
    # Test code owns nothing; a class two products define is shared.
    assert vocab.owners("class", "onlyintestshelper") == []
    # A source file named in a log line: specific names only (`utils.py` exists everywhere).
    assert vocab.owners("file", "npu_runner.py") == [VLLM_ASCEND]
    assert set(vocab.owners("class", "shapeguard")) == {SLIM, MOTOR}


def test_a_question_in_one_products_vocabulary_routes_there(built: tuple[Path, VocabularyMap]) -> None:
    _, vocab = built
    d = route("what does --outlier-suppression-mode do, and how many calib_sample_count?", vocabulary=vocab)
    assert d.action == "research" and d.repos == (SLIM,)
    # Without the map the same words settle nothing.
    assert route("what does --outlier-suppression-mode do, and how many calib_sample_count?").repos != (SLIM,)


def test_a_raised_message_routes_a_pasted_log_but_ordinary_english_does_not(built: tuple[Path, VocabularyMap]) -> None:
    _, vocab = built
    log = "Traceback (most recent call last):\nValueError: fused rope level must be between zero and three inclusive"
    assert route(log, vocabulary=vocab).repos == (VLLM_ASCEND,)
    assert vocab.votes("the level must be between two values").scores == {}


def test_a_shared_vllm_token_with_an_ascend_signal_is_the_plugin(built: tuple[Path, VocabularyMap]) -> None:
    _, vocab = built
    plain = vocab.votes("how does --compile-npu-graph-level work").scores
    assert plain[VLLM] == plain[VLLM_ASCEND]
    on_npu = vocab.votes("how does --compile-npu-graph-level work on the 910B", ascend=True).scores
    assert on_npu.get(VLLM, 0.0) == 0.0 and on_npu[VLLM_ASCEND] > 0


def test_products_that_share_a_token_split_its_vote(built: tuple[Path, VocabularyMap]) -> None:
    _, vocab = built
    scores = vocab.votes("ShapeGuard failed").scores
    assert scores[SLIM] == scores[MOTOR] == 0.5


def test_a_rebuild_rereads_only_clones_whose_commit_moved(built: tuple[Path, VocabularyMap], tmp_path: Path) -> None:
    root, _ = built
    index = tmp_path / "index"
    clones = [(VLLM_ASCEND, root / "plugin"), (SLIM, root / "slim"), ("verylucky01/MindIE-SD", tmp_path / "absent")]
    assert build_vocabulary(index, clones).rebuilt == (VLLM_ASCEND, SLIM)
    again = build_vocabulary(index, clones)
    assert again.rebuilt == () and again.repos == 2  # the absent clone is skipped, not an error


def test_a_damaged_or_foreign_file_is_an_empty_map(tmp_path: Path) -> None:
    (tmp_path / FILE_NAME).write_text("{not json", encoding="utf-8")
    assert len(load_vocabulary(tmp_path)) == 0
    (tmp_path / FILE_NAME).write_text(json.dumps({"schema": 99, "owners": {}}), encoding="utf-8")
    assert len(load_vocabulary(tmp_path)) == 0
    assert len(load_vocabulary(tmp_path / "missing")) == 0


def test_the_reloading_file_picks_up_a_rebuild_and_keeps_the_last_good_map(built: tuple[Path, VocabularyMap], tmp_path: Path) -> None:
    root, vocab = built
    live = vocabulary_file(tmp_path, check_every=0)
    assert len(live.current()) == 0
    (tmp_path / FILE_NAME).write_bytes((root / "index" / FILE_NAME).read_bytes())
    assert len(live.current()) == len(vocab)
    time.sleep(0.01)
    (tmp_path / FILE_NAME).write_text("garbage", encoding="utf-8")
    os.utime(tmp_path / FILE_NAME, ns=(time.time_ns() + 10**9, time.time_ns() + 10**9))
    assert len(live.current()) == len(vocab)


def test_question_tokens_are_linear_on_a_huge_paste() -> None:
    started = time.process_time()
    question_tokens(("a_b " * 20000) + ("x/" * 20000) + ("--" * 20000) + ("A" * 100000))
    assert time.process_time() - started < 5.0  # generous: a backtracking pattern takes minutes


def test_on_an_npu_one_products_weak_names_beat_a_question(built: tuple[Path, VocabularyMap]) -> None:
    _, vocab = built
    text = "serving Qwen3 on 910B, should enable_fused_rope_cache be on?"
    assert route(text).action == "clarify"  # no vocabulary: the serving stacks are asked about
    assert route(text, vocabulary=vocab).repos == (VLLM_ASCEND,)


def test_votes_can_leave_out_some_kinds_of_tokens() -> None:
    # The router asks for vLLM's vote without module paths: traceback frames run through vLLM's code.
    from core.vocabulary.map import VocabularyMap

    vocabulary = VocabularyMap({"module": {"vllm.engine": ["vllm-project/vllm"]}, "flag": {"--only-upstream": ["vllm-project/vllm"]}})
    text = 'File ".../site-packages/vllm/engine/llm_engine.py" with --only-upstream'
    assert vocabulary.votes(text).scores["vllm-project/vllm"] == 2.0
    assert vocabulary.votes(text, skip_kinds=("module",)).scores["vllm-project/vllm"] == 1.0
