"""Dependencies: every runtime requirement has a major-version ceiling, and requirements.lock pins it.

A deploy (deploy/Dockerfile) and CI (.ci/run) both install with `-c requirements.lock`, so a lock that
misses a package, or pins a version pyproject.toml no longer admits, would let a deploy pick up a
release the tests never ran with.
"""
from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
CEILING_OPERATORS = {"<", "<=", "==", "~=", "==="}


def _project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def _requirements(group: str | None = None) -> list[Requirement]:
    project = _project()
    lines = project["dependencies"] if group is None else project["optional-dependencies"][group]
    return [Requirement(line) for line in lines]


def lock_pins(text: str) -> dict[str, str]:
    """name → pinned version, from a pip-compile output (comments and `# via` lines skipped)."""
    pins: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        name, sep, version = line.partition("==")
        if not sep:
            raise ValueError(f"lock line is not an exact pin: {raw!r}")
        pins[canonicalize_name(name.split("[", 1)[0])] = version.split(";", 1)[0].strip()
    return pins


def has_ceiling(spec: SpecifierSet) -> bool:
    return any(s.operator in CEILING_OPERATORS for s in spec)


def problems(requirements: list[Requirement], pins: dict[str, str]) -> list[str]:
    found = []
    for req in requirements:
        name = canonicalize_name(req.name)
        if not has_ceiling(req.specifier):
            found.append(f"{req.name}: no upper bound ({req.specifier or 'any version'})")
        if name not in pins:
            found.append(f"{req.name}: not pinned in requirements.lock")
        elif not req.specifier.contains(pins[name], prereleases=True):
            found.append(f"{req.name}: lock pins {pins[name]}, outside {req.specifier}")
    return found


@pytest.fixture(scope="module")
def pins() -> dict[str, str]:
    return lock_pins((ROOT / "requirements.lock").read_text(encoding="utf-8"))


def test_every_runtime_dependency_is_bounded_and_locked(pins: dict[str, str]) -> None:
    assert problems(_requirements(), pins) == []


def test_the_test_extra_is_locked_too(pins: dict[str, str]) -> None:
    assert problems(_requirements("test"), pins) == []


def test_the_checks_catch_an_unbounded_or_unlocked_dependency() -> None:
    """The guard itself: a ceiling-less line and a missing pin are both reported."""
    pins = {"httpx": "0.28.1", "redis": "8.1.0"}
    reqs = [Requirement("httpx>=0.27"), Requirement("redis>=5,<9"), Requirement("numpy>=1.26,<3"), Requirement("redis>=5,<8")]
    assert problems(reqs, pins) == [
        "httpx: no upper bound (>=0.27)",
        "numpy: not pinned in requirements.lock",
        "redis: lock pins 8.1.0, outside <8,>=5",
    ]


def test_telegram_webhooks_extra_is_not_installed(pins: dict[str, str]) -> None:
    """Our Telegram webhook is a Starlette route; PTB's `webhooks` extra only brings tornado for its own server."""
    [ptb] = [r for r in _requirements() if canonicalize_name(r.name) == "python-telegram-bot"]
    assert "webhooks" not in ptb.extras
    assert "tornado" not in pins


def test_ci_and_docker_install_under_the_lock() -> None:
    assert '-c requirements.lock -e ".[test]"' in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    dockerfile = (ROOT / "deploy" / "Dockerfile").read_text(encoding="utf-8")
    # The image installs the hashed twin of the lock (same pins: tests/deploy checks), every file hash-checked.
    assert "requirements.hashes.lock" in dockerfile.split("COPY", 2)[1]
    assert "--require-hashes" in dockerfile and "-r requirements.hashes.lock" in dockerfile
