"""How long each platform renderer takes on hostile model output (issue 16), and on a normal answer.

Every attack is a ~200 KB answer built from one repeated unit, as one long line and as many short
lines: brackets, half links, emphasis markers, backtick runs, angle brackets, Slack specials,
escape sequences, plus a few lines shaped against a particular pattern (a heading or fence marker
followed by a long run of spaces, a table separator, nested quotes). Each cell is what the
responder sends for a Reply, laid out by the production path: Slack section messages and the streaming
Markdown, Feishu cards, Telegram HTML messages (each through its responder's delivery engine), WeCom
stream chunks, terminal text.

    .venv/bin/python bench/render_bench.py [--size 200000] [--limit 10]

A cell over --limit seconds is cut short and printed as ">Ns" (the alarm interrupts the render).
"""
from __future__ import annotations

import argparse
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.messages import Reply, ReplyKind, Source  # noqa: E402
from tests.support.rendered import SENT  # noqa: E402

# Each platform's production path: its responder's delivery engine (split + render), Slack's stream,
# WeCom's stream layout, the terminal renderer (tests/support/rendered.py, shared with the hostile-input tests).
PLATFORMS: dict[str, Callable[[Reply], object]] = dict(SENT)

NORMAL = """## Running Qwen2.5-7B on Ascend 910B with vllm-ascend

**Short answer:** use vllm-ascend `v0.9.1` with CANN 8.1 and set `max_model_len` to fit the HBM.

1. Install the matching versions (see the [compatibility matrix](https://vllm-ascend.readthedocs.io/en/latest/)).
2. Start the server:

```bash
vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 8192 --tensor-parallel-size 1
```

- *Graph mode* is on by default; ~~eager~~ is slower.
- If you see `ACL stream synchronize failed`, check the driver: <https://github.com/vllm-project/vllm-ascend/issues/1>.

| Version | CANN | torch-npu |
|---------|------|-----------|
| v0.9.1  | 8.1  | 2.5.1     |

> Note: @channel this is a quote with a [link](https://docs.vllm.ai/).
"""


def attacks(size: int) -> dict[str, str]:
    """name → hostile answer of about `size` characters."""
    units = ["[", "[a](", "![", "](", "*", "**a ", "*a ", "_a ", "__a ", "~~a ", "`", "<", "<@U1|",
             "<!here|", "http://", "[[a]", "[a](javascript:", "\x1b]8;;", "\x1b["]
    out: dict[str, str] = {}
    for unit in units:
        out[f"{unit!r} line"] = unit * (size // len(unit))
        out[f"{unit!r} lines"] = (unit * 40 + "\n") * (size // (len(unit) * 40 + 1))
    out["'`' runs 1..n"] = "".join("`" * k + "x" for k in range(1, 600))[:size]
    out["'`' runs n..1"] = "".join("`" * k + "x" for k in range(600, 0, -1))[:size]
    out["'# ' + spaces"] = "# x" + " " * size + "y"
    out["'```' + spaces"] = "```" + " " * size + "x y"
    out["table separator"] = "| a |\n|--" + " " * size + "x|"
    out["'> ' * n"] = "> " * (size // 2) + "x"
    out["short lines '[\\n'"] = "[\n" * (size // 2)
    out["blank lines"] = "\n" * size + "x"
    out["'# \\n' lines"] = "# \n" * (size // 3) + "x"
    return out


class _Timeout(Exception):
    pass


def _alarm(signum: int, frame: FrameType | None) -> None:
    raise _Timeout


def time_one(render: Callable[[Reply], object], reply: Reply, limit: int) -> str:
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(limit)
    started = time.perf_counter()
    try:
        render(reply)
    except _Timeout:
        return f">{limit}s"
    finally:
        signal.alarm(0)
    return f"{(time.perf_counter() - started) * 1000:.0f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=200_000, help="characters per hostile answer")
    parser.add_argument("--limit", type=int, default=10, help="seconds before a cell is cut short")
    args = parser.parse_args()
    normal_big = NORMAL * (args.size // len(NORMAL))
    cases = {f"normal ({len(NORMAL) / 1000:.1f} KB)": NORMAL, f"normal x{args.size // len(NORMAL)}": normal_big}
    cases.update(attacks(args.size))
    sources = (Source("vllm-ascend#1", "https://github.com/vllm-project/vllm-ascend/issues/1"),)
    names = list(PLATFORMS)
    print(f"ms per render, {args.size // 1000} KB hostile answers")
    print(f"{'input':28}" + "".join(f"{n:>10}" for n in names))
    worst = 0.0
    for case, text in cases.items():
        reply = Reply(ReplyKind.ANSWER, text, "en", sources=sources)
        cells = [time_one(PLATFORMS[n], reply, args.limit) for n in names]
        worst = max([worst, *(float(c) if c[0] != ">" else float("inf") for c in cells)])
        print(f"{case[:28]:28}" + "".join(f"{c:>10}" for c in cells), flush=True)
    print(f"worst cell: {worst:.0f} ms")


if __name__ == "__main__":
    main()
