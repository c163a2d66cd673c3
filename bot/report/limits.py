"""How long, and how many, answer records each workspace keeps (the retention policy, in one place).

ANSWER_LOG_DAYS and ANSWER_LOG_MAX_ENTRIES apply to every workspace; ANSWER_LOG_LIMITS overrides
them per workspace (`{"slack:T1": {"days": 30, "entries": 5000}}`). The writer trims to the limit
on every record, Redis deletes an idle workspace's log after its days, and the reader never reads
past the limit, so a record older than its workspace allows is never shown.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

MAX_DAYS = 366  # a year, and the longest report: longer is refused with a clear message


@dataclass(frozen=True)
class LogLimit:
    days: int
    entries: int

    @property
    def seconds(self) -> int:
        return self.days * 86_400


@dataclass(frozen=True)
class LogLimits:
    default: LogLimit
    per_scope: Mapping[str, LogLimit] = field(default_factory=dict)

    @classmethod
    def from_settings(cls, settings: Any) -> "LogLimits":
        default = LogLimit(int(settings.answer_log_days), int(settings.answer_log_max_entries))
        per_scope = {}
        for scope, values in dict(settings.answer_log_limits).items():
            days = int(values.get("days", default.days))
            entries = int(values.get("entries", default.entries))
            if not (1 <= days <= MAX_DAYS) or entries < 1:
                raise ValueError(f"ANSWER_LOG_LIMITS[{scope!r}]: days takes 1..{MAX_DAYS}, entries at least 1")
            per_scope[scope] = LogLimit(days, entries)
        return cls(default, per_scope)

    def for_scope(self, scope: str) -> LogLimit:
        """`scope`: `platform:workspace`, as in the allowlists."""
        return self.per_scope.get(scope, self.default)

    @property
    def longest_days(self) -> int:
        return max([self.default.days, *(limit.days for limit in self.per_scope.values())])
