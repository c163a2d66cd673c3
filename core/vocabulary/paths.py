"""Directory and file names as a product's vocabulary.

Users name a feature by the name its code is filed under: "laser attention" for MindIE-SD's
`csrc/ops/laser_attention/`, "model runner v2" for vllm-ascend's `model_runner_v2` tests and design
doc. A repository owns the snake_case names (two parts or more) of its directories and file stems;
a question offers them as written (`laser_attention`) and as the same words in prose, separated by
spaces or hyphens ("laser attention", "model-runner-v2"). Layout words (`op_host`, `user_guide`) and
model names (`deepseek_v3`, `qwen2_5`: every stack serves them) are left out. Every pattern is linear.
"""
from __future__ import annotations

import re
from collections.abc import Iterator

_NAME = re.compile(r"[a-z][a-z0-9]{0,30}(?:_[a-z0-9]{1,30}){1,7}")
MIN_NAME_CHARS = 6
# Words a repository's layout is made of: a name of these words alone names no feature.
_LAYOUT_WORDS = frozenset({
    "test", "tests", "ut", "st", "it", "e2e", "unit", "util", "utils", "common", "doc", "docs", "op", "ops", "host",
    "kernel", "api", "src", "include", "lib", "libs", "example", "examples", "sample", "samples", "script", "scripts",
    "tool", "tools", "config", "configs", "conf", "data", "build", "python", "cpp", "impl", "core", "base", "main",
    "internal", "misc", "helper", "helpers", "fixture", "fixtures", "resource", "resources", "asset", "assets",
    "static", "template", "templates", "image", "images", "ci", "dev", "en", "zh", "cn", "source", "user", "guide",
    "developer", "feature", "file", "files", "case", "cases", "type", "types", "init", "setup", "readme", "index",
    "proto", "tiling", "def", "aicpu", "model", "models", "module", "modules", "release", "notes", "issue", "issues",
    "faq", "tutorial", "tutorials", "install", "installation", "quick", "start", "get", "started", "pull", "request",
    "card", "one", "two", "four", "eight", "single", "multi", "node", "nodes", "v1", "v2", "v3", "new", "old",
})
# Model families: a directory per model is in every stack, and the model names no product.
_MODEL_FAMILY = re.compile(
    r"(?:qwen|deepseek|llama|glm|chatglm|gemma|mistral|mixtral|kimi|minimax|baichuan|internlm|internvl|phi|hunyuan|"
    r"wan|flux|cogvideo|cogvideox|opensora|sdxl|llava|bloom|falcon|telechat|yi|ernie|pangu|starcoder|codellama|gpt)"
    r"(?:\d[a-z0-9]{0,6})?"
)
# A part with both letters and digits other than a version ("qwen2", "w8a8", "k2") is a model or
# format name more often than a feature.
_MIXED_PART = re.compile(r"(?!v\d)[a-z]{1,30}\d[a-z0-9]{0,30}|\d{1,30}[a-z][a-z0-9]{0,30}")
_VENDORED = ("third_party/", "thirdparty/", "3rdparty/", "vendor/", "external/", "node_modules/")
_PROSE_WORD = re.compile(r"[A-Za-z0-9]{1,30}")
MAX_PHRASE_WORDS = 8


def feature_name(word: str) -> str | None:
    """`word` (a directory or file stem) as a path name, or None when it names no feature."""
    name = word.lower()
    if name.startswith("test_"):
        name = name[5:]  # test_laser_attention.py tests the feature laser_attention
    for suffix in ("_tests", "_test"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    if len(name) < MIN_NAME_CHARS or not _NAME.fullmatch(name):
        return None
    parts = name.split("_")
    if all(p in _LAYOUT_WORDS or p.isdigit() for p in parts):
        return None
    if _MODEL_FAMILY.fullmatch(parts[0]) or any(_MIXED_PART.fullmatch(p) for p in parts):
        return None
    return name


def path_names(path: str) -> Iterator[str]:
    """Feature names of a tracked file's directories and of its stem."""
    low = path.lower()
    if any(v in low for v in _VENDORED):
        return  # vendored code: another project's names
    parts = path.split("/")
    stem = parts[-1].split(".", 1)[0]
    for part in (*parts[:-1], stem):
        if part.startswith("."):
            return  # .github/, hidden tool directories
        name = feature_name(part)
        if name:
            yield name


def phrase_names(text: str) -> Iterator[str]:
    """Runs of two to MAX_PHRASE_WORDS words separated by one space or hyphen, joined as a snake
    name ("laser attention" → laser_attention). A word next to `_`, `.` or `/` breaks the run: the
    written identifier is read as a word of its own."""
    run: list[str] = []
    end = -1
    for m in _PROSE_WORD.finditer(text):
        gap = text[end:m.start()] if end >= 0 else None
        if gap not in (" ", "-") or _touches_identifier(text, m.start(), m.end()):
            yield from _windows(run)
            run = []
        if _touches_identifier(text, m.start(), m.end()):
            end = -1
            continue
        run.append(m.group(0).lower())
        end = m.end()
    yield from _windows(run)


def _touches_identifier(text: str, start: int, end: int) -> bool:
    """The word is part of `a_b`, `a.b` or `a/b` (a sentence's full stop is not)."""
    before = text[start - 1] if start > 0 else " "
    after = text[end] if end < len(text) else " "
    if before in "_/" or after in "_/":
        return True
    return (before == "." and start > 1 and text[start - 2].isalnum()) or (
        after == "." and end + 1 < len(text) and text[end + 1].isalnum())


def _windows(words: list[str]) -> Iterator[str]:
    for i in range(len(words)):
        for n in range(2, MAX_PHRASE_WORDS + 1):
            if i + n > len(words):
                break
            yield "_".join(words[i : i + n])
