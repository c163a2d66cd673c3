"""The built-in knowledge base: facts about the Ascend inference repositories, and their lookups.

The facts live as JSON beside this package (see docs/knowledge.md); core/knowledge/loader.py
reads and validates them into the models of core/knowledge/schema.py and assembles one
KnowledgeBase. Every fact carries a `source`: either a URL or `owner/name:path` inside a
repository, which `KnowledgeBase.source()` turns into a citable link.

Every piece of advice names the products it applies to (`products`: canonical repository names
from repositories.json, checked at load). Steps, causes and commands may narrow that to a subset
and may carry a `when` trigger (a phrase that must be in the user's text), so triage shows
vllm-ascend commands only for vllm-ascend questions and the VLLM_VERSION step only for
InvalidVersion.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping

from core.knowledge.schema import (
    REPO_PATH,
    ChecklistItem,
    Chip,
    CodeMapEntry,
    CollectEnvInfo,
    DocLink,
    EnvVar,
    ErrorCode,
    Incompatibility,
    ProblemPattern,
    Repository,
    SendItem,
    TextFact,
    VersionMatrix,
)
from core.messages import Source


@dataclass(frozen=True)
class KnowledgeBase:
    repositories: tuple[Repository, ...]
    chips: tuple[Chip, ...]
    soc_version: TextFact
    error_codes: tuple[ErrorCode, ...]
    incompatibilities: tuple[Incompatibility, ...]
    patterns: tuple[ProblemPattern, ...]
    checklist: tuple[ChecklistItem, ...]
    matrix: VersionMatrix
    collect_env: CollectEnvInfo
    env_vars: tuple[EnvVar, ...]
    send_items: tuple[SendItem, ...] = ()
    docs: tuple[DocLink, ...] = ()
    code_map: tuple[CodeMapEntry, ...] = ()

    def repository(self, repo_or_key: str) -> Repository | None:
        wanted = repo_or_key.strip().lower()
        for r in self.repositories:
            if r.repo.lower() == wanted or r.key == wanted:
                return r
        return None

    def chip(self, chip_id: str) -> Chip | None:
        return next((c for c in self.chips if c.id == chip_id), None)

    def error_code(self, code: str) -> ErrorCode | None:
        wanted = code.strip().upper()
        for e in self.error_codes:
            if e.code.upper() == wanted or wanted in (a.upper() for a in e.aliases):
                return e
        return None

    def env_var(self, name: str) -> EnvVar | None:
        return next((v for v in self.env_vars if v.name == name), None)

    def doc(self, repo: str) -> DocLink | None:
        return next((d for d in self.docs if d.repo == repo), None)

    def source(self, ref: str) -> Source:
        """Turn a fact's `source` into a citable Source (title + canonical URL)."""
        return resolve_source(ref, {r.repo: r for r in self.repositories})


# ------------------------------------------------------------ source links

_GH = re.compile(r"^https://github\.com/(?P<repo>[^/\s]+/[^/\s]+)/(?P<kind>issues|pull|blob)/(?P<rest>\S+)$")


def resolve_source(ref: str, repos: Mapping[str, Repository]) -> Source:
    """A fact's source as a link: `owner/name:path` on the repository's doc branch, a GitHub URL titled
    by what it points at (issue, PR, file), anything else as itself."""
    m = REPO_PATH.match(ref)
    if m:
        repo, path = m.group("repo"), m.group("path")
        known = repos.get(repo)
        branch = known.doc_ref if known else "main"
        return Source(title=f"{repo}: {path}", url=f"https://github.com/{repo}/blob/{branch}/{path}")
    g = _GH.match(ref)
    if g:
        repo, kind, rest = g.group("repo"), g.group("kind"), g.group("rest")
        if kind == "issues":
            return Source(title=f"{repo}#{rest}", url=ref)
        if kind == "pull":
            return Source(title=f"{repo} PR #{rest}", url=ref)
        # blob/<ref>/<path>: show the path, not the branch
        _, _, path = rest.partition("/")
        return Source(title=f"{repo}: {path}", url=ref)
    return Source(title=ref, url=ref)
