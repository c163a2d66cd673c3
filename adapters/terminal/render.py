"""Reply → terminal text (Markdown reads fine as is) and → the `ask --json` object."""
from __future__ import annotations

from typing import Any

from adapters.common.sources import has_sources_section, sources_title
from core.messages import Reply


def render_text(reply: Reply) -> str:
    body = reply.text.rstrip()
    if reply.sources and not has_sources_section(body):
        lines = [f"- [{s.title}]({s.url})" for s in reply.sources]
        body = f"{body}\n\n**{sources_title(reply.language)}**\n" + "\n".join(lines)
    return body


def render_json(reply: Reply) -> dict[str, Any]:
    data = reply.to_dict()
    # `options` in the evaluation format are objects with repo and label only
    data["options"] = [{"repo": o.repo, "label": o.label} for o in reply.options]
    return data
