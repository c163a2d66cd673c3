"""match_product_facts cost: load time, and p50/p99 per question for short questions and long pasted logs.

All nine products' facts, no repository restriction (the worst case: every fact
is scanned). Long inputs repeat a realistic log until they reach the size asked.

    .venv/bin/python bench/product_facts.py [--runs 300] [--log-kb 64]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script from anywhere

from bench._common import percentile  # noqa: E402
from core.knowledge.loader import clear_caches, load_product_facts  # noqa: E402
from core.knowledge.product_facts import match_product_facts  # noqa: E402

QUESTIONS = [
    "vllm-ascend fails with InvalidVersion after installing vLLM from source",
    "服务化拉起后报 Socket bind failed，端口被占用怎么办",
    "msmodelslim quant w8a8 on 300I Duo fails with DT_BFLOAT16",
    "How do I scale out with deploy.py --update_instance_num?",
    "What does a random unrelated question about the weather match?",
]
LOG_LINE = (
    "[rank0]: RuntimeError: EZ9999: Inner Error! numHeads / numKvHeads = 8, MLA only support {32, 64, 128}. "
    "[FUNC:CheckMlaAttrs] while serving with ASCEND_LAUNCH_BLOCKING unset and HCCL_BUFFSIZE default\n"
)


def _time(text: str, runs: int) -> tuple[float, float]:
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        match_product_facts(text, [])
        samples.append((time.perf_counter() - t0) * 1000)
    return percentile(samples, 50), percentile(samples, 99)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=300)
    ap.add_argument("--log-kb", type=int, default=64)
    args = ap.parse_args()

    clear_caches()
    t0 = time.perf_counter()
    facts = load_product_facts()
    print(f"load+validate {len(facts)} facts: {(time.perf_counter() - t0) * 1000:.1f} ms (cached afterwards)")

    short = [_time(q, args.runs) for q in QUESTIONS]
    p50 = sorted(s[0] for s in short)[len(short) // 2]
    p99 = max(s[1] for s in short)
    print(f"short question ({len(QUESTIONS)} kinds, {args.runs} runs each): p50 {p50:.3f} ms, p99 {p99:.3f} ms")

    log = LOG_LINE * max(1, args.log_kb * 1024 // len(LOG_LINE))
    lp50, lp99 = _time(log, max(10, args.runs // 10))
    print(f"pasted log of {len(log) // 1024} KiB: p50 {lp50:.2f} ms, p99 {lp99:.2f} ms")
    adversarial = "a" * (args.log_kb * 1024)
    ap50, ap99 = _time(adversarial, max(10, args.runs // 10))
    print(f"{args.log_kb} KiB of one repeated letter: p50 {ap50:.2f} ms, p99 {ap99:.2f} ms")


if __name__ == "__main__":
    main()
