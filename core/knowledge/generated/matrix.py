"""The compatibility matrix, main's targets and main's verified vLLM commit, as a generated table.

Parsing is core/release_matrix.py's (one parser for the live read and the generated table). Main is
one more row: vllm_ascend "main", vllm = [the verified commit], the rest from mkdocs.yml's `extra:`.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from core.knowledge.generated.tables import Extraction, GeneratedTable
from core.knowledge.schema import MatrixRow
from core.release_matrix import ClonedMatrix, read_clone_matrix

NAME = "matrix"
MAIN = "main"


def extract(clone: Path) -> Extraction:
    """Raises MatrixDocError, OSError or SubprocessError when the clone's matrix cannot be read."""
    cloned = read_clone_matrix(clone)
    return Extraction(cloned.doc, cloned.rows + ((cloned.main,) if cloned.main else ()))


def row_from_json(row: dict[str, Any]) -> MatrixRow:
    return MatrixRow.model_construct(  # a generated table's row as stored, as release_matrix builds them
        vllm_ascend=str(row["vllm_ascend"]), vllm=tuple(str(v) for v in row["vllm"]), python_min=str(row["python_min"]),
        python_max_exclusive=str(row["python_max_exclusive"]), cann=str(row["cann"]), torch=str(row["torch"]),
        torch_npu=str(row["torch_npu"]), triton_ascend=row.get("triton_ascend"), mooncake=row.get("mooncake"),
        source=str(row["source"]),
    )


def cloned_matrix(table: GeneratedTable) -> ClonedMatrix:
    """The table as release_matrix.with_clone_matrix takes it. Raises KeyError/TypeError on a bad row."""
    rows = tuple(row_from_json(r) for r in table.rows)
    main = next((r for r in rows if r.vllm_ascend == MAIN), None)
    return ClonedMatrix(
        rows=tuple(r for r in rows if r.vllm_ascend != MAIN), main=main, verified=main.vllm[0] if main and main.vllm else "",
        commit=table.commit, day=table.day, doc=table.source.partition(":")[2],
    )


def main_row(commit: str, targets: MatrixRow | None) -> MatrixRow | None:
    """The built-in copy's main as a row of this table (for the fallback check)."""
    if targets is None:
        return None
    return MatrixRow.model_construct(vllm_ascend=MAIN, vllm=(commit,), **targets.model_dump(exclude={"vllm_ascend", "vllm"}))
