"""Which optional request features a partial server's 400 makes the bot drop (core/research/compat.py)."""
from __future__ import annotations

from core.research.anthropic_client import AnthropicClient, without_features
from core.research.compat import features_to_drop
from core.research.model import Message, TextBlock, ToolResultBlock, ToolSpec

SPEC = ToolSpec("search_code", "Search code.", {"type": "object", "properties": {}})


def params() -> dict:
    client = AnthropicClient(api_key="k", model="m", base_url="http://127.0.0.1:9")
    messages = [
        Message("user", (TextBlock("q"),)),
        Message("user", (ToolResultBlock("t1", "failed", is_error=True),)),
    ]
    built = client.request_params(system="s", tools=[SPEC], messages=messages)
    return built | {"tool_choice": {"type": "auto"}}


def test_a_400_naming_a_feature_drops_only_that_feature() -> None:
    request = params()
    assert features_to_drop("extra inputs are not permitted: tool_choice", request) == {"tool_choice"}
    assert features_to_drop("messages.1.content.0.is_error: extra inputs are not permitted", request) == {"is_error"}
    stripped = without_features(request, {"is_error", "tool_choice"})
    assert "tool_choice" not in stripped and '"is_error"' not in str(stripped).replace("'", '"')
    assert "cache_control" in str(stripped)  # untouched


def test_a_generic_shape_refusal_drops_every_optional_feature_and_a_tools_refusal_none() -> None:
    request = params()
    assert features_to_drop("unsupported request field", request) == {"cache_control", "tool_choice", "is_error", "system_blocks"}
    assert features_to_drop('"auto" tool choice requires --enable-auto-tool-choice', request) == set()
    assert features_to_drop("model overloaded", request) == set()  # not about the request's shape
    flat = without_features(request, {"system_blocks", "cache_control"})
    assert flat["system"] == "s" and "cache_control" not in str(flat)


def test_only_a_refusal_of_tool_calling_counts_as_tools_unsupported() -> None:
    from core.research.compat import refuses_tools  # noqa: PLC0415

    assert refuses_tools('"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set')
    assert refuses_tools("this model does not support tools")
    assert not refuses_tools("messages[3].tool_calls[0].id: field required")  # one bad message, not tools
