"""Which known repository a copied-in clone, bundle or archive is: by its remote URL or by its name.

Names are matched case-insensitively, with or without the owner, by the canonical name
(verylucky01/MindIE-LLM), the catalogue key (mindie-llm) and the names of the project on GitHub and
on GitCode (msmodelslim is Ascend/msmodelslim on GitCode, MindStudio-ModelSlim on GitHub). A download
suffix is forgiven: `vllm-ascend-main.zip`, `MindIE-LLM-master.tar.gz`, `sglang-v0.4.6.tar.gz`.
"""
from __future__ import annotations

from functools import cache

from bot.sync import split_clone_url
from core.knowledge.loader import load_knowledge_base
from core.research.repos import REPOSITORIES, RepoInfo, clone_url

# What GitHub's and GitCode's "download" buttons and release tarballs append to the project name.
_BRANCHES = ("main", "master", "develop", "dev")


@cache
def _name_table() -> dict[str, RepoInfo]:
    table: dict[str, RepoInfo] = {}
    homes = {r.repo: (r.key, r.github_url, r.origin_url) for r in load_knowledge_base().repositories}
    for repo in REPOSITORIES:
        key, github_url, origin_url = homes.get(repo.name, ("", "", ""))
        names = {repo.name, repo.name.split("/", 1)[1], key}
        for url in (github_url, origin_url, repo.web_url):
            path = url_key(url).split("/", 1)[-1] if url else ""
            if path.count("/") == 1:
                names |= {path, path.split("/", 1)[1]}
        for name in names:
            if name:
                table[name.lower()] = repo
    return table


def known_names() -> list[str]:
    """The short names to show a person who named a copy wrongly."""
    return [r.name.split("/", 1)[1] for r in REPOSITORIES]


def repo_for_name(name: str) -> RepoInfo | None:
    """The repository a file or folder name stands for (`owner/name` or `name`), else None."""
    lowered = name.strip().lower()
    for suffix in (".bundle", ".git"):
        if lowered.endswith(suffix):
            lowered = lowered[: -len(suffix)]
    table = _name_table()
    if lowered in table:
        return table[lowered]
    owner, _, short = lowered.rpartition("/")
    for trimmed in (short, *_without_download_suffix(short)):
        hit = table.get(f"{owner}/{trimmed}" if owner else trimmed) or (table.get(trimmed) if owner else None)
        if hit is not None:
            return hit
    return None


def _without_download_suffix(name: str) -> list[str]:
    """`name` without a trailing `-main`, `-master`, `-0.9.1`, `-v0.9.1-rc1` (one or two dash parts)."""
    parts = name.split("-")
    heads = []
    for cut in (1, 2):
        if len(parts) <= cut:
            break
        tag = parts[-cut]
        if tag in _BRANCHES or tag[:1].isdigit() or (tag[:1] == "v" and tag[1:2].isdigit()):
            heads.append("-".join(parts[:-cut]))
    return heads


def url_key(url: str) -> str:
    """host/path of a clone URL in lower case, without user, port, scheme and `.git`: one key for the
    https, ssh and scp-like spellings of the same project; a local path stays a path."""
    host, path = split_clone_url(url)
    path = path.strip("/")
    if path.lower().endswith(".git"):
        path = path[:-4]
    return (f"{host}/{path}" if host else path).lower()


def repo_for_url(url: str, overrides: dict[str, str]) -> RepoInfo | None:
    """The repository a remote URL points at: a known home or REPO_URLS entry, else the URL's last
    `owner/name` or `name` (an internal mirror keeps the project's name)."""
    key = url_key(url)
    if not key:
        return None
    for repo in REPOSITORIES:
        homes = {repo.web_url, clone_url(repo, overrides)}
        if any(url_key(home) == key for home in homes):
            return repo
    parts = key.split("/")
    return repo_for_name("/".join(parts[-2:])) if len(parts) >= 2 else repo_for_name(parts[-1])


def is_public_home(url: str, repo: RepoInfo) -> bool:
    """True for the repository's own GitHub or GitCode project (permalinks to it open)."""
    key = url_key(url)
    return key.startswith(("github.com/", "gitcode.com/")) and repo_for_url(url, {}) is repo
