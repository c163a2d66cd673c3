"""`index` writes the generated knowledge tables, and `doctor` says what the clone adds to the built-in copy."""
from __future__ import annotations

import re

from bot.index_command import refresh_index
from core.knowledge.generated import tables
from core.knowledge.loader import load_knowledge_base
from tests.fixtures.git_repos import commit_files, make_repo
from tests.fixtures.knowledge_clone import MATRIX_DOC, envs_py, matrix_doc, shipped_clone_files

ASCEND = "vllm-project/vllm-ascend"


async def test_doctor_names_the_built_in_copy_and_what_the_indexed_clone_adds(make_settings, capsys) -> None:  # type: ignore[no-untyped-def]
    from bot.doctor import run_doctor

    kb = load_knowledge_base()
    built_in = re.search(r"([0-9a-f]{7,}) \((\d{4}-\d{2}-\d{2})\)", kb.matrix.main_branch.as_of)
    assert built_in is not None
    settings = make_settings()
    await run_doctor(settings)
    out = capsys.readouterr().out
    assert (f"[info] knowledge: built-in copy from vllm-ascend {built_in.group(1)} ({built_in.group(2)}); "
            "no generated tables yet") in out

    clone = settings.repos_dir / ASCEND
    make_repo(clone, shipped_clone_files(kb))
    names = [v.name for v in kb.env_vars if v.scope == "vllm-ascend"] + ["VLLM_ASCEND_ONE", "VLLM_ASCEND_TWO"]
    newer = [kb.matrix.rows[0].model_copy(update={"vllm_ascend": v, "vllm": (v,)}) for v in ("0.99.0rc2", "0.99.0rc1")]
    commit = commit_files(clone, {MATRIX_DOC: matrix_doc([*newer, *kb.matrix.rows]), "vllm_ascend/envs.py": envs_py(names)})
    said: list[str] = []
    refresh_index(settings, None, say=said.append)
    assert any(line.startswith("knowledge: matrix ") for line in said), said
    assert tables.load("matrix", settings.data_dir) is not None
    await run_doctor(settings)
    out = capsys.readouterr().out
    assert (f"[info] knowledge: built-in copy from vllm-ascend {built_in.group(1)} ({built_in.group(2)}); "
            f"clone {commit[:7]} (2026-01-01) adds 2 matrix rows, 2 env vars") in out
