"""`write_generated(repos_dir, data_dir)`: read every table from its clone and store it under
DATA_DIR/knowledge/<table>.json, stamped with the commit it was read from.

Run at the end of `python -m bot index` (so also after `sync`). A missing clone or a table that cannot
be parsed leaves the previous file as it was and says so in one line.
"""
from __future__ import annotations

import logging
import os
import subprocess
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from core.atomic_file import write_json_atomically
from core.knowledge.generated import env_vars, matrix, supported_features, supported_models
from core.knowledge.generated.tables import Extraction, table_path
from core.release_matrix import REPO as VLLM_ASCEND
from core.release_matrix import MatrixDocError

log = logging.getLogger(__name__)

GIT_TIMEOUT = 10.0


@dataclass(frozen=True)
class Extractor:
    name: str
    repo: str
    extract: Callable[[Path], Extraction]


EXTRACTORS = (
    Extractor(matrix.NAME, VLLM_ASCEND, matrix.extract),
    Extractor(env_vars.NAME, env_vars.REPO, env_vars.extract),
    Extractor(supported_models.NAME, supported_models.REPO, supported_models.extract),
    Extractor(supported_features.NAME, supported_features.REPO, supported_features.extract),
)
# What an extractor raises when its file is not the one it knows how to read.
EXTRACT_ERRORS = (OSError, subprocess.SubprocessError, UnicodeError, MatrixDocError, env_vars.EnvFileError,
                  supported_models.ModelsDocError, supported_features.FeaturesDocError)


@dataclass(frozen=True)
class TableResult:
    name: str
    rows: int  # 0 when not written
    note: str  # why it was not written, "" when it was
    commit: str = ""


def clone_head(clone: Path) -> tuple[str, str]:
    """HEAD's commit and committer date (ISO 8601) of `clone`."""
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_NO_LAZY_FETCH": "1"}
    out = subprocess.run(["git", "-C", str(clone), "log", "-1", "--format=%H %cI"], capture_output=True, text=True,
                         timeout=GIT_TIMEOUT, env=env, check=True).stdout.split()
    if len(out) != 2:
        raise subprocess.SubprocessError(f"no HEAD commit in {clone}")
    return out[0], out[1]


def _stored(row: Any) -> dict[str, Any]:
    # Matrix rows are knowledge models (core/knowledge/schema.py); the other tables' rows are dataclasses.
    return row.model_dump() if isinstance(row, BaseModel) else asdict(row)


def read_table(extractor: Extractor, clone: Path) -> dict:
    """The table as it is stored; raises one of EXTRACT_ERRORS."""
    commit, committed_at = clone_head(clone)
    extraction = extractor.extract(clone)
    return {"repo": extractor.repo, "commit": commit, "committed_at": committed_at,
            "source": f"{extractor.repo}:{extraction.path}", "rows": [_stored(row) for row in extraction.rows]}


def write_generated(repos_dir: Path, data_dir: Path, say: Callable[[str], None] = log.info,
                    extractors: tuple[Extractor, ...] = EXTRACTORS) -> list[TableResult]:
    results = []
    for extractor in extractors:
        clone = repos_dir / extractor.repo
        if not (clone / ".git").exists():
            if not any(r.note.startswith(f"no clone of {extractor.repo}") for r in results):
                say(f"knowledge: no clone of {extractor.repo}; its tables stay as they were")
            results.append(TableResult(extractor.name, 0, f"no clone of {extractor.repo}"))
            continue
        started = time.monotonic()
        try:
            table = read_table(extractor, clone)
        except EXTRACT_ERRORS as exc:
            results.append(TableResult(extractor.name, 0, f"not read from {extractor.repo} ({exc}); the previous table stays"))
            say(f"knowledge: {extractor.name}: {results[-1].note}")
            continue
        write_json_atomically(table_path(extractor.name, data_dir), table, compact=False)
        results.append(TableResult(extractor.name, len(table["rows"]), "", table["commit"]))
        log.debug("knowledge table %s: %d rows in %.2f s", extractor.name, len(table["rows"]), time.monotonic() - started)
    return results
