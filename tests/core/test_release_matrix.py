"""The compatibility matrix read from a vllm-ascend clone, and the built-in copy it must equal."""
from __future__ import annotations

from pathlib import Path

import pytest

from core.knowledge.loader import load_knowledge_base
from core.knowledge.schema import MatrixRow
from core.release_matrix import (
    MATRIX_DOC,
    MatrixDocError,
    current_knowledge,
    matrix_from_clone,
    parse_main_targets,
    parse_release_table,
    version_key,
)
from tests.fixtures.git_repos import commit_files, git, make_repo

FIXTURE = Path(__file__).parents[1] / "fixtures" / "environment" / "versioning_policy.md"
DOC_SOURCE = "vllm-project/vllm-ascend:docs/source/community/versioning_policy.md"
MKDOCS = """site_name: vLLM Ascend
extra:
  is_release: !ENV [DOCS_IS_RELEASE, false]
  vllm_version: v0.23.0
  main_python_version: ">= 3.10, < 3.13"
  main_cann_version: "9.1.0"
  main_pytorch_torch_npu_version: "2.10.0 / 2.10.0.post4"
  main_triton_ascend_version: "3.2.2"
  social:
    - icon: fontawesome/brands/github
"""
VERIFIED = "cdc4824a21eaa986d4d1fee90a7e6465c9f706e6"


def _values(row: MatrixRow) -> tuple[object, ...]:
    return tuple(row.model_copy(update={"source": ""}).model_dump().values())


def _doc_rows() -> tuple[MatrixRow, ...]:
    """The built-in rows that come from main's doc (a release candidate's row can come from its branch)."""
    return tuple(r for r in load_knowledge_base().matrix.rows if "/blob/releases/" not in r.source)


def test_the_table_parsed_from_the_doc_equals_the_built_in_rows_on_every_row() -> None:
    parsed = parse_release_table(FIXTURE.read_text(encoding="utf-8"), DOC_SOURCE)
    shipped = _doc_rows()
    assert len(parsed) == len(shipped) == 36
    for got, want in zip(parsed, shipped, strict=True):
        assert _values(got) == _values(want), want.vllm_ascend
        assert got.source == want.source


def test_every_column_is_read_by_its_header_not_its_position() -> None:
    doc = FIXTURE.read_text(encoding="utf-8")
    # Swap the Mooncake and Triton Ascend columns of the header and of every row: values must follow.
    swapped = []
    for line in doc.splitlines():
        cells = line.split("|")
        if line.startswith("|") and len(cells) == 9:
            cells[6], cells[7] = cells[7], cells[6]
        swapped.append("|".join(cells))
    rows = {r.vllm_ascend: r for r in parse_release_table("\n".join(swapped), DOC_SOURCE)}
    assert rows["0.23.0"].triton_ascend == "3.2.2" and rows["0.23.0"].mooncake == "0.3.11.post1"
    assert rows["0.10.1rc1"].vllm == ("0.10.1", "0.10.1.1")
    assert rows["0.18.0"].torch_npu == "2.9.0.post1+git4c901a4" and rows["0.13.0rc1"].triton_ascend is None


@pytest.mark.parametrize(
    ("doc", "why"),
    [
        ("# Versioning\n\nno matrix here\n", "heading"),
        ("## Release compatibility matrix\n\nprose only\n", "table"),
        ("## Release compatibility matrix\n\n| vLLM Ascend | Python |\n|---|---|\n| v0.9.1 | >= 3.9, < 3.12 |\n", "column"),
        (
            "## Release compatibility matrix\n\n| vLLM Ascend | vLLM | Python | Stable CANN | PyTorch/torch_npu |\n|--|--|--|--|--|\n"
            "| v0.9.1 | v0.9.1 | any | 8.2.RC1 | 2.5.1 / 2.5.1.post1 |\n",
            "Python range",
        ),
        (
            "## Release compatibility matrix\n\n| vLLM Ascend | vLLM | Python | Stable CANN | PyTorch/torch_npu |\n|--|--|--|--|--|\n"
            "| latest | v0.9.1 | >= 3.9, < 3.12 | 8.2.RC1 | 2.5.1 / 2.5.1.post1 |\n",
            "not a version",
        ),
    ],
)
def test_a_table_we_cannot_read_is_rejected_with_the_reason(doc: str, why: str) -> None:
    with pytest.raises(MatrixDocError, match=why):
        parse_release_table(doc, DOC_SOURCE)


def test_main_targets_come_from_mkdocs_extra() -> None:
    main = parse_main_targets(MKDOCS, VERIFIED, "vllm-project/vllm-ascend:mkdocs.yml")
    assert main is not None
    assert (main.python_min, main.python_max_exclusive, main.cann, main.torch, main.torch_npu, main.triton_ascend) == (
        "3.10", "3.13", "9.1.0", "2.10.0", "2.10.0.post4", "3.2.2",
    )
    assert main.vllm == (VERIFIED,)
    assert parse_main_targets("extra:\n  vllm_version: v0.23.0\n", VERIFIED, "x") is None
    assert parse_main_targets(MKDOCS, "not-a-sha", "x") is None


def test_release_order() -> None:
    ordered = ["0.9.1.dev3", "0.9.1rc1", "0.9.1rc3", "0.9.1", "0.9.1.post1", "0.9.2rc1", "0.10.0rc1"]
    assert sorted(ordered, key=version_key) == ordered


# ------------------------------------------------------------------ a clone


def _clone(root: Path, doc: str) -> Path:
    clone = root / "vllm-project" / "vllm-ascend"
    make_repo(clone, {MATRIX_DOC: doc, "mkdocs.yml": MKDOCS, ".github/vllm-main-verified.commit": VERIFIED + "\n"})
    return clone


def _newer_row(doc: str) -> str:
    """The doc with a release row the built-in copy does not know yet."""
    marker = "| v0.23.0     |"
    new = "| v0.25.0rc1  | v0.25.0           | >= 3.10, < 3.14 | 9.2.0       | 2.11.0 / 2.11.0                 | 3.3.0             | v0.4.0 |\n"
    return doc.replace(marker, new + marker, 1)


def test_a_clone_s_rows_replace_the_built_in_copy_and_say_where_they_come_from(tmp_path: Path) -> None:
    clone = _clone(tmp_path, _newer_row(FIXTURE.read_text(encoding="utf-8")))
    base = load_knowledge_base().matrix
    matrix = matrix_from_clone(clone, base)
    assert matrix.rows[0].vllm_ascend == "0.25.0rc1" and matrix.rows[0].mooncake == "0.4.0"
    assert matrix.rows[0].python_max_exclusive == "3.14"
    assert "clone at" in matrix.read_from and "2026-01-01" in matrix.read_from
    assert matrix.main_branch.targets is not None and matrix.main_branch.targets.cann == "9.1.0"
    assert matrix.main_branch.commit == VERIFIED
    # the built-in copy is untouched
    assert base.rows[0].vllm_ascend == "0.24.0rc1" and "built-in" in base.read_from


def test_a_release_branch_row_joins_in_version_order(tmp_path: Path) -> None:
    doc = FIXTURE.read_text(encoding="utf-8")
    clone = _clone(tmp_path, doc)
    git(clone, "checkout", "-q", "-b", "releases/v0.24.0rc")
    row = "| v0.24.0rc1  | v0.24.0           | >= 3.10, < 3.13 | 9.0.1       | 2.10.0 / 2.10.0.post2           | 3.2.1             | v0.3.11.post1 |\n"
    commit_files(clone, {MATRIX_DOC: doc.replace("| v0.23.0     |", row + "| v0.23.0     |", 1)})
    git(clone, "checkout", "-q", "main")
    matrix = matrix_from_clone(clone, load_knowledge_base().matrix)
    assert [r.vllm_ascend for r in matrix.rows[:2]] == ["0.24.0rc1", "0.23.0"]
    assert matrix.rows[0].source.endswith("/blob/releases/v0.24.0rc/docs/source/community/versioning_policy.md")
    # and then the clone says exactly what the built-in copy says, row by row, sources included
    assert matrix.rows == load_knowledge_base().matrix.rows


def test_a_broken_doc_or_no_clone_keeps_the_built_in_copy(tmp_path: Path) -> None:
    base = load_knowledge_base()
    assert current_knowledge(tmp_path / "nothing-here") is base
    clone = _clone(tmp_path, "## Release compatibility matrix\n\n| vLLM Ascend | vLLM |\n|--|--|\n| v1 | v1 |\n")
    assert matrix_from_clone(clone, base.matrix) is base.matrix
    assert current_knowledge(tmp_path, clock=0.0).matrix is base.matrix


def test_current_knowledge_rereads_a_synced_clone(tmp_path: Path) -> None:
    doc = FIXTURE.read_text(encoding="utf-8")
    clone = _clone(tmp_path, doc)
    first = current_knowledge(tmp_path, clock=1000.0)
    assert first.matrix.rows[0].vllm_ascend == "0.23.0"
    commit_files(clone, {MATRIX_DOC: _newer_row(doc)})
    assert current_knowledge(tmp_path, clock=1001.0) is first  # within the re-check interval: cached
    later = current_knowledge(tmp_path, clock=1000.0 + 10_000)
    assert later.matrix.rows[0].vllm_ascend == "0.25.0rc1"


def test_the_doc_is_found_where_head_keeps_it(tmp_path: Path) -> None:
    clone = tmp_path / "vllm-project" / "vllm-ascend"
    make_repo(clone, {"docs/en/community/versions.md": FIXTURE.read_text(encoding="utf-8"), "README.md": "x\n"})
    matrix = matrix_from_clone(clone, load_knowledge_base().matrix)
    assert matrix.rows[0].source == "vllm-project/vllm-ascend:docs/en/community/versions.md"
