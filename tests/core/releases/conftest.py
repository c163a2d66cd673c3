"""A small vllm-ascend-like repository with three release tags, built in a temp dir.

v0.9.1: the env var VLLM_LLMDD_RPC_PORT, the config key torchair_graph_config, an FAQ that says
        graph mode needs `enable_graph_mode`;
v0.10.0rc1: the env var renamed to VLLM_ASCEND_LLMDD_RPC_PORT (release notes say so, #2450);
v0.11.0: the config key removed, the FAQ rewritten; HEAD adds the release notes of all three.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures.git_repos import commit_files, git, make_bare_remote, make_repo

REPO = "vllm-project/vllm-ascend"

ENVS = 'env_variables = {{\n{}}}\n'
CONFIG = "class AscendConfig:\n    def __init__(self, additional_config):\n{}"

NOTES = """# Release Notes

## v0.11.0 - 2026.01.10

### Features

- Added `--async-scheduling` support for speculative decoding. [#300](https://github.com/vllm-project/vllm-ascend/pull/300)

### Deprecation & Breaking Changes

- Removed `torchair_graph_config`: graph mode is on by default. [#301](https://github.com/vllm-project/vllm-ascend/pull/301)

## v0.10.0rc1 - 2025.12.01

### Bug Fixes

- Fixed the hang of `enable_graph_mode` with DeepSeek when `max_num_seqs` exceeds 64. [#250](https://github.com/vllm-project/vllm-ascend/pull/250)

### Others

- Environment variable `VLLM_LLMDD_RPC_PORT` is renamed to `VLLM_ASCEND_LLMDD_RPC_PORT` now. [#2450](https://github.com/vllm-project/vllm-ascend/pull/2450)

## v0.9.1 - 2025.09.01

- First release with `VLLM_LLMDD_RPC_PORT`. [#100](https://github.com/vllm-project/vllm-ascend/pull/100)
"""


def _envs(*names: str) -> str:
    return ENVS.format("".join(f'    "{n}": lambda: os.getenv("{n}"),\n' for n in names))


def _config(*keys: str) -> str:
    return CONFIG.format("".join(f'        self.{k} = additional_config.get("{k}", None)\n' for k in keys))


@pytest.fixture()
def release_repo(tmp_path: Path) -> Path:
    work = tmp_path / "upstream"
    make_repo(work, {
        "vllm_ascend/envs.py": _envs("VLLM_LLMDD_RPC_PORT", "VLLM_ASCEND_ENABLE_NZ"),
        "vllm_ascend/ascend_config.py": _config("torchair_graph_config", "ascend_scheduler_config"),
        "docs/source/faqs.md": "# FAQ\n\n## How do I turn on graph mode?\n\nSet `enable_graph_mode` in additional_config; "
                               "graph mode is off by default in this release.\n",
        "README.md": "# vLLM Ascend\n",
    }, "first release (#100)")
    git(work, "tag", "v0.9.1")
    commit_files(work, {"vllm_ascend/envs.py": _envs("VLLM_ASCEND_LLMDD_RPC_PORT", "VLLM_ASCEND_ENABLE_NZ")}, "rename (#2450)")
    git(work, "tag", "v0.10.0rc1")
    commit_files(work, {
        "vllm_ascend/ascend_config.py": _config("ascend_scheduler_config"),
        "docs/source/faqs.md": "# FAQ\n\n## How do I turn on graph mode?\n\nNothing to do: graph mode is on by default; "
                               "`--enforce-eager` turns it off.\n",
    }, "graph mode by default (#301)")
    git(work, "tag", "v0.11.0")
    git(work, "tag", "nightly")  # not a release tag
    commit_files(work, {"docs/source/user_guide/release_notes.md": NOTES}, "release notes")
    return work


@pytest.fixture()
def release_remote(release_repo: Path, tmp_path: Path) -> str:
    return make_bare_remote(release_repo, tmp_path / "remotes" / "vllm-ascend.git")


@pytest.fixture()
def repos_dir(release_repo: Path, tmp_path: Path) -> Path:
    """REPOS_DIR holding the fixture as vllm-project/vllm-ascend (a full clone, tags included)."""
    root = tmp_path / "repos"
    (root / "vllm-project").mkdir(parents=True)
    git(root / "vllm-project", "clone", "-q", str(release_repo), "vllm-ascend")
    return root
