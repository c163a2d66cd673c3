"""`python -m bot sync --from DIR`: adopt clones, bundles and archives copied in by hand, for machines
that reach neither GitHub nor GitCode.

DIR may hold, directly or under an owner folder: git clones (`vllm-ascend/`, `vllm-project/vllm/`),
bare repositories (`vllm.git/`), `git bundle` files (`vllm-ascend.bundle`), and .tar(.gz/.bz2/.xz)/.tgz/.zip
archives of a clone, of a plain source tree (GitHub's "Download ZIP"), or of a folder of clones.
Each is matched to a known repository by its remote URL or its name (bot/adopt_names.py); anything
else is refused with one line.

Nothing in DIR is trusted or changed. A clone or bare repository is copied with `git clone --no-local`
from a file:// URL (a fresh config and no hooks; git itself checks the objects), a bundle is checked
with `git bundle verify` first, an archive is unpacked by bot/archive.py (no path leaves its folder,
no links, no devices, size and count caps). A source tree without .git becomes a new repository
with one commit, so the index can read it. The result replaces REPOS_DIR/<owner>/<name> in one
rename, with `origin` set to where `sync` fetches from later (REPO_URLS or the original).
"""
from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from bot.adopt_names import is_public_home, known_names, repo_for_name, repo_for_url
from bot.archive import UnsafeArchive, archive_stem, extract_archive
from bot.settings import Settings
from bot.sync import checked_git, git_error_line
from core.research.git import GitError, run_git
from core.research.repos import RepoInfo, clone_url, find_repo, local_path

Kind = Literal["clone", "bare", "bundle", "archive", "tree"]
_PREFERENCE: dict[str, int] = {"clone": 0, "bare": 1, "bundle": 2, "tree": 3}
_README = ("readme.md", "readme.rst", "readme", "readme.txt", "readme_zh.md", "readme.zh.md")
_ADOPTER = {"user.name": "ascend-copilot", "user.email": "adopt@localhost", "commit.gpgsign": "false"}


@dataclass(frozen=True)
class Source:
    path: Path
    kind: Kind
    label: str  # as the person sees it: relative to DIR, `archive.tar.gz:inner/` inside an archive
    names: tuple[str, ...]  # name hints, most specific first
    links_skipped: int = 0


@dataclass(frozen=True)
class Adoption:
    source: str
    repo: str = ""
    commit: str = ""
    note: str = ""
    error: str = ""

    @property
    def ok(self) -> bool:
        return not self.error


Say = Callable[[str], Any]


async def adopt_from(settings: Settings, folder: Path, wanted: list[str] | None = None,
                     say: Say = print) -> list[Adoption]:
    """Adopt every recognised copy in `folder` (only those of `wanted` when given); one result each,
    refusals included."""
    if not folder.is_dir():
        return [Adoption(str(folder), error="not a folder")]
    scratch = settings.repos_dir / f".adopt-{os.getpid()}"
    results: list[Adoption] = []
    try:
        kind = repository_kind(folder)
        if kind is not None:  # `--from path/to/one/clone`
            sources, refused = [Source(folder, kind, folder.name + "/", (folder.name,))], []
        else:
            sources, refused = scan_folder(folder, "")
        results += refused
        expanded: list[Source] = []
        for source in sources:
            if source.kind == "archive":
                inner, problem = await _unpack(source, scratch)
                expanded += inner
                if problem is not None:
                    results.append(problem)
            else:
                expanded.append(source)
        chosen, more = await _match_all(expanded, dict(settings.repo_urls), wanted)
        results += more
        for source, repo in chosen:
            say(f"Adopting {source.label} as {repo.name}…")
            outcome = await _adopt_one(settings, source, repo, scratch)
            say(f"{repo.name}: " + (f"adopted at {outcome.commit[:12]}" if outcome.ok else f"refused: {outcome.error}"))
            results.append(outcome)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return results


def scan_folder(folder: Path, prefix: str, depth: int = 1) -> tuple[list[Source], list[Adoption]]:
    """Clones, bare repositories, bundles, archives and named source trees in `folder` and, for a folder
    that is none of these (an owner such as `vllm-project/`), one level below."""
    sources: list[Source] = []
    refused: list[Adoption] = []
    for entry in sorted(folder.iterdir(), key=lambda p: p.name):
        label = f"{prefix}{entry.name}"
        names = (f"{folder.name}/{entry.name}", entry.name) if depth > 1 else (entry.name,)
        if entry.name.startswith("."):
            continue  # hidden files and our own scratch folders
        if entry.is_file():
            if entry.name.lower().endswith(".bundle"):
                sources.append(Source(entry, "bundle", label, names))
            elif archive_stem(entry.name) is not None:
                stem = archive_stem(entry.name) or entry.name
                sources.append(Source(entry, "archive", label, (stem,)))
            else:
                refused.append(Adoption(label, error="not a clone, bundle or archive"))
            continue
        if not entry.is_dir():
            refused.append(Adoption(label, error="not a clone, bundle or archive"))
            continue
        kind = repository_kind(entry)
        if kind is not None:
            sources.append(Source(entry, kind, label + "/", names))
        elif (entry / ".git").exists():
            refused.append(Adoption(label + "/", error="its .git points to another folder (a worktree or submodule): "
                                                       "copy the main clone"))
        elif any(repo_for_name(n) for n in names) and _has_readme(entry):
            sources.append(Source(entry, "tree", label + "/", names))
        elif depth == 1:
            inner, inner_refused = scan_folder(entry, label + "/", depth + 1)
            sources += inner
            refused += inner_refused
            if not inner and not inner_refused:
                refused.append(Adoption(label + "/", error="empty folder"))
        else:
            refused.append(Adoption(label + "/", error="not a clone, bundle or archive, nor a source tree named "
                                                       "after a known repository"))
    return sources, refused


def repository_kind(path: Path) -> Kind | None:
    """"clone" for a work tree with a .git folder, "bare" for a bare repository, else None."""
    if (path / ".git").is_dir() and not (path / ".git").is_symlink():
        return "clone"
    if (path / "HEAD").is_file() and (path / "objects").is_dir() and (path / "refs").is_dir():
        return "bare"
    return None


def _has_readme(path: Path) -> bool:
    return any(child.name.lower() in _README and child.is_file() for child in path.iterdir())


async def _unpack(archive: Source, scratch: Path) -> tuple[list[Source], Adoption | None]:
    """The repositories inside an archive: the archive itself when it holds one clone or tree (possibly
    under one or more single folders, as GitHub's downloads are), else the clones in it."""
    scratch.mkdir(parents=True, exist_ok=True)
    dest = scratch / f"archive-{len(list(scratch.iterdir()))}"
    try:
        unpacked = await asyncio.to_thread(extract_archive, archive.path, dest)
    except UnsafeArchive as exc:
        return [], Adoption(archive.label, error=f"unsafe archive, nothing unpacked: {exc}")
    except OSError as exc:
        return [], Adoption(archive.label, error=f"cannot read the archive ({exc.strerror or exc})")
    node, names = dest, list(archive.names)
    for _ in range(3):  # GitHub's zip: name-main/…; a tar of repos/owner/name: three single folders
        children = [c for c in node.iterdir() if not c.name.startswith(".") or c.name == ".git"]
        if repository_kind(node) is not None or len(children) != 1 or not children[0].is_dir():
            break
        node = children[0]
        names.insert(0, node.name)
    shown = f"{archive.label}:{node.relative_to(dest).as_posix()}/" if node != dest else archive.label
    kind = repository_kind(node)
    if kind is not None:
        return [Source(node, kind, shown, tuple(names), unpacked.links_skipped)], None
    tree = [Source(node, "tree", shown, tuple(names), unpacked.links_skipped)]
    if (node / ".git").exists():
        return [], Adoption(shown, error="its .git points to another folder (a worktree or submodule)")
    if _has_readme(node) and any(repo_for_name(n) for n in names):
        return tree, None
    inner, _ = scan_folder(node, f"{archive.label}:", 1)
    if inner:
        return [s for s in inner if s.kind != "archive"], None  # archives inside archives are not opened
    if _has_readme(node):
        return tree, None  # a source tree named after nothing known: refused by name, with the names to use
    return [], Adoption(archive.label, error="no git repository or source tree inside")


async def _match_all(sources: list[Source], overrides: dict[str, str],
                     wanted: list[str] | None) -> tuple[list[tuple[Source, RepoInfo]], list[Adoption]]:
    """One source per repository (a clone over a bundle over a tree); the rest get one line each."""
    wanted_repos = {find_repo(n) for n in wanted or []}
    refused: list[Adoption] = []
    matched: list[tuple[Source, RepoInfo]] = []
    for source in sources:
        repo, problem = await match_source(source, overrides)
        if repo is None:
            refused.append(Adoption(source.label, error=problem))
        elif wanted and repo not in wanted_repos:
            refused.append(Adoption(source.label, repo.name, error="not among the repositories asked for"))
        else:
            matched.append((source, repo))
    matched.sort(key=lambda pair: (_PREFERENCE[pair[0].kind], pair[0].label))
    chosen: dict[str, tuple[Source, RepoInfo]] = {}
    for source, repo in matched:
        if repo.name in chosen:
            refused.append(Adoption(source.label, repo.name,
                                    error=f"another copy of {repo.name} is adopted instead ({chosen[repo.name][0].label})"))
        else:
            chosen[repo.name] = (source, repo)
    return list(chosen.values()), refused


async def match_source(source: Source, overrides: dict[str, str]) -> tuple[RepoInfo | None, str]:
    """The repository by remote URL and by name; a disagreement between the two is refused."""
    url = await remote_url(source) if source.kind in ("clone", "bare") else ""
    by_url = repo_for_url(url, overrides) if url else None
    by_name = next((r for r in map(repo_for_name, source.names) if r is not None), None)
    if by_url is not None and by_name is not None and by_url is not by_name:
        return None, f"its remote is {by_url.name} but its name says {by_name.name}: rename it or fix its origin"
    repo = by_url or by_name
    if repo is None:
        return None, f"not one of the known repositories (name it after one: {', '.join(known_names())})"
    return repo, ""


async def remote_url(source: Source) -> str:
    """`remote.origin.url` read from the config file alone (`git config --file` runs nothing of the repository)."""
    config = _git_dir(source) / "config"
    if not config.is_file():
        return ""
    result = await run_git(["config", "--file", str(config), "--get", "remote.origin.url"], None, 30)
    return result.stdout.decode("utf-8", errors="replace").strip() if result.ok else ""


async def _adopt_one(settings: Settings, source: Source, repo: RepoInfo, scratch: Path) -> Adoption:
    target = local_path(settings.repos_dir, repo)
    base = Adoption(source.label, repo.name)
    if target.exists() and target.resolve() == source.path.resolve():
        commit = await _head(target)
        return replace(base, commit=commit, note="already in place in REPOS_DIR")
    if target.exists() and any(target.iterdir()) and repository_kind(target) != "clone":
        return replace(base, error=f"{target} exists and is not a git clone: move it away first")
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.parent / f".{target.name}.adopt-{os.getpid()}"
    shutil.rmtree(partial, ignore_errors=True)
    timeout = settings.repo_sync_timeout_seconds
    try:
        note = await _make_repository(settings, source, partial, scratch, timeout)
        origin = await remote_url(source) if source.kind in ("clone", "bare") else ""
        fetch_from = origin if origin and is_public_home(origin, repo) else clone_url(repo, dict(settings.repo_urls))
        has_origin = (await run_git(["remote", "get-url", "origin"], partial, 30)).ok
        await checked_git(["remote", "set-url" if has_origin else "add", "origin", fetch_from], partial, 30)
        commit = await _head(partial)
        _swap_into_place(partial, target)
    except (GitError, OSError) as exc:
        return replace(base, error=str(exc)[:300])
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return replace(base, commit=commit, note=note)


async def _make_repository(settings: Settings, source: Source, partial: Path, scratch: Path, timeout: float) -> str:
    """Build the new clone at `partial`; returns a note for the person (empty when there is nothing to say)."""
    if source.kind == "bundle":
        await _verify_bundle(source.path, scratch, timeout)
        result = await run_git(["clone", "-q", "--", str(source.path), str(partial)], None, timeout)
        if not result.ok:
            line = git_error_line(result.stderr)
            if b"did not send all necessary objects" in result.stderr:
                raise GitError("a bundle of a shallow clone, which git cannot clone: bundle a full clone "
                               "(`git bundle create NAME.bundle --all`), or copy a .tar.gz of the clone")
            raise GitError(f"git clone of the bundle failed: {line}")
        await _check_out_a_branch(partial, timeout)
        return ""
    if source.kind in ("clone", "bare"):
        borrowed = [name for name in ("objects/info/alternates", "commondir") if (_git_dir(source) / name).exists()]
        if borrowed:
            # Objects or refs borrowed from another repository: one copied from elsewhere would point at a path
            # here, and a hostile archive could name any repository on this machine to take commits from.
            raise GitError(f"it borrows from another repository ({borrowed[0]}): copy a standalone clone "
                           "(`git clone --no-local`, or `git repack -a -d` and delete objects/info/alternates)")
        # file:// copies the objects (no hard links into DIR, git checks what it receives) and makes --depth work
        shallow = settings.repo_sync_mode == "shallow" or await _is_partial_clone(source)
        depth = ["--depth", "1", "--single-branch", "--no-tags"] if shallow else []
        await checked_git(["clone", "-q", "--no-local", *depth, "--", source.path.resolve().as_uri(), str(partial)], None, timeout)
        return ""
    # A plain source tree: a new repository with one commit, so the index (which reads git's file list) can read it.
    await checked_git(["init", "-q", "-b", "main", str(partial)], None, 60)
    for key, value in _ADOPTER.items():
        await checked_git(["config", key, value], partial, 30)
    git_dir = [f"--git-dir={partial / '.git'}", f"--work-tree={source.path.resolve()}"]
    await checked_git([*git_dir, "add", "-A", "."], source.path, timeout)
    await checked_git([*git_dir, "commit", "-q", "--no-verify", "-m", f"Adopted from {source.label} (no git history)"],
                      source.path, timeout)
    await checked_git(["reset", "-q", "--hard"], partial, timeout)
    links = f"; {source.links_skipped} links not unpacked" if source.links_skipped else ""
    return ("a source tree without git history, committed here as one commit; its permalinks name a commit the "
            f"host does not have, so prefer a clone or a bundle{links}")


async def _verify_bundle(bundle: Path, scratch: Path, timeout: float) -> None:
    """`git bundle verify` in an empty repository: a truncated or corrupt file, or an incremental bundle
    (it needs commits this machine does not have), is refused before anything is cloned."""
    empty = scratch / f"verify-{bundle.stem[:40]}"
    shutil.rmtree(empty, ignore_errors=True)
    empty.parent.mkdir(parents=True, exist_ok=True)
    await checked_git(["init", "-q", "--bare", str(empty)], None, 60)
    result = await run_git(["bundle", "verify", str(bundle.resolve())], empty, timeout)
    if result.ok:
        return
    text = result.stderr.decode("utf-8", errors="replace")
    if "prerequisite" in text:
        raise GitError("an incremental bundle: it needs commits this machine does not have; bundle the whole "
                       "clone (`git bundle create NAME.bundle --all`)")
    raise GitError(f"not a valid git bundle ({git_error_line(result.stderr) or 'git bundle verify failed'})")


async def _check_out_a_branch(clone: Path, timeout: float) -> None:
    """A bundle made without HEAD leaves nothing checked out: take main, master or the first branch."""
    if (await run_git(["rev-parse", "-q", "--verify", "HEAD^{commit}"], clone, 30)).ok:
        return
    listed = await run_git(["for-each-ref", "--format=%(refname:strip=3)", "refs/remotes/origin"], clone, 30)
    branches = [b for b in listed.stdout.decode("utf-8", errors="replace").split() if b != "HEAD"]
    if not branches:
        raise GitError("the bundle holds no branch")
    branch = next((b for b in ("main", "master") if b in branches), branches[0])
    await checked_git(["checkout", "-q", "-B", branch, f"refs/remotes/origin/{branch}"], clone, timeout)


async def _is_partial_clone(source: Source) -> bool:
    # A blobless copy lacks old blobs: only its checked-out commit can be copied without the network.
    config = _git_dir(source) / "config"
    result = await run_git(["config", "--file", str(config), "--get-regexp", r"^(remote\..*\.promisor|extensions\.partialclone)$"],
                           None, 30)
    return result.ok and bool(result.stdout.strip())


def _git_dir(source: Source) -> Path:
    return source.path / ".git" if source.kind == "clone" else source.path


async def _head(clone: Path) -> str:
    result = await run_git(["rev-parse", "HEAD"], clone, 30)
    return result.stdout.decode().strip() if result.ok else ""


def _swap_into_place(partial: Path, target: Path) -> None:
    """The new clone takes the old one's place in two renames, so the index never sees half of either."""
    old = None
    if target.exists():
        if any(target.iterdir()):
            old = target.parent / f".{target.name}.replaced-{os.getpid()}"
            shutil.rmtree(old, ignore_errors=True)
            target.rename(old)
        else:
            target.rmdir()
    partial.rename(target)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
