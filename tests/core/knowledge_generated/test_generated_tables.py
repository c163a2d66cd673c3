"""write_generated stores each table stamped with its commit; answers prefer a table at least as new as
the built-in copy; the fallback check says whether the shipped JSON still matches the clone."""
from __future__ import annotations

import json
from pathlib import Path

from core.knowledge.generated import tables
from core.knowledge.generated.__main__ import main as check_main
from core.knowledge.generated.check import builtin_stamp, check
from core.knowledge.generated.write import write_generated
from core.knowledge.loader import load_knowledge_base
from core.release_matrix import current_knowledge
from tests.fixtures.git_repos import commit_files, make_repo
from tests.fixtures.knowledge_clone import MATRIX_DOC, envs_py, matrix_doc, shipped_clone_files

ASCEND = "vllm-project/vllm-ascend"


def _shipped_clone(repos: Path) -> Path:
    clone = repos / ASCEND
    make_repo(clone, shipped_clone_files(load_knowledge_base()))
    return clone


def _add_a_row_and_a_variable(clone: Path) -> str:
    kb = load_knowledge_base()
    newer = kb.matrix.rows[0].model_copy(update={"vllm_ascend": "0.99.0rc1", "vllm": ("0.99.0",)})
    names = [v.name for v in kb.env_vars if v.scope == "vllm-ascend"] + ["VLLM_ASCEND_BRAND_NEW"]
    return commit_files(clone, {MATRIX_DOC: matrix_doc([newer, *kb.matrix.rows]), "vllm_ascend/envs.py": envs_py(names)})


def test_tables_are_written_with_their_commit_and_a_failure_keeps_the_previous_file(tmp_path: Path) -> None:
    clone = _shipped_clone(tmp_path / "repos")
    data = tmp_path / "data"
    said: list[str] = []
    results = write_generated(tmp_path / "repos", data, said.append)
    assert [(r.name, r.rows > 0) for r in results] == [
        ("matrix", True), ("env_vars", True), ("supported_models", True), ("supported_features", True)]
    stored = json.loads(tables.table_path("env_vars", data).read_text(encoding="utf-8"))
    head = results[0].commit
    assert (stored["repo"], stored["commit"], stored["source"]) == (ASCEND, head, f"{ASCEND}:vllm_ascend/envs.py")
    assert stored["committed_at"].startswith("2026-01-01") and stored["rows"][0]["line"] == 4
    assert set(stored["rows"][0]) == {"name", "default", "type", "line"}
    models = tables.load("supported_models", data)
    assert models is not None and [r["model"] for r in models.rows] == ["Alpha-7B", "Beta-MoE"]
    assert said == []
    # a broken envs.py: one line, and the previous table stays as it was
    before = tables.table_path("env_vars", data).read_bytes()
    commit_files(clone, {"vllm_ascend/envs.py": "nothing = 1\n"})
    results = write_generated(tmp_path / "repos", data, said.append)
    assert tables.table_path("env_vars", data).read_bytes() == before
    assert len(said) == 1 and said[0].startswith("knowledge: env_vars: not read from vllm-project/vllm-ascend")
    assert [r.name for r in results if r.rows] == ["matrix", "supported_models", "supported_features"]
    # no clone at all: nothing is rewritten, and one line says so
    said.clear()
    assert all(r.rows == 0 and "no clone" in r.note for r in write_generated(tmp_path / "elsewhere", data, said.append))
    assert tables.table_path("env_vars", data).read_bytes() == before
    assert said == [f"knowledge: no clone of {ASCEND}; its tables stay as they were"]


def test_the_check_passes_on_the_shipped_tables_and_fails_on_an_added_row(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    repos = tmp_path / "repos"
    clone = _shipped_clone(repos)
    assert check(repos_dir=repos).matches
    assert check_main(["check", "--repos-dir", str(repos)]) == 0
    assert "matrix: " in capsys.readouterr().out
    _add_a_row_and_a_variable(clone)
    result = check(repos_dir=repos)
    assert {d.name: (d.added, d.removed, d.changed) for d in result.diffs} == {
        "matrix": (("0.99.0rc1",), (), ()), "env_vars": (("VLLM_ASCEND_BRAND_NEW",), (), ())}
    assert check_main(["check", "--repos-dir", str(repos)]) == 1
    out = capsys.readouterr().out
    assert "1 added, 0 removed, 0 changed" in out and "added: VLLM_ASCEND_BRAND_NEW" in out
    # the same verdict from the tables written to DATA_DIR
    write_generated(repos, tmp_path / "data", lambda _: None)
    assert check_main(["check", "--data-dir", str(tmp_path / "data")]) == 1
    assert check_main(["check", "--data-dir", str(tmp_path / "empty")]) == 2


def test_a_changed_value_is_named_by_its_field(tmp_path: Path) -> None:
    kb = load_knowledge_base()
    clone = _shipped_clone(tmp_path / "repos")
    rows = list(kb.matrix.rows)
    rows[1] = rows[1].model_copy(update={"cann": "99.0.0"})
    commit_files(clone, {MATRIX_DOC: matrix_doc(rows)})
    (diff,) = [d for d in check(repos_dir=tmp_path / "repos").diffs if d.name == "matrix"]
    assert diff.changed == ((rows[1].vllm_ascend, ("cann",)),) and not diff.added and not diff.removed


def _stored(data: Path, name: str, committed_at: str, rows: list[dict]) -> None:
    payload = {"repo": ASCEND, "commit": "a1b2c3d" + "0" * 33, "committed_at": committed_at,
               "source": f"{ASCEND}:x", "rows": rows}
    path = tables.table_path(name, data)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload), encoding="utf-8")


def test_answers_prefer_a_generated_table_at_least_as_new_as_the_built_in_copy(tmp_path: Path) -> None:
    base = load_knowledge_base()
    _, day = builtin_stamp(base)
    row = {"vllm_ascend": "0.99.0rc1", "vllm": ["0.99.0"], "python_min": "3.11", "python_max_exclusive": "3.14",
           "cann": "10.0.0", "torch": "2.12.0", "torch_npu": "2.12.0", "triton_ascend": None, "mooncake": None,
           "source": f"{ASCEND}:{MATRIX_DOC}"}
    main = {**row, "vllm_ascend": "main", "vllm": ["f" * 40], "source": f"{ASCEND}:mkdocs.yml"}
    data = tmp_path / "data"
    _stored(data, "matrix", "2000-01-01T00:00:00+00:00", [row, main])
    _stored(data, "env_vars", "2000-01-01T00:00:00+00:00", [{"name": "VLLM_ASCEND_BRAND_NEW", "default": "1", "type": "bool", "line": 7}])
    old = current_knowledge(tmp_path / "no-repos", data, clock=0.0)
    assert old.matrix.rows == base.matrix.rows and old.env_var("VLLM_ASCEND_BRAND_NEW") is None  # older: ignored
    _stored(data, "matrix", f"{day}T23:00:00+00:00", [row, main])
    _stored(data, "env_vars", f"{day}T23:00:00+00:00", [{"name": "VLLM_ASCEND_BRAND_NEW", "default": "1", "type": "bool", "line": 7}])
    kb = current_knowledge(tmp_path / "no-repos", data, clock=10_000.0)
    assert [r.vllm_ascend for r in kb.matrix.rows] == ["0.99.0rc1"] and "indexed vllm-ascend clone at a1b2c3d" in kb.matrix.read_from
    assert kb.matrix.main_branch.commit == "f" * 40 and kb.matrix.main_branch.targets.cann == "10.0.0"
    added = kb.env_var("VLLM_ASCEND_BRAND_NEW")
    assert added is not None and "default `1`" in added.purpose.en and added.source.endswith("/x#L7")
    # the shipped entries stay as written (they explain what a variable does)
    assert [v for v in kb.env_vars if v.name != "VLLM_ASCEND_BRAND_NEW"] == list(base.env_vars)
