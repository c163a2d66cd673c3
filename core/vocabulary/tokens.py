"""Identifier-shaped tokens of a text: the same reading for a repository's files and a user's question.

Only tokens that look like code count (a flag, UPPER_SNAKE, snake_case, CamelCase, a dotted module
path, an image reference, an rc/post release); plain words do only as the words of a directory name
a product owns ("laser attention", see paths.py), and the map lets those vote only next to an Ascend
signal. Error messages are read as word trigrams ("shingles") so that a pasted log line finds the
message a repository raises even with numbers and paths changed. Every pattern is linear: bounded
repetition, no nested ambiguity.
"""
from __future__ import annotations

import re
from collections.abc import Iterator

from core.vocabulary.paths import feature_name, phrase_names

# Kinds, in the order of how much a match says about ownership (see map.KIND_WEIGHT).
FLAG, ENV, CLASS, MODULE, KEY, IMAGE, RELEASE, ERROR, FILE = (
    "flag", "env", "class", "module", "key", "image", "release", "error", "file")
# A directory or file-stem name (core/vocabulary/paths.py). PHRASE is the question side only: the same
# name written as prose words, looked up among the PATH names.
PATH, PHRASE = "path", "phrase"

_WORD = re.compile(r"(?<![A-Za-z0-9_])[A-Za-z_][A-Za-z0-9_]{3,60}(?![A-Za-z0-9_])")
_FLAG = re.compile(r"(?<![\w\-])--[a-z][a-z0-9]{0,24}(?:[-_][a-z0-9]{1,24}){0,8}(?![\w\-])")
_DOTTED = re.compile(r"(?<![\w.])[a-z_][a-z0-9_]{1,40}(?:\.[A-Za-z_][A-Za-z0-9_]{0,60}){1,8}(?![\w.])")
_SLASHED = re.compile(r"[A-Za-z0-9_.\-]{1,80}(?:/[A-Za-z0-9_.\-]{1,80}){1,16}")
_IMAGE = re.compile(r"(?<![\w./\-])[a-z0-9][a-z0-9.\-]{0,60}(?:/[a-z0-9][a-z0-9._\-]{0,60}){1,4}:[A-Za-z0-9][A-Za-z0-9._\-]{0,60}")
_RELEASE = re.compile(r"(?<![\w.])v?\d{1,3}\.\d{1,3}\.\d{1,4}(?:\.?rc\d{1,3}|\.post\d{1,3})(?![\w])", re.I)
# A source file named in a log line ("block_mem_allocation_solver.cpp:63", "model_runner_v1.py").
_SOURCE_FILE = re.compile(r"(?<![A-Za-z0-9_])([A-Za-z_][A-Za-z0-9_]{2,60})\.(py|cpp|cc|c|h|hpp)(?![A-Za-z0-9_])")
_MESSAGE_WORD = re.compile(r"[a-z][a-z']{1,30}")

MIN_SHINGLE_WORDS = 3
_SKIP_WORDS = frozenset({"self", "none", "true", "false", "return", "import", "from", "class", "def"})


_CAMEL = re.compile(r"[a-z][A-Z]")


def _is_camel(word: str) -> bool:
    # An upper-case letter after a lower-case one ("NPUModelRunner", "maxSeqLen"): an identifier.
    return _CAMEL.search(word) is not None


def word_tokens(text: str) -> Iterator[tuple[str, str]]:
    """(kind, token) for UPPER_SNAKE (env), snake_case (key) and CamelCase (class) words; lowercased."""
    for m in _WORD.finditer(text):
        word = m.group(0)
        core = word.strip("_")
        if len(core) < 5 or core.lower() in _SKIP_WORDS or word.startswith("__"):
            continue
        if "_" in core:
            if core.isupper():
                yield ENV, core.lower()
            elif core.islower() or not core.isupper():
                yield KEY, core.lower()
        elif _is_camel(core):
            yield CLASS, core.lower()


def flag_tokens(text: str) -> Iterator[str]:
    for m in _FLAG.finditer(text):
        flag = m.group(0).replace("_", "-")
        if len(flag) >= 5:
            yield flag


def module_tokens(text: str) -> Iterator[str]:
    """Dotted module paths and the module path of slashed file paths, as every window of two
    segments plus the whole path ("vllm_ascend.worker", "vllm_ascend.worker.worker")."""
    for m in _DOTTED.finditer(text):
        yield from module_windows(m.group(0).split("."))
    for m in _SLASHED.finditer(text):
        parts = [p for p in m.group(0).split("/") if p and p not in (".", "..")]
        if parts and parts[-1].endswith(".py"):
            parts[-1] = parts[-1][:-3]
        yield from module_windows(parts)


def module_windows(parts: list[str]) -> Iterator[str]:
    clean = [p.lower() for p in parts if p.replace("_", "").isalnum() and not p[0].isdigit()]
    for a, b in zip(clean, clean[1:]):
        if len(a) >= 3 and len(b) >= 3:
            yield f"{a}.{b}"


def image_tokens(text: str) -> Iterator[str]:
    """`quay.io/ascend/vllm-ascend:v0.9.1rc1` → the image name without registry and tag, and with the tag."""
    for m in _IMAGE.finditer(text):
        name, _, tag = m.group(0).rpartition(":")
        parts = name.split("/")
        if "." in parts[0] or ":" in parts[0]:  # a registry host
            parts = parts[1:]
        if not parts or name.startswith(("http", "https")):
            continue
        short = "/".join(parts)
        yield short
        yield f"{short}:{tag.lower()}"


def source_file_name(name: str) -> str | None:
    """`name` ("worker_v1.py") as a file token when specific enough: an underscore or inner capitals
    (a file called `utils.py` or `logging.py` exists everywhere)."""
    m = _SOURCE_FILE.fullmatch(name)
    if m is None:
        return None
    stem = m.group(1)
    return name.lower() if "_" in stem.strip("_") or _is_camel(stem) else None


def file_tokens(text: str) -> Iterator[str]:
    for m in _SOURCE_FILE.finditer(text):
        token = source_file_name(m.group(0))
        if token:
            yield token


def release_tokens(text: str) -> Iterator[str]:
    for m in _RELEASE.finditer(text):
        yield m.group(0).lower().lstrip("v").replace(".rc", "rc")


def shingles(message: str) -> Iterator[str]:
    """Word trigrams of an error message (numbers, paths and quoted values left out)."""
    words = [w for w in _MESSAGE_WORD.findall(message.lower()) if len(w) > 1]
    for i in range(len(words) - MIN_SHINGLE_WORDS + 1):
        yield " ".join(words[i : i + MIN_SHINGLE_WORDS])


def question_tokens(text: str) -> set[tuple[str, str]]:
    """Every (kind, token) a question offers for lookup; error shingles come from every line."""
    found: set[tuple[str, str]] = set(word_tokens(text))
    found.update((FLAG, f) for f in flag_tokens(text))
    found.update((MODULE, t) for t in module_tokens(text))
    found.update((IMAGE, t) for t in image_tokens(text))
    found.update((RELEASE, t) for t in release_tokens(text))
    found.update((FILE, t) for t in file_tokens(text))
    found.update((ERROR, s) for s in shingles(text))
    found.update((PATH, name) for kind, key in list(found) if kind == KEY and (name := feature_name(key)))
    found.update((PHRASE, name) for name in phrase_names(text))
    return found
