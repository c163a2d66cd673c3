"""A vllm-ascend-like repository whose release notes are long enough to rank (built in a temp dir).

Releases: v0.9.1rc2 and v0.9.1rc3 on the branch releases/v0.9.1 (cut before v0.10.0rc1), v0.10.0rc1,
v0.10.1rc1 and v0.11.0 on main. HEAD carries every release's notes (as vllm-ascend's main does), a
Chinese translation catalogue, and forty filler bullets so word weights behave as in a real file.
"""
from __future__ import annotations

from pathlib import Path

from tests.fixtures.git_repos import commit_files, git, make_repo

FILLER_WORDS = ("widget", "gadget", "sprocket", "flange", "gizmo", "doohickey", "thingamajig", "whatsit")

NOTES = """# Release Notes

## v0.11.0 - 2026.01.10

### Features

- Added `--max-model-len auto` support. [#300](https://github.com/vllm-project/vllm-ascend/pull/300)
{filler}

### Bug Fixes

- Fixed Qwen3-VL rotary embedding races on Ascend 310P. [#302](https://github.com/vllm-project/vllm-ascend/pull/302)

### Deprecation & Breaking Changes

- Torchair graph mode is removed. `torchair_graph_config` doesn't work anymore. Please use aclgraph instead. [#301](https://github.com/vllm-project/vllm-ascend/pull/301)

## v0.10.1rc1 - 2025.12.20

### Core

- Support Sliding Window Attention with AscendScheduler, thus fixing Gemma3 accuracy issue. [#2528](https://github.com/vllm-project/vllm-ascend/pull/2528)

## v0.10.0rc1 - 2025.12.01

### Core

- Pipeline Parallelism is supported in V1 now. [#1800](https://github.com/vllm-project/vllm-ascend/pull/1800)

### Known Issues

- Gemma3 accuracy is wrong on long prompts. [#2400](https://github.com/vllm-project/vllm-ascend/issues/2400)

## v0.9.1rc3 - 2025.12.05

### Core

- Fix the bug that qwen3 moe doesn't work with aclgraph [#2478](https://github.com/vllm-project/vllm-ascend/pull/2478)

## v0.9.1rc2 - 2025.11.20

### Known Issues

- Pipeline parallelism is not supported in this release for V1 engine.
"""

PO = '''msgid ""
msgstr ""

msgid "- Pipeline parallelism is not supported in this release for V1 engine."
msgstr "- 此版本的 V1 引擎不支持流水线并行。"

msgid "- Pipeline Parallelism is supported in V1 now. [#1800](https://github.com/vllm-project/vllm-ascend/pull/1800)"
msgstr "- 现已在 V1 中支持流水线并行。[#1800](https://github.com/vllm-project/vllm-ascend/pull/1800)"
'''

ENVS = 'env_variables = {{\n{}}}\n'
CONFIG = "class AscendConfig:\n    def __init__(self, additional_config):\n{}"


def envs(*names: str) -> str:
    return ENVS.format("".join(f'    "{n}": lambda: os.getenv("{n}"),\n' for n in names))


def config(*keys: str) -> str:
    return CONFIG.format("".join(f'        self.{k} = additional_config.get("{k}", None)\n' for k in keys))


def filler() -> str:
    lines = []
    for i in range(40):
        a, b = FILLER_WORDS[i % len(FILLER_WORDS)], FILLER_WORDS[(i * 3 + 1) % len(FILLER_WORDS)]
        lines.append(f"- Improved the {a} path of the {b} kernel, round {i}. [#{5000 + i}](https://github.com/vllm-project/vllm-ascend/pull/{5000 + i})")
    return "\n".join(lines)


def build(root: Path) -> Path:
    """The upstream repository at `root` (a full clone: tags and history)."""
    make_repo(root, {
        "vllm_ascend/envs.py": envs("VLLM_ASCEND_ENABLE_FLASHCOMM", "VLLM_LLMDD_RPC_PORT"),
        "vllm_ascend/ascend_config.py": config("torchair_graph_config"),
        "README.md": "# vLLM Ascend\n",
    }, "base (#10)")
    base = git(root, "rev-parse", "HEAD")
    git(root, "tag", "v0.9.1rc2")  # the v0.9.1 line starts here
    commit_files(root, {"vllm_ascend/envs.py": envs("VLLM_ASCEND_ENABLE_FLASHCOMM1", "VLLM_ASCEND_LLMDD_RPC_PORT")},
                 "Rename FLASHCOMM to FLASHCOMM1, LLMDD port (#1800)")
    git(root, "tag", "v0.10.0rc1")
    commit_files(root, {"docs/a.md": "sliding window\n"}, "Sliding window with AscendScheduler (#2528)")
    git(root, "tag", "v0.10.1rc1")
    commit_files(root, {"vllm_ascend/ascend_config.py": config("enable_flashcomm1"),
                        "vllm_ascend/envs.py": envs("VLLM_ASCEND_LLMDD_RPC_PORT")}, "Remove torchair, FLASHCOMM1 to a config key (#301)")
    git(root, "tag", "v0.11.0")
    commit_files(root, {
        "docs/source/user_guide/release_notes.md": NOTES.replace("{filler}", filler()),
        "docs/source/locale/zh_CN/LC_MESSAGES/user_guide/release_notes.po": PO,
    }, "release notes")
    git(root, "checkout", "-q", "-b", "releases/v0.9.1", base)
    commit_files(root, {"docs/b.md": "qwen3 moe aclgraph\n"}, "Fix qwen3 moe with aclgraph (#2478)")
    git(root, "tag", "v0.9.1rc3")
    git(root, "checkout", "-q", "main")
    return root
