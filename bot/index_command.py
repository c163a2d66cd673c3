"""`python -m bot index [owner/name …]`: build or refresh the knowledge index from the local clones.

No network: it reads REPOS_DIR/<owner>/<name> (and issues already downloaded into DATA_DIR/issues).
Only files whose git blob changed since the last run are chunked again.
"""
from __future__ import annotations

import calendar
import json
import time
from pathlib import Path

from bot.settings import Settings
from core.index.builder import BuildResult, IndexBusy, RepoReport, RepoSource, build_index
from core.index.gitfiles import GitListingError, head_commit
from core.index.store import current_generation
from core.issue_store import issues_dir
from core.knowledge.generated.write import write_generated
from core.resolution.memory import RepoInput, build_memory
from core.vocabulary.build import build_vocabulary
from core.research.repos import REPOSITORIES, find_repo, local_path, web_base


def index_sources(settings: Settings) -> list[RepoSource]:
    """Every allowlisted repository: clones are read when present, downloaded issues in any case."""
    overrides = dict(settings.repo_urls)
    sources = []
    for repo in REPOSITORIES:
        clone = local_path(settings.repos_dir, repo)
        sources.append(RepoSource(repo.name, clone, web_base(repo, overrides, clone)))
    return sources


def _has_clone(path: Path) -> bool:
    return (path / ".git").exists() or (path / "HEAD").exists()


def refresh_index(settings: Settings, repos: list[str] | None, say=print) -> BuildResult:  # type: ignore[no-untyped-def]
    """Re-index `repos` (None: all); the rest are taken from the cache as they were."""

    def line(report: RepoReport) -> None:
        if report.note == "kept":
            return
        if report.note and not report.units and not report.issues:
            say(f"{report.repo:36} skipped: {report.note}")
            return
        commit = report.commit[:12] or "-"
        issues = f"  issues {report.issues}" if report.issues else ""
        say(f"{report.repo:36} commit {commit:12}  files {report.files:5}  units {report.units:6}  "
            f"changed {report.changed_files:5}{issues}  {report.seconds:5.1f} s")

    sources = index_sources(settings)
    result = build_index(settings.index_path, sources, rescan=set(repos) if repos else None,
                         data_dir=settings.data_dir, progress=line, maintainers=settings.maintainers_for)
    memory = build_memory(settings.index_path, settings.data_dir,
                          [RepoInput(s.name, s.clone, settings.maintainers_for(s.name)) for s in sources])
    if memory.threads:
        say(f"resolutions: {memory.threads} threads, {memory.resolved} resolved, {memory.with_release} with a release, "
            f"{memory.signatures} error signatures, {memory.seconds:.1f} s")
    clones = [(s.name, s.clone) for s in sources if _has_clone(s.clone)]
    vocabulary = build_vocabulary(settings.index_path, clones)
    if vocabulary.repos:
        say(f"vocabulary: {vocabulary.tokens} identifiers of {vocabulary.repos} clones "
            f"({vocabulary.bytes / 1e6:.1f} MB, {len(vocabulary.rebuilt)} re-read), {vocabulary.seconds:.1f} s")
    if memory.shallow:
        say(f"resolutions: no release names for {', '.join(memory.shallow)}: shallow clones have no tags "
            "(REPO_SYNC_MODE=blobless, then `python -m bot sync`)")
    written = [t for t in write_generated(settings.repos_dir, settings.data_dir, say) if t.rows]
    if written:
        say(f"knowledge: {', '.join(f'{t.name} {t.rows}' for t in written)} rows from the clones, "
            f"in {settings.data_dir / 'knowledge'}")
    return result


def run_index(settings: Settings, names: list[str]) -> int:
    wanted: list[str] = []
    for name in names:
        info = find_repo(name)
        if info is None:
            print(f"unknown repository '{name}'; use one of: {', '.join(r.name for r in REPOSITORIES)}")
            return 2
        if not _has_clone(local_path(settings.repos_dir, info)):
            print(f"no clone of {info.name} in {settings.repos_dir} (run `python -m bot sync {info.name}` first)")
            return 1
        wanted.append(info.name)
    has_issues = any(issues_dir(settings.data_dir).glob("*/*.jsonl"))
    if not names and not has_issues and not any(_has_clone(local_path(settings.repos_dir, r)) for r in REPOSITORIES):
        print(f"no clones in {settings.repos_dir} and no downloaded issues (run `python -m bot sync` first, or set REPOS_DIR)")
        return 1
    try:
        result = refresh_index(settings, wanted or None)
    except IndexBusy as exc:
        print(str(exc))
        return 1
    except OSError as exc:
        print(f"could not write the index in {settings.index_path}: {exc}")
        return 1
    print(f"index {result.generation}: {result.units} units in {result.seconds:.1f} s, at {settings.index_path}")
    return 0


def _age(created_at: str, now: float) -> str:
    try:
        built = calendar.timegm(time.strptime(created_at, "%Y-%m-%dT%H:%M:%SZ"))
    except (ValueError, OverflowError):
        return "age unknown"
    hours = max(0.0, now - built) / 3600
    return f"{hours * 60:.0f} min old" if hours < 1 else f"{hours:.1f} h old" if hours < 48 else f"{hours / 24:.0f} days old"


def index_status_lines(settings: Settings, now: float | None = None) -> list[str]:
    """What `doctor` says about the knowledge index (generation, units, age) and, for every repository,
    whether it is cloned (at which commit) and indexed (at which commit, how much)."""
    name = current_generation(settings.index_path)
    manifest: dict = {}
    if name is None:
        lines = [f"[info] no knowledge index in {settings.index_path}: answers quote no passages, search_docs is off "
                 "(run `python -m bot index`)"]
    else:
        try:
            manifest = json.loads((settings.index_path / name / "manifest.json").read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            return [f"[FAIL] knowledge index in {settings.index_path} is unreadable ({type(exc).__name__}): rebuild it"]
        age = _age(str(manifest.get("created_at", "")), time.time() if now is None else now)
        lines = [f"[ok]   knowledge index {name}: {manifest.get('units', 0)} units, {age}, at {settings.index_path}"]
    indexed = manifest.get("repos", {})
    clones = {repo.name: _clone_commit(local_path(settings.repos_dir, repo)) for repo in REPOSITORIES}
    lines.append(f"[info] repositories in {settings.repos_dir}: {sum(c is not None for c in clones.values())} "
                 f"of {len(clones)} cloned")
    for repo in REPOSITORIES:
        lines.append(f"[info]   {repo.name}: " + _repository_state(repo.name, clones[repo.name], indexed.get(repo.name, {})))
    return lines


def _clone_commit(clone: Path) -> str | None:
    """The clone's HEAD commit, '' when it cannot be read, None when there is no clone."""
    if not _has_clone(clone):
        return None
    try:
        return head_commit(clone)
    except GitListingError:
        return ""


def _repository_state(repo: str, clone_commit: str | None, info: dict) -> str:
    units, issues, commit = info.get("units", 0), info.get("issues", 0), str(info.get("commit") or "")
    issue_part = f", {issues} issues" if issues else ""
    if units:
        index_part = f"indexed at {commit[:12] or '-'}: {units} units{issue_part}"
    elif issues:
        index_part = f"{issues} issues indexed, no docs or code"
    else:
        index_part = "not indexed"
    if clone_commit is None:
        held = " (from an earlier clone)" if units else "" if issues else ": answers about it quote no docs or code"
        return (f"not cloned, {index_part}{held} (`python -m bot sync {repo}`, "
                "or `python -m bot sync --from DIR` with a copy made elsewhere)")
    clone_part = f"cloned at {clone_commit[:12]}" if clone_commit else "cloned (HEAD unreadable)"
    stale = not units or (clone_commit and commit and clone_commit != commit)
    return f"{clone_part}, {index_part}" + (" (`python -m bot index` to index the clone)" if stale else "")
