"""The offline answer: quick diagnostic from the built-in knowledge base.

`diagnose(text)` matches a message against the knowledge base (error codes,
problem patterns, incompatible feature combinations, version matrix, chips);
the research agent's `lookup_diagnostics` tool calls it. `triage(...)` turns a
diagnosis into a complete Markdown answer in the user's language for when no
LLM is configured: conclusion first, then the evidence, the next steps and
what to send next. Every fact shown carries its knowledge-base source.

Pure: no I/O besides the (cached) knowledge base; the user's own text is never
echoed back, only values extracted by strict patterns.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Literal

from core.knowledge_base import (
    Chip,
    ChecklistItem,
    ErrorCode,
    Incompatibility,
    KnowledgeBase,
    MatrixRow,
    ProblemPattern,
    TextFact,
    load_knowledge_base,
)
from core.messages import Language, Source
from core.signals import Signals, extract_signals

VerdictStatus = Literal["match", "mismatch", "unknown", "info", "expected"]

MAX_PATTERNS = 2
_ASCII_EDGE = re.compile(r"[A-Za-z0-9]")


# ------------------------------------------------------------------ results


@dataclass(frozen=True)
class VersionVerdict:
    """One comparison against the compatibility matrix.

    component: vllm | cann | torch | torch_npu | python | vllm-ascend.
    For status "info", `expected` lists vllm-ascend releases that fit `found` (a vLLM version).
    """

    status: VerdictStatus
    component: str
    found: str
    expected: str
    vllm_ascend: str
    row: MatrixRow | None
    sources: tuple[str, ...]


@dataclass(frozen=True)
class DiagnosticReport:
    signals: Signals
    error_codes: tuple[ErrorCode, ...]
    unknown_codes: tuple[str, ...]
    patterns: tuple[ProblemPattern, ...]
    incompatibilities: tuple[Incompatibility, ...]
    version_verdicts: tuple[VersionVerdict, ...]
    chips: tuple[Chip, ...]
    checklist: tuple[ChecklistItem, ...]
    sources: tuple[Source, ...]
    policy: TextFact | None = None  # the matrix rule, when a version verdict needs it

    @property
    def is_problem(self) -> bool:
        """The message reports a failure (as opposed to a how-to question)."""
        tokens = self.signals.tokens
        return bool(
            self.error_codes or self.unknown_codes or self.incompatibilities
            or {"error", "oom", "garbled_output"} & tokens
            or any(v.status in ("mismatch", "unknown") for v in self.version_verdicts)
        )

    @property
    def has_findings(self) -> bool:
        return bool(
            self.error_codes or self.unknown_codes or self.patterns or self.incompatibilities
            or self.version_verdicts or self.chips
        )

    def to_markdown(self, language: Language) -> str:
        """The findings as Markdown, each with its sources (for the research agent's tool)."""
        t = _Text(language)
        parts = [_render_signals(self.signals, t)]
        parts += _render_findings(self, t)
        if not self.has_findings:
            parts.append(t("no_findings"))
        if self.sources:
            parts.append(t("sources_heading") + "\n" + "\n".join(f"- [{s.title}]({s.url})" for s in self.sources))
        return "\n\n".join(p for p in parts if p)


@dataclass(frozen=True)
class TriageResult:
    text: str  # Markdown
    sources: tuple[Source, ...]
    signals: Signals


# ---------------------------------------------------------------- templates

_T: dict[str, tuple[str, str]] = {
    "conclusion": ("**Conclusion:** ", "**结论：**"),
    "c_version": (
        "The most likely cause is version misalignment: vllm-ascend {va} expects vLLM {expected}, but you run vLLM {found}. "
        "Align both to one row of the compatibility matrix before debugging anything else.",
        "最可能的原因是版本不配套：vllm-ascend {va} 需要 vLLM {expected}，而你使用的是 vLLM {found}。"
        "请先把二者对齐到兼容矩阵的同一行，再排查其他问题。",
    ),
    "c_incompat": (
        "Your setup hits a combination known to break on vllm-ascend: {title}. {workaround}",
        "你的配置命中了 vllm-ascend 上已知有问题的组合：{title}。{workaround}",
    ),
    "c_chip": (
        "Your hardware ({chip}) is not supported by vllm-ascend, so this setup is expected to fail.",
        "你的硬件（{chip}）不被 vllm-ascend 支持，这种配置本身就无法正常工作。",
    ),
    "c_code": (
        "Error {code} ({name}) points to {layer}. {step}",
        "错误码 {code}（{name}）指向{layer}。{step}",
    ),
    "c_other_version": (
        "Your {component} {found} differs from the {expected} pinned for vllm-ascend {va}; align it first, as version drift is the most common root cause.",
        "你的 {component} {found} 与 vllm-ascend {va} 固定的 {expected} 不一致；请先对齐，版本不配套是最常见的根因。",
    ),
    "c_unknown_version": (
        "vllm-ascend {va} is not in the bundled compatibility matrix, so version alignment cannot be checked offline; confirm it against the versioning policy first.",
        "vllm-ascend {va} 不在内置的兼容矩阵中，无法离线核对版本配套；请先对照版本策略文档确认。",
    ),
    "c_pattern": (
        "This looks like **{title}**; the usual causes are {causes}.",
        "这看起来属于**{title}**；常见原因是{causes}。",
    ),
    "c_pattern_howto": (
        "The closest built-in notes are on **{title}** (below); step-by-step instructions for your exact case need the full research mode.",
        "内置知识库中最相关的是下面关于**{title}**的说明；针对你具体情况的逐步指导需要完整研究模式。",
    ),
    "c_nothing_error": (
        "No specific failure signature found in your message. Start with the quick diagnostic checklist below and send the environment details listed at the end.",
        "你的消息中没有找到明确的故障特征。请先按下面的快速排查清单检查，并提供文末列出的环境信息。",
    ),
    "c_nothing": (
        "The built-in knowledge base has no specific entry for this question; below is where to look and what to check.",
        "内置知识库中没有针对这个问题的具体条目；下面列出该去哪里查、需要检查什么。",
    ),
    "or": (" or ", "或"),
    "list_sep": ("; ", "；"),
    "colon": (": ", "："),
    "paren": (" ({text})", "（{text}）"),
    "title_end": (". ", "。"),
    "repos": ("**Where to look:**", "**相关仓库：**"),
    "no_repos": ("No repository was determined for this question.", "尚未确定这个问题涉及的仓库。"),
    "detected": ("**Detected:** ", "**识别到：**"),
    "nothing_detected": ("**Detected:** nothing specific (no versions, chips or error codes).", "**识别到：**无具体信息（没有版本、芯片或错误码）。"),
    "chips": ("chip", "芯片"),
    "codes": ("error codes", "错误码"),
    "features": ("features", "特性"),
    "sep": (" · ", " · "),
    "version_heading": ("### Version alignment", "### 版本配套"),
    "v_match": ("OK: vLLM {found} matches vllm-ascend {va}.", "一致：vLLM {found} 与 vllm-ascend {va} 配套。"),
    "v_mismatch_vllm": (
        "**Mismatch:** vllm-ascend {va} expects vLLM **{expected}**, you have vLLM **{found}**. That release row also pins {row}.",
        "**不配套：**vllm-ascend {va} 需要 vLLM **{expected}**，你使用的是 vLLM **{found}**。该版本行还固定了 {row}。",
    ),
    "v_match_other": ("OK: {component} {found} matches the row of vllm-ascend {va}.", "一致：{component} {found} 与 vllm-ascend {va} 所在行一致。"),
    "v_mismatch_other": (
        "**Mismatch:** {component} {found} differs from **{expected}** in the row of vllm-ascend {va}.",
        "**不一致：**{component} {found} 与 vllm-ascend {va} 所在行的 **{expected}** 不同。",
    ),
    "v_python": (
        "**Mismatch:** Python {found} is outside {expected} required by vllm-ascend {va}.",
        "**不满足：**Python {found} 不在 vllm-ascend {va} 要求的 {expected} 范围内。",
    ),
    "v_python_ok": ("OK: Python {found} is within {expected}.", "一致：Python {found} 在 {expected} 范围内。"),
    "v_unknown": (
        "**Unknown:** vllm-ascend {found} is not in the bundled compatibility matrix (it covers v0.7.3 to v{newest}). Check the release notes and `docs/source/community/versioning_policy.md`; a main-branch build must use the vLLM commit in `.github/vllm-main-verified.commit`.",
        "**未知：**vllm-ascend {found} 不在内置的兼容矩阵中（覆盖 v0.7.3 至 v{newest}）。请查看 release notes 和 `docs/source/community/versioning_policy.md`；main 分支构建必须使用 `.github/vllm-main-verified.commit` 中的 vLLM commit。",
    ),
    "v_info": (
        "vLLM {found} pairs with vllm-ascend {expected} (send your vllm-ascend version to check the rest).",
        "vLLM {found} 对应的 vllm-ascend 版本是 {expected}（请提供 vllm-ascend 版本以核对其余组件）。",
    ),
    "v_expected": (
        "vllm-ascend {va} pairs with vLLM **{expected}**; its row pins {row}.",
        "vllm-ascend {va} 对应 vLLM **{expected}**；该版本行固定了 {row}。",
    ),
    "v_info_none": (
        "vLLM {found} has no vllm-ascend release in the bundled matrix; pick a vLLM version that appears in the matrix.",
        "内置矩阵中没有与 vLLM {found} 对应的 vllm-ascend 版本；请选择矩阵中出现的 vLLM 版本。",
    ),
    "v_policy": ("Rule: {text}", "规则：{text}"),
    "row": ("CANN {cann}, torch {torch} / torch_npu {torch_npu}, Python >={pmin},<{pmax}", "CANN {cann}、torch {torch} / torch_npu {torch_npu}、Python >={pmin},<{pmax}"),
    "codes_heading": ("### Error codes", "### 错误码"),
    "code_layer": ("Layer: {layer}.", "层次：{layer}。"),
    "code_unknown": (
        "`{code}`: not in the built-in table; search the repository's issues for this code together with the operator or model name.",
        "`{code}`：不在内置错误码表中；请在仓库 issue 中用该错误码加算子名或模型名搜索。",
    ),
    "incompat_heading": ("### Known problematic feature combinations", "### 已知有问题的特性组合"),
    "workaround": ("Workaround: {text}", "规避方法：{text}"),
    "patterns_heading": ("### Likely problem patterns", "### 可能的问题类型"),
    "causes": ("Likely causes: {text}.", "可能原因：{text}。"),
    "next_steps": ("Next steps:", "下一步："),
    "hardware_heading": ("### Hardware", "### 硬件"),
    "chip_line": ("**{id}** ({family}, {support}): {notes}", "**{id}**（{family}，{support}）：{notes}"),
    "support_supported": ("supported", "支持"),
    "support_experimental": ("experimental", "实验性支持"),
    "support_unsupported": ("not supported", "不支持"),
    "support_images": ("images available", "已有镜像"),
    "checklist_heading": ("### Quick diagnostic checklist", "### 快速排查清单"),
    "send_heading": ("### What to send next", "### 请提供以下信息"),
    "send_collect_env": (
        "Output of `{command}`. {where} Fields that matter: {fields}.",
        "`{command}` 的输出。{where}重点字段：{fields}。",
    ),
    "send_generic": (
        "Versions of {repos}, CANN, torch / torch_npu and the NPU driver (`npu-smi info`).",
        "{repos}、CANN、torch / torch_npu 及 NPU 驱动（`npu-smi info`）的版本。",
    ),
    "send_chip": ("Your chip / server model (e.g. Atlas 800I A2 = 910B, Atlas 800I A3 = 910C, Atlas 300I Duo = 310P).", "芯片 / 服务器型号（例如 Atlas 800I A2 = 910B，Atlas 800I A3 = 910C，Atlas 300I Duo = 310P）。"),
    "footer": (
        "_Offline quick triage from the built-in knowledge base. Full research (DeepWiki, GitHub/GitCode issues, source code) needs `ANTHROPIC_API_KEY` to be configured._",
        "_以上为基于内置知识库的离线快速排查。完整研究（DeepWiki、GitHub/GitCode Issue、源码检索）需要配置 `ANTHROPIC_API_KEY`。_",
    ),
    "no_findings": ("No known error code, problem pattern, incompatible combination or version issue matched.", "没有匹配到已知的错误码、问题类型、不兼容组合或版本问题。"),
    "sources_heading": ("Sources:", "来源："),
    "signals_none": ("Signals: none detected.", "识别信息：无。"),
    "signals_prefix": ("Signals: ", "识别信息："),
}

_FEATURE_NAMES = {
    "graph_mode": "graph mode", "aclgraph": "ACLGraph", "full_decode_only": "FULL_DECODE_ONLY", "torchair": "torchair",
    "enforce_eager": "--enforce-eager", "mtp": "MTP", "speculative": "speculative decoding", "eagle": "EAGLE",
    "nz": "NZ layout", "nz_off": "NZ off", "quantization": "quantization", "w8a8": "W8A8", "w4a8": "W4A8", "w4a4": "W4A4",
    "pd_disaggregation": "PD disaggregation", "mooncake": "Mooncake", "lora": "LoRA", "multimodal": "multimodal",
    "oom": "OOM", "garbled_output": "garbled output", "multi_node": "multi-node", "hccl": "HCCL",
    "rl_training": "RL training", "mla": "MLA", "prefix_caching": "prefix caching", "fp16": "fp16",
    "async_scheduling": "async scheduling", "moe": "MoE",
}
_FEATURE_NAMES_ZH = {
    "graph_mode": "图模式", "speculative": "投机推理", "nz": "NZ 格式", "nz_off": "关闭 NZ", "quantization": "量化",
    "pd_disaggregation": "PD 分离", "multimodal": "多模态", "oom": "显存不足", "garbled_output": "输出乱码",
    "multi_node": "多机", "rl_training": "强化学习训练", "prefix_caching": "前缀缓存", "async_scheduling": "异步调度",
}
# Tokens that describe the message rather than the setup; not worth listing.
_HIDDEN_FEATURES = {"error", "install", "max_model_len", "mla_head_check"}
_PACKAGE_NAMES = {
    "vllm": "vLLM", "vllm-ascend": "vllm-ascend", "cann": "CANN", "torch": "torch", "torch_npu": "torch_npu",
    "transformers": "transformers", "python": "Python", "mindie": "MindIE", "triton-ascend": "triton-ascend", "driver": "driver",
}


class _Text:
    def __init__(self, language: Language) -> None:
        self.language: Language = "zh" if language == "zh" else "en"
        self.index = 1 if self.language == "zh" else 0

    def __call__(self, key: str, **values: object) -> str:
        return _T[key][self.index].format(**values)

    def feature(self, token: str) -> str:
        if self.language == "zh" and token in _FEATURE_NAMES_ZH:
            return _FEATURE_NAMES_ZH[token]
        return _FEATURE_NAMES.get(token, token)


# ----------------------------------------------------------- version checks


def _norm_version(v: str) -> str:
    v = v.strip().lower()
    v = v[1:] if v.startswith("v") else v
    return v.split("+", 1)[0]


def _norm_cann(v: str) -> str:
    v = _norm_version(v).upper()
    return re.sub(r"\.(?:B\d+|ALPHA\d*|BETA\d*)$", "", v)


def _py_tuple(v: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", v)[:2])


def _find_row(kb: KnowledgeBase, vllm_ascend: str) -> MatrixRow | None:
    wanted = _norm_version(vllm_ascend)
    return next((r for r in kb.matrix.rows if r.vllm_ascend == wanted), None)


def check_versions(signals: Signals, kb: KnowledgeBase) -> tuple[VersionVerdict, ...]:
    """Compare the versions in a message with the vllm-ascend compatibility matrix."""
    va, vllm = signals.version("vllm-ascend"), signals.version("vllm")
    policy = kb.matrix.policy.source
    out: list[VersionVerdict] = []
    if va:
        row = _find_row(kb, va)
        if row is None:
            newest = kb.matrix.rows[0].vllm_ascend
            return (VersionVerdict("unknown", "vllm-ascend", _norm_version(va), newest, _norm_version(va), None, (policy,)),)
        src = (row.source,)
        shown_va = row.vllm_ascend
        if vllm:
            found = _norm_version(vllm)
            status: VerdictStatus = "match" if found in row.vllm else "mismatch"
            out.append(VersionVerdict(status, "vllm", found, " / ".join(row.vllm), shown_va, row, src))
        else:
            out.append(VersionVerdict("expected", "vllm", "", " / ".join(row.vllm), shown_va, row, src))
        cann = signals.version("cann")
        if cann:
            status = "match" if _norm_cann(cann) == _norm_cann(row.cann) else "mismatch"
            out.append(VersionVerdict(status, "cann", cann, row.cann, shown_va, row, src))
        for component, expected in (("torch_npu", row.torch_npu), ("torch", row.torch)):
            found_v = signals.version(component)
            if found_v:
                status = "match" if _norm_version(found_v) == _norm_version(expected) else "mismatch"
                out.append(VersionVerdict(status, component, found_v, expected, shown_va, row, src))
        python = signals.version("python")
        if python:
            ok = _py_tuple(row.python_min) <= _py_tuple(python) < _py_tuple(row.python_max_exclusive)
            rng = f">={row.python_min},<{row.python_max_exclusive}"
            out.append(VersionVerdict("match" if ok else "mismatch", "python", python, rng, shown_va, row, src))
    elif vllm:
        found = _norm_version(vllm)
        rows = [r for r in kb.matrix.rows if found in r.vllm]
        expected = ", ".join(f"v{r.vllm_ascend}" for r in rows)
        srcs = tuple(dict.fromkeys(r.source for r in rows)) or (policy,)
        out.append(VersionVerdict("info", "vllm-ascend", found, expected, "", None, srcs))
    return tuple(out)


# ------------------------------------------------------------- matching

@dataclass(frozen=True)
class _Keyword:
    word: str  # lowercase
    left_edge: bool  # must not be preceded by an ASCII letter/digit
    right_edge: bool  # must not be followed by one

    def found_in(self, low: str) -> bool:
        # str.find is a fast substring search; checking the edges by hand avoids
        # regexes that start with a lookbehind, which `re` cannot skip through.
        start = low.find(self.word)
        while start != -1:
            end = start + len(self.word)
            if (not self.left_edge or start == 0 or not _ascii_alnum(low[start - 1])) and (
                not self.right_edge or end == len(low) or not _ascii_alnum(low[end])
            ):
                return True
            start = low.find(self.word, start + 1)
        return False


def _ascii_alnum(ch: str) -> bool:
    return ch.isascii() and ch.isalnum()


_PATTERN_CACHE: dict[int, tuple[KnowledgeBase, tuple[tuple[ProblemPattern, tuple[_Keyword, ...]], ...]]] = {}


def _compiled_patterns(kb: KnowledgeBase) -> tuple[tuple[ProblemPattern, tuple[_Keyword, ...]], ...]:
    cached = _PATTERN_CACHE.get(id(kb))
    if cached is not None and cached[0] is kb:
        return cached[1]
    compiled = []
    for p in kb.patterns:
        words = {w.strip().lower() for w in p.keywords_en + p.keywords_zh if w.strip()}
        keywords = tuple(
            _Keyword(w, bool(_ASCII_EDGE.match(w[0])), bool(_ASCII_EDGE.match(w[-1]))) for w in sorted(words)
        )
        compiled.append((p, keywords))
    result = tuple(compiled)
    _PATTERN_CACHE[id(kb)] = (kb, result)
    return result


def _match_patterns(text: str, signals: Signals, kb: KnowledgeBase) -> tuple[ProblemPattern, ...]:
    tokens = signals.tokens
    low = text.lower()
    scored = []
    for index, (pattern, keywords) in enumerate(_compiled_patterns(kb)):
        score = sum(1 for f in pattern.features if f in tokens)
        score += sum(2 for c in pattern.error_codes if c in signals.error_codes)
        score += sum(1 for k in keywords if k.found_in(low))
        if score:
            scored.append((-score, index, pattern))
    scored.sort(key=lambda item: (item[0], item[1]))
    return tuple(p for _, _, p in scored[:MAX_PATTERNS])


def _match_checklist(signals: Signals, kb: KnowledgeBase) -> tuple[ChecklistItem, ...]:
    tokens = signals.tokens
    return tuple(item for item in kb.checklist if any(t in tokens for t in item.triggers))


def diagnose(text: str, *, known_env: dict[str, str] | None = None, kb: KnowledgeBase | None = None) -> DiagnosticReport:
    """Match a message against the knowledge base; every finding keeps its sources."""
    kb = kb or load_knowledge_base()
    if not isinstance(text, str):
        text = ""
    signals = extract_signals(text).with_env(known_env)
    codes, unknown = [], []
    for code in signals.error_codes:
        entry = kb.error_code(code)
        if entry is None:
            unknown.append(code)
        elif entry not in codes:
            codes.append(entry)
    tokens = signals.tokens
    incompat = tuple(c for c in kb.incompatibilities if c.matches(tokens))
    verdicts = check_versions(signals, kb)
    chips = tuple(c for c in (kb.chip(cid) for cid in signals.chips) if c is not None)
    patterns = _match_patterns(text, signals, kb)
    checklist = _match_checklist(signals, kb)

    refs: list[str] = []
    for v in verdicts:
        refs.extend(v.sources)
    policy = kb.matrix.policy if any(v.status in ("mismatch", "unknown", "info") for v in verdicts) else None
    if policy is not None:
        refs.append(policy.source)
    for c in codes:
        refs.extend(c.sources)
    for i in incompat:
        refs.extend(i.sources)
    for p in patterns:
        refs.extend(p.sources)
    for chip in chips:
        refs.append(chip.source)
    for item in checklist:
        refs.extend(item.sources)
    sources = _sources(kb, refs)
    return DiagnosticReport(signals, tuple(codes), tuple(unknown), patterns, incompat, verdicts, chips, checklist, sources, policy)


def _sources(kb: KnowledgeBase, refs: list[str]) -> tuple[Source, ...]:
    return _unique_sources(kb.source(ref) for ref in refs)


def _unique_sources(sources: Iterable[Source]) -> tuple[Source, ...]:
    seen: dict[str, Source] = {}
    for source in sources:
        seen.setdefault(source.url, source)
    return tuple(seen.values())


# -------------------------------------------------------------- rendering


def _render_signals(signals: Signals, t: _Text) -> str:
    items = _signal_items(signals, t)
    return t("signals_prefix") + t("sep").join(items) if items else t("signals_none")


def _signal_items(signals: Signals, t: _Text) -> list[str]:
    items = []
    if signals.chips:
        items.append(f"{t('chips')} " + ", ".join(signals.chips))
    for pkg, version in signals.versions:
        items.append(f"{_PACKAGE_NAMES.get(pkg, pkg)} {version}")
    if signals.error_codes:
        items.append(f"{t('codes')} " + ", ".join(f"`{c}`" for c in signals.error_codes))
    shown = [t.feature(f) for f in signals.features if f not in _HIDDEN_FEATURES]
    if signals.max_model_len is not None:
        shown.append(f"max_model_len={signals.max_model_len}")
    if shown:
        joiner = "、" if t.language == "zh" else ", "
        items.append(t("features") + t("colon") + joiner.join(shown))
    return items


def _row_text(row: MatrixRow, t: _Text) -> str:
    return t("row", cann=row.cann, torch=row.torch, torch_npu=row.torch_npu, pmin=row.python_min, pmax=row.python_max_exclusive)


def _render_verdict(v: VersionVerdict, t: _Text) -> str:
    name = _PACKAGE_NAMES.get(v.component, v.component)
    if v.status == "unknown":
        return t("v_unknown", found=v.found, newest=v.expected)
    if v.status == "info":
        if v.expected:
            return t("v_info", found=v.found, expected=v.expected)
        return t("v_info_none", found=v.found)
    if v.status == "expected":
        return t("v_expected", va=v.vllm_ascend, expected=v.expected, row=_row_text(v.row, t) if v.row else "")
    if v.component == "vllm":
        if v.status == "match":
            return t("v_match", found=v.found, va=v.vllm_ascend)
        row = _row_text(v.row, t) if v.row else ""
        return t("v_mismatch_vllm", va=v.vllm_ascend, expected=v.expected, found=v.found, row=row)
    if v.component == "python":
        key = "v_python_ok" if v.status == "match" else "v_python"
        return t(key, found=v.found, expected=v.expected, va=v.vllm_ascend)
    key = "v_match_other" if v.status == "match" else "v_mismatch_other"
    return t(key, component=name, found=v.found, expected=v.expected, va=v.vllm_ascend)


def _commands_block(commands: tuple[str, ...] | list[str]) -> str:
    return "```bash\n" + "\n".join(commands) + "\n```" if commands else ""


def _render_findings(report: DiagnosticReport, t: _Text) -> list[str]:
    lang = t.language
    parts: list[str] = []
    if report.version_verdicts:
        lines = [f"- {_render_verdict(v, t)}" for v in report.version_verdicts]
        if report.policy is not None:
            lines.append(f"- {t('v_policy', text=report.policy.text(lang))}")
        parts.append(t("version_heading") + "\n" + "\n".join(lines))
    if report.error_codes or report.unknown_codes:
        blocks = []
        for c in report.error_codes:
            steps = "\n".join(f"   {i}. {s}" for i, s in enumerate(c.steps(lang), 1))
            block = f"- `{c.code}` {c.name}{t('colon')}{c.meaning(lang)} {t('code_layer', layer=c.layer(lang))}\n   {t('next_steps')}\n{steps}"
            if c.commands:
                block += "\n" + _indent(_commands_block(c.commands), "   ")
            blocks.append(block)
        blocks += [f"- {t('code_unknown', code=code)}" for code in report.unknown_codes]
        parts.append(t("codes_heading") + "\n" + "\n".join(blocks))
    if report.incompatibilities:
        lines = [
            f"- **{i.title(lang)}**{t('colon')}{i.explanation(lang)} {t('workaround', text=i.workaround(lang))}"
            for i in report.incompatibilities
        ]
        parts.append(t("incompat_heading") + "\n" + "\n".join(lines))
    if report.patterns:
        blocks = []
        for p in report.patterns:
            steps = "\n".join(f"   {i}. {s}" for i, s in enumerate(p.steps(lang), 1))
            block = f"- **{p.title(lang)}**{t('title_end')}{t('causes', text=t('list_sep').join(p.causes(lang)))}\n   {t('next_steps')}\n{steps}"
            if p.commands:
                block += "\n" + _indent(_commands_block(p.commands), "   ")
            blocks.append(block)
        parts.append(t("patterns_heading") + "\n" + "\n".join(blocks))
    if report.chips:
        lines = [
            "- " + t("chip_line", id=c.id, family=c.family, support=t(f"support_{c.support}"), notes=c.notes(lang))
            for c in report.chips
        ]
        parts.append(t("hardware_heading") + "\n" + "\n".join(lines))
    checklist = _render_checklist(report, t)
    if checklist:
        parts.append(checklist)
    return parts


def _indent(text: str, prefix: str) -> str:
    return "\n".join(prefix + line for line in text.splitlines())


def _conclusion(report: DiagnosticReport, t: _Text, kb: KnowledgeBase) -> str:
    lang = t.language
    for v in report.version_verdicts:
        if v.component == "vllm" and v.status == "mismatch":
            return t("c_version", va=v.vllm_ascend, expected=v.expected, found=v.found)
    if report.incompatibilities:
        first = report.incompatibilities[0]
        return t("c_incompat", title=first.title(lang), workaround=first.workaround(lang))
    for chip in report.chips:
        if chip.support == "unsupported":
            return t("c_chip", chip=f"{chip.id}, {chip.family}")
    if report.error_codes:
        c = report.error_codes[0]
        return t("c_code", code=c.code, name=c.name, layer=_lower_first(c.layer(lang), lang), step=c.steps(lang)[0])
    for v in report.version_verdicts:
        if v.status == "mismatch":
            return t("c_other_version", component=_PACKAGE_NAMES.get(v.component, v.component), found=v.found, expected=v.expected, va=v.vllm_ascend)
        if v.status == "unknown":
            return t("c_unknown_version", va=v.found)
    if report.patterns:
        p = report.patterns[0]
        if not report.is_problem:
            return t("c_pattern_howto", title=p.title(lang))
        causes = t("or").join(_lower_first(c, lang) for c in p.causes(lang)[:2])
        return t("c_pattern", title=p.title(lang), causes=causes)
    if "error" in report.signals.tokens:
        return t("c_nothing_error")
    return t("c_nothing")


def _lower_first(text: str, language: Language) -> str:
    # "Operator execution..." reads better mid-sentence as "operator execution..."; keep acronyms.
    if language == "zh" or not text or (len(text) > 1 and text[1].isupper()):
        return text
    return text[0].lower() + text[1:]


def _render_repos(repos: tuple[str, ...], t: _Text, kb: KnowledgeBase) -> tuple[str, list[str]]:
    lines, refs = [], []
    for name in repos:
        repo = kb.repository(name)
        if repo is None:
            continue
        lines.append(f"- [{repo.display_name}]({repo.github_url}){t('colon')}{repo.description(t.language)}")
        refs.append(repo.source)
    if not lines:
        return t("no_repos"), refs
    return t("repos") + "\n" + "\n".join(lines), refs


def _render_checklist(report: DiagnosticReport, t: _Text) -> str:
    if not report.checklist:
        return ""
    lang = t.language
    lines = []
    for item in report.checklist:
        line = f"{item.number}. **{item.title(lang)}**{t('colon')}{item.body(lang)}"
        if item.id == "sync_error_reporting" and item.commands:
            line += "\n" + _indent(_commands_block(item.commands), "   ")
        lines.append(line)
    return t("checklist_heading") + "\n" + "\n".join(lines)


def _render_send_next(repos: tuple[str, ...], report: DiagnosticReport, t: _Text, kb: KnowledgeBase) -> tuple[str, list[str]]:
    lang = t.language
    env = kb.collect_env
    refs: list[str] = []
    lines = []
    uses_vllm_ascend = not repos or "vllm-project/vllm-ascend" in repos or (
        "vllm-project/vllm" in repos and bool(report.signals.chips)
    )
    if uses_vllm_ascend:
        fields = t("list_sep").join(f"`{f.printed_as}`{t('paren', text=f.why(lang))}" for f in env.fields if f.key)
        lines.append(f"- {t('send_collect_env', command=env.command, where=env.where(lang), fields=fields)}")
        refs.append(env.source)
    else:
        names = [kb.repository(r).display_name for r in repos if kb.repository(r) is not None]
        lines.append(f"- {t('send_generic', repos=', '.join(names))}")
    if not report.signals.chips:
        lines.append(f"- {t('send_chip')}")
    if report.is_problem:
        lines += [f"- {item}" for item in env.also_ask(lang)]
    return t("send_heading") + "\n" + "\n".join(lines), refs


def triage(
    question: str,
    decision_repos: tuple[str, ...],
    language: Language,
    *,
    known_env: dict[str, str] | None = None,
    kb: KnowledgeBase | None = None,
) -> TriageResult:
    """A complete offline answer in Markdown, in the user's language."""
    kb = kb or load_knowledge_base()
    t = _Text(language)
    report = diagnose(question, known_env=known_env, kb=kb)

    repos_text, repo_refs = _render_repos(tuple(decision_repos), t, kb)
    detected = _signal_items(report.signals, t)
    detected_text = t("detected") + t("sep").join(detected) if detected else t("nothing_detected")
    send_text, send_refs = _render_send_next(tuple(decision_repos), report, t, kb)

    parts = [
        t("conclusion") + _conclusion(report, t, kb),
        repos_text,
        detected_text,
        *_render_findings(report, t),
        send_text,
        t("footer"),
    ]
    text = "\n\n".join(p for p in parts if p)
    sources = _unique_sources((*report.sources, *_sources(kb, repo_refs + send_refs)))
    return TriageResult(text=text, sources=sources, signals=report.signals)
