"""A reader for the YAML our deploy/ files are written in (PyYAML is not a dependency): block
mappings and sequences by indentation, `- key: value` items, flow `{...}` / `[...]`, quoted and plain
scalars, comments and `---` documents. Anything else (anchors, block scalars, tags) is an error, so a
manifest that grows past this subset fails its test instead of being misread."""
from __future__ import annotations

import json
import re
from typing import Any

_INT = re.compile(r"-?\d+")


def load_all(text: str) -> list[Any]:
    documents, current = [], []
    for raw in text.splitlines():
        if raw.rstrip() == "---":
            documents.append(current)
            current = []
            continue
        line = _strip_comment(raw).rstrip()
        if line.strip():
            current.append(line)
    documents.append(current)
    out = []
    for lines in documents:
        if lines:
            value, end = _block(lines, 0, _indent(lines[0]))
            if end != len(lines):
                raise ValueError(f"unparsed line: {lines[end]!r}")
            out.append(value)
    return out


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _strip_comment(line: str) -> str:
    quote = ""
    for i, ch in enumerate(line):
        if quote:
            if ch == "\\" and quote == '"':
                continue
            if ch == quote and (quote != '"' or line[i - 1] != "\\"):
                quote = ""
        elif ch in "'\"" and (i == 0 or line[i - 1] in " [{,:"):
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1] == " "):
            return line[:i]
    return line


def _block(lines: list[str], i: int, indent: int) -> tuple[Any, int]:
    if lines[i].strip().startswith("- ") or lines[i].strip() == "-":
        return _sequence(lines, i, indent)
    return _mapping(lines, i, indent)


def _sequence(lines: list[str], i: int, indent: int) -> tuple[list[Any], int]:
    items: list[Any] = []
    while i < len(lines) and _indent(lines[i]) == indent and lines[i].strip().startswith("-"):
        rest = lines[i].strip()[1:].strip()
        if not rest:
            value, i = _block(lines, i + 1, _indent(lines[i + 1]))
        elif _split_key(rest) is not None:  # `- key: value` starts a mapping indented past the dash
            lines = [*lines[:i], " " * (indent + 2) + rest, *lines[i + 1 :]]
            value, i = _mapping(lines, i, indent + 2)
        else:
            value, i = _scalar(rest), i + 1
        items.append(value)
    return items, i


def _split_key(text: str) -> tuple[str, str] | None:
    match = re.match(r'^("[^"]*"|\'[^\']*\'|[^\s"\'{}\[\],:][^:{}\[\],]*?)\s*:(?:\s+(.*))?$', text)
    if match is None:
        return None
    key = match.group(1)
    return (key[1:-1] if key[0] in "'\"" else key), (match.group(2) or "")


def _mapping(lines: list[str], i: int, indent: int) -> tuple[dict[str, Any], int]:
    out: dict[str, Any] = {}
    while i < len(lines) and _indent(lines[i]) == indent:
        split = _split_key(lines[i].strip())
        if split is None:
            raise ValueError(f"not a mapping entry: {lines[i]!r}")
        key, rest = split
        if key in out:
            raise ValueError(f"duplicate key {key!r}")
        if rest:
            out[key], i = _scalar(rest), i + 1
        elif i + 1 < len(lines) and (_indent(lines[i + 1]) > indent or
                                     (_indent(lines[i + 1]) == indent and lines[i + 1].strip().startswith("- "))):
            out[key], i = _block(lines, i + 1, _indent(lines[i + 1]))
        else:
            out[key], i = None, i + 1
    if i < len(lines) and _indent(lines[i]) > indent:
        raise ValueError(f"unexpected indentation: {lines[i]!r}")
    return out, i


def _scalar(text: str) -> Any:
    text = text.strip()
    if text[:1] in "{[":
        value, end = _flow(text, 0)
        if text[end:].strip():
            raise ValueError(f"trailing text after a flow value: {text!r}")
        return value
    if text[:1] in "&*!|>":
        raise ValueError(f"outside the subset: {text!r}")
    return _plain(text)


def _plain(text: str) -> Any:
    if text.startswith('"'):
        return json.loads(text)
    if text.startswith("'"):
        return text[1:-1].replace("''", "'")
    if text in ("true", "false"):
        return text == "true"
    if text in ("null", "~"):
        return None
    if _INT.fullmatch(text):
        return int(text)
    return text


def _flow(text: str, i: int) -> tuple[Any, int]:
    opener = text[i]
    closer = "}" if opener == "{" else "]"
    out: Any = {} if opener == "{" else []
    i += 1
    while True:
        i = _skip_space(text, i)
        if text[i] == closer:
            return out, i + 1
        if opener == "{":
            key, i = _flow_item(text, i, stop=":")
            if text[i] != ":":
                raise ValueError(f"expected ':' in {text!r}")
            value, i = _flow_item(text, i + 1, stop=",}")
            out[key] = value
        else:
            value, i = _flow_item(text, i, stop=",]")
            out.append(value)
        i = _skip_space(text, i)
        if text[i] == ",":
            i += 1


def _skip_space(text: str, i: int) -> int:
    while text[i] == " ":
        i += 1
    return i


def _flow_item(text: str, i: int, stop: str) -> tuple[Any, int]:
    i = _skip_space(text, i)
    if text[i] in "{[":
        return _flow(text, i)
    if text[i] == '"':
        end = i + 1
        while text[end] != '"' or text[end - 1] == "\\":
            end += 1
        return json.loads(text[i : end + 1]), _skip_space(text, end + 1)
    end = i
    while text[end] not in stop:
        end += 1
    return _plain(text[i:end].strip()), end
