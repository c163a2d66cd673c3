"""One answer's reading at the user's release: the pins, and what changed since their release.

The conversation asks this once per answer (core/conversation.py): `pin` finds the tags to read
at, `notes` the lines that say what the newest release changed for the question (a fix their
release predates, a feature added later, an env var or config key renamed or removed).
"""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from core.environment import Environment
from core.messages import Language
from core.releases.news import ReleaseNews, release_news, thread_fix_line
from core.releases.pinning import ReleasePinner, user_environment
from core.releases.tags import ReleaseChoice
from core.resolution.releases import version_key


class ReleaseReading:
    def __init__(self, repos_dir: Path) -> None:
        self.pinner = ReleasePinner(repos_dir)

    def pin(self, stated: Environment, session_env: Mapping[str, object] | None, repos: tuple[str, ...]) -> dict[str, ReleaseChoice]:
        """`stated`: the environment the message states (read once per message by the conversation)."""
        return self.pinner.pin(user_environment(stated, session_env, repos), repos)

    def notes(self, pins: Mapping[str, ReleaseChoice], question: str, resolution: Any, language: Language,
              repos: tuple[str, ...] = (), stated: Environment | None = None,
              session_env: Mapping[str, object] | None = None) -> ReleaseNews:
        """What the user's release means for this question: lines that lead the answer and lines
        after it; for a routed repository whose release is unknown, the release history of the
        variables and keys the question names. `resolution`: the matched thread (core/resolution/answer.py Match) or None."""
        lead: list[str] = []
        lines: list[str] = []
        general: list[str] = []
        record = getattr(resolution, "record", None)
        if record is not None and record.repo in pins and record.release:
            pr = record.number if record.kind == "pull" else next(iter(record.closed_by or record.fixed_by), 0)
            clone = self.pinner.clone(record.repo)
            if pr and clone is not None:
                lead.append(thread_fix_line(clone, record.release, pr, pins[record.repo], language))
        for repo, choice in pins.items():
            clone = self.pinner.clone(repo)
            if clone is not None:
                news = release_news(clone, choice, question, language)
                lead += news.lead
                lines += news.lines
        env = user_environment(stated or Environment(), session_env, repos)
        for repo in (r for r in repos if r not in pins):
            clone = self.pinner.clone(repo)
            if clone is None:
                continue
            version = env.release_of(repo)
            if version and version_key(version) is not None:
                # A release the clone has no tag at or below (MindIE 2.3.0 against tags from 3.0.0):
                # framed by version order, with nothing to read at.
                news = release_news(clone, ReleaseChoice(repo, version, version, ""), question, language)
                lead += news.lead
                lines += news.lines
            else:
                general += release_news(clone, None, question, language, repo).general
        return ReleaseNews(tuple(x for x in lead if x), tuple(x for x in lines if x), tuple(general))
