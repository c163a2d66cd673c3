"""vllm-ascend's supported-models tables (docs/source/user_guide/support_matrix/supported_models.md).

One row per model per table: the section (headings) and hardware tab it is listed under, its support
status, the hardware column, each feature column's status, max-model-len and the tutorial it links.
The Note column is free text in vllm-ascend's words and is not kept.
"""
from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from pathlib import Path

from core.knowledge.generated import md_tables
from core.knowledge.generated.docs_files import read_known_doc
from core.knowledge.generated.status import status
from core.knowledge.generated.tables import Extraction

NAME = "supported_models"
REPO = "vllm-project/vllm-ascend"
PATH = "docs/source/user_guide/support_matrix/supported_models.md"
_NOT_FEATURES = ("model", "support", "note", "doc", "hardware", "max-model-len", "max model len")


class ModelsDocError(ValueError):
    """The doc has no table with Model and Support columns."""


@dataclass(frozen=True)
class ModelRow:
    section: str  # headings below the page title, " / "-joined
    tab: str  # hardware tab ("A2/A3", "Atlas 300I DUO"), "" when the table is not in a tab
    model: str
    support: str  # supported, experimental, not supported, untested, or the cell's words
    hardware: str
    max_model_len: str
    doc: str  # the linked tutorial as a path in the repository, "" when none
    features: dict[str, str] = field(default_factory=dict)  # column → status, for cells that hold one

    @property
    def key(self) -> str:
        return f"{self.section} | {self.tab} | {self.model}"


def _doc_path(target: str, doc: str) -> str:
    if not target or "://" in target:
        return target
    return posixpath.normpath(posixpath.join(posixpath.dirname(doc), target.split("#", 1)[0]))


def parse_models(markdown: str, doc: str = PATH) -> tuple[ModelRow, ...]:
    rows: list[ModelRow] = []
    for table in md_tables.tables(markdown):
        model, support = md_tables.column(table.header, "model"), md_tables.column(table.header, "support", exclude=("hardware",))
        if model is None or support is None:
            continue
        hardware = md_tables.column(table.header, "hardware")
        length = md_tables.column(table.header, "max", "len")
        link = md_tables.column(table.header, "doc")
        features = [(i, md_tables.text(h)) for i, h in enumerate(table.header)
                    if md_tables.text(h) and not any(w in md_tables.text(h).lower() for w in _NOT_FEATURES)]
        section = " / ".join(table.headings[1:])
        for cells in table.rows:
            def cell(i: int | None) -> str:
                return cells[i] if i is not None and i < len(cells) else ""

            name = md_tables.text(cell(model))
            if not name:
                continue
            marks = {title: s for i, title in features if (s := status(md_tables.text(cell(i))))}
            rows.append(ModelRow(section, table.tab, name, status(md_tables.text(cell(support))) or md_tables.text(cell(support)),
                                 md_tables.text(cell(hardware)), md_tables.text(cell(length)),
                                 _doc_path(md_tables.link_target(cell(link)), doc), marks))
    if not rows:
        raise ModelsDocError("no table with Model and Support columns")
    return tuple(rows)


def extract(clone: Path) -> Extraction:
    """Raises ModelsDocError or OSError."""
    path, text = read_known_doc(clone, PATH, ModelsDocError)
    return Extraction(path, parse_models(text, path))
