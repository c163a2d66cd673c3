"""adapters.common.json_body: an untrusted body's shape earns BadJSON (a ValueError), never RecursionError."""
from __future__ import annotations

import time

import pytest

from adapters.common.json_body import MAX_DEPTH, BadJSON, loads


def nested_lists(depth: int) -> str:
    return "[" * depth + "]" * depth


def nested_objects(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


@pytest.mark.parametrize("body", ["[" * 100_000, '{"a":' * 50_000, nested_lists(5_000), nested_objects(990)])
def test_deep_nesting_is_bad_json_not_a_recursion_error(body: str) -> None:
    with pytest.raises(BadJSON, match="nested too deeply"):
        loads(body)
    with pytest.raises(ValueError):  # callers that catch ValueError are covered too
        loads(body.encode())


def test_nesting_up_to_the_cap_parses_and_one_more_level_does_not() -> None:
    value = loads(nested_lists(MAX_DEPTH))
    for _ in range(MAX_DEPTH - 1):
        [value] = value
    assert value == []
    assert loads(nested_objects(MAX_DEPTH))["a"]["a"]
    for deeper in (nested_objects(MAX_DEPTH + 1), nested_lists(MAX_DEPTH + 1), f'[{{"k":{nested_lists(MAX_DEPTH)}}}]'):
        with pytest.raises(BadJSON):
            loads(deeper)


@pytest.mark.parametrize("body", [b"", b"not json", b"\xff\xfe\x00", b'{"a":', b"[1,]", b"\xed\xa0\x80"])
def test_other_parse_failures_are_bad_json(body: bytes) -> None:
    with pytest.raises(BadJSON, match="not JSON"):
        loads(body)


def test_ordinary_payloads_and_scalars_parse() -> None:
    assert loads(b'{"schema":"2.0","header":{"token":"t"},"event":{"action":{"value":{"k":[1,{"x":null}]}}}}')
    assert loads("5") == 5 and loads('"x"') == "x" and loads("[]") == [] and loads("{}") == {}


def test_a_wide_megabyte_body_is_checked_quickly() -> None:
    wide = "[" + "[]," * 330_000 + "[]]"  # a third of a million containers, one level deep
    start = time.perf_counter()
    assert len(loads(wide)) == 330_001
    assert time.perf_counter() - start < 3.0  # generous: two shared cores; typically ~0.3 s
