"""The "where is X" map of vllm-ascend's entry points matches the real tree when a clone is present."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.knowledge.loader import load_knowledge_base

REPOS_DIR = Path(os.environ.get("REPOS_DIR", "/work/repos"))
CLONE = REPOS_DIR / "vllm-project" / "vllm-ascend"
REQUIRED_TOPICS = {
    "platform_plugin", "model_runner", "attention_backends", "acl_graph", "config", "kv_connectors",
    "quantization_config", "speculative_decoding",
}


def test_the_map_covers_the_main_entry_points() -> None:
    kb = load_knowledge_base()
    assert REQUIRED_TOPICS <= {e.id for e in kb.code_map}
    for entry in kb.code_map:
        assert entry.source.startswith("vllm-project/vllm-ascend:"), entry.id
        assert entry.purpose.en and entry.purpose.zh and entry.paths


@pytest.mark.skipif(not (CLONE / "vllm_ascend").is_dir(), reason="no vllm-ascend clone under REPOS_DIR")
def test_every_mapped_path_exists_in_the_clone() -> None:
    kb = load_knowledge_base()
    missing = []
    for entry in kb.code_map:
        for path in (*entry.paths, entry.source.split(":", 1)[1]):
            if not (CLONE / path).exists():
                missing.append((entry.id, path))
    assert missing == []
