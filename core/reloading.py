"""A file built by `python -m bot index` and read by long-running processes: reloaded when replaced.

The index command replaces such files atomically; workers check the modification time at most every
`check_every` seconds and keep the last good value when a new file cannot be read, so a rebuild
reaches them without a restart and a damaged file never stops one.
"""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Generic, TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")


class ReloadingFile(Generic[T]):
    def __init__(self, path: Path, load: Callable[[Path], T], empty: T, check_every: float = 30.0) -> None:
        self.path = Path(path)
        self._load = load
        self._check_every = check_every
        self._lock = threading.Lock()
        self._value = empty
        self._stamp: int | None = None
        self._checked = float("-inf")

    def current(self) -> T:
        now = time.monotonic()
        if now - self._checked < self._check_every:
            return self._value
        with self._lock:
            self._checked = now
            try:
                stamp = self.path.stat().st_mtime_ns
            except OSError:
                return self._value
            if stamp != self._stamp:
                try:
                    self._value = self._load(self.path)
                except (OSError, ValueError) as exc:
                    log.warning("%s not usable: %s", self.path, exc)
                self._stamp = stamp
        return self._value
