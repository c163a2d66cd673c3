from dataclasses import dataclass, field

import httpx

from bot.metrics import Metrics
from core.messages import InboundMessage
from tests.support.recording_adapter import RecordingAdapter
from tests.support.stack import running_bot


async def test_health_ready_and_metrics_endpoints(make_settings):
    async with running_bot(make_settings(), worker=False) as stack:
        await stack.components.ingress.submit(InboundMessage("slack", "T", "C", "1", "U", "q", "m", "Ev1", False))
        await stack.components.ingress.submit(InboundMessage("slack", "T", "C", "1", "U", "q", "m", "Ev1", False))
        async with httpx.AsyncClient(base_url=stack.base_url) as http:
            assert (await http.get("/healthz")).text == "ok"
            ready = (await http.get("/readyz")).json()
            assert ready["redis"] is True
            metrics = (await http.get("/metrics")).text
    assert 'copilot_events_total{outcome="enqueued",platform="slack"} 1.0' in metrics
    assert 'copilot_events_total{outcome="duplicate",platform="slack"} 1.0' in metrics
    assert "copilot_queue_depth 1.0" in metrics
    assert "copilot_oldest_pending_seconds" in metrics


@dataclass
class Step:
    tool: str
    ok: bool
    kind: str = "tool"


@dataclass
class Usage:
    input: int = 1200
    output: int = 300
    cache_write: int = 0
    cache_read: int = 900


@dataclass
class Outcome:
    usage: Usage = field(default_factory=Usage)
    trace: tuple = (Step("claude", True, "model"), Step("search_issues", True), Step("ask_deepwiki", False))


def test_research_outcomes_feed_token_and_tool_metrics():
    metrics = Metrics()
    metrics.observe_research(Outcome())
    text = metrics.render().decode()
    assert 'copilot_model_tokens_total{kind="input"} 1200.0' in text
    assert 'copilot_model_tokens_total{kind="cache_read"} 900.0' in text
    assert 'copilot_tool_calls_total{ok="true",tool="search_issues"} 1.0' in text
    assert 'copilot_tool_calls_total{ok="false",tool="ask_deepwiki"} 1.0' in text
    assert "claude" not in text.split("copilot_tool_calls_total")[-1]


def test_recording_adapter_is_a_platform_adapter():
    from adapters.base import PlatformAdapter

    assert isinstance(RecordingAdapter(), PlatformAdapter)
