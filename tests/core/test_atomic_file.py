import json
from pathlib import Path

import pytest

from core.atomic_file import write_json_atomically


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "data.json"
    assert write_json_atomically(path, {"a": "é"}) == len('{"a":"é"}'.encode())
    with pytest.raises(TypeError):
        write_json_atomically(path, {"a": object()})  # not serialisable: nothing is replaced
    assert json.loads(path.read_text(encoding="utf-8")) == {"a": "é"}
    assert [p.name for p in path.parent.iterdir()] == ["data.json"]
