"""Generated tables put where answers read them: DATA_DIR/knowledge/<name>.json."""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from core.knowledge.generated.tables import GeneratedTable, table_path


@pytest.fixture
def generated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[GeneratedTable], Path]:
    """Writes a table into a fresh DATA_DIR (pointed to by the DATA_DIR env var) and returns its path."""
    monkeypatch.setenv("DATA_DIR", str(tmp_path))

    def write(table: GeneratedTable) -> Path:
        path = table_path(table.name, tmp_path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"repo": table.repo, "commit": table.commit, "committed_at": table.committed_at,
                                    "source": table.source, "rows": list(table.rows)}), encoding="utf-8")
        return path

    return write
