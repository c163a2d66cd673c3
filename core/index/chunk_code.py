"""Source and config files cut into units: Python by top-level function/class, C/C++/shell by
function where the shape is clear (else windows), config files whole when small."""
from __future__ import annotations

import re

from core.index.chunks import Chunk, windows

MAX_BLOCK_LINES = 120
MAX_CONFIG_LINES = 150
_PY_TOP = re.compile(r"^(?:async\s+def|def|class)\s+([A-Za-z_]\w*)")
_PY_METHOD = re.compile(r"^\s{2,8}(?:async\s+def|def)\s+([A-Za-z_]\w*)")
_NOT_NAME = re.compile(r"[^\w:~]")
_SH_FUNC = re.compile(r"^(?:function\s+)?([A-Za-z_][\w-]*)\s*\(\)\s*\{?")


def _slice(lines: list[str], a: int, b: int) -> str:
    return "\n".join(lines[a:b])


def chunk_python(text: str) -> list[Chunk]:
    lines = text.splitlines()
    starts: list[tuple[int, str]] = []
    for i, line in enumerate(lines):
        match = _PY_TOP.match(line)
        if match:
            first = i
            while first > 0 and lines[first - 1].startswith("@"):
                first -= 1  # decorators belong to what they decorate
            starts.append((first, match.group(1)))
    out: list[Chunk] = []
    bounds = [s for s, _ in starts] + [len(lines)]
    if not starts or bounds[0] > 0:
        head_end = bounds[0] if starts else len(lines)
        out += _blocks(lines, 0, head_end, "module", "code")
    for (first, name), end in zip(starts, bounds[1:]):
        out += _python_block(lines, first, end, name)
    return [c for c in out if c.text.strip()]


def _python_block(lines: list[str], first: int, end: int, name: str) -> list[Chunk]:
    while end > first + 1 and not lines[end - 1].strip():
        end -= 1
    if end - first <= MAX_BLOCK_LINES:
        return [Chunk(name, first + 1, end, "code", _slice(lines, first, end))]
    # a big class: cut at its methods, gathering small ones together
    cuts = [first] + [i for i in range(first + 1, end) if _PY_METHOD.match(lines[i]) and lines[i][: len(lines[i]) - len(lines[i].lstrip())] in ("    ", "\t")] + [end]
    out: list[Chunk] = []
    a = cuts[0]
    for i in range(1, len(cuts)):
        b = cuts[i]
        if b - a >= 40 or i == len(cuts) - 1:
            method = _PY_METHOD.match(lines[a]) if a > first else None
            title = f"{name}.{method.group(1)}" if method else name
            out += _blocks(lines, a, b, title, "code")
            a = b
    return out


def _blocks(lines: list[str], a: int, b: int, title: str, kind: str) -> list[Chunk]:
    if b - a <= MAX_BLOCK_LINES:
        return [Chunk(title, a + 1, b, kind, _slice(lines, a, b))]  # type: ignore[arg-type]
    return [Chunk(title, x + 1, y, kind, _slice(lines, x, y)) for x, y in windows(lines, a, b)]  # type: ignore[arg-type]


def chunk_c_like(text: str, shell: bool = False) -> list[Chunk]:
    """Windows snapped to blank lines / closing braces, titled by the first function they hold."""
    lines = text.splitlines()
    out: list[Chunk] = []
    for a, b in windows(lines, 0, len(lines)):
        title = ""
        for line in lines[a:b]:
            title = _shell_function(line) if shell else _c_function(line)
            if title:
                break
        chunk_text = _slice(lines, a, b)
        if chunk_text.strip():
            out.append(Chunk(title, a + 1, b, "code", chunk_text))
    return out


def chunk_config(text: str) -> list[Chunk]:
    lines = text.splitlines()
    if not any(line.strip() for line in lines):
        return []
    if len(lines) <= MAX_CONFIG_LINES:
        return [Chunk("", 1, len(lines), "config", text.rstrip("\n"))]
    return [Chunk("", a + 1, b, "config", _slice(lines, a, b)) for a, b in windows(lines, 0, len(lines))]


def _shell_function(line: str) -> str:
    match = _SH_FUNC.match(line)
    return match.group(1) if match else ""


_C_KEYWORDS = frozenset({"if", "for", "while", "switch", "return", "else", "sizeof", "catch", "do"})


def _c_function(line: str) -> str:
    """The name before the first '(' of a line at column 0 that looks like a definition."""
    if not line[:1].isalpha() and not line.startswith("_") or "(" not in line or line.rstrip().endswith(";"):
        return ""
    head = line[: line.index("(")].rstrip()
    name = _NOT_NAME.split(head)[-1]
    return name if name and name not in _C_KEYWORDS and " " in head.strip() or "::" in name else ""
