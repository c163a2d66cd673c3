"""Build INDEX_DIR/vocabulary.json from the clones: which repositories own each identifier.

A repository's tokens are kept per commit in the file itself, so a rebuild re-reads only clones whose
commit moved. Tokens that three or more repositories own say nothing about which one is meant and are
left out; so are tokens only test code uses (see extract).
"""
from __future__ import annotations

import json
import subprocess
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from core.atomic_file import write_json_atomically
from core.index.gitfiles import GitListingError, head_commit, read_file, tracked_files
from core.vocabulary.extract import MAX_FILE_BYTES, READ_SUFFIXES, file_tokens
from core.vocabulary.paths import path_names
from core.vocabulary.tokens import PATH, RELEASE, release_tokens

FILE_NAME = "vocabulary.json"
SCHEMA = 3  # bump when extraction changes: a file of another schema is rebuilt by index and ignored by the router
MAX_OWNERS = 2  # a token three repositories own is generic
# A directory name two repositories share is layout or a shared feature ("fused_moe", "kv_transfer"):
# it names neither.
MAX_PATH_OWNERS = 1


@dataclass(frozen=True)
class VocabularyReport:
    repos: int
    rebuilt: tuple[str, ...]
    tokens: int
    bytes: int
    seconds: float


def repository_tokens(repo: str, clone: Path) -> dict[str, dict[str, list[str]]]:
    """{owner repo: {kind: sorted tokens}} read from one clone (owners other than `repo` come from imports)."""
    found: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for tracked in tracked_files(clone):
        found[repo][PATH].update(path_names(tracked.path))  # every file's directories name features
        if not tracked.path.lower().endswith(READ_SUFFIXES):
            continue  # binaries, images, translations: nothing a question names
        data = read_file(clone, tracked.path, MAX_FILE_BYTES)
        if data is None or b"\0" in data[:1024]:
            continue
        text = data.decode("utf-8", errors="replace")
        for owner, kind, token in file_tokens(repo, tracked.path, text):
            found[owner][kind].add(token)
    for tag in _tags(clone):
        found[repo][RELEASE].update(release_tokens(tag))
    return {owner: {kind: sorted(tokens) for kind, tokens in kinds.items()} for owner, kinds in found.items()}


def _tags(clone: Path) -> list[str]:
    try:
        done = subprocess.run(["git", "-C", str(clone), "tag", "--list"], capture_output=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return []
    return done.stdout.decode(errors="replace").split() if done.returncode == 0 else []


def build_vocabulary(index_dir: Path, clones: Sequence[tuple[str, Path]]) -> VocabularyReport:
    """Refresh the per-clone token lists whose commit changed and write the merged ownership map."""
    started = time.monotonic()
    path = Path(index_dir) / FILE_NAME
    previous = _read(path)
    per_clone: dict[str, dict] = {}
    rebuilt: list[str] = []
    for repo, clone in clones:
        try:
            commit = head_commit(clone)
        except GitListingError:
            continue  # no clone: its vocabulary is absent, routing falls back to the named-entity rules
        old = previous.get("clones", {}).get(repo)
        if old and old.get("commit") == commit:
            per_clone[repo] = old
            continue
        per_clone[repo] = {"commit": commit, "owners": repository_tokens(repo, clone)}
        rebuilt.append(repo)
    owners = _merge(per_clone)
    payload = {"schema": SCHEMA, "clones": per_clone, "owners": owners}
    size = write_json_atomically(path, payload)
    return VocabularyReport(len(per_clone), tuple(rebuilt), sum(len(t) for t in owners.values()), size,
                            time.monotonic() - started)


def _merge(per_clone: dict[str, dict]) -> dict[str, dict[str, list[str]]]:
    """{kind: {token: [owner repos]}} without generic tokens."""
    owned: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for entry in per_clone.values():
        for owner, kinds in entry["owners"].items():
            for kind, tokens in kinds.items():
                for token in tokens:
                    owned[kind][token].add(owner)
    if PATH in owned:
        owned[PATH] = _path_owners(owned[PATH])
    return {
        kind: {token: sorted(repos) for token, repos in sorted(tokens.items()) if len(repos) <= _max_owners(kind)}
        for kind, tokens in sorted(owned.items())
    }


def _path_owners(names: dict[str, set[str]]) -> dict[str, set[str]]:
    """A name is also owned by every repository with a longer name that contains its words: another
    repository's `offline_inference_npu` makes "offline inference" nobody's own."""
    within: dict[str, set[str]] = defaultdict(set)
    for name, repos in names.items():
        parts = name.split("_")
        for start in range(len(parts) - 1):
            for stop in range(start + 2, len(parts) + 1):
                within["_".join(parts[start:stop])].update(repos)
    return {name: within[name] for name in names}


def _max_owners(kind: str) -> int:
    return MAX_PATH_OWNERS if kind == PATH else MAX_OWNERS


def _read(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) and data.get("schema") == SCHEMA else {}
