"""vllm-ascend's feature-support table (docs/source/user_guide/support_matrix/supported_features.md):
each feature and its status word. The "next step" column is free text in vllm-ascend's words and is
not kept."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from core.knowledge.generated import md_tables
from core.knowledge.generated.docs_files import read_known_doc
from core.knowledge.generated.tables import Extraction

NAME = "supported_features"
REPO = "vllm-project/vllm-ascend"
PATH = "docs/source/user_guide/support_matrix/supported_features.md"
_WORDS = re.compile(r"[A-Za-z][A-Za-z -]{0,40}")


class FeaturesDocError(ValueError):
    """The doc has no table with Feature and Status columns."""


@dataclass(frozen=True)
class FeatureRow:
    feature: str
    status: str  # the status's words, lower case ("functional", "experimental", "planned", …)


def parse_features(markdown: str) -> tuple[FeatureRow, ...]:
    rows: list[FeatureRow] = []
    for table in md_tables.tables(markdown):
        feature, state = md_tables.column(table.header, "feature"), md_tables.column(table.header, "status")
        if feature is None or state is None:
            continue
        for cells in table.rows:
            name = md_tables.text(cells[feature]) if feature < len(cells) else ""
            words = _WORDS.search(md_tables.text(cells[state])) if state < len(cells) else None
            if name:
                rows.append(FeatureRow(name, words.group(0).strip().lower() if words else ""))
    if not rows:
        raise FeaturesDocError("no table with Feature and Status columns")
    return tuple(rows)


def extract(clone: Path) -> Extraction:
    """Raises FeaturesDocError or OSError."""
    path, text = read_known_doc(clone, PATH, FeaturesDocError)
    return Extraction(path, parse_features(text))
