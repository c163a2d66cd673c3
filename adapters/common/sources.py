"""Whether a reply's Markdown already lists its sources.

The research agent ends its answers with a verified "**Sources**" list and also sets
`Reply.sources`; the offline triage only sets `Reply.sources`. Adapters append a sources list
only when the text has none, so a research answer never shows its sources twice.
"""
from __future__ import annotations

import re

# A "Sources"/"来源" heading on a line of its own: bold, a Markdown heading, or "Sources:".
# Spaces are "whitespace but not a newline" and possessive: with \s, adjacent runs could trade
# newlines back and forth, and 20,000 blank lines took 50 s to search (issue 16).
_SP = r"[^\S\n]"
_HEADING = re.compile(
    rf"^{_SP}{{0,3}}(?:#{{1,6}}{_SP}*+)?(?:\*\*|__)?{_SP}*+(?:sources|来源){_SP}*+(?:\*\*|__)?{_SP}*+[:：]?"
    rf"{_SP}*+(?:\*\*|__)?{_SP}*+$",
    re.IGNORECASE | re.MULTILINE,
)


def has_sources_section(markdown: str) -> bool:
    return _HEADING.search(markdown) is not None


def sources_title(language: str) -> str:
    """The heading adapters put over a sources list they append."""
    return "来源" if language == "zh" else "Sources"
