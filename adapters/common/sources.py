"""The heading over a reply's sources list.

`Reply.text` never contains its sources (the core keeps them apart, in `Reply.sources`); each
platform renders that list once, from data, under this heading.
"""
from __future__ import annotations


def sources_title(language: str) -> str:
    return "来源" if language == "zh" else "Sources"
