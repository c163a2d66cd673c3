"""The weekly digest: a short text made from one workspace's report (bot/report/data.py).

The week's numbers, the top three documentation gaps and the escalations, in a few lines a team
reads in its channel. It names error signatures and topic words, never a question's text: a channel
holds more people than the workspace's admins.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

GAPS_SHOWN = 3
FILED_SHOWN = 5


def top_gaps(report: Mapping[str, Any], n: int = GAPS_SHOWN) -> list[tuple[str, int]]:
    """The `n` largest documentation gaps, error signatures and topic words together, largest first."""
    gaps = report["gaps"]
    clusters = [(c["key"], c["count"]) for c in gaps["by_signature"]]
    clusters += [(c["key"], c["count"]) for c in gaps["by_topic"]]
    return sorted(clusters, key=lambda kv: -kv[1])[:n]


def digest_text(report: Mapping[str, Any]) -> str:
    totals, feedback, escalations = report["totals"], report["feedback"], report["escalations"]
    rate = feedback["helpful_rate"]
    confidence = report["confidence"]
    lines = [
        f"Weekly digest · 每周摘要 ({report['scope']}, last {report['days']} days)",
        f"Questions: {totals['questions']} · unanswered or low confidence: {totals['gaps']} · "
        f"👍 {totals['votes_up']} / 👎 {totals['votes_down']}" + ("" if rate is None else f" ({rate:.0%} helpful)"),
        "Answers by confidence: " + (", ".join(f"{level} {confidence[level]}" for level in ("high", "medium", "low", "-")
                                              if confidence.get(level)) or "none"),
    ]
    gaps = top_gaps(report)
    lines.append("Top documentation gaps:" if gaps else "Top documentation gaps: none")
    lines += [f"  {n} x {key}" for key, n in gaps]
    by_product = escalations["by_product"]
    lines.append(f"Escalations: {escalations['total']}" + "".join(
        f"; {product}: " + ", ".join(f"{n} {state}" for state, n in sorted(states.items()))
        for product, states in by_product.items()))
    # the issues themselves (filed, answered upstream, closed); a pre-filled link carries the question
    filed = [item for item in escalations["items"] if item["state"] != "opened"][:FILED_SHOWN]
    lines += [f"  {item['product']} ({item['state']}): {item['issue']}" for item in filed]
    return "\n".join(lines)
