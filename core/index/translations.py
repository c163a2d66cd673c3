"""Sphinx gettext catalogues (.po) as a cross-language bridge.

vllm-ascend ships Chinese translations of its English docs as docs/source/locale/zh_CN/LC_MESSAGES/*.po.
The translated sentences are added to the index text of the English section they translate (never
shown), so a Chinese question meets the English page a user would be sent to.
"""
from __future__ import annotations

import re

_LOCALE = re.compile(r"^(?P<root>.*?)/locale/[^/]+/LC_MESSAGES/(?P<rel>.+)\.po$")
_QUOTED = re.compile(r'^\s*"(.*)"\s*$')


def source_stem(po_path: str) -> str | None:
    """docs/source/locale/zh_CN/LC_MESSAGES/faqs.po -> docs/source/faqs (the page without extension)."""
    match = _LOCALE.match(po_path)
    return f"{match.group('root')}/{match.group('rel')}" if match else None


def _unquote(s: str) -> str:
    return s.replace('\\"', '"').replace("\\n", "\n").replace("\\\\", "\\")


def parse_po(text: str) -> list[tuple[str, str]]:
    """(msgid with whitespace collapsed, msgstr) pairs with a non-empty translation."""
    pairs: list[tuple[str, str]] = []
    current: dict[str, list[str]] = {}
    field = ""

    def flush() -> None:
        msgid, msgstr = _norm("".join(current.get("msgid", []))), "".join(current.get("msgstr", []))
        if msgid and msgstr and msgid != msgstr:
            pairs.append((msgid, msgstr))
        current.clear()

    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            if current.get("msgstr") is not None:
                flush()
            continue
        for key in ("msgid", "msgstr"):
            if stripped.startswith(key + " "):
                if key == "msgid" and "msgstr" in current:
                    flush()
                field = key
                quoted = _QUOTED.match(stripped[len(key) + 1 :])
                current[field] = [_unquote(quoted.group(1))] if quoted else []
                break
        else:
            quoted = _QUOTED.match(stripped)
            if quoted and field in current:
                current[field].append(_unquote(quoted.group(1)))
    if current:
        flush()
    return pairs


def _norm(text: str) -> str:
    return " ".join(text.split())


def translations_for(section: str, pairs: list[tuple[str, str]]) -> str:
    """The translations of every catalogue sentence found in `section`."""
    body = _norm(section)
    found = [msgstr for msgid, msgstr in pairs if len(msgid) >= 6 and msgid in body]  # msgids come normalised
    return "\n".join(found)
