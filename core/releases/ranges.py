"""Release ranges of knowledge-base advice, derived from the vllm-ascend clone's release tags.

A tip that names `cudagraph_mode`, `--async-scheduling` or `VLLM_ASCEND_ENABLE_MLAPO` holds only on
the releases whose code knows that name. The knowledge files carry the range on each piece of
advice (`since`: the first release that has it; `until`: the first release after it that no
longer has it; `not_in`: releases inside the range that lack it, such as the v0.9.1 line cut before
a feature reached main), with `range_from` naming what it was derived from. This module

- derives them: for every vllm-ascend-scoped note, command, env var, incompatibility and product
  fact, the identifiers it names are looked up in `vllm_ascend/` at every release tag (one
  `git grep` per tag for all names at once); an identifier present at some tags and not others
  restricts the advice to the tags that have it. A hand-set range names a `range_anchor` (a file
  and a linear regex: "the default of VLLM_ASCEND_ENABLE_MLAPO is 1") and is derived the same way.
  `python -m core.releases.ranges --write` rewrites the files from a clone; tests check that the
  stated ranges agree with the clone when one is present;
- applies them: `outside(releases, version)` says whether a user's release is out of a range and
  `needs(...)` words it ("needs v0.10.1rc1 or later", "removed in v0.12.0rc1").

Runtime names (CANN, HCCL, torch_npu env vars, ACL error names) are never ranged: they are not the
plugin's to add or remove, and a mention in its code proves nothing.
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.messages import Language
from core.resolution.releases import version_key

REPO = "vllm-project/vllm-ascend"
CODE_DIR = "vllm_ascend"
# Files (under core/knowledge/) whose vllm-ascend advice is ranged, and the text fields of an item.
FILES = ("problem_patterns.json", "error_codes.json", "incompatibilities.json", "env_vars.json", "products/vllm_ascend.json")
_TEXT_KEYS = ("en", "run", "text_en", "title_en", "purpose_en", "explanation_en", "workaround_en", "name")
_IDENT = re.compile(r"--[a-z][a-z0-9\-]{2,60}|[A-Z][A-Z0-9]{1,30}(?:_[A-Z0-9]{1,30}){1,10}|[a-z][a-z0-9]{1,30}(?:_[a-z0-9]{1,30}){1,10}")
_RUNTIME = re.compile(r"^(?:ACL|ACLNN|ASCEND|HCCL|LCCL|ATB|PYTORCH|TASK_QUEUE|CUDA|GLIBC|LINK|SOC|MSMONITOR_|HCCN)_?|^(?:torch_npu|vllm_ascend|set_env|hccn_tool)$")
MAX_GAPS = 3  # more releases missing inside a range than this: a coincidental mention, not a feature


@dataclass(frozen=True)
class Releases:
    """The vllm-ascend releases a piece of advice holds on (versions without a leading 'v')."""

    since: str | None = None
    until: str | None = None  # exclusive: the first release without it
    not_in: tuple[str, ...] = ()

    def holds(self, version: str) -> bool:
        key = version_key(version)
        if key is None:
            return True  # main, a branch, a dev build we cannot place: no claim
        if self.since and key < (version_key(self.since) or ()):
            return False
        if self.until and key >= (version_key(self.until) or ()):
            return False
        return version.lstrip("vV") not in self.not_in

    def __bool__(self) -> bool:
        return bool(self.since or self.until or self.not_in)


NO_RANGE = Releases()


def releases_of(obj: Mapping[str, Any]) -> Releases:
    """The range an item of a knowledge file states (absent fields: no bound)."""
    since, until = obj.get("since"), obj.get("until")
    not_in = obj.get("not_in") or ()
    return Releases(since if isinstance(since, str) else None, until if isinstance(until, str) else None,
                    tuple(v for v in not_in if isinstance(v, str)))


def outside(releases: Releases | None, version: str | None) -> bool:
    """True when the user's release is known and the advice does not hold on it."""
    return bool(releases) and bool(version) and not releases.holds(version or "")  # type: ignore[union-attr]


def needs(releases: Releases, version: str | None, language: Language) -> str:
    """Why the advice is not for this release, or (release unknown) which releases it is for."""
    since, until = releases.since, releases.until
    key = version_key(version or "")
    if key is not None and since and key < (version_key(since) or ()):
        return f"需要 v{since} 或更高版本" if language == "zh" else f"needs v{since} or later"
    if key is not None and until and key >= (version_key(until) or ()):
        return f"v{until} 起已移除" if language == "zh" else f"removed in v{until}"
    if key is not None:
        return f"v{version} 中没有" if language == "zh" else f"not in v{version}"
    if since and until:
        return f"适用于 v{since} 至 v{until} 之前" if language == "zh" else f"v{since} up to, not including, v{until}"
    if since:
        return f"v{since} 及以后" if language == "zh" else f"v{since} or later"
    if until:
        return f"v{until} 之前" if language == "zh" else f"before v{until}"
    return ""


# ------------------------------------------------------------------ deriving from a clone


def tags_of(clone: Path) -> list[str]:
    done = subprocess.run(["git", "-C", str(clone), "tag", "--list"], capture_output=True, timeout=60, check=True)
    tags = [t for t in done.stdout.decode().split() if version_key(t) is not None]
    return sorted(tags, key=lambda t: version_key(t) or ())


def _anchor_name(identifier: str) -> str:
    """What the code says for an identifier: a flag's option name (--async-scheduling → async_scheduling)."""
    return identifier[2:].replace("-", "_") if identifier.startswith("--") else identifier


_WORDS = re.compile(rb"[A-Za-z_][A-Za-z0-9_]{1,80}")


def presence(clone: Path, tags: Sequence[str], names: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """For each name, the tags whose `vllm_ascend/*.py` mention it as a whole word.

    Tags share most files, so each distinct file version is read once (`git cat-file --batch`):
    vllm-ascend's 42 tags hold about 3,100 of them, 58 MB, read in a few seconds."""
    wanted = set(names)
    if not wanted:
        return {}
    blobs_of: dict[str, list[str]] = {}
    for tag in tags:
        listing = _git(clone, "ls-tree", "-r", tag, "--", CODE_DIR)
        blobs_of[tag] = [line.split()[2] for line in listing.splitlines() if line.endswith(".py") and " blob " in line]
    words_of = _blob_words(clone, sorted({b for blobs in blobs_of.values() for b in blobs}), wanted)
    found: dict[str, list[str]] = {n: [] for n in sorted(wanted)}
    for tag in tags:
        here = set().union(*(words_of.get(b, frozenset()) for b in blobs_of[tag]))
        for name in here:
            found[name].append(tag)
    return {n: tuple(t) for n, t in found.items()}


def _git(clone: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(clone), *args], capture_output=True, timeout=120, check=True)
    return done.stdout.decode("utf-8", "replace")


def _blob_words(clone: Path, blobs: Sequence[str], wanted: set[str]) -> dict[str, frozenset[str]]:
    """The wanted names each blob mentions."""
    if not blobs:
        return {}
    done = subprocess.run(["git", "-C", str(clone), "cat-file", "--batch"], input=("\n".join(blobs) + "\n").encode(),
                          capture_output=True, timeout=300, check=True)
    data, pos, out = done.stdout, 0, {}
    encoded = {n.encode(): n for n in wanted}
    for blob in blobs:
        end = data.index(b"\n", pos)
        size = int(data[pos:end].split()[2])
        body = data[end + 1:end + 1 + size]
        pos = end + 1 + size + 1
        out[blob] = frozenset(encoded[w] for w in set(_WORDS.findall(body)) & encoded.keys())
    return out


def anchored(clone: Path, tags: Sequence[str], path: str, pattern: str) -> tuple[str, ...]:
    """Tags whose `path` matches `pattern` (a linear regex written in the knowledge file)."""
    compiled = re.compile(pattern)
    out = []
    for tag in tags:
        done = subprocess.run(["git", "-C", str(clone), "show", f"{tag}:{path}"], capture_output=True, timeout=60, check=False)
        if done.returncode == 0 and compiled.search(done.stdout.decode("utf-8", "replace")):
            out.append(tag)
    return tuple(out)


def range_of(present: Sequence[str], tags: Sequence[str]) -> Releases | None:
    """The range a set of tags spans (None: everywhere, nowhere, or too scattered to mean a feature)."""
    if not present or len(present) == len(tags):
        return None
    ordered = list(tags)
    first, last = ordered.index(present[0]), ordered.index(present[-1])
    inside = ordered[first:last + 1]
    gaps = [t for t in inside if t not in set(present)]
    if len(gaps) > MAX_GAPS:
        return None
    # Absent only from the oldest tenth of the releases (the v0.7 line, early 2025): not worth a bound.
    oldest = max(2, len(ordered) // 10)
    since = ordered[first].lstrip("v") if first > oldest else None
    gaps = [t for t in gaps if ordered.index(t) > oldest]
    until = ordered[last + 1].lstrip("v") if last + 1 < len(ordered) else None
    return Releases(since, until, tuple(t.lstrip("v") for t in gaps))


def intersect(ranges: Iterable[Releases]) -> Releases:
    since: str | None = None
    until: str | None = None
    not_in: set[str] = set()
    for r in ranges:
        if r.since and (since is None or (version_key(r.since) or ()) > (version_key(since) or ())):
            since = r.since
        if r.until and (until is None or (version_key(r.until) or ()) < (version_key(until) or ())):
            until = r.until
        not_in |= set(r.not_in)
    kept = sorted((v for v in not_in if Releases(since, until).holds(v)), key=lambda v: version_key(v) or ())
    return Releases(since, until, tuple(kept))


def _own(name: str) -> bool:
    """A name vllm-ascend itself defines (its VLLM_ASCEND_* env vars): it can be removed there."""
    return name.startswith("VLLM_ASCEND_")


def identifiers(item: Mapping[str, Any]) -> list[str]:
    """The names an item's own texts mention that a release could add or remove. An env var entry
    is about its own name (its text may name the config key that replaces it)."""
    if isinstance(item.get("name"), str) and "purpose_en" in item:
        return [] if _RUNTIME.match(item["name"]) else [item["name"]]
    text = " ".join(str(item[k]) for k in _TEXT_KEYS if isinstance(item.get(k), str))
    names = dict.fromkeys(_IDENT.findall(text))
    return [n for n in names if not _RUNTIME.match(_anchor_name(n))]


@dataclass
class Ranged:
    """One item of a knowledge file that can carry a range (a dict, edited in place by --write)."""

    file: str
    where: str
    item: dict[str, Any]


def ranged_items(directory: Path) -> Iterator[tuple[Ranged, Any, str | int]]:
    """Every vllm-ascend note, command, env var, incompatibility and product fact, with its parent
    container and key (a plain-string command is replaced by an object when it gets a range)."""
    for name in FILES:
        data = json.loads((directory / name).read_text(encoding="utf-8"))
        yield from _walk(name, data, "", (), None, None)


def _walk(file: str, node: Any, where: str, products: Sequence[str], parent: Any, key: str | int | None
          ) -> Iterator[tuple[Ranged, Any, str | int]]:
    if isinstance(node, dict):
        mine = node.get("products", products)
        # A problem pattern or an error code as a whole stays: its notes and commands carry the ranges.
        container = "keywords_en" in node or "aliases" in node
        if REPO in mine and key is not None and not container and any(isinstance(node.get(k), str) for k in _TEXT_KEYS):
            yield Ranged(file, where, node), parent, key
        for k, v in node.items():
            if isinstance(v, (dict, list)):
                yield from _walk(file, v, f"{where}.{k}", mine, node, k)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            label = v.get("id") or v.get("name") or v.get("code") if isinstance(v, dict) else None
            here = f"{where}[{label or i}]"
            if isinstance(v, str) and where.endswith(".commands") and REPO in products and not file.startswith("products/"):
                yield Ranged(file, here, {"run": v}), node, i
            else:
                yield from _walk(file, v, here, products, node, i)


def derive(clone: Path, directory: Path) -> dict[tuple[str, str], Releases]:
    """(file, where) → the range the clone gives each item that names a ranged identifier or an anchor."""
    tags = tags_of(clone)
    items = [r for r, _, _ in ranged_items(directory)]
    names = {_anchor_name(n) for r in items for n in identifiers(r.item)}
    seen = presence(clone, tags, names)
    out: dict[tuple[str, str], Releases] = {}
    for r in items:
        anchor = r.item.get("range_anchor")
        ranges = []
        if isinstance(anchor, dict):
            found = range_of(anchored(clone, tags, anchor["path"], anchor["pattern"]), tags)
            ranges.append(found or NO_RANGE)
        for n in identifiers(r.item):
            found = range_of(seen.get(_anchor_name(n), ()), tags)
            if found and not _own(n):
                # vLLM's names (flags, compilation config) appear in the plugin when it starts to
                # handle them; the plugin no longer mentioning one does not mean vLLM dropped it.
                found = Releases(found.since) if found.since else None
            if found:
                ranges.append(found)
        merged = intersect(ranges)
        if merged or isinstance(anchor, dict):
            out[(r.file, r.where)] = merged
    return out


def stated(directory: Path) -> dict[tuple[str, str], Releases]:
    """(file, where) → the range each item states (items without one left out)."""
    return {(r.file, r.where): releases_of(r.item) for r, _, _ in ranged_items(directory)
            if releases_of(r.item) or "range_from" in r.item}


def write(clone: Path, directory: Path) -> list[str]:
    """Rewrite the knowledge files' ranges from the clone; the items changed, as 'file: where'."""
    derived = derive(clone, directory)
    commit = subprocess.run(["git", "-C", str(clone), "rev-parse", "--short=12", "HEAD"], capture_output=True, timeout=30,
                            check=True).stdout.decode().strip()
    changed = []
    for name in FILES:
        path = directory / name
        data = json.loads(path.read_text(encoding="utf-8"))
        for r, parent, key in _walk(name, data, "", (), None, None):
            new = derived.get((name, r.where))
            item = r.item
            old = releases_of(item)
            if new == old or (new is None and not old):
                continue
            if isinstance(parent, list) and isinstance(parent[key], str):  # a plain command gains fields
                parent[key] = item  # type: ignore[index]
            for field in ("since", "until", "not_in", "range_from"):
                item.pop(field, None)
            if new:
                if new.since:
                    item["since"] = new.since
                if new.until:
                    item["until"] = new.until
                if new.not_in:
                    item["not_in"] = list(new.not_in)
                reason = (["range_anchor"] if "range_anchor" in item else []) + identifiers(item)
                item["range_from"] = f"{REPO}@{commit}: " + ", ".join(reason)
            changed.append(f"{name}: {r.where}")
        path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return changed


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m core.releases.ranges",
                                     description="Check (or --write) the knowledge base's release ranges against a vllm-ascend clone.")
    parser.add_argument("clone", type=Path, help="the vllm-project/vllm-ascend clone (with its release tags)")
    parser.add_argument("--knowledge", type=Path, default=Path(__file__).resolve().parents[1] / "knowledge")
    parser.add_argument("--write", action="store_true", help="rewrite the ranges in the knowledge files")
    args = parser.parse_args(argv)
    if args.write:
        for line in write(args.clone, args.knowledge):
            print(f"updated {line}")
        return 0
    derived, claimed = derive(args.clone, args.knowledge), stated(args.knowledge)
    wrong = sorted(k for k in set(derived) | set(claimed) if derived.get(k, NO_RANGE) != claimed.get(k, NO_RANGE))
    for file, where in wrong:
        print(f"{file}: {where}: states {claimed.get((file, where), NO_RANGE)}, the clone says {derived.get((file, where), NO_RANGE)}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
