"""What vllm-ascend's supported-features table says about the features a support question names.

The table (supported_features.py) is generated from the user's clone at `index` time; a row is a
feature name and a status word. A feature is asked about when every telling word of its name is in
the question ("prefix caching" for "Automatic Prefix Caching"; a Chinese name through a short list),
so a question about "graph capture sizes" is not a graph-mode support question. Like model support,
only questions that ask whether something is supported get these lines.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from core.knowledge.generated.model_support import user_words
from core.knowledge.generated.tables import GeneratedTable, lookup
from core.messages import Language

TABLE = "supported_features"
MAX_LINES = 2
MAX_TEXT = 2_000

_WORD = re.compile(r"[a-z]{2,20}")
# Whether a feature is there at all: "is X supported", "can I use X", "支持 X 吗". Narrower than a model's
# "does it run": every deployment question says "deploy" or "run", and TP or graph mode are always there.
_ASKS_FEATURE = re.compile(r"support|available|can\s+(?:i|we)\s+use|支持|能用|可以用|可用", re.IGNORECASE)
# Words of a feature name that say nothing by themselves ("Automatic Prefix Caching", "Graph Mode").
_FILLER = frozenset({"automatic", "support"})
# Chinese names users type for the table's features (keys: the feature's lowercased name).
_CHINESE = {
    "chunked prefill": ("分块预填充", "chunked prefill"),
    "automatic prefix caching": ("前缀缓存",),
    "lora": ("lora",),
    "speculative decoding": ("投机",),
    "multi modality": ("多模态",),
    "beam search": ("束搜索", "beam"),
    "guided decoding": ("结构化输出", "引导解码"),
    "tensor parallel": ("张量并行",),
    "pipeline parallel": ("流水线并行",),
    "expert parallel": ("专家并行",),
    "data parallel": ("数据并行",),
    "prefill decode disaggregation": ("pd分离", "pd 分离", "分离部署"),
    "quantization": ("量化",),
    "graph mode": ("图模式",),
    "sleep mode": ("睡眠模式", "休眠"),
    "context parallel": ("上下文并行",),
}
_STATUS_ZH = {"functional": "可用", "experimental": "实验性", "planned": "计划中", "deprecated": "已弃用",
              "unsupported": "不支持"}


def asks_for_feature(question: str) -> bool:
    """Whether the user asks if a feature is there at all (pasted log lines left out)."""
    return _ASKS_FEATURE.search(user_words(question)) is not None


def _stem(word: str) -> str:
    for suffix in ("ing", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    return word


def _asked(feature: str, low: str, words: set[str]) -> bool:
    name = feature.lower()
    if any(alias in low for alias in _CHINESE.get(name, ())):
        return True
    telling = {_stem(w) for w in _WORD.findall(name)} - _FILLER
    return bool(telling) and telling <= words


def matching_features(question: str, rows: tuple[dict[str, Any], ...]) -> list[tuple[str, str]]:
    """(feature, status) of each row the question names."""
    low = question[:MAX_TEXT].lower()
    words = {_stem(w) for w in _WORD.findall(low)}
    return [(str(r.get("feature", "")), str(r.get("status", ""))) for r in rows if _asked(str(r.get("feature", "")), low, words)]


_TEXT = {"en": "vllm-ascend's supported-features table on main ({commit}): {feature} — {status}",
         "zh": "vllm-ascend main 分支特性支持表（{commit}）：{feature} —— {status}"}


def feature_lookups(question: str, language: Language, data_dir: Path | None = None,
                    table: GeneratedTable | None = None) -> tuple[list[str], str]:
    """One line per feature the support question names, and the table's source to cite; ([], "") otherwise."""
    if not asks_for_feature(question):
        return [], ""
    return lookup(TABLE, lambda t: feature_lines(question, language, t), data_dir, table)


def feature_lines(question: str, language: Language, table: GeneratedTable) -> list[str]:
    """The table's status for the features `question` names, as answer lines."""
    template = _TEXT["zh" if language == "zh" else "en"]
    return [template.format(commit=table.commit[:7], feature=feature,
                            status=(_STATUS_ZH.get(status, status) if language == "zh" else status) or "?")
            for feature, status in matching_features(question, table.rows)[:MAX_LINES]]
