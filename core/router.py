"""Which repositories a question is about, or what to ask when that is unclear.

Rules (from the domain seed):
- Repository names and aliases match case-insensitively, English and Chinese;
  strong evidence (a `vllm_ascend/` frame, `VLLM_ASCEND_*` variables,
  `VLLM_OPTIMIZATION_LEVEL` for MindIE-Turbo...) settles the repository.
- Bare "vllm" with Ascend context (NPU, 昇腾, 910B, CANN, torch_npu...) could be
  upstream vLLM or vllm-ascend: ask. Without Ascend context it is vLLM. But vLLM
  that failed on an NPU (an ACL/CANN error code, aclnn/aclop, "NPU out of memory",
  NPU graph capture, torchair) can only have been running through vllm-ascend:
  that settles it.
- "MindIE" without a component: ask LLM / SD / Motor / PyMotor / Turbo.
- Ascend / 昇腾 / NPU with no project: ask which of the nine.
- Several named repositories: all of them (comparisons).
- Repositories chosen earlier in the thread settle follow-ups that name none.
- Ascend error strings (ACL codes, EZ9999-style codes, aclnn, PTA/ACL API
  failures, HCCL) are Ascend context: never out of scope.
- Nothing about these repositories or Ascend: out of scope.

Pure: the only input is the text, the session's repositories and the
knowledge base; compiled patterns are cached per knowledge base.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Literal

from core.entity_routing import products_of_named_entities
from core.knowledge_base import KnowledgeBase, Repository, load_knowledge_base
from core.messages import Language, Option
from core.signals import Guarded, find_chips, find_error_codes, guarded

Action = Literal["research", "clarify", "out_of_scope"]

VLLM = "vllm-project/vllm"
VLLM_ASCEND = "vllm-project/vllm-ascend"
MINDIE_COMPONENTS = (
    "verylucky01/MindIE-LLM",
    "verylucky01/MindIE-SD",
    "verylucky01/MindIE-Motor",
    "verylucky01/MindIE-PyMotor",
    "verylucky01/MindIE-Turbo",
)
MINDIE_SD = "verylucky01/MindIE-SD"
MINDIE_TURBO = "verylucky01/MindIE-Turbo"
ASCEND_ONLY = frozenset(MINDIE_COMPONENTS) | {"verylucky01/MindStudio-ModelSlim"}


@dataclass(frozen=True)
class RouteDecision:
    """What to do with a question.

    For `clarify`, `repos` holds what is already settled (e.g. vllm-ascend in
    "MindIE vs vllm on NPU"); the final set is `repos` plus the chosen option's repo.
    """

    action: Action
    repos: tuple[str, ...]
    options: tuple[Option, ...] = ()
    reason: str = ""
    question_en: str = ""
    question_zh: str = ""

    def question(self, language: Language) -> str:
        return self.question_zh if language == "zh" else self.question_en


_QUESTIONS = {
    "vllm": (
        "Is this about the vllm-ascend plugin (vLLM on Ascend NPUs) or upstream vLLM itself?",
        "你问的是 vllm-ascend 插件（在昇腾 NPU 上运行 vLLM），还是上游 vLLM 本身？",
    ),
    "mindie": (
        "Which MindIE component is this about: MindIE-LLM, MindIE-SD, MindIE-Motor, MindIE-PyMotor or MindIE-Turbo?",
        "你问的是哪个 MindIE 组件：MindIE-LLM、MindIE-SD、MindIE-Motor、MindIE-PyMotor 还是 MindIE-Turbo？",
    ),
    "ascend": (
        "Which project is this about? I cover vLLM, vllm-ascend, SGLang, MindIE-LLM, MindIE-SD, MindIE-Motor, "
        "MindIE-PyMotor, MindIE-Turbo and msModelSlim.",
        "这个问题涉及哪个项目？我可以回答 vLLM、vllm-ascend、SGLang、MindIE-LLM、MindIE-SD、MindIE-Motor、"
        "MindIE-PyMotor、MindIE-Turbo 和 msModelSlim 相关的问题。",
    ),
}

_SEP = r"[\s_\-]*"
_CJK_RUN = re.compile(r"[\u3400-\u9fff]+|[^\u3400-\u9fff\s_\-]+")

# "vllm" on its own: not vllm-ascend, not vllm-project, not another vllm-* project.
_BARE_VLLM = guarded(r"(?<![A-Za-z0-9_\-])vllm(?![A-Za-z0-9_]|[ _\-]?ascend|-[A-Za-z0-9])", ("vllm",))
# Mentions of vllm that are not a repository choice: versions ("vllm==0.11.0",
# "which vLLM version", version pairing is a vllm-ascend question per the seed),
# the CLI ("vllm serve"), imports and traceback paths ("/vllm/v1/engine").
_VLLM_INCIDENTAL = guarded(
    r"(?<![A-Za-z0-9_\-])vllm(?:[ \t]{0,3}(?:==|=|:|：|版本|version)?[ \t]{0,3}v?\d+\.\d+|[ \t]{0,3}(?:version|版本|commit|tag)|[ \t]+(?:serve|bench|chat|complete|run-batch)(?![A-Za-z])|[/\\.][A-Za-z_])"
    r"|(?:-m|from|import)[ \t]+vllm(?![A-Za-z0-9_\-])",
    ("vllm",),
)
# A value in a MindIE-PyMotor deployment config ("engine_type: vllm") names the backend
# engine; it is not a question about vLLM at all.
_VLLM_VALUE = guarded(r"engine[_ ]type[\"': \t=：填为是]{0,8}vllm", ("engine",))
_BARE_MINDIE = guarded(
    r"(?<![A-Za-z0-9])mindie(?![A-Za-z0-9]|[\s_\-]*(?:llm|sd|motor|pymotor|py[\s_\-]motor|turbo)(?![A-Za-z0-9]))", ("mindie",)
)
_ASCEND_WORDS = (
    "ascend", "昇腾", "升腾", "npu", "cann", "hccl", "hccn", "acl", "davinci", "达芬奇", "atlas", "鲲鹏", "kunpeng",
    "华为", "huawei", "mindspore", "modelarts", "910", "310", "300i", "800i", "800t",
)
_ASCEND = guarded(
    r"(?<![A-Za-z])ascend(?:c)?(?![a-z])|昇腾|升腾|(?<![A-Za-z])npus?(?![A-Za-z])|(?<![A-Za-z])cann(?![a-z])|torch[_\-]?npu|"
    r"hccl|hccn|aclnn|acl[ _\-]?graph|npu-smi|davinci|达芬奇|(?<![A-Za-z])atlas[ \-]?(?:\d|a\d)|鲲鹏|kunpeng|华为|huawei|"
    r"mindspore|modelarts|(?:(?<![A-Za-z0-9])|(?<=\d[x×]))(?:910[bc]?\d?|910_93\d*|310[pb]\d?|300i|800[it])(?![A-Za-z0-9])",
    _ASCEND_WORDS,
)
# Failures only an Ascend software stack reports (torch_npu / CANN / ACL runtime messages).
# They are Ascend context on their own, and next to a bare "vllm" they prove vLLM ran on
# an NPU, which only the vllm-ascend plugin makes possible. Error *codes* come from
# signals.find_error_codes.
_ASCEND_FAILURE_WORDS = ("aclnn", "aclop", "aclrt", "aclmdl", "pta call", "acl api", "npu function", "npu out of memory",
                         "npu graph", "npugraph", "torchair", "hccl", "op-plugin", "opapi")
_ASCEND_FAILURE = guarded(
    r"aclnn[A-Za-z]|aclop|aclrt[A-Za-z]|aclmdl[A-Za-z]|pta[ \t]call[ \t]acl|acl[ \t]api[ \t]failed|npu[ \t]function[ \t]error|"
    r"npu[ \t]out[ \t]of[ \t]memory|npu[ \t]graph[ \t]capture|npugraph|torchair|"
    r"hccl[^\n]{0,60}(?:error|timeout|timed out|failed|超时|报错|失败)|op-plugin|libopapi",
    _ASCEND_FAILURE_WORDS,
)
# Ascend-only words the general pattern above does not catch.
_ASCEND_MORE = guarded(r"(?<![A-Za-z])vnpu|hiascend|(?<![A-Za-z])aclop|pta[ \t]call[ \t]acl", ("vnpu", "hiascend", "aclop", "pta call"))
_A3_A2 = guarded(r"(?<![A-Za-z0-9_\-])A[23](?![A-Za-z0-9_])", ("a2", "a3"), 0)
# Diffusion work on "MindIE" can only mean MindIE-SD.
_SD_HINT = guarded(
    r"stable[ \-]?diffusion|sdxl|(?<![A-Za-z])sd[ \-]?(?:1\.5|2\.1|3(?:\.5)?)(?![\d.])|diffusion|(?<![A-Za-z])dit(?![A-Za-z])|"
    r"wan[ \-]?2|flux|hunyuan[ \-]?video|文生图|文生视频|图生视频|视图生成|扩散模型",
    ("stable", "sdxl", "sd", "diffusion", "dit", "wan", "flux", "hunyuan", "文生", "图生", "视图生成", "扩散模型"),
)
# Only used to end a session follow-up that drifted off topic.
_OFF_TOPIC_WORDS = (
    "weather", "天气", "recipe", "菜谱", "食谱", "bake", "bread", "面包", "做饭", "烹饪", "poem", "写诗", "笑话", "joke",
    "stock price", "股票", "football", "足球", "movie", "电影", "travel", "旅游", "react", "vue", "css", "javascript",
    "typescript", "frontend", "前端", "photoshop", "excel", "lyrics", "歌词", "horoscope", "星座", "birthday", "生日",
)
_OFF_TOPIC = guarded(
    r"weather|天气|recipe|菜谱|食谱|bake|bread|面包|做饭|烹饪|poem|写诗|笑话|joke|stock price|股票|football|足球|"
    r"movie|电影|travel|旅游|react|vue\.?js|(?<![A-Za-z])css(?![A-Za-z])|javascript|typescript|frontend|前端|photoshop|excel|"
    r"lyrics|歌词|horoscope|星座|birthday|生日",
    _OFF_TOPIC_WORDS,
)
_UPSTREAM = guarded(r"upstream|上游|原生|社区版|(?<![A-Za-z])original(?![A-Za-z])", ("upstream", "上游", "原生", "社区版", "original"))


def _alias_pattern(alias: str) -> str:
    runs = _CJK_RUN.findall(alias.strip())
    body = _SEP.join(re.escape(r) for r in runs)
    first, last = alias.strip()[0], alias.strip()[-1]
    start = r"(?<![A-Za-z0-9])" if first.isascii() and first.isalnum() else ""
    # Not the prefix of a longer compound: "vllm-project/vllm" must not match "vllm-project/vllm-ascend".
    end = r"(?![A-Za-z0-9]|[\-_][A-Za-z0-9])" if last.isascii() and last.isalnum() else ""
    return start + body + end


@dataclass(frozen=True)
class _Matcher:
    repos: tuple[tuple[Repository, tuple[Guarded, ...]], ...]


_MATCHERS: dict[int, tuple[KnowledgeBase, _Matcher]] = {}


def _alias_needle(alias: str) -> str:
    # Any separator-free run of the alias must appear in every match; take the longest.
    return max(_CJK_RUN.findall(alias.strip().lower()), key=len)


def _matcher(kb: KnowledgeBase) -> _Matcher:
    # Keyed by identity: hashing the whole frozen knowledge base per call would be slow.
    cached = _MATCHERS.get(id(kb))
    if cached is not None and cached[0] is kb:
        return cached[1]
    compiled = []
    for repo in kb.repositories:
        checks = [guarded("|".join(_alias_pattern(a) for a in repo.aliases), {_alias_needle(a) for a in repo.aliases})]
        checks += [guarded(e.pattern, e.needles) for e in repo.evidence]
        compiled.append((repo, tuple(checks)))
    matcher = _Matcher(repos=tuple(compiled))
    _MATCHERS[id(kb)] = (kb, matcher)
    return matcher


def _normalise(text: str) -> str:
    # NFKC folds full-width letters and digits ("ｖｌｌｍ", "２") into ASCII.
    return unicodedata.normalize("NFKC", text)


def named_repositories(text: str, kb: KnowledgeBase | None = None, low: str | None = None) -> tuple[str, ...]:
    """Repositories named explicitly (aliases or settling evidence), in order of appearance."""
    kb = kb or load_knowledge_base()
    low = text.lower() if low is None else low
    found: list[tuple[int, str]] = []
    for repo, checks in _matcher(kb).repos:
        starts = [m.start() for m in (c.search(text, low) for c in checks) if m is not None]
        if starts:
            found.append((min(starts), repo.repo))
    return tuple(r for _, r in sorted(found))


def _has_ascend_context(text: str, low: str) -> bool:
    if _ASCEND.search(text, low) or _A3_A2.search(text, low) or find_chips(text, low) or _ASCEND_MORE.search(text, low):
        return True
    return _has_ascend_failure(text, low)


def _has_ascend_failure(text: str, low: str) -> bool:
    """An error only the Ascend stack produces: an ACL/CANN code or a torch_npu/ACL failure message."""
    if _ASCEND_FAILURE.search(text, low):
        return True
    codes = find_error_codes(text, low)
    # HTTP-ish 503xxx transport statuses alone do not prove Ascend; ACL/aclnn and CANN codes do.
    return any(not code.startswith("503") and not code.startswith("103") for _, code in codes)


def _options(kb: KnowledgeBase, repos: tuple[str, ...]) -> tuple[Option, ...]:
    out = []
    for name in repos:
        repo = kb.repository(name)
        if repo is not None:
            out.append(Option(key=repo.key, label=repo.display_name, repo=repo.repo))
    return tuple(out)


def _clarify(kb: KnowledgeBase, kind: str, settled: list[str], reason: str) -> RouteDecision:
    if kind == "vllm":
        choices: tuple[str, ...] = (VLLM_ASCEND, VLLM)
    elif kind == "mindie":
        choices = MINDIE_COMPONENTS
    else:
        choices = tuple(r.repo for r in kb.repositories)
    en, zh = _QUESTIONS[kind]
    return RouteDecision("clarify", tuple(settled), _options(kb, choices), reason, en, zh)


def route(
    text: str,
    *,
    session_repos: tuple[str, ...] = (),
    kb: KnowledgeBase | None = None,
) -> RouteDecision:
    kb = kb or load_knowledge_base()
    if not isinstance(text, str):
        text = ""
    clean = _normalise(text)
    low = clean.lower()
    known = {r.repo for r in kb.repositories}
    session = tuple(r for r in session_repos if r in known)

    named = list(named_repositories(clean, kb, low))
    ascend_ctx = _has_ascend_context(clean, low)
    bare_mindie = bool(_BARE_MINDIE.search(clean, low))
    # SGLang also runs on GPUs, so only MindIE-* and msModelSlim imply Ascend by themselves.
    ascend_only_named = any(r in ASCEND_ONLY for r in named)
    ambiguities: list[str] = []

    bare_vllm = _bare_vllm(clean, low, kb) if VLLM not in named else frozenset()
    if bare_vllm:
        if VLLM_ASCEND in named:
            # "vllm 0.11.0 with vllm-ascend 0.9.1" or a traceback frame is incidental;
            # "vllm vs vllm-ascend" names both.
            if not _only_incidental_vllm(clean, low, bare_vllm):
                named.insert(0, VLLM)
        elif MINDIE_TURBO in named:
            # MindIE-Turbo patches upstream vLLM at runtime: questions span both.
            named.append(VLLM)
        elif ascend_only_named or bare_mindie:
            # vLLM next to another Ascend product can only be vLLM on Ascend.
            named.append(VLLM_ASCEND)
        elif ascend_ctx and _has_ascend_failure(clean, low):
            # vLLM failing with an ACL/CANN error ran on an NPU: that is the plugin.
            named.append(VLLM_ASCEND)
        elif ascend_ctx:
            ambiguities.append("vllm")
        else:
            named.append(VLLM)

    if bare_mindie and not any(r in MINDIE_COMPONENTS for r in named):
        if _SD_HINT.search(clean, low):
            named.append(MINDIE_SD)
        else:
            ambiguities.append("mindie")

    if not named and not session and ambiguities in ([], ["ascend"], ["vllm"], ["mindie"]):
        # An env var, config key, CLI tool, error sentence or release version that only one
        # product has settles the question instead of the menu or an out-of-scope note.
        settled_by_entity = [r for r in products_of_named_entities(clean, kb, lambda t: _has_ascend_failure(t, t.lower())) if r in known]
        if ambiguities == ["vllm"]:  # the entity must also say which vLLM
            settled_by_entity = [r for r in settled_by_entity if r in (VLLM, VLLM_ASCEND)]
        elif ambiguities == ["mindie"]:  # ... or which MindIE component
            settled_by_entity = [r for r in settled_by_entity if r in MINDIE_COMPONENTS]
        if settled_by_entity:
            named.extend(settled_by_entity)
            ambiguities.clear()

    if not named and not ambiguities and ascend_ctx:
        ambiguities.append("ascend")

    # Earlier choices in this thread settle what the text leaves open.
    if ambiguities and session:
        settled = _settle_from_session(ambiguities[0], session)
        if settled:
            named.extend(r for r in settled if r not in named)
            ambiguities.pop(0)
            if ambiguities and ambiguities[0] == "ascend" and named:
                ambiguities.pop(0)

    if ambiguities:
        return _clarify(kb, ambiguities[0], _dedupe(named), f"ambiguous: {ambiguities[0]}")
    if named:
        return RouteDecision("research", _dedupe(named), reason="named: " + ", ".join(_dedupe(named)))
    if session and clean.strip() and not _OFF_TOPIC.search(clean, low):
        return RouteDecision("research", session, reason="follow-up in a thread about " + ", ".join(session))
    if not clean.strip():
        return RouteDecision("out_of_scope", (), reason="empty message")
    return RouteDecision("out_of_scope", (), reason="no repository or Ascend context")


def _repo_spans(text: str, low: str, kb: KnowledgeBase, repo: str) -> list[tuple[int, int]]:
    """Where the aliases and evidence of `repo` match."""
    for candidate, checks in _matcher(kb).repos:
        if candidate.repo == repo:
            return [m.span() for c in checks for m in c.finditer(text, low)]
    return []


def _bare_vllm(text: str, low: str, kb: KnowledgeBase) -> frozenset[int]:
    """Where "vllm" stands on its own, leaving out config values and the "vLLM" inside a
    descriptive name of vllm-ascend ("the Ascend plugin for vLLM", "昇腾 vLLM 插件")."""
    bare = [m.start() for m in _BARE_VLLM.finditer(text, low)]
    if not bare:
        return frozenset()
    skip = [m.span() for m in _VLLM_VALUE.finditer(text, low)]
    skip += _repo_spans(text, low, kb, VLLM_ASCEND)
    return frozenset(p for p in bare if not any(a <= p < b for a, b in skip))


def _only_incidental_vllm(text: str, low: str, bare: frozenset[int]) -> bool:
    """Every bare "vllm" is a version, a command or an import."""
    incidental = set()
    for m in _VLLM_INCIDENTAL.finditer(text, low):
        # the match may start at "from "/"-m "; record where "vllm" itself starts
        incidental.add(m.start() + m.group(0).lower().index("vllm"))
    return bare <= incidental


def _settle_from_session(kind: str, session: tuple[str, ...]) -> tuple[str, ...]:
    if kind == "vllm":
        return tuple(r for r in session if r in (VLLM, VLLM_ASCEND))
    if kind == "mindie":
        return tuple(r for r in session if r in MINDIE_COMPONENTS)
    return session


def _dedupe(items: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


# ------------------------------------------------------------------ choices

_ZH_NUMERALS = {"一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10}
_EN_ORDINALS = {
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5,
    "sixth": 6, "seventh": 7, "eighth": 8, "ninth": 9, "tenth": 10,
}
_NUMBER_CHOICE = re.compile(
    r"^(?:option|choice|number|no\.?|num|#|选项|选择|选|第|就|我选)?\s*(\d{1,2})\s*(?:个|项|号|条|种|个吧|吧|\.|、|\)|）|:)?$",
    re.I,
)
_ZH_NUMBER_CHOICE = re.compile(r"^(?:选项|选择|选|第|就|我选)?\s*([一二两三四五六七八九十])\s*(?:个|项|号|条|种)?(?:吧)?$")
_EN_ORDINAL_CHOICE = re.compile(r"^(?:the\s+)?(" + "|".join(_EN_ORDINALS) + r")(?:\s+(?:one|option))?$", re.I)
_TRAILING = re.compile(r"[\s.,!?。，！？~]+$")
_FLAT = re.compile(r"[\s_\-()（）]+")


def _flat(text: str) -> str:
    return _FLAT.sub("", text.lower())


def resolve_choice(
    text: str,
    options: tuple[Option, ...],
    *,
    kb: KnowledgeBase | None = None,
) -> Option | None:
    """Map a reply to one of the offered options: a number, a key, a label or an alias."""
    if not isinstance(text, str) or not options:
        return None
    t = _TRAILING.sub("", _normalise(text).strip())
    if not t or len(t) > 200:
        return None

    number = None
    m = _NUMBER_CHOICE.match(t)
    if m:
        number = int(m.group(1))
    elif (z := _ZH_NUMBER_CHOICE.match(t)) is not None:
        number = _ZH_NUMERALS[z.group(1)]
    elif (o := _EN_ORDINAL_CHOICE.match(t)) is not None:
        number = _EN_ORDINALS[o.group(1).lower()]
    if number is not None:
        return options[number - 1] if 1 <= number <= len(options) else None

    flat = _flat(t)
    for option in options:
        if flat in (_flat(option.key), _flat(option.label), _flat(option.repo)):
            return option
    # "LLM", "SD", "PyMotor" when the options are MindIE components.
    for option in options:
        label = _flat(option.label)
        if label.startswith("mindie") and flat == label[len("mindie"):]:
            return option

    kb = kb or load_knowledge_base()
    low = t.lower()
    by_repo = {o.repo: o for o in options}
    named = {r for r in named_repositories(t, kb, low) if r in by_repo}
    if VLLM in by_repo and (_bare_vllm(t, low, kb) or (not named and _UPSTREAM.search(t, low))):
        named.add(VLLM)
    # Two names ("vllm-ascend and vllm") are not a choice.
    return by_repo[named.pop()] if len(named) == 1 else None
