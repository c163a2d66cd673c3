"""Parsing an untrusted JSON body so that its shape can only ever earn a 400.

`json.loads` recurses once per nesting level, so `[` * 100000 raises RecursionError, which is not a
ValueError: a handler that catches ValueError answers 500 instead, before any authentication. A
body nested just under the interpreter's limit parses, but then fails the next recursive walk of
it (json.dumps into the job queue, a log line). So nesting is capped far below either limit, at a
depth no platform payload comes near, and every failure is one ValueError subclass.
"""
from __future__ import annotations

import json
from typing import Any

MAX_DEPTH = 32  # Feishu card callbacks, the deepest payloads we take, nest about 6 levels


class BadJSON(ValueError):
    """Not JSON, not UTF-8, or nested deeper than allowed; the message is safe to log."""


def loads(data: bytes | str, max_depth: int = MAX_DEPTH) -> Any:
    """The parsed value, or BadJSON."""
    try:
        value = json.loads(data)
    except RecursionError:
        raise BadJSON("JSON nested too deeply") from None
    except ValueError:  # JSONDecodeError and UnicodeDecodeError both are
        raise BadJSON("not JSON") from None
    if _deeper_than(value, max_depth):
        raise BadJSON("JSON nested too deeply")
    return value


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether containers nest more than `limit` levels. One level at a time, without recursion,
    and the per-element work stays in C (extend, isinstance), so a 1 MB body costs milliseconds."""
    level = [value] if isinstance(value, (dict, list)) else []
    for _ in range(limit):
        children: list[Any] = []
        for node in level:
            children.extend(node.values() if isinstance(node, dict) else node)
        level = [child for child in children if isinstance(child, (dict, list))]
        if not level:
            return False
    return True
