"""Shared by the bench scripts."""
from __future__ import annotations

import contextlib
import math
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from bot.embedded_redis import start_embedded_redis


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile, p in 0..100."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = max(1, math.ceil(p / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


@contextlib.contextmanager
def redis_url_for_bench() -> Iterator[str]:
    """REDIS_URL when set, else a throwaway private redis-server for the length of the run."""
    configured = os.environ.get("REDIS_URL")
    if configured:
        yield configured
        return
    server = start_embedded_redis(Path(tempfile.mkdtemp()), persist=False)
    try:
        yield server.url
    finally:
        server.stop()
