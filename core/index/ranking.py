"""Ranking knobs and the question-side reading: query weights, exact-match boosts, doc-type priors.

The numbers were tuned on eval/index_dev.jsonl (docs/index.md has the measurements); they live
here, in one frozen value, so a benchmark can try variants without touching the search code.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from core.index.terms import bridge
from core.index.tokenizer import strong_terms, tokenize

# unit flags, one bit each, computed at build time from the path and kind
FLAG_FAQ = 1  # FAQ / troubleshooting pages
FLAG_ENV = 2  # environment-variable pages and modules
FLAG_CODE = 4
FLAG_CONFIG = 8
FLAG_ISSUE = 16
FLAG_DOC = 32
FLAG_RELEASE = 64  # release notes / changelogs: about everything, the answer only to version questions
FLAG_TEST = 128  # tests, CI, benchmarks, agent skill notes: rarely the answer to a user's question

_FAQ_PATH = re.compile(r"faq|trouble|常见问题|问题定位|故障", re.IGNORECASE)
_ENV_PATH = re.compile(r"env(?:s|_var|ironment|-var)|环境变量", re.IGNORECASE)
_TEST_PATH = re.compile(r"(?:^|/)(?:tests?|benchmarks?|\.github|\.gitcode|ci|\.agents|\.claude)/|(?:^|/)test_[^/]*$", re.IGNORECASE)
_RELEASE_PATH = re.compile(r"release[_-]?notes?|changelog|版本说明", re.IGNORECASE)


@dataclass(frozen=True)
class RankingParams:
    k1: float = 1.2
    b: float = 0.75
    title_repeat: int = 3  # heading path tokens count this many times (a cheap BM25F)
    path_repeat: int = 2
    strong_weight: float = 1.0  # query weight of an error code / env var / flag / identifier (more measured worse)
    exact_boost: float = 0.5  # x(1 + this * share of the question's exact names a unit holds)
    bridge_weight: float = 1.0  # query weight of a term added by the bilingual bridge
    faq_prior_error: float = 1.4
    env_prior_setting: float = 1.4
    code_prior_where: float = 1.3
    doc_prior: float = 1.15  # docs over code for a plain question
    doc_prior_where: float = 1.0  # docs for a "where is" question
    test_prior: float = 0.6
    release_prior: float = 0.6  # release notes, unless the question is about versions
    threshold: float = 0.25  # minimum normalised score a returned passage needs
    fallback_below: float = 0.4  # restricted best below this: search every repository too
    fallback_keeps_routed: bool = True  # routed repositories' passages stay first after a fallback


DEFAULT_PARAMS = RankingParams()

_ERROR_WORDS = re.compile(
    r"error|fail|exception|traceback|crash|refus|cannot|can't|unable|报错|错误|失败|异常|崩溃|无法|不能|起不来|挂了|"
    r"oom|out of memory|core dump|hang|no response|stuck|没响应|无响应|卡住|卡死|不返回|[A-Z]{1,4}\d{4,6}|\b\d{6}\b",
    re.IGNORECASE,
)
_SETTING_WORDS = re.compile(r"environment variable|env var|\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b|环境变量|变量", re.IGNORECASE)
_WHERE_WORDS = re.compile(
    r"where (?:is|are|does|do)|which (?:file|function|class|module)|implemented|implementation|source code|"
    r"哪个文件|在哪|哪里|实现|源码|代码",
    re.IGNORECASE,
)


_VERSION_WORDS = re.compile(r"version|release|upgrade|changelog|版本|发布|升级|\bv?\d+\.\d+", re.IGNORECASE)


@dataclass(frozen=True)
class QueryPlan:
    weights: dict[str, float]  # token -> query weight
    strong: frozenset[str]
    is_error: bool
    is_setting: bool
    is_where: bool
    is_version: bool = False


def plan_query(question: str, params: RankingParams = DEFAULT_PARAMS) -> QueryPlan:
    tokens = tokenize(question)
    strong = frozenset(strong_terms(question))
    weights: dict[str, float] = {}
    for token in tokens:
        weights[token] = params.strong_weight if token in strong else 1.0
    for token in bridge(tokens):
        weights.setdefault(token, params.bridge_weight)
    return QueryPlan(
        weights,
        strong,
        bool(_ERROR_WORDS.search(question)),
        bool(_SETTING_WORDS.search(question)),
        bool(_WHERE_WORDS.search(question)),
        bool(_VERSION_WORDS.search(question)),
    )


def unit_flags(path: str, kind: str) -> int:
    flags = {"code": FLAG_CODE, "config": FLAG_CONFIG, "issue": FLAG_ISSUE, "doc": FLAG_DOC}.get(kind, 0)
    if _FAQ_PATH.search(path):
        flags |= FLAG_FAQ
    if _ENV_PATH.search(path):
        flags |= FLAG_ENV
    if _RELEASE_PATH.search(path):
        flags |= FLAG_RELEASE
    if _TEST_PATH.search(path):
        flags |= FLAG_TEST
    return flags


def prior_table(plan: QueryPlan, params: RankingParams = DEFAULT_PARAMS) -> list[float]:
    """Multiplier for each of the 256 flag combinations, for this question."""
    table = []
    for flags in range(256):
        m = 1.0
        if flags & FLAG_DOC:
            m *= params.doc_prior_where if plan.is_where else params.doc_prior
        if flags & FLAG_FAQ and plan.is_error:
            m *= params.faq_prior_error
        if flags & FLAG_ENV and plan.is_setting:
            m *= params.env_prior_setting
        if flags & FLAG_CODE and plan.is_where:
            m *= params.code_prior_where
        if flags & FLAG_TEST:
            m *= params.test_prior
        if flags & FLAG_RELEASE and not plan.is_version:
            m *= params.release_prior
        table.append(m)
    return table
