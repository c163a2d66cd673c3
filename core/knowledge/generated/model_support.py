"""What vllm-ascend's supported-models table says about the models a question names.

The table is generated from the user's clone at `index` time (supported_models.py); this reads it
back for an answer. A row's model cell often holds several models ("Llama2/3/3.1/3.2",
"DeepSeek V3/3.1", "GLM-5/5.1"): each alternative is matched on its own. Names are compared as
token sequences, so "Qwen2.5" meets "Qwen2.5-7B-Instruct" but "Qwen3" never meets "Qwen3.5".
Only questions that ask whether a model runs get these lines: a model named in passing (a
traceback, a launch command) is not a support question.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.knowledge.generated.tables import GeneratedTable, lookup
from core.messages import Language

TABLE = "supported_models"
MAX_LINES = 2
MAX_TEXT = 2_000  # the head of the question is where the model is asked about

_TOKEN = re.compile(r"[a-z]{1,20}\d{0,4}(?:\.\d{1,3}){0,2}|\d{1,4}(?:\.\d{1,3}){0,2}[a-z]{0,3}")
_ASKS_SUPPORT = re.compile(
    r"support|run(?:s|ning)?\b|work(?:s)?\s+on|available|compatible|deploy|can\s+(?:i|we)\s+use|"
    r"支持|能不能|能否|可以跑|能跑|跑得|部署|适配|兼容|能用|可以用",
    re.IGNORECASE,
)
_PARENTHESES = re.compile(r"\([^()]{0,80}\)")


@dataclass(frozen=True)
class SupportRow:
    model: str
    hardware: str
    support: str
    max_model_len: str
    doc: str


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def _alternatives(cell: str) -> list[list[str]]:
    """Token sequences of each model a cell names: "DeepSeek V3/3.1" → [deepseek, v3], [deepseek, v3.1]."""
    cell = _PARENTHESES.sub(" ", cell)
    first, *rest = cell.split("/")
    head = _tokens(first)
    if not head:
        return []
    out = [head]
    for alternative in rest:
        tail = _tokens(alternative)
        if not tail:
            continue
        if tail[0][:1].isdigit() and head[-1][:1].isalpha():
            # "Llama2/3": the alternative replaces the version glued to the last word
            stem = re.sub(r"[\d.]+$", "", head[-1]) or head[-1]
            out.append([*head[:-1], stem + tail[0], *tail[1:]])
        elif tail[0][:1].isdigit() or (len(tail) == 1 and len(head) > 1):
            out.append([*head[:-1], *_retag(head[-1], tail[0]), *tail[1:]])
        else:
            out.append(tail)
    return out


def _retag(last: str, version: str) -> list[str]:
    """"v3" with "3.1" → "v3.1"; "m2.5" with "2.7" → "m2.7"; a plain number stays itself."""
    letters = re.match(r"[a-z]*", last)
    prefix = letters.group(0) if letters else ""
    return [prefix + version] if prefix and version[:1].isdigit() else [version]


def _occurs(needle: list[str], haystack: list[str]) -> bool:
    n = len(needle)
    return any(haystack[i : i + n] == needle for i in range(len(haystack) - n + 1))


def matching_rows(question: str, rows: Sequence[dict[str, Any]]) -> list[SupportRow]:
    """The rows whose model the question names, longest name first (the most specific row wins)."""
    asked = _tokens(question[:MAX_TEXT])
    found: list[tuple[int, SupportRow]] = []
    for row in rows:
        name = str(row.get("model", ""))
        best = max((len(alt) for alt in _alternatives(name) if _occurs(alt, asked)), default=0)
        if best and sum(len(t) for t in _tokens(name)) >= 4:  # "Bert"-sized names need the whole word
            found.append((best, SupportRow(name, str(row.get("hardware", "")), str(row.get("support", "")),
                                           str(row.get("max_model_len", "")), str(row.get("doc", "")))))
    if not found:
        return []
    longest = max(length for length, _ in found)
    return [r for length, r in found if length == longest]


_TEXTS = {
    "en": ("vllm-ascend's supported-models table on main ({commit}): {model} — {support}", " on {hardware}", "; max length {length}",
           "; guide `{doc}`"),
    "zh": ("vllm-ascend main 分支支持模型表（{commit}）：{model} —— {support}", "，硬件 {hardware}", "，最大长度 {length}", "，教程 `{doc}`"),
}
_SUPPORT_ZH = {"supported": "支持", "experimental": "实验性支持", "not supported": "不支持", "untested": "未测试"}


_LOG_LINE = re.compile(r"error|exception|traceback|warning|^\s{0,8}file\s", re.IGNORECASE)


def user_words(question: str) -> str:
    """The question without its pasted log lines: "ACL Graph does not support deepseek" in an error
    message is not the user asking whether something is supported."""
    return "\n".join(line for line in question[:MAX_TEXT].splitlines() if not _LOG_LINE.search(line))


def asks_support(question: str) -> bool:
    """Whether the user asks if something is supported or runs (not a model named in a log)."""
    return _ASKS_SUPPORT.search(user_words(question)) is not None


def support_lookups(question: str, language: Language, data_dir: Path | None = None,
                    table: GeneratedTable | None = None) -> tuple[list[str], str]:
    """One line per model the support question names, and the table's source to cite; ([], "") otherwise."""
    if not asks_support(question):
        return [], ""
    return lookup(TABLE, lambda t: support_lines(question, language, t), data_dir, table)


def support_lines(question: str, language: Language, table: GeneratedTable) -> list[str]:
    """The table's rows for the models `question` names, as answer lines."""
    head, on, length, guide = _TEXTS["zh" if language == "zh" else "en"]
    lines: list[str] = []
    for row in matching_rows(question, table.rows):
        support = _SUPPORT_ZH.get(row.support, row.support) if language == "zh" else row.support
        line = head.format(commit=table.commit[:7], model=row.model, support=support or "?")
        line += on.format(hardware=row.hardware) if row.hardware else ""
        line += length.format(length=row.max_model_len) if row.max_model_len else ""
        line += guide.format(doc=row.doc) if row.doc else ""
        if line not in lines:
            lines.append(line)
        if len(lines) >= MAX_LINES:
            break
    return lines
