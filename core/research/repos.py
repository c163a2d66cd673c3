"""The allowlisted repositories and where each one lives.

The canonical name (owner/name) is the DeepWiki repoName and the local clone
directory REPOS_DIR/<owner>/<name>. Issues for the Ascend originals live on
GitCode, so each repository also says which issue tracker to ask and under
which path. Clone URLs are settings (REPO_URLS); permalinks follow the host
the clone came from, so a commit in a permalink exists where the link points.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from core.knowledge.loader import load_knowledge_base, load_product_facts

IssueHost = Literal["github", "gitcode"]


@dataclass(frozen=True)
class RepoInfo:
    name: str  # canonical owner/name
    issue_host: IssueHost
    issue_repo: str  # owner/name on the issue host
    web_url: str  # home page of the original; also the default clone source

    @property
    def clone_url(self) -> str:
        return self.web_url + ".git"


def _from_knowledge_base() -> tuple[RepoInfo, ...]:
    # One catalogue for routing and research: core/knowledge/repositories.json.
    kb = load_knowledge_base()
    return tuple(
        RepoInfo(r.repo, "gitcode" if r.issue_tracker.kind == "gitcode" else "github", r.issue_tracker.api_repo, r.origin_url)
        for r in kb.repositories
    )


REPOSITORIES: tuple[RepoInfo, ...] = _from_knowledge_base()

_BY_NAME = {r.name.lower(): r for r in REPOSITORIES}
_WEB_REMOTE = re.compile(r"^(?:https?://|ssh://git@|git@)(github\.com|gitcode\.com)[/:]([\w.-]+)/([\w.-]+?)(?:\.git)?/?$")


def repo_names() -> tuple[str, ...]:
    return tuple(r.name for r in REPOSITORIES)


def find_repo(name: str) -> RepoInfo | None:
    """The allowlisted repository for a name, case-insensitively; None when not allowlisted."""
    return _BY_NAME.get(name.strip().lower())


def clone_url(repo: RepoInfo, overrides: dict[str, str]) -> str:
    for key, url in overrides.items():
        if key.lower() == repo.name.lower():
            return url
    return repo.clone_url


def web_base(repo: RepoInfo, overrides: dict[str, str], clone: Path | None = None) -> str:
    """Where permalinks point: the GitHub/GitCode project the clone came from, else the original.

    The clone source is REPO_URLS when set, else the clone's own `origin` remote, so a commit
    in a permalink is one the linked project has (a mirror's commit may not exist upstream).
    """
    source = clone_url(repo, overrides)
    if not any(key.lower() == repo.name.lower() for key in overrides) and clone is not None:
        source = origin_url(clone) or source
    match = _WEB_REMOTE.match(source)
    if match:
        host, owner, name = match.groups()
        return f"https://{host}/{owner}/{name}"
    return repo.web_url


def origin_url(clone: Path) -> str | None:
    """The `origin` remote URL from a clone's .git/config, without running git; None when absent."""
    try:
        lines = (clone / ".git" / "config").read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    in_origin = False
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("["):
            in_origin = stripped.replace(" ", "") == '[remote"origin"]'
        elif in_origin and stripped.startswith("url") and "=" in stripped:
            key, _, value = stripped.partition("=")
            if key.strip() == "url":
                return value.strip()
    return None


def local_path(repos_dir: Path, repo: RepoInfo) -> Path:
    owner, name = repo.name.split("/", 1)
    return repos_dir / owner / name


def permalink(base: str, commit: str, path: str, start: int | None = None, end: int | None = None) -> str:
    """A blob URL at a commit, with a line anchor (GitHub and GitCode both take #L10-L20)."""
    url = f"{base}/blob/{commit}/{path}"
    if start is not None:
        url += f"#L{start}" if end is None or end == start else f"#L{start}-L{end}"
    return url


def canonical_urls() -> tuple[str, ...]:
    """URLs an answer may cite without a tool having returned them in this turn:
    the repositories' home pages and the knowledge base's own sources."""
    urls: list[str] = []
    for r in REPOSITORIES:
        urls += [r.web_url, f"https://github.com/{r.name}", f"https://deepwiki.com/{r.name}"]
    kb = load_knowledge_base()
    refs: list[str] = [r.source for r in kb.repositories] + [c.source for c in kb.chips]
    for group in (kb.error_codes, kb.incompatibilities, kb.patterns, kb.checklist):
        for fact in group:
            refs += list(fact.sources)
    refs += [row.source for row in kb.matrix.rows] + [n.source for n in kb.matrix.notes]
    refs += [kb.matrix.policy.source, kb.matrix.install_order.source, kb.collect_env.source, kb.soc_version.source]
    refs.append(kb.matrix.main_branch.source)  # the verified-commit file the main-branch lookup cites
    refs += [v.source for v in kb.env_vars]
    refs += [entry.source for entry in kb.code_map]
    refs += [doc.source for doc in (kb.doc(r.name) for r in REPOSITORIES) if doc is not None]
    urls += [kb.source(ref).url for ref in refs]
    urls += [fact.source_url for fact in load_product_facts()]
    return tuple(dict.fromkeys(urls))
