"""What a platform's settings select, and what stops them from working.

Each adapters/<platform>/settings.py has one `check_settings(settings) -> PlatformCheck`. `doctor`
prints its result and `serve`/`web`/`worker` refuse to start on its problems, through the same
`misconfigured_line`, so the two can never disagree about a configuration.
"""
from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit


@dataclass(frozen=True)
class PlatformCheck:
    """`mode` is None when no credential of the platform is set (it is off; `enable_hint` says what
    turns it on); otherwise the mode the values select, and every missing or invalid variable."""

    mode: str | None
    problems: tuple[str, ...] = ()
    enable_hint: str = ""

    @property
    def enabled(self) -> bool:
        return self.mode is not None


def off(enable_hint: str) -> PlatformCheck:
    return PlatformCheck(mode=None, enable_hint=enable_hint)


def misconfigured_line(platform: str, check: PlatformCheck) -> str:
    """The one line both `doctor` and a refused start print for a platform with problems."""
    return f"{platform} is misconfigured ({check.mode}): {'; '.join(check.problems)}"


def missing(*names_and_values: tuple[str, object]) -> list[str]:
    """'X is not set' for each (VARIABLE, value) whose value is empty."""
    return [f"{name} is not set" for name, value in names_and_values if not value]


def url_problem(name: str, value: str | None, schemes: tuple[str, ...] = ("https", "http")) -> str | None:
    """Why `value` cannot be used as this URL setting, or None when it can."""
    parts = urlsplit((value or "").strip())
    if parts.scheme not in schemes or not parts.hostname:
        return f"{name} must be a {' or '.join(s + '://' for s in schemes)} URL with a host"
    return None



def require_valid(platform: str, check: PlatformCheck) -> None:
    """Raise PlatformMisconfigured with `misconfigured_line`: an adapter is never built from values
    its own check refuses, whoever builds it."""
    from adapters.base import PlatformMisconfigured  # noqa: PLC0415 - base imports core; this module stays light

    if check.problems:
        raise PlatformMisconfigured(misconfigured_line(platform, check))
