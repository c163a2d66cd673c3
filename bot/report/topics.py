"""Topic words of a question, to group unanswered questions into documentation gaps.

A question's topic is its content words: technical identifiers (`graph_mode`, `torchair`,
`w8a8`) and, in Chinese, two-character words. Product names, version numbers and everyday
words say nothing about which document is missing, so they are dropped. Every pattern is
bounded and runs on a clipped text, so the cost is linear.
"""
from __future__ import annotations

import re

MAX_TERMS = 12  # per question: the first distinct ones
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_.+-]{2,40}")
_CJK_RUN = re.compile(r"[\u4e00-\u9fff]{2,40}")
_VERSIONISH = re.compile(r"^v?\d[\d.]*$|^[a-z]{0,3}\d+(\.\d+)+")

_STOP_EN = frozenset("""
the and for with from that this what which when where why how who does did doesn can could would should
will not but are was were has have had been being any all some one two use using used get got run running
runs work works working try tried trying after before about into onto than then there their them they
you your our its it's i'm don't can't won't error errors issue issues problem question help please thanks
fail fails failed failing support supported version versions latest new old set setting settings way
model models server service start started starts npu npus ascend huawei vllm vllm-ascend sglang mindie
redacted mindie-llm mindie-sd mindie-motor mindie-turbo mindie-pymotor msmodelslim modelslim cann atlas
""".split())
_STOP_ZH = frozenset("""
什么 怎么 如何 为什么 是否 可以 能否 这个 那个 一个 没有 不是 还是 问题 报错 错误 请问 你好 谢谢 使用 支持
时候 现在 已经 出现 运行 需要 因为 所以 但是 然后 如果 以及 或者 就是 我们 你们 他们 这样 一下 怎样
""".split())


def topic_terms(text: str) -> tuple[str, ...]:
    clipped = text[:1_000]
    terms: dict[str, None] = {}
    for match in _WORD.finditer(clipped):
        word = match.group(0).lower().rstrip(".-+")
        if len(word) >= 3 and word not in _STOP_EN and not _VERSIONISH.match(word):
            terms.setdefault(word)
    for run in _CJK_RUN.finditer(clipped):
        chunk = run.group(0)
        for i in range(len(chunk) - 1):
            pair = chunk[i:i + 2]
            if pair not in _STOP_ZH:
                terms.setdefault(pair)
    return tuple(terms)[:MAX_TERMS]
