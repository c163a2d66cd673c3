"""Operations around the index: `doctor` lines, `sync` refreshing it, and the wiring that opens it."""
from __future__ import annotations

import calendar
import time
from pathlib import Path

from bot.index_command import index_status_lines, refresh_index
from bot.sync_command import run_sync
from bot.wiring import build_retriever
from tests.fixtures.git_repos import commit_files, git, make_bare_remote
from tests.fixtures.index_repos import ASCEND_FILES, make_index_repos

ASCEND = "vllm-project/vllm-ascend"


def test_doctor_lines_without_and_with_an_index(make_settings) -> None:  # type: ignore[no-untyped-def]
    settings = make_settings()
    lines = index_status_lines(settings)
    assert lines[0].startswith("[info] no knowledge index") and "python -m bot index" in lines[0]
    assert lines[1] == f"[info] repositories in {settings.repos_dir}: 0 of 9 cloned"
    assert all(": not cloned, not indexed: " in line for line in lines[2:]) and len(lines) == 11
    commits = make_index_repos(settings.repos_dir)
    refresh_index(settings, None, say=lambda _: None)
    created = calendar.timegm(time.gmtime())
    lines = index_status_lines(settings, now=created + 3 * 3600)
    assert lines[0].startswith("[ok]   knowledge index gen-") and "3.0 h old" in lines[0]
    assert lines[1] == f"[info] repositories in {settings.repos_dir}: 2 of 9 cloned"
    ascend = commits[ASCEND][:12]
    assert any(l.startswith(f"[info]   {ASCEND}: cloned at {ascend}, indexed at {ascend}: ") and l.endswith(" units")
               for l in lines)
    # not cloned, nothing indexed: one line that says so and how to add it
    assert [l for l in lines if "sgl-project/sglang" in l] == [
        "[info]   sgl-project/sglang: not cloned, not indexed: answers about it quote no docs or code "
        "(`python -m bot sync sgl-project/sglang`, or `python -m bot sync --from DIR` with a copy made elsewhere)"]
    # a clone that moved on since the index was built says so
    commit_files(settings.repos_dir / ASCEND, {"docs/new.md": "# New\n"})
    moved = next(l for l in index_status_lines(settings) if l.startswith(f"[info]   {ASCEND}: "))
    assert f"indexed at {ascend}" in moved and moved.endswith("(`python -m bot index` to index the clone)")


def test_doctor_flags_an_unreadable_index(make_settings) -> None:  # type: ignore[no-untyped-def]
    settings = make_settings()
    make_index_repos(settings.repos_dir)
    refresh_index(settings, None, say=lambda _: None)
    generation = (settings.index_path / "CURRENT").read_text().strip()
    (settings.index_path / generation / "manifest.json").write_text("{not json")
    assert index_status_lines(settings)[0].startswith("[FAIL] knowledge index")


async def test_sync_refreshes_the_index_for_what_it_updated(make_settings, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    from tests.fixtures.git_repos import make_repo

    work = tmp_path / "upstream"
    make_repo(work, ASCEND_FILES)
    url = make_bare_remote(work, tmp_path / "remote.git")
    settings = make_settings(repo_urls={ASCEND: url})
    assert await run_sync(settings, [ASCEND]) == 0
    assert f"index: {ASCEND}" in capsys.readouterr().out
    first = build_retriever(settings, warm=False)
    assert first is not None and first.search("PLUGIN_VISIBLE_CARDS", k=1)[0].path == "plugin/envs.py"

    commit_files(work, {"docs/new.md": "# Zebra\n\nZebra mode is new.\n"})
    git(tmp_path / "remote.git", "fetch", "-q", str(work), "+main:main")
    assert await run_sync(settings, [ASCEND]) == 0
    line = next(l for l in capsys.readouterr().out.splitlines() if l.startswith(f"index: {ASCEND}"))
    assert "changed     1" in line
    assert build_retriever(settings, warm=False).search("zebra mode", k=1)[0].path == "docs/new.md"  # type: ignore[union-attr]


def test_wiring_opens_the_index_only_when_there_is_one(make_settings) -> None:  # type: ignore[no-untyped-def]
    assert build_retriever(make_settings(), warm=False) is None
    settings = make_settings(index_min_score=0.5)
    make_index_repos(settings.repos_dir)
    refresh_index(settings, None, say=lambda _: None)
    index = build_retriever(settings, warm=False)
    assert index is not None and index.params.threshold == 0.5
    assert ASCEND in index.repos
