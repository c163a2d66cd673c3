"""Tolerant accessors for platform JSON: a field of the wrong type reads as empty, never raises."""
from __future__ import annotations

from typing import Any


def as_str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
