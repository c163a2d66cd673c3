"""The life of an env var or an additional_config key across a clone's release tags.

A user on v0.10.2rc1 who read `VLLM_ASCEND_ENABLE_FLASHCOMM1=1` in a tutorial needs to hear that
their release calls it `VLLM_ASCEND_ENABLE_FLASHCOMM`, that the `1` name appeared in v0.11.0rc1, and
that it later became `additional_config.enable_flashcomm1`; a user on v0.21.0rc1 setting
`VLLM_ASCEND_ENABLE_CONTEXT_PARALLEL` needs to hear it was removed in that very release. Comparing
their tag with HEAD alone misses both (the name is absent from both ends), so the names are read at
every release tag: the keys of `env_variables` in vllm_ascend/envs.py and the keys
vllm_ascend/ascend_config.py reads from additional_config, including the env var each key falls back
to (`_get_config_value(additional_config, "enable_mlapo", "VLLM_ASCEND_ENABLE_MLAPO", …)`).

One `git cat-file --batch` reads the two files at all tags (about 0.3 s for vllm-ascend's 42 tags);
the result is cached per set of tag commits. Every regex is linear.
"""
from __future__ import annotations

import re
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from core.resolution.releases import version_key

ENV_FILES = {"vllm-project/vllm-ascend": "vllm_ascend/envs.py"}
CONFIG_FILES = {"vllm-project/vllm-ascend": "vllm_ascend/ascend_config.py"}

_ENV_KEY = re.compile(r"""^\s{1,12}["']([A-Z][A-Z0-9_]{2,80})["']\s{0,4}:""")
_CONFIG_GET = re.compile(r"""\.get\(\s{0,4}["']([a-z][a-z0-9_]{2,80})["']""")
# `if "enable_flashcomm1" in additional_config`: a key checked (often to warn that it is deprecated).
_CONFIG_IN = re.compile(r"""["']([a-z][a-z0-9_]{2,80})["']\s{0,2}in\s{0,2}additional_config\b""")
# Keys of a nested config's defaults ("dynamic_eplb": False, inside class EplbConfig).
_CONFIG_DEFAULT = re.compile(r"""^\s{4,24}["']([a-z][a-z0-9_]{2,80})["']\s{0,2}:""")
# _get_config_value(additional_config, "key", "ENV_VAR", …): the key and the env var it replaces.
_CONFIG_VALUE = re.compile(
    r"""_get_config_value\(\s{0,40}\w{1,40},\s{0,40}["']([a-z][a-z0-9_]{2,80})["'](?:,\s{0,40}["']([A-Z][A-Z0-9_]{2,80})["'])?"""
)
_PREFIXES = ("vllm_ascend_", "ascend_", "vllm_")


@dataclass(frozen=True)
class NamesAt:
    """The names one release defines: env vars, additional_config keys, and key → the env var it reads."""

    env: frozenset[str]
    config: frozenset[str]
    pairs: tuple[tuple[str, str], ...] = ()

    def has(self, name: str) -> bool:
        return name in self.env or name in self.config


def parse_names(envs_py: str, config_py: str) -> NamesAt:
    env = frozenset(m.group(1) for line in envs_py.splitlines() if (m := _ENV_KEY.match(line)))
    pairs = tuple((m.group(1), m.group(2)) for m in _CONFIG_VALUE.finditer(config_py) if m.group(2))
    config = frozenset(_CONFIG_GET.findall(config_py)) | {m.group(1) for m in _CONFIG_VALUE.finditer(config_py)} | {
        m.group(1) for line in config_py.splitlines() if (m := _CONFIG_DEFAULT.match(line))} | set(_CONFIG_IN.findall(config_py))
    return NamesAt(env, config, pairs)


def family(name: str) -> str:
    """VLLM_ASCEND_ENABLE_FLASHCOMM1, VLLM_ASCEND_ENABLE_FLASHCOMM and enable_flashcomm1 share 'enableflashcomm'."""
    low = name.lower()
    for prefix in _PREFIXES:
        if low.startswith(prefix):
            low = low[len(prefix):]
            break
    return "".join(ch for ch in low.rstrip("0123456789") if ch.isalnum())


def read_at(clone: Path, specs: Sequence[str]) -> dict[str, str]:
    """`<rev>:<path>` → file text for each spec (missing ones left out), in one `git cat-file --batch`."""
    if not specs:
        return {}
    try:
        done = subprocess.run(["git", "-C", str(clone), "cat-file", "--batch"], input="\n".join(specs).encode() + b"\n",
                              capture_output=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return {}
    out, data, pos = {}, done.stdout, 0
    for spec in specs:
        end = data.find(b"\n", pos)
        if end < 0:
            break
        header = data[pos:end].decode("utf-8", "replace").split()
        pos = end + 1
        if len(header) != 3 or header[1] == "missing":
            continue
        size = int(header[2])
        if header[1] == "blob":
            out[spec] = data[pos:pos + size].decode("utf-8", "replace")
        pos += size + 1
    return out


@dataclass(frozen=True)
class NameHistory:
    """Which release tags (oldest first) define each name, and the names of each tag."""

    tags: tuple[str, ...]
    at: dict[str, NamesAt]

    def present(self, name: str) -> tuple[str, ...]:
        return tuple(t for t in self.tags if self.at[t].has(name))

    def since(self, name: str) -> str:
        found = self.present(name)
        return found[0] if found else ""

    def removed_in(self, name: str, after: str) -> str:
        """The first tag newer than `after` that lacks the name (the release that dropped it)."""
        mine = version_key(after)
        for tag in self.tags:
            key = version_key(tag)  # None: the default branch's HEAD, newer than every tag
            if mine is not None and (key is None or key > mine) and not self.at[tag].has(name):
                return tag
        return ""

    def counterpart(self, name: str, tag: str) -> str:
        """The name of the same switch in `tag`: a rename (same family, never defined in one release
        together with `name`), else the other kind (an env var's additional_config key, or the reverse;
        the two live side by side while a migration lasts)."""
        names = self.at.get(tag)
        if names is None:
            return ""
        wanted, mine = family(name), set(self.present(name))
        is_env = name.isupper()
        same = sorted(names.env if is_env else names.config)
        other = sorted(names.config if is_env else names.env)
        for candidate in same:
            if candidate != name and family(candidate) == wanted and not mine & set(self.present(candidate)):
                return candidate
        for key, env in names.pairs:  # the key that reads this env var (or the env var a key falls back to)
            if name in (key, env):
                return env if name == key else key
        # Across kinds only an env var of this repository's own prefix: DYNAMIC_EPLB is not eplb_config's.
        return next((c for c in other if family(c) == wanted and (c.startswith("VLLM_") or name.startswith("VLLM_"))), "")


@lru_cache(maxsize=8)
def _history(clone: Path, tags: tuple[str, ...], env_path: str, config_path: str) -> NameHistory:
    specs = [f"{t}:{p}" for t in tags for p in (env_path, config_path)]
    texts = read_at(clone, specs)
    at = {t: parse_names(texts.get(f"{t}:{env_path}", ""), texts.get(f"{t}:{config_path}", "")) for t in tags}
    kept = tuple(t for t in tags if at[t].env or at[t].config)  # a tag without the files says nothing
    return NameHistory(kept, {t: at[t] for t in kept})


def name_history(clone: Path, repo: str, tags: tuple[str, ...], head: str) -> NameHistory | None:
    """The names at each release tag (oldest first) and at `head` (the default branch's commit, last),
    or None for a repository without such files."""
    env_path, config_path = ENV_FILES.get(repo), CONFIG_FILES.get(repo)
    if env_path is None or config_path is None:
        return None
    ordered = tuple(sorted(tags, key=lambda t: version_key(t) or ()))
    return _history(clone, ordered + ((head,) if head else ()), env_path, config_path)
