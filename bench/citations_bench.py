"""How long citation verification takes on hostile model output (issue 16: no regex stalls).

Each case is one answer of the given size built from a pattern that made the old verifier quadratic
(a line of '[', '<http://', fence openers, a Sources heading padded with blanks …), plus a realistic
answer for comparison. Prints the best of a few runs per case, for two sizes, and the growth factor:
a linear verifier takes about 5x as long for 5x the input, a quadratic one about 25x.

    .venv/bin/python bench/citations_bench.py [--size 200000] [--repeat 3]
"""
from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.messages import Source  # noqa: E402
from core.research.citations import Evidence, verify_answer  # noqa: E402
from core.research.tools.registry import wrap_untrusted  # noqa: E402

ISSUE = "https://github.com/vllm-project/vllm-ascend/issues/1234"
PERMALINK = "https://github.com/vllm-project/vllm-ascend/blob/abc123/vllm_ascend/platform.py#L6"
REALISTIC = (
    f"Most likely a CANN mismatch ([#1234]({ISSUE})). The check is in {PERMALINK} (`vllm_ascend/platform.py`); "
    "see also https://evil.example/fix.sh and vllm_ascend/made_up.py.\n\n```bash\npip install x\n```\n"
)

PATTERNS: dict[str, Callable[[int], str]] = {
    "brackets [": lambda n: "[" * n,
    "parens (": lambda n: "(" * n,
    "backticks `": lambda n: "`" * n,
    "http:// repeated": lambda n: ("http://" * (n // 7 + 1))[:n],
    "[a](http://x repeated": lambda n: ("[a](http://x" * (n // 12 + 1))[:n],
    "<http://x repeated": lambda n: ("<http://x" * (n // 9 + 1))[:n],
    "nested [[[]]](": lambda n: ("[[[]]](" * (n // 7 + 1))[:n],
    "fence openers": lambda n: ("```x\n" * (n // 5 + 1))[:n],
    "Sources + blanks": lambda n: "Sources" + " " * n + "x",
    "a/ path segments": lambda n: ("a/" * (n // 2 + 1))[:n],
    "tg: repeated": lambda n: ("tg:" * (n // 3 + 1))[:n],
    "paths vs 2,000 listed": lambda n: ("see x/y.py and `q/r.md` and mod3/file3.py " * (n // 40 + 1))[:n],
    "realistic answer": lambda n: (REALISTIC * (n // len(REALISTIC) + 1))[:n],
}
LISTING = [f"vllm_ascend/mod{i}/file{i}.py" for i in range(2_000)]


def evidence() -> Evidence:
    e = Evidence(["https://github.com/vllm-project/vllm-ascend"])
    e.record(f"{ISSUE}\n{PERMALINK}", [Source("#1234", ISSUE), Source("platform.py", PERMALINK)])
    e.record("a directory listing", [], LISTING)  # known paths: lookups must not scan them all
    return e


def best_of(repeat: int, run: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=200_000, help="characters per hostile answer")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    small = args.size // 5
    print(f"verify_answer, best of {args.repeat}; sizes {small:,} and {args.size:,} characters")
    print(f"{'case':<24} {'small ms':>9} {'full ms':>9} {'growth':>7}")
    worst = 0.0
    for name, make in PATTERNS.items():
        a, b = make(small), make(args.size)
        t_small = best_of(args.repeat, lambda: verify_answer(a, evidence(), "en"))
        t_full = best_of(args.repeat, lambda: verify_answer(b, evidence(), "en"))
        worst = max(worst, t_full)
        print(f"{name:<24} {t_small * 1000:9.1f} {t_full * 1000:9.1f} {t_full / max(t_small, 1e-9):6.1f}x")
    tags = ("</ TOOL_OUTPUT >" * (args.size // 16 + 1))[: args.size]
    t_wrap = best_of(args.repeat, lambda: wrap_untrusted("get_issue", tags))
    print(f"{'wrap_untrusted tags':<24} {'':>9} {t_wrap * 1000:9.1f}")
    print(f"worst verify_answer at {args.size:,} characters: {worst * 1000:.0f} ms")


if __name__ == "__main__":
    main()
