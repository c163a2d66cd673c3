"""The index on fixture git repositories: build, permalinks, incremental refresh, generations,
repository restriction with fallback, the relevance threshold, kinds and issues."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import core.index.builder as builder
from core.index.builder import RepoSource, build_index
from core.index.search import KnowledgeIndex
from core.index.store import IndexMissing, current_generation
from tests.fixtures.git_repos import commit_files
from tests.fixtures.index_repos import make_index_repos

ASCEND = "vllm-project/vllm-ascend"
MINDIE = "verylucky01/MindIE-LLM"


def sources(repos_dir: Path) -> list[RepoSource]:
    return [
        RepoSource(ASCEND, repos_dir / ASCEND, "https://github.com/vllm-project/vllm-ascend"),
        RepoSource(MINDIE, repos_dir / MINDIE, "https://gitcode.com/Ascend/MindIE-LLM"),
    ]


@pytest.fixture
def built(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    repos_dir = tmp_path / "repos"
    commits = make_index_repos(repos_dir)
    build_index(tmp_path / "index", sources(repos_dir), facts=())  # the fixture repositories alone
    return repos_dir, tmp_path / "index", commits


def test_build_reports_and_search_finds_the_faq_entry_with_a_permalink(built) -> None:  # type: ignore[no-untyped-def]
    _, index_dir, commits = built
    index = KnowledgeIndex(index_dir)
    manifest = index.manifest()
    assert manifest["repos"][ASCEND]["commit"] == commits[ASCEND]
    assert manifest["repos"][ASCEND]["files"] == 4  # README, faqs.md, envs.py, serve.yaml; the .po is folded in; not the png
    top = index.search("libfoo.so: cannot open shared object file", [ASCEND], k=3)[0]
    assert (top.repo, top.path, top.kind) == (ASCEND, "docs/source/faqs.md", "doc")
    assert top.title.endswith('1. How to fix "libfoo.so: cannot open shared object file"?')
    assert (top.start_line, top.end_line) == (5, 8)
    assert top.url == (f"https://github.com/vllm-project/vllm-ascend/blob/{commits[ASCEND]}/docs/source/faqs.md"
                       "?plain=1#L5-L8")
    assert "set_env.sh" in top.text


def test_gitcode_permalinks_and_code_units(built) -> None:  # type: ignore[no-untyped-def]
    _, index_dir, commits = built
    index = KnowledgeIndex(index_dir)
    faq = index.search("curl 请求一直没有返回", [MINDIE], k=1)[0]
    assert faq.url == f"https://gitcode.com/Ascend/MindIE-LLM/blob/{commits[MINDIE]}/docs/zh/faq/faq.md#L3-L18"
    code = index.search("PLUGIN_VISIBLE_CARDS", [ASCEND], k=1)[0]
    assert (code.path, code.kind, code.title, code.start_line, code.end_line) == ("plugin/envs.py", "code", "visible_cards", 3, 5)
    assert code.url.endswith(f"/blob/{commits[ASCEND]}/plugin/envs.py#L3-L5")


def test_chinese_question_meets_the_english_page_through_its_translation(built) -> None:  # type: ignore[no-untyped-def]
    _, index_dir, _ = built
    found = KnowledgeIndex(index_dir).search("终端没有加载工具包", [ASCEND], k=1)
    assert found and found[0].path == "docs/source/faqs.md"
    assert "当前终端" not in found[0].text  # the translation is indexed, never shown


def test_threshold_drops_weak_passages(built) -> None:  # type: ignore[no-untyped-def]
    _, index_dir, _ = built
    index = KnowledgeIndex(index_dir)
    assert index.search("bananas pyjamas zebra", k=5) == []
    assert index.search("", k=5) == [] and index.search("the of and", k=5) == []


def test_restriction_and_fallback_to_all_repositories(built) -> None:  # type: ignore[no-untyped-def]
    _, index_dir, _ = built
    index = KnowledgeIndex(index_dir)
    restricted = index.search("环境变量 日志级别 MINDIE_LOG_LEVEL", [MINDIE], k=5)
    assert {p.repo for p in restricted} == {MINDIE}
    # nothing about this in MindIE-LLM: the answer comes from vllm-ascend instead of nothing
    fallback = index.search("PLUGIN_VISIBLE_CARDS visible_cards", [MINDIE], k=5)
    assert fallback and fallback[0].repo == ASCEND
    assert [p.kind for p in index.search("max_model_len port", [ASCEND], k=5, kind="config")] == ["config"]


def test_incremental_refresh_rechunks_only_the_changed_blob(built, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    repos_dir, index_dir, _ = built
    first = current_generation(index_dir)
    new_commit = commit_files(repos_dir / ASCEND, {"README.md": "# Plugin\n\nNow with zebra support.\n"})
    chunked: list[str] = []
    real = builder.chunk_file
    monkeypatch.setattr(builder, "chunk_file", lambda path, text: chunked.append(path) or real(path, text))
    result = build_index(index_dir, sources(repos_dir), rescan={ASCEND})
    assert chunked == ["README.md"]
    report = {r.repo: r for r in result.reports}
    assert report[ASCEND].changed_files == 1 and report[ASCEND].commit == new_commit
    assert report[MINDIE].note == "kept" and report[MINDIE].units > 0
    assert current_generation(index_dir) != first
    hit = KnowledgeIndex(index_dir).search("zebra support", k=1)[0]
    assert hit.path == "README.md" and new_commit in hit.url
    # units of unchanged files get permalinks at the new commit too (same blob, same lines)
    assert new_commit in KnowledgeIndex(index_dir).search("PLUGIN_VISIBLE_CARDS", k=1)[0].url


def test_a_running_reader_picks_up_a_new_generation(built) -> None:  # type: ignore[no-untyped-def]
    repos_dir, index_dir, _ = built
    now = [0.0]
    index = KnowledgeIndex(index_dir, check_every=10, clock=lambda: now[0])
    assert index.search("zebra", k=1) == []
    commit_files(repos_dir / ASCEND, {"docs/zebra.md": "# Zebra\n\nZebra mode doubles throughput.\n"})
    build_index(index_dir, sources(repos_dir))
    now[0] = 5.0
    assert index.search("zebra", k=1) == []  # not checked yet: at most every 10 s
    now[0] = 11.0
    assert index.search("zebra", k=1)[0].path == "docs/zebra.md"


def test_old_generations_are_pruned(built) -> None:  # type: ignore[no-untyped-def]
    repos_dir, index_dir, _ = built
    for _ in range(3):
        build_index(index_dir, sources(repos_dir))
    assert len(list(index_dir.glob("gen-*"))) == 2


def test_missing_index_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(IndexMissing):
        KnowledgeIndex(tmp_path / "nothing")
    assert KnowledgeIndex.open_if_present(tmp_path / "nothing") is None


def test_issues_are_units_with_the_issue_url(tmp_path: Path) -> None:
    repos_dir = tmp_path / "repos"
    make_index_repos(repos_dir)
    store = tmp_path / "data" / "issues" / "vllm-project"
    store.mkdir(parents=True)
    issue = {
        "v": 1, "repo": ASCEND, "number": 42, "url": "https://github.com/vllm-project/vllm-ascend/issues/42",
        "title": "Server hangs when the quokka scheduler is enabled", "body": "It hangs at start.", "labels": ["bug"],
        "state": "closed", "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-02T00:00:00Z",
        "closed_at": "2026-01-02T00:00:00Z",
        "comments": [{"author": "maint", "association": "MEMBER", "body": "Disable the quokka scheduler until 0.2."}],
    }
    (store / "vllm-ascend.jsonl").write_text(json.dumps(issue) + "\n", encoding="utf-8")
    result = build_index(tmp_path / "index", sources(repos_dir), data_dir=tmp_path / "data")
    assert {r.repo: r.issues for r in result.reports}[ASCEND] == 1
    hit = KnowledgeIndex(tmp_path / "index").search("quokka scheduler hangs", k=1, kind="issue")[0]
    assert (hit.kind, hit.path, hit.url) == ("issue", "issues/42", issue["url"])
    assert "Disable the quokka scheduler" in hit.text  # the maintainer's answer is part of the unit


def test_exact_names_boost_the_unit_that_holds_them(tmp_path: Path) -> None:
    from dataclasses import replace

    from core.index.ranking import DEFAULT_PARAMS
    from tests.fixtures.git_repos import make_repo

    repo = tmp_path / "repos" / ASCEND
    make_repo(repo, {
        "a.md": "# Setting\n\nExport ASCEND_QUOKKA_MODE=1 before the start.\n",
        "b.md": "# Modes\n\nThe quokka mode and the ascend mode: quokka mode, quokka mode, ascend quokka mode.\n",
    })
    build_index(tmp_path / "index", [RepoSource(ASCEND, repo, "https://github.com/vllm-project/vllm-ascend")])

    def ratio(boost: float) -> float:
        index = KnowledgeIndex(tmp_path / "index", params=replace(DEFAULT_PARAMS, exact_boost=boost, threshold=0.0))
        scores = {p.path: p.score for p in index.search("ASCEND_QUOKKA_MODE", k=2)}
        return scores["a.md"] / scores["b.md"]

    assert ratio(1.0) > ratio(0.0) * 1.9  # the unit with the exact name doubles its lead
