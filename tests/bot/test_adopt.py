"""`python -m bot sync --from DIR`: clones, bare repositories, bundles and archives copied in by hand
become REPOS_DIR clones, matched by remote URL or name; then `index` works with no network."""
from __future__ import annotations

import io
import shutil
import tarfile
import zipfile
from pathlib import Path

import pytest

from bot.adopt import adopt_from
from bot.index_command import index_status_lines, run_index
from bot.sync_command import run_sync
from core.research.repos import origin_url
from tests.fixtures.git_repos import commit_files, git, make_repo
from tests.fixtures.index_repos import ASCEND_FILES

ASCEND = "vllm-project/vllm-ascend"
LLM = "verylucky01/MindIE-LLM"
SLIM = "verylucky01/MindStudio-ModelSlim"
MINDIE_FILES = {"README.md": "# MindIE LLM\n\n服务化拉起后请求无响应时检查 config.json。\n",
                "mindie_llm/server.py": "def start():\n    return 'MIES_CONFIG_JSON_PATH'\n"}


def _quiet(_: str) -> None:
    return None


def _tar_dir(source: Path, archive: Path, arcname: str) -> Path:
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(source, arcname=arcname)
    return archive


async def test_clones_in_every_layout_bundles_and_archives_are_adopted(make_settings, tmp_path: Path) -> None:
    drop = tmp_path / "drop"
    # owner/name clone whose origin is GitHub: kept as origin (its commits are there)
    ascend_commit = make_repo(drop / "vllm-project" / "vllm-ascend", ASCEND_FILES)
    git(drop / "vllm-project" / "vllm-ascend", "remote", "add", "origin", "https://github.com/vllm-project/vllm-ascend.git")
    # a bundle named after the project, any case
    work = tmp_path / "work-llm"
    llm_commit = make_repo(work, MINDIE_FILES)
    git(work, "bundle", "create", str(drop / "mindie-LLM.bundle"), "--all")
    # a GitHub "Download ZIP" of msModelSlim: a source tree without .git under name-main/
    with zipfile.ZipFile(drop / "msmodelslim-master.zip", "w") as zf:
        zf.writestr("msmodelslim-master/README.md", "# msModelSlim\n\nW8A8 量化 anti_outlier\n")
        zf.writestr("msmodelslim-master/msmodelslim/quant.py", "def llm_ptq():\n    return 1\n")
    # a bare repository named name.git
    sd_work = tmp_path / "work-sd"
    sd_commit = make_repo(sd_work, {"README.md": "# SD\n"})
    git(tmp_path, "clone", "-q", "--bare", str(sd_work), str(drop / "MindIE-SD.git"))

    settings = make_settings()
    lines: list[str] = []
    results = await adopt_from(settings, drop, None, lines.append)
    by_repo = {r.repo: r for r in results}
    assert all(r.ok for r in results), results
    assert set(by_repo) == {ASCEND, LLM, SLIM, "verylucky01/MindIE-SD"}
    assert by_repo[ASCEND].commit == ascend_commit and by_repo[LLM].commit == llm_commit
    assert by_repo["verylucky01/MindIE-SD"].commit == sd_commit
    assert "without git history" in by_repo[SLIM].note
    slim = settings.repos_dir / "verylucky01" / "MindStudio-ModelSlim"
    assert (slim / "msmodelslim" / "quant.py").exists() and git(slim, "rev-list", "--count", "HEAD") == "1"
    # where `sync` fetches from next time: the clone's own GitHub origin, else the configured source
    assert origin_url(settings.repos_dir / "vllm-project" / "vllm-ascend") == "https://github.com/vllm-project/vllm-ascend.git"
    assert origin_url(settings.repos_dir / "verylucky01" / "MindIE-LLM") == "https://gitcode.com/Ascend/MindIE-LLM.git"
    assert git(settings.repos_dir / "vllm-project" / "vllm-ascend", "rev-parse", "--is-shallow-repository") == "true"
    assert not list(settings.repos_dir.glob(".adopt-*")) and not list(settings.repos_dir.glob("*/.*adopt*"))
    assert (drop / "vllm-project" / "vllm-ascend" / ".git").is_dir()  # DIR is left as it was
    assert lines[0].startswith("Adopting ") and any(l.endswith(f"adopted at {llm_commit[:12]}") for l in lines)

    # …and the index builds from them with no network
    assert run_index(settings, []) == 0
    status = "\n".join(index_status_lines(settings))
    assert f"{ASCEND}: cloned at {ascend_commit[:12]}, indexed at {ascend_commit[:12]}: " in status
    assert "vllm-project/vllm: not cloned, not indexed" in status


async def test_unknown_mismatched_corrupt_and_hostile_copies_are_refused_one_line_each(make_settings, tmp_path: Path) -> None:
    drop = tmp_path / "drop"
    drop.mkdir()
    make_repo(drop / "linux", {"README": "kernel\n"})  # an unknown repository
    mismatch = drop / "sglang"
    make_repo(mismatch, {"README.md": "x\n"})
    git(mismatch, "remote", "add", "origin", "https://github.com/vllm-project/vllm.git")
    (drop / "vllm-ascend.bundle").write_bytes(b"# v2 git bundle\nnot really\n")  # corrupt bundle
    evil = tmp_path / "evil-src"
    make_repo(evil, {"README.md": "x\n"})
    with tarfile.open(drop / "MindIE-Motor.tar.gz", "w:gz") as tar:  # a hostile tar named after a real repository
        tar.add(evil, arcname="MindIE-Motor")
        payload = b"pwned\n"
        info = tarfile.TarInfo("../../pwned.txt")
        info.size = len(payload)
        tar.addfile(info, io.BytesIO(payload))
    with tarfile.open(drop / "MindIE-Turbo.tar", "w") as tar:  # a symlink escaping the archive
        link = tarfile.TarInfo("MindIE-Turbo/config")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc"
        tar.addfile(link)
    (drop / "notes.txt").write_text("copied on Tuesday\n")

    settings = make_settings()
    results = await adopt_from(settings, drop, None, _quiet)
    refused = {r.source: r.error for r in results}
    assert not any(r.ok for r in results)
    assert "not one of the known repositories" in refused["linux/"] and "vllm-ascend" in refused["linux/"]
    assert "its remote is vllm-project/vllm but its name says sgl-project/sglang" in refused["sglang/"]
    assert "not a valid git bundle" in refused["vllm-ascend.bundle"]
    assert "unsafe archive" in refused["MindIE-Motor.tar.gz"] and "outside the folder" in refused["MindIE-Motor.tar.gz"]
    assert "points outside" in refused["MindIE-Turbo.tar"]
    assert refused["notes.txt"] == "not a clone, bundle or archive"
    assert all("\n" not in error for error in refused.values())
    assert not (tmp_path / "pwned.txt").exists() and not (settings.repos_dir.parent / "pwned.txt").exists()
    assert not any(p.name != ".adopt" for p in settings.repos_dir.glob("*/*"))  # nothing adopted


async def test_bundles_of_shallow_clones_and_incremental_bundles_say_what_to_send(make_settings, tmp_path: Path) -> None:
    work = tmp_path / "work"
    make_repo(work, {"README.md": "one\n"})
    base = git(work, "rev-parse", "HEAD")
    commit_files(work, {"b.md": "two\n"})
    drop = tmp_path / "drop"
    drop.mkdir()
    git(work, "bundle", "create", str(drop / "vllm.bundle"), f"{base}..main")  # needs `base`, which we lack
    shallow = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", work.as_uri(), str(shallow))
    git(shallow, "bundle", "create", str(drop / "sglang.bundle"), "--all")
    results = {r.source: r for r in await adopt_from(make_settings(), drop, None, _quiet)}
    assert "incremental bundle" in results["vllm.bundle"].error
    assert "git bundle create NAME.bundle --all" in results["vllm.bundle"].error
    assert "a bundle of a shallow clone" in results["sglang.bundle"].error


async def test_a_tar_of_a_clone_replaces_an_older_clone_and_only_asked_repositories_are_taken(
        make_settings, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    settings = make_settings()
    old = settings.repos_dir / "vllm-project" / "vllm-ascend"
    make_repo(old, {"README.md": "old\n"})
    src = tmp_path / "src"
    make_repo(src, ASCEND_FILES)
    new = commit_files(src, {"docs/zebra.md": "# Zebra\n\nZebra mode.\n"})
    drop = tmp_path / "drop"
    drop.mkdir()
    _tar_dir(src, drop / "vllm-ascend-main.tar.gz", "vllm-ascend")
    shutil.copytree(src, drop / "MindIE-LLM")  # present, but not asked for

    assert await run_sync(settings, [ASCEND], drop) == 1  # the MindIE-LLM copy is refused: not asked for
    out = capsys.readouterr().out
    assert git(old, "rev-parse", "HEAD") == new and (old / "docs" / "zebra.md").exists()
    assert "Summary: 1 adopted from" in out and "not among the repositories asked for" in out
    assert f"index: {ASCEND}" in out  # the index was refreshed for what was adopted
    assert not (settings.repos_dir / "verylucky01").exists()

    assert await run_sync(settings, [ASCEND], tmp_path / "nowhere") == 1
    assert "not a folder" in capsys.readouterr().out


async def test_a_folder_of_clones_in_repos_dir_layout_is_already_in_place(make_settings, tmp_path: Path) -> None:
    settings = make_settings()
    commit = make_repo(settings.repos_dir / "vllm-project" / "vllm-ascend", ASCEND_FILES)
    [result] = await adopt_from(settings, settings.repos_dir, None, _quiet)
    assert result.ok and result.commit == commit and "already in place" in result.note


@pytest.mark.parametrize("layout", ["clone", "plain"])
async def test_a_tar_of_a_folder_of_repositories(make_settings, tmp_path: Path, layout: str) -> None:
    repos = tmp_path / "elsewhere" / "repos"
    make_repo(repos / "vllm-project" / "vllm-ascend", ASCEND_FILES)
    make_repo(repos / "verylucky01" / "MindIE-LLM", MINDIE_FILES)
    if layout == "plain":
        for clone in repos.glob("*/*"):
            shutil.rmtree(clone / ".git")
    drop = tmp_path / "drop"
    drop.mkdir()
    _tar_dir(repos, drop / "repos.tar.gz", "repos")
    results = await adopt_from(make_settings(), drop, None, _quiet)
    assert sorted(r.repo for r in results if r.ok) == [LLM, ASCEND], results


async def test_doctor_says_for_each_repository_whether_it_is_cloned_and_indexed(make_settings, tmp_path: Path,
                                                                                 capsys) -> None:  # type: ignore[no-untyped-def]
    from bot.doctor import run_doctor

    drop = tmp_path / "drop"
    commit = make_repo(drop / "vllm-ascend", ASCEND_FILES)
    settings = make_settings()
    assert await run_sync(settings, [], drop) == 0
    capsys.readouterr()
    await run_doctor(settings)
    out = capsys.readouterr().out
    assert f"[info] repositories in {settings.repos_dir}: 1 of 9 cloned" in out
    assert f"[info]   {ASCEND}: cloned at {commit[:12]}, indexed at {commit[:12]}: " in out
    assert "[info]   verylucky01/MindIE-SD: not cloned, not indexed: " in out


@pytest.mark.parametrize("borrow", ["objects/info/alternates", "commondir"])
async def test_an_archived_clone_borrowing_from_another_repository_is_refused(make_settings, tmp_path: Path,
                                                                             borrow: str) -> None:
    # A private repository on this machine, and a hostile archive whose clone takes one of the private
    # commits by borrowing the private objects (alternates) or its whole object and ref store (commondir).
    private = tmp_path / "private"
    secret_commit = make_repo(private, {"README.md": "# internal\n\nsecret roadmap\n"})
    hostile = tmp_path / "hostile" / "vllm-ascend"
    make_repo(hostile, {"README.md": "# decoy\n"})
    if borrow == "commondir":
        (hostile / ".git" / "commondir").write_text(str(private / ".git") + "\n")
    else:
        (hostile / ".git" / "objects" / "info" / "alternates").write_text(str(private / ".git" / "objects") + "\n")
        git(hostile, "update-ref", "refs/heads/main", secret_commit)
    drop = tmp_path / "drop"
    drop.mkdir()
    _tar_dir(hostile, drop / "vllm-ascend.tar.gz", "vllm-ascend")
    settings = make_settings()
    [result] = await adopt_from(settings, drop, None, _quiet)
    assert not result.ok and f"borrows from another repository ({borrow})" in result.error
    assert not (settings.repos_dir / "vllm-project" / "vllm-ascend").exists()
