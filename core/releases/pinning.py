"""The releases one answer reads at: resolved once per answer, seen by the retriever and the tools.

The conversation reads the user's release of each routed repository (core/environment.py), finds
the tag to read in the local clone (core/releases/tags.py) and pins the answer to it. The pins live
in a ContextVar, not in arguments: the retriever's interface (`search(query, repos, k, kind)`) and
the research tools' arguments stay as they are, and each answer (an asyncio task, with its own
copy of the context) sees only its own pins, however many answers run at once.
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from types import MappingProxyType

from core.environment import Environment, environment_from_session, updated
from core.messages import Language
from core.research.repos import find_repo, local_path
from core.releases.tags import ReleaseChoice, TagLists, nearest_release, tag_commit

Pins = Mapping[str, ReleaseChoice]

_PINS: ContextVar[Pins] = ContextVar("release_pins", default=MappingProxyType({}))


def current_pins() -> Pins:
    """The releases the running answer reads at, by canonical repository (empty: main)."""
    return _PINS.get()


def pinned_tag(repo: str) -> str | None:
    choice = _PINS.get().get(repo)
    return choice.tag if choice is not None else None


@contextmanager
def reading_at(pins: Pins) -> Iterator[None]:
    """Pin the code inside (one answer) to these releases."""
    token = _PINS.set(MappingProxyType(dict(pins)))
    try:
        yield
    finally:
        _PINS.reset(token)


def user_environment(stated: Environment, session_env: Mapping[str, object] | None, repos: tuple[str, ...]) -> Environment:
    """What the thread knows of the user's stack, with this message's values winning (as triage reads it).

    `stated`: the message's environment (core.environment.read_environment), read once by the
    conversation and shared with triage."""
    return updated(environment_from_session(session_env), stated).with_unnamed_release_as(repos)


class ReleasePinner:
    """Finds, for the user's versions, the release tags the local clones hold."""

    def __init__(self, repos_dir: Path) -> None:
        self.repos_dir = repos_dir
        self._tags = TagLists()

    def clone(self, repo: str) -> Path | None:
        info = find_repo(repo)
        if info is None:
            return None
        path = local_path(self.repos_dir, info)
        return path if (path / ".git").exists() or (path / "HEAD").exists() else None

    def tags(self, repo: str) -> tuple[str, ...]:
        clone = self.clone(repo)
        return self._tags.of(clone) if clone is not None else ()

    def pin(self, env: Environment, repos: tuple[str, ...]) -> dict[str, ReleaseChoice]:
        pins: dict[str, ReleaseChoice] = {}
        for repo in repos:
            version = env.release_of(repo)
            clone = self.clone(repo)
            if not version or clone is None:
                continue
            tag = nearest_release(self._tags.of(clone), version)
            commit = tag_commit(clone, tag) if tag else ""
            if tag and commit:
                pins[repo] = ReleaseChoice(repo, version, tag, commit)
        return pins


def as_of(choice: ReleaseChoice, language: Language) -> str:
    """"as of v0.9.1" / "以 v0.9.1 为准", naming the user's version when the tag is only the nearest below it."""
    if language == "zh":
        return f"以 {choice.tag} 为准" if choice.exact else f"以 {choice.tag} 为准（不高于您的 {choice.asked} 的最近发布）"
    return f"as of {choice.tag}" if choice.exact else f"as of {choice.tag}, the nearest release at or below your {choice.asked}"
