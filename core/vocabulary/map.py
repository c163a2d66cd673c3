"""Read the vocabulary map and score a question against it.

A token's vote is its kind's weight split among its owners (a token two repositories own gives each
half). Error messages vote only with a run of consecutive shared word trigrams (six words or more of
one message), so ordinary English never routes. Keys (snake_case names) are weak alone: many
projects share them. Directory and file names (core/vocabulary/paths.py) weigh like keys; written in
prose ("laser attention") they vote only next to an Ascend signal, since a vLLM clone is often
missing and upstream-vLLM questions must not drift to the plugin whose directories mirror vLLM's.
"""
from __future__ import annotations

import json
import logging
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from core.reloading import ReloadingFile
from core.vocabulary.build import FILE_NAME, SCHEMA
from core.vocabulary.tokens import ERROR, KEY, PATH, PHRASE, question_tokens, shingles

log = logging.getLogger(__name__)

KIND_WEIGHT = {"flag": 1.0, "env": 1.0, "class": 1.0, "module": 1.0, "file": 1.0, "image": 1.5, "release": 1.0, KEY: 0.5, PATH: 0.5}
KEY_CAP = 1.0  # several shared snake_case names are still weak evidence
PATH_CAP = 1.0  # "model runner v2" offers model_runner, runner_v2 and model_runner_v2: one feature
MIN_ERROR_RUN = 4  # consecutive trigrams: six words of one raised message
ERROR_STEP, ERROR_CAP = 0.5, 1.5
VLLM_ASCEND = "vllm-project/vllm-ascend"
_VLLM_PAIR = {"vllm-project/vllm", VLLM_ASCEND}


@dataclass(frozen=True)
class VocabularyVotes:
    """Per-repository score of a question and the tokens that gave it."""

    scores: Mapping[str, float] = field(default_factory=dict)
    tokens: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def ranked(self) -> list[tuple[str, float]]:
        return sorted(self.scores.items(), key=lambda kv: (-kv[1], kv[0]))


class VocabularyMap:
    def __init__(self, owners: Mapping[str, Mapping[str, list[str]]] | None = None) -> None:
        self._owners = owners or {}

    def __len__(self) -> int:
        return sum(len(t) for t in self._owners.values())

    @classmethod
    def from_file(cls, path: Path) -> "VocabularyMap":
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        if not isinstance(data, dict) or data.get("schema") != SCHEMA or not isinstance(data.get("owners"), dict):
            raise ValueError("not a vocabulary file of this version")
        return cls(data["owners"])

    def owners(self, kind: str, token: str) -> list[str]:
        found = self._owners.get(kind, {}).get(token)
        return found if isinstance(found, list) else []

    def owners_of_identifier(self, identifier: str) -> set[str]:
        """Every repository that owns `identifier` under any kind (as the question side reads it)."""
        found: set[str] = set()
        for kind, token in question_tokens(identifier):
            if kind != ERROR:
                found.update(self.owners(kind, token))
        return found

    def votes(self, text: str, ascend: bool = False, skip_kinds: tuple[str, ...] = ()) -> VocabularyVotes:
        """Scores of `text`. With `ascend` (the text shows an Ascend signal), a token vLLM and
        vllm-ascend share is vllm-ascend's alone: vLLM runs on an NPU only through the plugin.
        Tokens of `skip_kinds` do not vote."""
        if not self._owners or not text:
            return VocabularyVotes()
        scores: dict[str, float] = defaultdict(float)
        keys: dict[str, float] = defaultdict(float)
        paths: dict[str, float] = defaultdict(float)
        tokens: dict[str, list[str]] = defaultdict(list)
        for kind, token in _lookups(question_tokens(text), ascend):
            if kind == ERROR or kind in skip_kinds:
                continue
            owners = self.owners(kind, token)
            if ascend and set(owners) == _VLLM_PAIR:
                owners = [VLLM_ASCEND]
            for repo in owners:
                share = KIND_WEIGHT.get(kind, 0.0) / len(owners)
                if kind == KEY:
                    keys[repo] += share
                elif kind == PATH:
                    paths[repo] += share
                else:
                    scores[repo] += share
                tokens[repo].append(token)
        for repo, value in keys.items():
            scores[repo] += min(KEY_CAP, value)
        for repo, value in paths.items():
            scores[repo] += min(PATH_CAP, value)
        for repo, (run, words) in ({} if ERROR in skip_kinds else self._error_runs(text)).items():
            scores[repo] += min(ERROR_CAP, ERROR_STEP * (run - MIN_ERROR_RUN + 1))
            tokens[repo].append(words)
        return VocabularyVotes(dict(scores), {r: tuple(dict.fromkeys(t)) for r, t in tokens.items()})

    def _error_runs(self, text: str) -> dict[str, tuple[int, str]]:
        """Longest run of consecutive trigrams each repository raises, per line of the text."""
        best: dict[str, tuple[int, str]] = {}
        for line in text.splitlines():
            grams = list(shingles(line))
            runs: dict[str, int] = {}
            for i, gram in enumerate(grams):
                owners = set(self.owners(ERROR, gram))
                runs = {repo: runs.get(repo, 0) + 1 for repo in owners}
                for repo, run in runs.items():
                    if run >= MIN_ERROR_RUN and run > best.get(repo, (0, ""))[0]:
                        first = i - run + 1
                        words = " ".join(g.split(" ")[0] for g in grams[first:i]) + " " + gram
                        best[repo] = (run, words)
        return best


def _lookups(found: set[tuple[str, str]], ascend: bool) -> set[tuple[str, str]]:
    """The question's tokens as map lookups: a prose phrase is a path name, and only next to an
    Ascend signal; a name both written and in prose counts once."""
    return {(PATH, token) if kind == PHRASE else (kind, token) for kind, token in found if ascend or kind != PHRASE}


def load_vocabulary(index_dir: Path) -> VocabularyMap:
    """The map of INDEX_DIR, or an empty one (no clones indexed yet, or a damaged file)."""
    try:
        return VocabularyMap.from_file(Path(index_dir) / FILE_NAME)
    except FileNotFoundError:
        return VocabularyMap()
    except (OSError, ValueError) as exc:
        log.warning("vocabulary map in %s not usable: %s", index_dir, exc)
        return VocabularyMap()


def vocabulary_file(index_dir: Path, check_every: float = 30.0) -> ReloadingFile[VocabularyMap]:
    """The map of one INDEX_DIR, reloaded when `index` replaced it."""
    return ReloadingFile(Path(index_dir) / FILE_NAME, VocabularyMap.from_file, VocabularyMap(), check_every)


__all__ = ["VocabularyMap", "VocabularyVotes", "load_vocabulary", "vocabulary_file"]
