"""Facts pulled out of a user's message: error codes, chips, versions, features.

Pure and fast: every pattern is compiled once, has bounded repetition and no
nested quantifiers, so extraction stays linear in the input (a 200 KB log
paste is fine). Word boundaries are ASCII-only on purpose: in "开启MTP后" the
Chinese characters count as word characters for `\\b`, which would hide "MTP".
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

# Canonical chip ids (see core/knowledge/hardware.json).
CHIP_IDS = frozenset({"910B", "910C", "310P", "310B", "910", "950"})

# Tokens the knowledge base may refer to (features plus derived tokens).
FEATURE_TOKENS = frozenset(
    {
        "graph_mode", "aclgraph", "full_decode_only", "torchair", "enforce_eager",
        "mtp", "speculative", "eagle", "nz", "nz_off", "quantization", "w8a8", "w4a8", "w4a4",
        "pd_disaggregation", "mooncake", "lora", "multimodal", "max_model_len", "oom",
        "garbled_output", "multi_node", "hccl", "rl_training", "mla", "mla_head_check",
        "prefix_caching", "fp16", "async_scheduling", "install", "moe",
        # derived
        "error", "acl_error", "versions_given",
    }
)

# Packages whose versions we track, in display order.
PACKAGES = (
    "vllm", "vllm-ascend", "cann", "torch", "torch_npu", "transformers", "python", "mindie", "triton-ascend", "mooncake", "driver",
)

_A = r"(?:(?<![A-Za-z0-9_])|(?<=\d[x×]))"  # ASCII word start; "8x910B" counts cards
_Z = r"(?![A-Za-z0-9_])"  # ASCII word end
_I = re.IGNORECASE


def _w(pattern: str) -> str:
    return f"{_A}(?:{pattern}){_Z}"


@dataclass(frozen=True)
class Guarded:
    """A regex that only runs when one of its literal needles occurs in the lowercased text.

    Python's `re` cannot skip ahead in case-insensitive alternations that start
    with a lookbehind, so scanning a 200 KB log with dozens of them is slow;
    `needle in lowered_text` is a fast substring search. Every match of
    `pattern` must contain at least one needle (lowercase) - tests check that
    guarding never changes a result.
    """

    pattern: re.Pattern[str]
    needles: tuple[str, ...]

    def present(self, low: str) -> bool:
        return any(n in low for n in self.needles)

    def search(self, text: str, low: str) -> re.Match[str] | None:
        return self.pattern.search(text) if self.present(low) else None

    def finditer(self, text: str, low: str) -> Iterator[re.Match[str]]:
        return self.pattern.finditer(text) if self.present(low) else iter(())


def guarded(pattern: str, needles: Iterable[str], flags: int = _I) -> Guarded:
    return Guarded(re.compile(pattern, flags), tuple(n.lower() for n in needles))


# ------------------------------------------------------------------ error codes

_CODE_AFTER_CONTEXT = guarded(
    r"(?:error[ _]?code|err[ _]?code|errcode|retcode|status|result|错误码|错误代码|返回码)"
    r"(?:[ \t]{0,3}(?:is|was|为|是))?[ \t]{0,3}[:=：]?[ \t]{0,3}\[?(\d{6})(?!\d)",
    ("code", "status", "result", "错误码", "错误代码", "返回码"),
)
# ACL runtime (107/207/507), aclnn (161/361/561) and the 503xxx transport family,
# standalone. Not after '.', ':' or '-' so timestamps and dates are skipped.
_FAMILIES = ("107", "207", "507", "561", "161", "361", "503")
_CODE_FAMILY = guarded(r"(?<![\d.:/\-])((?:107|207|507|561|161|361|503)\d{3})(?!\d)", _FAMILIES, 0)
# CANN message codes (EZ9999, EI0006...) and torch_npu codes (ERR00100). Case-sensitive;
# the literal comes first so `re` can jump between capital E's; the left edge is checked in code.
_CODE_ALPHA = re.compile(r"E(?:[A-Z]\d{4}|RR\d{5})(?![A-Za-z0-9])")

# ------------------------------------------------------------------------ chips

_CHIPS: tuple[tuple[str, Guarded], ...] = (
    ("310B", guarded(_w(r"310b\d?|(?:atlas[ \-]?)?200i[ \-]?a2"), ("310b", "200i"))),
    ("910", guarded(_w(r"910[ \-]?pro[ \-]?[ab]|910probs?|(?:ascend[ \-]?)?910a"), ("910",))),
    (
        "910B",
        guarded(
            _w(r"(?:ascend)?910b\d?|(?:atlas[ \-]?)?800[it][ \-]?a2|atlas[ \-]?(?:900[ \-]?)?a2|300t[ \-]?a2|200t[ \-]?a2")
            + r"|(?<!200I )(?<!200i )(?<![A-Za-z0-9_\-])A2(?![A-Za-z0-9_])",
            ("910b", "a2"),
        ),
    ),
    (
        "910C",
        guarded(
            _w(r"910c|(?:ascend)?910_93\d*|(?:atlas[ \-]?)?800[it][ \-]?a3|atlas[ \-]?(?:900?0?[ \-]?)?a3|superpod")
            + r"|(?<![A-Za-z0-9_\-])A3(?![A-Za-z0-9_])|(?<=-)a3(?![A-Za-z0-9_])",
            ("910c", "910_93", "a3", "superpod"),
        ),
    ),
    (
        "310P",
        guarded(_w(r"(?:ascend)?310p\d?|300i[ \-]?(?:duo|pro)|atlas[ \-]?300i|300v(?:[ \-]?pro)?|310i[ \-]?duo"), ("310p", "300i", "300v", "310i")),
    ),
    ("950", guarded(_w(r"ascend[ \-]?950\w{0,6}|950pr|950dt|atlas[ \-]?a5|950[ \t]?(?:卡|cards?|npus?)"), ("950", "a5"))),
)

# --------------------------------------------------------------------- versions

_VER = r"v?(?P<v>\d{1,3}\.\d{1,3}(?:\.\d{1,4}){0,2}(?:\.?rc\d{1,3})?(?:\.post\d{1,3})?(?:\.(?:dev|alpha|beta|b)\d{1,12})?(?:\+[\w.]{1,40})?)"
_CONNECT = r"[ \t]{0,3}(?:[:=：]=?|>=|~=|==)?[ \t]{0,3}(?:(?:version|ver\.?|版本号?|is|为|是|:|：|=)[ \t]{0,3}){0,3}"

# (package, name pattern, needle)
_NAMES: tuple[tuple[str, str, str], ...] = (
    ("vllm-ascend", r"vllm[ _\-]?ascend", "vllm"),
    ("vllm", r"(?<![\w\-./])vllm(?![ _\-]?(?:ascend|project|omni|mindspore|workspace)|[\w\-])", "vllm"),
    ("torch_npu", r"torch[ _\-]?npu", "npu"),
    ("torch", r"(?<![\w\-])(?:py)?torch(?![ _\-]?npu|[\w\-])", "torch"),
    ("transformers", r"(?<![\w\-])transformers(?![\w\-])", "transformers"),
    ("mindie", r"(?<![\w\-])mindie(?![ _\-]?(?:turbo|sd|llm|motor|pymotor|torch|rt)|[\w\-])", "mindie"),
    ("triton-ascend", r"triton[ _\-]ascend", "triton"),
    ("mooncake", r"(?<![\w\-])mooncake(?:[ _\-]transfer[ _\-]engine)?(?![\w\-])", "mooncake"),
)

# pip freeze / pip list / collect_env lines: the most reliable source, read first.
_LINE_VERSIONS = tuple(
    (
        pkg,
        guarded(
            r"(?m)^[ \t]*(?:\[(?:pip3?|conda)\][ \t]{0,3})?" + name + r"(?:[ \t]{1,80}|[ \t]{0,3}==[ \t]{0,3})" + _VER + r"[ \t]*$",
            (needle,),
        ),
    )
    for pkg, name, needle in _NAMES
)
_PROSE_VERSIONS = tuple((pkg, guarded(name + _CONNECT + _VER + r"(?![\w.])", (needle,))) for pkg, name, needle in _NAMES)

_CANN = (
    guarded(r"ascend[ _\-]cann[ _\-]toolkit[ \t]*\r?\n[ \t]*version[ \t]*=[ \t]*" + _VER, ("cann",)),
    guarded(r"(?<![\w\-])cann(?:[ _\-]?(?:toolkit|version|版本号?))*" + _CONNECT + r"(?:cann[ \t]{0,2})?" + _VER + r"(?![\w.])", ("cann",)),
    guarded(r"ascend[ _\-]cann[ _\-]toolkit_" + _VER, ("cann",)),
)
_PYTHON = guarded(r"(?<![\w\-])python[ \t]{0,3}(?:version[ \t]{0,3}[:=：]?[ \t]{0,3})?(?P<v>3\.\d{1,2}(?:\.\d{1,2})?)(?![\w.])", ("python",))
_DRIVER = (
    guarded(r"npu-smi[ \t]{1,10}(?P<v>\d{1,3}\.\d{1,3}\.\w{1,12})", ("npu-smi",)),
    guarded(r"(?:npu[ _]driver|driver|驱动)(?:[ _]?(?:version|版本号?))?[ \t]{0,3}[:=：]?[ \t]{0,3}v?(?P<v>\d{1,3}\.\d{1,3}\.\w{1,12})", ("driver", "驱动")),
)

# --------------------------------------------------------------------- features

_FEATURES: tuple[tuple[str, Guarded], ...] = (
    ("aclgraph", guarded(_A + r"acl[ _\-]?graph", ("acl",))),
    ("full_decode_only", guarded(r"full[ _\-]?decode[ _\-]?only", ("full",))),
    ("torchair", guarded(r"torchair|torch_air", ("torch",))),
    (
        "graph_mode",
        guarded(
            r"graph[ _\-]?mode|图模式|入图|图捕获|cudagraph|npugraph|acl[ _\-]?graph|torchair|full[ _\-]?decode[ _\-]?only|"
            r"piecewise|capture[ _]sizes|graph[ _\-]capture|capture_begin|capture_end",
            ("graph", "图模式", "入图", "图捕获", "torchair", "full", "piecewise", "capture"),
        ),
    ),
    ("enforce_eager", guarded(r"enforce[ _\-]?eager|eager[ _\-]?mode|eager模式|单算子模式", ("eager", "单算子"))),
    ("mtp", guarded(_w(r"mtp|deepseek_mtp") + r"|multi[ \-]?token[ \-]?prediction", ("mtp", "multi"))),
    (
        "speculative",
        guarded(r"speculative|spec(?:ulative)?[ _\-]decod|投机|推测解码|num_speculative_tokens|draft[ _\-]model", ("spec", "投机", "推测解码", "draft")),
    ),
    ("eagle", guarded(_w(r"eagle[ \-_]?3?"), ("eagle",))),
    ("nz", guarded(r"VLLM_ASCEND_ENABLE_NZ[ \t]*=[ \t]*[12]|weight_nz_mode\W{0,4}[12]|FRACTAL_NZ|" + _A + r"NZ(?![A-Za-z0-9_])", ("nz",), 0)),
    ("nz_off", guarded(r"VLLM_ASCEND_ENABLE_NZ[ \t]*=[ \t]*0|weight_nz_mode\W{0,4}0", ("nz",), 0)),
    ("w8a8", guarded(r"(?<![A-Za-z0-9])w8a8(?![0-9])", ("w8a8",))),
    ("w4a8", guarded(r"(?<![A-Za-z0-9])w4a8(?![0-9])", ("w4a8",))),
    ("w4a4", guarded(r"(?<![A-Za-z0-9])w4a4(?![0-9])", ("w4a4",))),
    (
        "quantization",
        guarded(
            r"quantiz|量化|" + _w(r"awq|gptq|int8|int4|fp8") + r"|(?<![A-Za-z0-9])w\d{1,2}a\d{1,2}|compressed[ _\-]tensors|modelslim",
            ("quantiz", "量化", "awq", "gptq", "int8", "int4", "fp8", "compressed", "modelslim") + tuple(f"w{d}" for d in range(10)),
        ),
    ),
    (
        "pd_disaggregation",
        guarded(
            _A + r"pd[ _\-]?(?:disagg|分离)|prefill[ _\-]?decode[ _\-]?(?:disagg|分离)|disaggregat|kv_transfer_config|kv_connector|"
            r"kv[ _]?(?:producer|consumer)|" + _w(r"\d{1,2}p\d{1,2}d|xpyd") + r"|P/D",
            ("pd", "prefill", "disaggregat", "kv_", "producer", "consumer", "xpyd", "p/d") + tuple(f"p{d}" for d in range(10)),
        ),
    ),
    ("mooncake", guarded(r"mooncake", ("mooncake",))),
    ("lora", guarded(_A + r"(?:multi[ \-]?)?lora(?![A-Za-z])", ("lora",))),
    (
        "multimodal",
        guarded(
            r"multi[ \-]?modal|多模态|视觉|图像|视频|图片输入|image[ _]url|image input|video|vision|" + _w(r"vl|omni|llava|internvl") + r"|qwen[\d.]{0,4}[ \-_]?vl",
            ("multi", "多模态", "视觉", "图像", "视频", "图片输入", "image", "video", "vision", "vl", "omni", "llava"),
        ),
    ),
    (
        "oom",
        guarded(
            r"out[ _\-]?of[ _\-]?memory|" + _w(r"oom") + r"|显存不足|内存不足|爆显存|显存溢出|显存不够|memory allocation failed|" + _w(r"207001|207018"),
            ("memory", "oom", "显存", "内存", "207001", "207018"),
        ),
    ),
    (
        "garbled_output",
        guarded(
            r"乱码|garbled|gibberish|!!!!|！！！！|重复输出|repetitive|repeating|胡言乱语|nonsense|输出为空|empty output|答非所问",
            ("乱码", "garbled", "gibberish", "!!!!", "！！！！", "重复输出", "repetitive", "repeating", "胡言乱语", "nonsense", "输出为空", "empty output", "答非所问"),
        ),
    ),
    (
        "multi_node",
        guarded(
            r"multi[ \-]?node|multiple nodes|two nodes|" + _w(r"\d{1,3} nodes") + r"|多机|双机|两机|跨机|多节点|两台|" + _w(r"ray"),
            ("multi", "nodes", "多机", "双机", "两机", "跨机", "多节点", "两台", "ray"),
        ),
    ),
    ("hccl", guarded(r"hccl|hccn", ("hccl", "hccn"))),
    (
        "rl_training",
        guarded(
            _w(r"verl|openrlhf|grpo|ppo|dapo") + r"|reinforcement learning|强化学习|rollout|训推",
            ("verl", "openrlhf", "grpo", "ppo", "dapo", "reinforcement", "强化学习", "rollout", "训推"),
        ),
    ),
    ("rl_training", guarded(_w("RL"), ("rl",), 0)),
    ("mla", guarded(_w("MLA") + r"|deepseek[ \-_]?v2[ \-_]?lite|MLA only support|numHeads ?/ ?numKvHeads", ("mla", "deepseek", "numheads"))),
    ("mla_head_check", guarded(r"MLA only support|numHeads ?/ ?numKvHeads", ("mla only", "numheads"))),
    ("prefix_caching", guarded(r"(?<!no-enable-)(?<!no_enable_)prefix[ _\-]?cach|前缀缓存", ("prefix", "前缀缓存"))),
    ("fp16", guarded(r"float16|" + _w(r"fp16"), ("float16", "fp16"))),
    ("async_scheduling", guarded(r"async[ _\-]?scheduling", ("async",))),
    (
        "install",
        guarded(
            r"pip install|" + _w(r"install(?:ing|ation|ed)?|build(?:ing)?|cmake|wheel") + r"|安装|编译|setup\.py|docker pull",
            ("install", "build", "cmake", "wheel", "安装", "编译", "setup.py", "docker pull"),
        ),
    ),
    ("moe", guarded(_w(r"moe|ep") + r"|expert[ _\-]?parallel|专家并行|MoeDistribute", ("moe", "ep", "expert", "专家并行"))),
    (
        "error",
        guarded(
            _w(r"error|errors|exception|traceback|failed|failure|fails|fail|crash(?:ed|es)?|coredump|core dumped|abort(?:ed)?|raise[sd]|throws|thrown")
            + r"|(?<=[a-z])(?:error|exception)(?![a-z])|invalid[a-z]{3,20}(?![a-z])"
            + r"|报错|错误|失败|异常|崩溃|挂了|挂掉|起不来",
            ("error", "exception", "traceback", "fail", "crash", "coredump", "core dump", "abort", "raise", "throw", "invalid", "报错", "错误", "失败", "异常", "崩溃", "挂了", "挂掉", "起不来"),
        ),
    ),
)

_MAX_MODEL_LEN = guarded(r"max[ _\-]?model[ _\-]?len(?:gth)?[\"' \t]{0,3}[:=]?[ \t\"']{0,3}(\d{2,9})([kK])?(?!\d)", ("max",))

_PATH_HINT = guarded(
    r"(?<![\w\-.])(vllm_ascend|vllm|sglang|mindie_llm|mindie_turbo|mindiesd|msmodelslim|atb_llm|torch_npu|torchair|mooncake)"
    r"(?=[/\\][\w.]|\.[A-Za-z_])",
    ("vllm", "sglang", "mindie", "msmodelslim", "atb_llm", "torch_npu", "torchair", "mooncake"),
    0,
)


def find_error_codes(text: str, low: str | None = None) -> list[tuple[int, str]]:
    """(position, code) for ACL numeric codes, CANN message codes and torch_npu codes."""
    low = text.lower() if low is None else low
    found = [(m.start(1), m.group(1)) for m in _CODE_AFTER_CONTEXT.finditer(text, low)]
    found += [(m.start(1), m.group(1)) for m in _CODE_FAMILY.finditer(text, low)]
    if "e" in low:
        for m in _CODE_ALPHA.finditer(text):
            before = text[m.start() - 1] if m.start() else " "
            if not (before.isascii() and before.isalnum()):
                found.append((m.start(), m.group(0)))
    return found


@dataclass(frozen=True)
class Signals:
    """What a message tells us, in order of first appearance."""

    error_codes: tuple[str, ...] = ()
    chips: tuple[str, ...] = ()
    versions: tuple[tuple[str, str], ...] = ()  # (package, version), one per package
    features: tuple[str, ...] = ()
    max_model_len: int | None = None
    path_hints: tuple[str, ...] = ()

    def version(self, package: str) -> str | None:
        return next((v for p, v in self.versions if p == package), None)

    @property
    def tokens(self) -> frozenset[str]:
        """Feature tokens plus chip:<id> and derived tokens, for knowledge-base matching."""
        out = set(self.features)
        out.update(f"chip:{c}" for c in self.chips)
        if self.error_codes:
            out.add("acl_error")
            out.add("error")
        if self.versions:
            out.add("versions_given")
        if self.max_model_len is not None:
            out.add("max_model_len")
        return frozenset(out)

    @property
    def is_empty(self) -> bool:
        return not (self.error_codes or self.chips or self.versions or self.features or self.path_hints)

    def with_env(self, known_env: dict[str, str] | None) -> "Signals":
        """Fill in versions/chip the user gave earlier in the conversation (the text wins).

        The session's dict is written by core/environment.py (`merge_session_env`)."""
        if not known_env:
            return self
        versions = dict(self.versions)
        for key, value in known_env.items():
            pkg = _normalise_package(key)
            if pkg and pkg not in versions and isinstance(value, str) and value.strip():
                versions[pkg] = value.strip().lstrip("vV")
        chips = list(self.chips)
        remembered = known_env.get("chip")
        # Sessions may keep several chips as "910B,310P".
        for chip in remembered.split(",") if isinstance(remembered, str) else ():
            chip = chip.strip().upper()
            if chip in CHIP_IDS and chip not in chips:
                chips.append(chip)
        ordered = tuple((p, versions[p]) for p in PACKAGES if p in versions)
        return Signals(self.error_codes, tuple(chips), ordered, self.features, self.max_model_len, self.path_hints)


def _normalise_package(name: str) -> str | None:
    key = name.strip().lower().replace(" ", "_")
    aliases = {
        "vllm": "vllm", "vllm-ascend": "vllm-ascend", "vllm_ascend": "vllm-ascend", "cann": "cann",
        "torch": "torch", "pytorch": "torch", "torch_npu": "torch_npu", "torch-npu": "torch_npu",
        "transformers": "transformers", "python": "python", "mindie": "mindie",
        "triton-ascend": "triton-ascend", "triton_ascend": "triton-ascend", "driver": "driver",
        "mooncake": "mooncake", "mooncake-transfer-engine": "mooncake",
    }
    return aliases.get(key)


def _ordered_unique(items: list[tuple[int, str]]) -> tuple[str, ...]:
    seen: dict[str, int] = {}
    for pos, item in items:
        if item not in seen or pos < seen[item]:
            seen[item] = pos
    return tuple(sorted(seen, key=seen.__getitem__))


def _clean_version(raw: str) -> str:
    return raw.strip().rstrip(".")


def _versions(text: str, low: str) -> tuple[tuple[str, str], ...]:
    found: dict[str, str] = {}
    for pkg, pattern in _LINE_VERSIONS:
        m = pattern.search(text, low)
        if m:
            found[pkg] = _clean_version(m.group("v"))
    for pattern in _CANN:
        if "cann" in found:
            break
        m = pattern.search(text, low)
        if m:
            found["cann"] = _clean_version(m.group("v"))
    for pkg, pattern in _PROSE_VERSIONS:
        if pkg not in found:
            m = pattern.search(text, low)
            if m:
                found[pkg] = _clean_version(m.group("v"))
    if "python" not in found:
        m = _PYTHON.search(text, low)
        if m:
            found["python"] = m.group("v")
    for pattern in _DRIVER:
        if "driver" in found:
            break
        m = pattern.search(text, low)
        if m:
            found["driver"] = m.group("v")
    return tuple((p, found[p]) for p in PACKAGES if p in found)


def version_mentions(text: str, low: str | None = None) -> list[tuple[int, str, str]]:
    """Every (position, package, version) the version patterns read, in text order, duplicates kept.

    `_versions` keeps one value per package for routing and matching; a reader of pasted
    environments (core/environment.py) needs all of them to see conflicts and let the last win."""
    low = text.lower() if low is None else low
    found: list[tuple[int, str, str]] = []
    for pkg, pattern in (*_LINE_VERSIONS, *_PROSE_VERSIONS):
        found += [(m.start("v"), pkg, _clean_version(m.group("v"))) for m in pattern.finditer(text, low)]
    for pattern in _CANN:
        found += [(m.start("v"), "cann", _clean_version(m.group("v"))) for m in pattern.finditer(text, low)]
    found += [(m.start("v"), "python", m.group("v")) for m in _PYTHON.finditer(text, low)]
    for pattern in _DRIVER:
        found += [(m.start("v"), "driver", m.group("v")) for m in pattern.finditer(text, low)]
    return sorted(set(found))


def chip_mentions(text: str, low: str | None = None) -> list[tuple[int, int, str]]:
    """Every (start, end, chip id) a chip pattern reads, in text order."""
    low = text.lower() if low is None else low
    return sorted((m.start(), m.end(), chip) for chip, pattern in _CHIPS for m in pattern.finditer(text, low))


def extract_signals(text: str) -> Signals:
    """Extract error codes, chips, versions, features and path hints from free text."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    if not isinstance(text, str) or not text.strip():
        return Signals()
    low = text.lower()

    codes = find_error_codes(text, low)
    chips = []
    for chip, pattern in _CHIPS:
        m = pattern.search(text, low)
        if m:
            chips.append((m.start(), chip))

    features = []
    for name, pattern in _FEATURES:
        m = pattern.search(text, low)
        if m:
            features.append((m.start(), name))

    max_len = None
    m = _MAX_MODEL_LEN.search(text, low)
    if m:
        max_len = int(m.group(1)) * (1024 if m.group(2) else 1)
        features.append((m.start(), "max_model_len"))

    hints = [(m.start(1), m.group(1)) for m in _PATH_HINT.finditer(text, low)]

    return Signals(
        error_codes=_ordered_unique(codes),
        chips=_ordered_unique(chips),
        versions=_versions(text, low),
        features=_ordered_unique(features),
        max_model_len=max_len,
        path_hints=_ordered_unique(hints),
    )


def find_chips(text: str, low: str | None = None) -> tuple[str, ...]:
    """Canonical chip ids named in the text."""
    low = text.lower() if low is None else low
    return tuple(chip for chip, pattern in _CHIPS if pattern.search(text, low))


# ------------------------------------------------------- named-entity lookups
# Bare versions (X.Y.Z[rcN][.postN]), whatever package they belong to; triage decides which
# matrix they are looked up in. Three components are required so Python 3.10 or CANN 8.3.RC2
# are not read as product versions. Bounded repetition only: linear in the input.
_BARE_VERSION = re.compile(
    r"(?<![\w.\-/])[vV]?(\d{1,3}\.\d{1,3}\.\d{1,4}(?:\.?rc\d{1,3})?(?:\.post\d{1,3})?)(?![\w.\-]|\.\d)", re.I
)
# "main" as a branch: "main branch", "main 分支", "on main", "vllm-ascend main", "the main commit".
_MAIN_BRANCH = guarded(
    r"(?<![A-Za-z0-9_])main[ \t]{0,2}(?:branch|分支|版本|commit|build|tip)(?![A-Za-z])"
    r"|(?<![A-Za-z0-9_])(?:on|from|use|using|track|tracking|build|building)[ \t]{1,3}main(?![A-Za-z0-9_])"
    r"|vllm[ _\-]?ascend[ \t]{0,2}(?:的[ \t]{0,2})?main(?![A-Za-z0-9_])",
    ("main",),
)
_ENV_NAME = re.compile(r"(?<![A-Za-z0-9_])([A-Z][A-Z0-9]{1,30}(?:_[A-Z0-9]{1,30}){1,8})(?![A-Za-z0-9_])")
_FLAG = re.compile(r"(?<![\w\-])(--[a-z][a-z0-9]{0,20}(?:-[a-z0-9]{1,20}){0,6})(?![\w\-])")


def find_versions(text: str) -> tuple[str, ...]:
    """Every X.Y.Z-style version in the text (leading v dropped), in order, without duplicates."""
    seen: dict[str, None] = {}
    for m in _BARE_VERSION.finditer(text):
        seen.setdefault(m.group(1).lower().replace(".rc", "rc"), None)
    return tuple(seen)


def mentions_main_branch(text: str) -> bool:
    return bool(_MAIN_BRANCH.search(text, text.lower()))


def find_env_names(text: str) -> tuple[str, ...]:
    """UPPER_SNAKE_CASE names (candidate environment variables), in order, without duplicates."""
    return tuple(dict.fromkeys(m.group(1) for m in _ENV_NAME.finditer(text)))


def find_flags(text: str) -> tuple[str, ...]:
    """Command-line flags such as --enforce-eager, in order, without duplicates."""
    return tuple(dict.fromkeys(m.group(1).lower() for m in _FLAG.finditer(text)))
