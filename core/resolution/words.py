"""Specific words: the identifiers a question and a thread can share that mean something.

snake_case and dotted names, flags, env vars, CamelCase types, CANN/ACL codes, dotted versions,
chip names. Plain words do not count, nor the names every thread carries (vllm, npu) or exception
types, which unrelated failures share. Used to tell a thread that stands out from one that merely
ranks first, and how rare what it shares is.
"""
from __future__ import annotations

import re

_SPECIFIC = re.compile(
    r"--?[a-z][a-z0-9\-]{2,50}|[A-Za-z][A-Za-z0-9]{0,40}(?:[_.][A-Za-z0-9]{1,40}){1,8}|[A-Z][a-z0-9]{1,20}(?:[A-Z][a-z0-9]{1,20}){1,6}"
    r"|\bE[A-Z0-9][0-9]{4}\b|\b[1-5][0-9]{5}\b|\b\d{1,3}\.\d{1,3}(?:\.\d{1,4})?(?:rc\d{1,2})?\b|\b\d{3}[A-Z]\d?\b"
)
_COMMON = frozenset({"e.g", "i.e", "etc", "vllm", "vllm-ascend", "vllm_ascend", "-ascend", "npu", "torch_npu", "torch.npu"})


def specific_words(text: str) -> set[str]:
    words = {m.group(0).lower().strip(".") for m in _SPECIFIC.finditer(text[:20_000])}
    # An exception's type is shared by unrelated failures (ImportError of two different libraries).
    return {w for w in words if len(w) >= 3 and w not in _COMMON and not w.endswith(("error", "exception"))}
