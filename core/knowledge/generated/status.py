"""Status marks of vllm-ascend's support tables, as words (the legend each page states)."""
from __future__ import annotations

_MARKS = {
    "✅": "supported",
    "🟢": "supported",
    "🔵": "experimental",
    "❌": "not supported",
    "🟡": "untested",
    "🟠": "partial",
    "❔": "unknown",
}


def status(cell: str) -> str:
    """The word for a cell's leading mark, "" when it has none."""
    stripped = cell.strip()
    return next((word for mark, word in _MARKS.items() if stripped.startswith(mark)), "")
