"""What a link in an answer points at: a blob in an allowlisted repository, an issue, or elsewhere.

Pure functions over URLs and text; nothing here touches git or the network. Evidence items
(`owner/name:path` or a URL) and answer sources are compared through one key form, so the same
file matches whether it is cited at a commit, at a branch or by a `?plain=1` docs link.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit, urlunsplit

from core.research.citations import URL, clean_url
from core.research.repos import REPOSITORIES, web_base

_LINE_ANCHOR = re.compile(r"^L(\d{1,9})(?:-L?(\d{1,9}))?$")
_HEX_COMMIT = re.compile(r"^[0-9a-f]{7,40}$")
_BLOB_KINDS = ("blob", "tree", "raw")
_ISSUE_KINDS = ("issues", "pull", "pulls", "merge_requests")
_CODE_HOSTS = ("github.com", "gitcode.com")


@dataclass(frozen=True)
class BlobLink:
    """`https://<host>/<owner>/<name>/blob/<ref>/<path>#Lx-Ly`, split; `ref_and_path` keeps every
    segment after `blob/` because a branch name may itself contain '/'."""

    url: str
    repo: str  # canonical owner/name
    ref_and_path: tuple[str, ...]
    start: int | None
    end: int | None

    @property
    def ref(self) -> str:
        return self.ref_and_path[0]

    @property
    def path(self) -> str:
        return "/".join(self.ref_and_path[1:])

    @property
    def at_commit(self) -> bool:
        return bool(_HEX_COMMIT.match(self.ref))


@dataclass(frozen=True)
class IssueLink:
    url: str
    host: str
    owner: str
    name: str
    kind: str  # issues, pull, pulls, merge_requests
    number: int


class RepoBases:
    """Which canonical repository a host/owner/name belongs to (the original, the GitHub name, and
    the clone source from REPO_URLS), and where each repository's issues live."""

    def __init__(self, repo_urls: Mapping[str, str] | None = None) -> None:
        self._by_base: dict[str, str] = {}
        self._issue_home: dict[str, tuple[str, str]] = {}
        for repo in REPOSITORIES:
            for base in (repo.web_url, f"https://github.com/{repo.name}", web_base(repo, dict(repo_urls or {}))):
                parts = urlsplit(base)
                self._by_base[(parts.netloc.lower() + parts.path.rstrip("/")).lower()] = repo.name
            host = "gitcode.com" if repo.issue_host == "gitcode" else "github.com"
            self._issue_home[repo.name] = (host, repo.issue_repo)

    def repo_for(self, host: str, owner: str, name: str) -> str | None:
        return self._by_base.get(f"{host}/{owner}/{name}".lower())

    def issue_home(self, repo: str) -> tuple[str, str]:
        """(host, owner/name) where `repo`'s issues are tracked."""
        return self._issue_home[repo]

    def repo_for_issue_tracker(self, host: str, owner: str, name: str) -> str | None:
        wanted = (host.lower(), f"{owner}/{name}".lower())
        return next((repo for repo, (h, r) in self._issue_home.items() if (h, r.lower()) == wanted), None)


def extract_links(text: str) -> list[str]:
    """Every http(s) URL in Markdown text, cleaned of trailing punctuation, first occurrence order."""
    return list(dict.fromkeys(clean_url(m.group(0)) for m in URL.finditer(text or "")))


def _host(netloc: str) -> str:
    return netloc.lower().split("@")[-1].split(":")[0].removeprefix("www.")


def parse_blob(url: str, bases: RepoBases) -> BlobLink | None:
    parts = urlsplit(url)
    segments = [unquote(s) for s in parts.path.split("/") if s]
    if _host(parts.netloc) not in _CODE_HOSTS or len(segments) < 5 or segments[2] not in _BLOB_KINDS:
        return None
    repo = bases.repo_for(_host(parts.netloc), segments[0], segments[1])
    if repo is None:
        return None
    start = end = None
    anchor = _LINE_ANCHOR.match(parts.fragment)
    if anchor:
        start = int(anchor.group(1))
        end = int(anchor.group(2)) if anchor.group(2) else start
    return BlobLink(url, repo, tuple(segments[3:]), start, end)


def parse_issue(url: str) -> IssueLink | None:
    parts = urlsplit(url)
    segments = [s for s in parts.path.split("/") if s]
    if _host(parts.netloc) not in _CODE_HOSTS or len(segments) != 4 or segments[2] not in _ISSUE_KINDS:
        return None
    if not segments[3].isdigit() or len(segments[3]) > 9 or int(segments[3]) < 1:
        return None
    return IssueLink(url, _host(parts.netloc), segments[0], segments[1], segments[2], int(segments[3]))


def looks_like_code_host_link(url: str) -> bool:
    return _host(urlsplit(url).netloc) in _CODE_HOSTS


def normalise_url(url: str) -> str:
    """Comparison form: https, lower-case host without www, no fragment, no trailing '/' or '.git'."""
    parts = urlsplit(clean_url(url).strip())
    path = parts.path.rstrip("/").removesuffix(".git")
    return urlunsplit(("https", _host(parts.netloc), path, parts.query, ""))


def _clean_path(path: str) -> str:
    path = path.strip()
    while path.startswith(("./", "/")):
        path = path.removeprefix("./").removeprefix("/")
    return path


def evidence_key(item: str, bases: RepoBases) -> set[str]:
    """Keys an evidence item matches on: `file:<repo>:<path>` and/or `url:<normalised URL>`."""
    item = item.strip()
    if item.lower().startswith(("http://", "https://")):
        keys = {"url:" + normalise_url(item)}
        blob = parse_blob(clean_url(item), bases)
        if blob is not None and len(blob.ref_and_path) > 1:
            keys.add(f"file:{blob.repo.lower()}:{blob.path}")
        return keys
    repo, sep, path = item.partition(":")
    if not sep or "/" not in repo or not path.strip():
        return set()  # neither a URL nor owner/name:path: matches nothing
    return {f"file:{repo.strip().lower()}:{_clean_path(path)}"}


def url_keys(url: str, bases: RepoBases) -> set[str]:
    """Keys a cited URL offers; a blob link offers its file (the ref may differ from the evidence's)."""
    keys = {"url:" + normalise_url(url)}
    blob = parse_blob(clean_url(url), bases)
    if blob is not None and len(blob.ref_and_path) > 1:
        keys.add(f"file:{blob.repo.lower()}:{blob.path}")
    return keys


def passage_keys(repo: str, path: str, url: str, bases: RepoBases) -> set[str]:
    return url_keys(url, bases) | {f"file:{repo.lower()}:{_clean_path(path)}"}


def evidence_keys(items: Iterable[str], bases: RepoBases) -> set[str]:
    keys: set[str] = set()
    for item in items:
        keys |= evidence_key(item, bases)
    return keys
