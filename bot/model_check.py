"""`doctor`'s model check: one cheap request to the configured endpoint, and one line saying what is wrong.

The request is a one-token completion that carries one trivial tool, so the
same call tells apart an unreachable server, a refused key, an unknown model
and a server without tool calling (vLLM started without
`--enable-auto-tool-choice`).
"""
from __future__ import annotations

import httpx

from bot.settings import Settings
from core.research.build import provider_client
from core.research.model import Message, ModelClient, ModelUnavailable, TextBlock, ToolSpec, ToolsUnsupported

PROBE_TOOL = ToolSpec("ping", "Does nothing.", {"type": "object", "properties": {}})
PROBE_SECONDS = 20.0


def probe_client(settings: Settings) -> ModelClient:
    """The configured provider, asked for a single token, without retries or streaming."""
    return provider_client(settings, max_tokens=1, max_retries=0, stream=False, timeout=PROBE_SECONDS)


async def check_model(settings: Settings) -> tuple[str, str]:
    """(status, line): status is "ok", "warn" or "fail"; the line never holds a key or server text."""
    provider = settings.resolved_model_provider
    client = probe_client(settings)
    base = (settings.openai_base_url or "https://api.openai.com/v1") if provider == "openai" else (
        settings.anthropic_base_url or "https://api.anthropic.com"
    )
    where = _shown(base)
    try:
        await client.complete(system="Reply with one word.", tools=[PROBE_TOOL], messages=[Message("user", (TextBlock("ping"),))])
    except ToolsUnsupported:
        if settings.model_tools == "on":
            return "fail", f"{provider} at {where}: model {client.model} refuses tool calls and MODEL_TOOLS=on"
        return "warn", (
            f"{provider} at {where}: model {client.model} answers but refuses tool calls; answers use the bot's own "
            "retrieval (for vLLM/SGLang start it with --enable-auto-tool-choice --tool-call-parser <parser>)"
        )
    except ModelUnavailable as exc:
        return "fail", f"{provider} at {where}: {diagnosis(str(exc))}"
    finally:
        await client.aclose()
    return "ok", f"{provider} at {where}: model {client.model} answers, tools {settings.model_tools}"


def _shown(url: str) -> str:
    """Scheme, host, port and path only: no user:password or query parameters in the output."""
    try:
        parsed = httpx.URL(url)
    except Exception:  # noqa: BLE001 - a malformed URL is shown as such, never echoed
        return "(malformed base URL)"
    port = f":{parsed.port}" if parsed.port else ""
    return f"{parsed.scheme}://{parsed.host}{port}{parsed.path}"


def diagnosis(error: str) -> str:
    if "unreachable" in error:
        return "unreachable (check the base URL, proxy and firewall)"
    if "401" in error or "403" in error:
        return "the API key was refused (HTTP 401/403)"
    if "404" in error or "lists no models" in error:
        return "model not found (check the model name, or the base URL's /v1 suffix)"
    return error
