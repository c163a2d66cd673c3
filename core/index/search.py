"""Search over the on-disk index: the `Retriever` the CLI, the research tool and offline answers use.

One `KnowledgeIndex` per process. Its arrays are memory-mapped read-only, so several workers share one
copy in the page cache. It looks at INDEX_DIR/CURRENT at most every `check_every` seconds and moves to
a newer generation without a restart.
"""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from core.index.builder import decode_meta
from core.index.passage import Passage, PassageKind
from core.index.ranking import DEFAULT_PARAMS, QueryPlan, RankingParams, plan_query, prior_table
from core.index.store import Generation, IndexMissing, current_generation, load_generation

log = logging.getLogger(__name__)

_KIND_FLAG = {"code": 4, "config": 8, "issue": 16, "doc": 32}


class UnknownRepository(ValueError):
    """A repository the index does not hold."""


class KnowledgeIndex:
    def __init__(self, index_dir: Path, *, check_every: float = 30.0, params: RankingParams = DEFAULT_PARAMS,
                 clock=time.monotonic) -> None:  # type: ignore[no-untyped-def]
        self.index_dir = Path(index_dir)
        self.params = params
        self._check_every = check_every
        self._clock = clock
        self._lock = threading.Lock()
        self._generation: Generation = load_generation(self.index_dir)  # raises IndexMissing
        self._checked = clock()

    @classmethod
    def open_if_present(cls, index_dir: Path, **kwargs) -> "KnowledgeIndex | None":  # type: ignore[no-untyped-def]
        try:
            return cls(index_dir, **kwargs)
        except IndexMissing:
            return None
        except (OSError, ValueError) as exc:  # a damaged index must not stop a worker
            log.warning("knowledge index in %s not usable: %s", index_dir, exc)
            return None

    # --- generations -------------------------------------------------------------------------

    @property
    def generation(self) -> Generation:
        now = self._clock()
        if now - self._checked >= self._check_every:
            self._checked = now
            self.refresh()
        return self._generation

    def refresh(self) -> bool:
        """Move to a newer generation if one was written; True when it did."""
        name = current_generation(self.index_dir)
        if name is None or name == self._generation.name:
            return False
        with self._lock:
            if name == self._generation.name:
                return False
            try:
                self._generation = load_generation(self.index_dir, name)
            except (OSError, ValueError, IndexMissing) as exc:
                log.warning("could not load index generation %s: %s", name, exc)
                return False
        log.info("knowledge index: now at generation %s", name)
        return True

    @property
    def repos(self) -> list[str]:
        """Repositories with at least one unit (file or issue) in the live generation."""
        info = self.generation.manifest.get("repos", {})
        return [n for n in self.generation.repo_names if info.get(n, {}).get("units") or info.get(n, {}).get("issues")]

    def repos_with_files(self) -> set[str]:
        """Repositories whose docs and code (not only issue threads) are in the live generation."""
        info = self.generation.manifest.get("repos", {})
        return {n for n in self.generation.repo_names if info.get(n, {}).get("units")}

    def manifest(self) -> dict:  # type: ignore[type-arg]
        return dict(self.generation.manifest)

    # --- search ------------------------------------------------------------------------------

    def search(self, query: str, repos: Sequence[str] = (), k: int = 5, kind: PassageKind | None = None) -> list[Passage]:
        gen = self.generation
        gen.verify()  # a file truncated since load raises IndexUnusable here instead of a SIGBUS below
        plan = plan_query(query, self.params)
        if not plan.weights or k <= 0:
            return []
        scores, ceiling = self._score(gen, plan)
        if ceiling <= 0:
            return []
        names = {n.lower(): i for i, n in enumerate(gen.repo_names)}
        wanted = [names[r.lower()] for r in repos if r.lower() in names]
        kind_mask = None
        if kind is not None:
            kind_mask = (np.asarray(gen.unit_flags) & _KIND_FLAG[kind]) > 0
        if wanted:
            mask = np.isin(np.asarray(gen.unit_repo), wanted)
            if kind_mask is not None:
                mask &= kind_mask
            found = self._top(gen, np.where(mask, scores, 0.0), ceiling, k)
            if found and found[0].score / ceiling >= self.params.fallback_below:
                return found
            # the routed repositories hold nothing good: look everywhere, keep what the restricted search found
            rest = self._top(gen, scores if kind_mask is None else np.where(kind_mask, scores, 0.0), ceiling, k)
            if self.params.fallback_keeps_routed:
                seen = {(p.repo, p.path) for p in found}
                return [*found, *(p for p in rest if (p.repo, p.path) not in seen)][:k]
            merged = {(p.repo, p.path, p.start_line): p for p in [*found, *rest]}
            return sorted(merged.values(), key=lambda p: -p.score)[:k]
        return self._top(gen, scores if kind_mask is None else np.where(kind_mask, scores, 0.0), ceiling, k)

    def _score(self, gen: Generation, plan: QueryPlan) -> tuple[np.ndarray, float]:
        scores = np.zeros(gen.size, dtype=np.float32)
        ceiling = 0.0
        k1 = self.params.k1
        for token, weight in plan.weights.items():
            term = gen.vocab.get(token)
            if term is None:
                continue
            a, b = int(gen.ptr[term]), int(gen.ptr[term + 1])
            scores[gen.docs[a:b]] += weight * gen.weights[a:b]
            ceiling += weight * float(gen.idf[term]) * (k1 + 1) / 2  # a typical strong match, not the maximum
        strong = [gen.vocab[t] for t in plan.strong if t in gen.vocab]
        if strong and self.params.exact_boost:
            # exact names (error codes, env vars, flags, identifiers): a unit holding more of them ranks higher
            held = np.zeros(gen.size, dtype=np.float32)
            for term in strong:
                held[gen.docs[int(gen.ptr[term]) : int(gen.ptr[term + 1])]] += 1.0
            scores *= 1.0 + self.params.exact_boost * held / len(strong)
        priors = np.asarray(prior_table(plan, self.params), dtype=np.float32)
        scores *= priors[np.asarray(gen.unit_flags)]
        return scores, ceiling

    def _top(self, gen: Generation, scores: np.ndarray, ceiling: float, k: int) -> list[Passage]:
        """Best unit of each of the best k files, above the threshold."""
        floor = self.params.threshold * ceiling
        candidates = np.flatnonzero(scores > floor)
        if candidates.size == 0:
            return []
        take = min(candidates.size, max(k * 20, 200))
        best = candidates[np.argpartition(-scores[candidates], take - 1)[:take]]
        best = best[np.argsort(-scores[best], kind="stable")]
        files = np.asarray(gen.unit_file)
        seen: set[int] = set()
        out: list[Passage] = []
        for unit in best:
            file_id = int(files[unit])
            if file_id in seen:
                continue
            seen.add(file_id)
            out.append(self._passage(gen, int(unit), float(scores[unit])))
            if len(out) >= k:
                break
        return out

    @staticmethod
    def _passage(gen: Generation, unit: int, score: float) -> Passage:
        path, title, kind, start, end, url = decode_meta(gen.metas[unit])
        repo = gen.repo_names[int(gen.unit_repo[unit])]
        return Passage(repo, path, title or path, url, kind, start, end, score, gen.texts[unit])  # type: ignore[arg-type]
