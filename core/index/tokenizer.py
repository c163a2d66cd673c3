"""Bilingual tokens for the knowledge index: the same function for documents and questions.

- Chinese runs go through jieba's search mode (overlapping words, so 环境变量 also yields 环境 and 变量).
- Everything else is case-folded. An identifier is kept whole and also split on `_ . -` and CamelCase,
  so `ASCEND_RT_VISIBLE_DEVICES`, `NPUModelRunner`, `--enforce-eager`, `v0.11.0rc1` and `EZ9999`
  match exactly while a question in plain words still meets their parts.
- A light English stemmer folds plurals and -ing/-ed forms (measured in docs/index.md).

Every regex here is linear: character classes with single quantifiers, no nesting.
"""
from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterable
from functools import lru_cache

_CJK = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
# One scan splits text into CJK runs and "words" (identifiers, flags, versions, numbers).
_PIECE = re.compile(rf"[{_CJK}]+|-{{0,2}}[A-Za-z0-9_][A-Za-z0-9_.\-]*")
_PARTS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_VERSION = re.compile(r"v?\d+(?:\.\d+)+(?:rc\d+|\.post\d+|a\d+|b\d+|\.dev\d+)?")
_ERROR_CODE = re.compile(r"(?:[A-Za-z]{1,4}\d{4,6}|\d{5,6})")
_ENV_VAR = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+")  # libatb.so, config.json, a.b.c

STOPWORDS = frozenset(
    """a an and are as at be by can do does for from has have how i if in into is it its my of on or
    so that the this to was what when where which why will with you your we our me should could would
    there their them they then than but not no use using used get set via about after before any
    的 了 是 在 和 与 及 或 吗 呢 吧 啊 我 你 他 她 它 我们 你们 这 那 这个 那个 一个 有 没有 也 都 就 要
    会 能 可以 怎么 怎样 如何 什么 为什么 哪些 哪个 时 时候 之后 之前 进行 使用 请问 问题 一下 出现 以及 如果
    """.split()
)

_jieba_lock = threading.Lock()
_jieba_ready = False


def _jieba():  # type: ignore[no-untyped-def]
    """jieba, with its dictionary loaded once per process and its chatter silenced."""
    global _jieba_ready
    import jieba  # noqa: PLC0415 - costs ~1 s of dictionary load; only when Chinese text appears

    if not _jieba_ready:
        with _jieba_lock:
            if not _jieba_ready:
                jieba.setLogLevel(logging.WARNING)
                jieba.initialize()
                _jieba_ready = True
    return jieba


def stem(word: str) -> str:
    """A deliberately light English stemmer: plurals, -ing, -ed. Identifiers with digits stay."""
    if len(word) <= 4 or not word.isalpha() or not word.isascii():
        return word
    if word.endswith("ies") and len(word) > 5:
        return word[:-3] + "y"
    if word.endswith("ing") and len(word) > 6:
        return word[:-3]
    if word.endswith("ed") and len(word) > 5 and not word.endswith("eed"):
        return word[:-2]
    if word.endswith("es") and word[-3] in "sxz":
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


@lru_cache(maxsize=200_000)
def _word_tokens(word: str) -> tuple[str, ...]:
    """Tokens of one non-CJK word: the whole (folded) plus its parts (stemmed)."""
    if len(word) > 80:  # a hash or an encoded blob: one opaque token, never split
        return (word[:80].lower(),)
    core = word.strip(".-_")
    flag = word.startswith("--") and len(core) > 1
    if not core:
        return ()
    lower = core.lower()
    out: list[str] = []
    if flag:
        out.append("--" + lower)
    whole_kept = False
    if _VERSION.fullmatch(lower):
        return (*out, lower.removeprefix("v"))  # its numeric parts would only be noise
    elif _ERROR_CODE.fullmatch(core) or _ENV_VAR.fullmatch(core):
        out.append(lower)
        whole_kept = True
    parts = _PARTS.findall(core)
    if len(parts) > 1 or not whole_kept:
        if len(parts) != 1 or parts[0].lower() != lower:
            if not whole_kept:
                out.append(lower)
        for part in parts:
            p = part.lower()
            if p not in STOPWORDS and (len(p) > 1 or p.isdigit()):
                out.append(stem(p))
    return tuple(t for t in out if t and t not in STOPWORDS)


@lru_cache(maxsize=100_000)
def _cjk_tokens(run: str) -> tuple[str, ...]:
    if len(run) == 1:
        return () if run in STOPWORDS else (run,)
    words = _jieba().lcut_for_search(run, HMM=False)
    return tuple(w for w in words if w not in STOPWORDS and w.strip())


def tokenize(text: str) -> list[str]:
    """Index tokens of `text`, in order, with repeats (BM25 counts them)."""
    out: list[str] = []
    extend = out.extend  # the hot loop of an index build: millions of pieces
    for piece in _PIECE.findall(text):
        extend(_cjk_tokens(piece) if "\u3400" <= piece[0] <= "\ufaff" else _word_tokens(piece))
    return out


def strong_terms(text: str) -> set[str]:
    """Tokens that name one thing exactly: error codes, env vars, flags, versions, identifiers with
    `_` or dotted names. A passage holding one of them gets an exact-match boost."""
    found: set[str] = set()
    for match in _PIECE.finditer(text):
        piece = match.group(0)
        if "\u3400" <= piece[0] <= "\ufaff":
            continue
        core = piece.strip(".-_")
        if len(core) < 3:
            continue
        if piece.startswith("--"):
            found.add("--" + core.lower())
        elif _VERSION.fullmatch(core.lower()):
            found.add(core.lower().removeprefix("v"))
        elif _ERROR_CODE.fullmatch(core) or _ENV_VAR.fullmatch(core) or "_" in core or _DOTTED.fullmatch(core):
            # CamelCase alone is not enough: product names (MindIE, msModelSlim) are CamelCase too
            found.add(core.lower())
    return found


def warm_up() -> None:
    """Load jieba's dictionary now (a worker does it at start, not on its first Chinese question)."""
    _jieba()


def unique(tokens: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(tokens))
