"""Prometheus metrics for /metrics. One registry per process (scrape every web and worker)."""
from __future__ import annotations

import hmac
import ipaddress
from dataclasses import dataclass

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

TOKEN_KINDS = ("input", "output", "cache_write", "cache_read")  # a research outcome's usage fields


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.events = Counter("copilot_events_total", "Inbound events by platform and outcome", ["platform", "outcome"], registry=r)
        self.answers = Counter("copilot_answers_total", "Replies delivered by kind", ["platform", "kind"], registry=r)
        self.job_failures = Counter("copilot_job_failures_total", "Jobs that failed to deliver", ["reason"], registry=r)
        self.job_seconds = Histogram(
            "copilot_job_seconds", "Time from dequeue to delivered reply", ["platform"],
            buckets=(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300), registry=r,
        )
        self.model_tokens = Counter("copilot_model_tokens_total", "Model tokens by kind", ["kind"], registry=r)
        self.tool_calls = Counter("copilot_tool_calls_total", "Research tool calls", ["tool", "ok"], registry=r)
        self.queue_depth = Gauge("copilot_queue_depth", "Jobs waiting or in progress", registry=r)
        self.oldest_pending_seconds = Gauge("copilot_oldest_pending_seconds", "Age of the oldest unacked job", registry=r)

    def count_event(self, platform: str, outcome: object) -> None:
        self.events.labels(platform, getattr(outcome, "value", str(outcome))).inc()

    def observe_research(self, outcome: object) -> None:
        """Model tokens and tool calls of one research answer."""
        usage = getattr(outcome, "usage", None)
        for kind in TOKEN_KINDS:
            tokens = int(getattr(usage, kind, 0) or 0)
            if tokens:
                self.model_tokens.labels(kind).inc(tokens)
        for step in getattr(outcome, "trace", ()):
            if getattr(step, "kind", "tool") == "tool":
                self.tool_calls.labels(getattr(step, "tool", "?"), str(bool(getattr(step, "ok", True))).lower()).inc()

    def render(self) -> bytes:
        return generate_latest(self.registry)


def bearer_matches(authorization: str | None, token: str) -> bool:
    """True when an `Authorization: Bearer <token>` header carries `token` (constant-time compare).

    The comparison runs over bytes of the whole header value, so its time says nothing about how
    much of a guess was right; a missing or non-Bearer header is simply a mismatch.
    """
    expected = f"Bearer {token}".encode()
    given = (authorization or "").strip().encode("latin-1")  # the raw header bytes (Starlette decodes latin-1)
    return hmac.compare_digest(given, expected)


def is_loopback(host: str) -> bool:
    """True when a server bound to `host` can be reached only from this machine (or this pod).
    A name other than localhost could resolve anywhere, so it counts as beyond loopback."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip().strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class StatusGate:
    """Who may read /readyz and /metrics: the one place this policy lives (/healthz is always open).

    Queue depth, adapters and Redis health tell an attacker what runs and when it is loaded, so once
    the server is reachable beyond loopback they are closed unless METRICS_TOKEN (a bearer) or
    METRICS_PUBLIC opens them. A token, when set, always guards /metrics, also on loopback."""

    token: str = ""
    open_without_token: bool = True  # bound to loopback, or METRICS_PUBLIC=true

    @classmethod
    def for_server(cls, host: str, token: str, public: bool) -> "StatusGate":
        return cls(token, public or is_loopback(host))

    @property
    def closed(self) -> bool:
        """Nobody can read /readyz or /metrics: beyond loopback with neither a token nor METRICS_PUBLIC."""
        return not self.token and not self.open_without_token

    def refusal(self, authorization: str | None, *, metrics: bool) -> int | None:
        """None when the request may read the endpoint, else the status to answer (401: a token would
        open it; 403: nothing would)."""
        if self.token and bearer_matches(authorization, self.token):
            return None
        if self.open_without_token and not (metrics and self.token):
            return None
        return 401 if self.token else 403
