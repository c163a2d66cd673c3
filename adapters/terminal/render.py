"""Reply → terminal text (Markdown reads fine as is) and → the `ask --json` object."""
from __future__ import annotations

from typing import Any

from core.messages import Reply


def render_text(reply: Reply) -> str:
    body = reply.text.rstrip()
    if reply.sources and "](" not in body.split("\n")[-1] and not _has_sources_section(body):
        heading = "Sources" if reply.language == "en" else "来源"
        lines = [f"- [{s.title}]({s.url})" for s in reply.sources]
        body = f"{body}\n\n**{heading}**\n" + "\n".join(lines)
    return body


def render_json(reply: Reply) -> dict[str, Any]:
    data = reply.to_dict()
    # `options` in the evaluation format are objects with repo and label only
    data["options"] = [{"repo": o.repo, "label": o.label} for o in reply.options]
    return data


def _has_sources_section(body: str) -> bool:
    lowered = body.lower()
    return "**sources**" in lowered or "## sources" in lowered or "**来源**" in body or "## 来源" in body
