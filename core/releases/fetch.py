"""What `sync` fetches so a shallow clone holds release tags to read at.

A shallow clone (`--depth 1 --no-tags`, the default REPO_SYNC_MODE) has no tags. After cloning or
updating, `sync` lists the remote's release tags (`git ls-remote --tags`) and fetches the newest
SYNC_RELEASE_TAGS of them that the clone lacks, each at depth 1: its tree and files, no history.
Measured on vllm-project/vllm-ascend (42 release tags, bench/release_bench.py): the shallow clone is
14 MB; all 42 tags at depth 1 add 17 MB and 12 s from a local remote, objects shared between tags
being sent once. A blobless clone already fetches every tag with its history (its file contents
come from the remote the first time they are read), so nothing is added there.
"""
from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

from core.research.git import is_safe_ref
from core.resolution.releases import version_key

GitRunner = Callable[[list[str], Path, float], Awaitable[None]]
GitReader = Callable[[list[str], Path, float], Awaitable[bytes]]

_BATCH = 16  # tags per fetch: one negotiation for many tags, a command line of bounded length


def newest_release_tags(ls_remote: str, keep: int) -> list[str]:
    """The newest `keep` release tags in `git ls-remote --tags` output, oldest first."""
    names = set()
    for line in ls_remote.splitlines():
        _, _, ref = line.partition("\t")
        name = ref.strip().removeprefix("refs/tags/").removesuffix("^{}")
        if name and version_key(name) is not None and is_safe_ref(name):
            names.add(name)
    ordered = sorted(names, key=lambda t: version_key(t) or ())
    return ordered[-keep:] if keep > 0 else []


async def fetch_release_tags(clone: Path, keep: int, timeout: float, run: GitRunner, read: GitReader) -> list[str]:
    """Fetch the newest `keep` release tags the clone lacks (depth 1); the names fetched.

    `run` raises on failure (a tag that cannot be fetched fails the sync with git's own line);
    `read` returns a command's stdout."""
    if keep <= 0:
        return []
    wanted = newest_release_tags((await read(["ls-remote", "--tags", "origin"], clone, timeout)).decode("utf-8", "replace"), keep)
    held = set((await read(["tag", "--list"], clone, timeout)).decode("utf-8", "replace").split())
    missing = [t for t in wanted if t not in held]
    for start in range(0, len(missing), _BATCH):
        refspecs = [f"+refs/tags/{t}:refs/tags/{t}" for t in missing[start:start + _BATCH]]
        await run(["fetch", "-q", "--depth", "1", "--no-tags", "origin", *refspecs], clone, timeout)
    return missing
