"""What `python -m bot sync` says at the end: one line per repository (ok, or failed with the reason
in a few words) and, when any failed, the next step: mirrors in REPO_URLS, or copies adopted with
`sync --from DIR`.

The reason is read from git's own error line, so it names what a person can act on: a name that
does not resolve (DNS), a host that never answers (timeout), a refusal (403), a login wall (auth).
The next step is printed in English and Chinese, with the commands and JSON the same in both.
"""
from __future__ import annotations

import json
import re
from collections.abc import Collection, Sequence

from bot.sync import SyncResult, url_host
from core.knowledge.loader import load_knowledge_base
from core.research.repos import clone_url, find_repo

# What git's error line says, and the reason to print, tried in order: the first pattern found names
# the reason ({where}: the host; {name}: the pattern's group; {error}: the line itself, cut). Each
# pattern runs on one short line and none can backtrack (plain alternatives, no nesting).
_REASONS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), reason) for pattern, reason in (
    (r"Could not resolve (?:host|proxy):? ?'?([^\s']+)", "DNS: {name} does not resolve from here"),
    (r"timed out|Timeout was reached", "timeout: {where} did not answer"),
    (r"error: 403|403 Forbidden", "403: {where} refused access (a firewall, a proxy or the host's own block)"),
    (r"error: 401|Authentication failed|could not read (?:Username|Password)|terminal prompts disabled|"
     r"Permission denied \(publickey",
     "auth: {where} asks for a login (private, renamed or missing repository, or a login wall)"),
    (r"error: 404|not found|does not appear to be a git repository|does not exist", "not found: no repository at {where}"),
    (r"Connection refused|Couldn't connect to server|Failed to connect|Network is unreachable",
     "refused: cannot connect to {where}"),
    (r"SSL|certificate",
     "TLS: certificate problem with {where} (a proxy that re-signs HTTPS needs its CA in git's http.sslCAInfo)"),
    (r"proxy|error: 407", "proxy: {error}"),
    )
)

PLACEHOLDER_MIRROR = "https://<mirror>/{name}.git"


def failure_reason(error: str, host: str = "") -> str:
    """One line a person can act on, from a sync error (git's error line, or one of sync's own)."""
    for pattern, reason in _REASONS:
        found = pattern.search(error)
        if found:
            name = found.group(1) if found.re.groups else ""
            return reason.format(where=host or "the host", name=name, error=error[:160])
    return error[:200] or "failed"


def summary_lines(results: Sequence[SyncResult]) -> list[str]:
    """The summary table: `ok`/`failed`, the repository, then the commit or the reason."""
    synced = [r for r in results if r.ok]
    lines = [f"Summary: {len(synced)} of {len(results)} repositories synced"
             + (f", {len(results) - len(synced)} failed." if len(synced) < len(results) else ".")]
    width = max((len(r.repo) for r in results), default=0)
    for result in results:
        if result.ok:
            lines.append(f"  ok      {result.repo:{width}}  {result.action} at {result.commit[:12] or '-'}")
        else:
            lines.append(f"  failed  {result.repo:{width}}  {failure_reason(result.error, result.host)}")
    return lines


def next_step_lines(failed: Sequence[SyncResult], overrides: dict[str, str]) -> list[str]:
    """What to do about the repositories that failed, with the exact REPO_URLS line to start from."""
    known = [r for r in failed if find_repo(r.repo) is not None]
    if not known:
        return []
    unreachable = {r.host.lower() for r in known if r.host}
    mirrors = {r.repo: suggested_mirror(r.repo, overrides, unreachable) for r in known}
    return [
        "",
        "Next step / 下一步:",
        "  1. Point REPO_URLS at mirrors this machine reaches (in .env; one JSON object, owner/name → clone URL;",
        "     replace every <mirror>), then run `python -m bot sync` again.",
        "     在 .env 中把 REPO_URLS 指向本机能访问的镜像（JSON 对象：owner/name → 克隆地址，替换 <mirror>），再运行 `python -m bot sync`：",
        "     REPO_URLS=" + json.dumps(mirrors, ensure_ascii=False),
        "  2. Or, on a machine that reaches the hosts, clone them (`git clone URL`, a `git bundle create NAME.bundle --all`",
        "     of a full clone, or a .tar.gz/.zip of the clone or of the source tree), copy the files into a folder here, then:",
        "     或者在能访问这些站点的机器上克隆（或打成 bundle / tar.gz / zip），把文件拷到本机某个目录，然后运行：",
        "     python -m bot sync --from DIR",
        "  docs/index.md (English), docs/zh/index.md (中文): \"Without GitHub or GitCode\" / \"无法访问 GitHub 或 GitCode 时\"",
    ]


def suggested_mirror(repo: str, overrides: dict[str, str], unreachable: Collection[str] = ()) -> str:
    """Another public home of `repo` on a host that did not fail in this run (the GitHub mirror of a
    GitCode original, or the other way round), else a placeholder to fill in."""
    info = find_repo(repo)
    if info is None:
        return PLACEHOLDER_MIRROR.format(name=repo)
    avoid = {url_host(clone_url(info, overrides)).lower(), *unreachable}
    for entry in load_knowledge_base().repositories:
        if entry.repo != info.name:
            continue
        for home in (entry.origin_url, entry.github_url):
            if home and url_host(home).lower() not in avoid:
                return home.rstrip("/") + ".git"
    return PLACEHOLDER_MIRROR.format(name=info.name)
