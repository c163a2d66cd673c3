"""The user's environment, read from what they paste and say, kept for the whole thread.

One typed `Environment` (product and library versions, chip and card, driver and CANN, Python,
OS, container image) is read from a message: `python collect_env.py` output, `npu-smi info`,
`pip list` / `pip show`, `vllm --version`, `torch_npu.__version__` lines, CANN version files,
image names (`quay.io/ascend/vllm-ascend:v0.9.1-a3`, MindIE images) and plain words ("we are
on 0.9.1", "CANN 8.1.RC1", "910B4", "版本是 0.9.1"). The version and chip patterns are the ones
core/signals.py compiles (one place); this module adds what only a paste has.

Within one message the last value of a field wins and the conflict is kept so the answer says
which value it used ("never pick one silently"); a value right after "not" / "不是" is a
correction away from it and yields to the other value. Across a thread the session keeps the
environment as a plain dict (core/session.py `env`): a later message's values win
(`merge_session_env`), so "actually CANN 8.2.RC1" or "不是，是 910C" corrects it.

Every regex is linear (bounded repetition, no nested quantifiers); the text is the bounded
analysis window of the conversation.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from core.messages import Language
from core.signals import CHIP_IDS, chip_mentions, find_chips, version_mentions

# Canonical repository -> the environment field that holds its release.
RELEASE_FIELDS: Mapping[str, str] = {
    "vllm-project/vllm-ascend": "vllm-ascend",
    "vllm-project/vllm": "vllm",
    "verylucky01/MindIE-LLM": "mindie",
    "verylucky01/MindIE-SD": "mindie",
    "verylucky01/MindIE-Motor": "mindie",
    "verylucky01/MindIE-PyMotor": "mindie",
    "verylucky01/MindStudio-ModelSlim": "msmodelslim",
}
# Fields in the order the one-line summary shows them.
FIELDS = (
    "vllm-ascend", "vllm", "mindie", "msmodelslim", "cann", "torch", "torch_npu", "triton-ascend", "mooncake", "transformers",
    "python", "chip", "card", "cards", "driver", "os", "image", "image_target", "release",
)
_VERSION_FIELDS = frozenset(
    {"vllm-ascend", "vllm", "mindie", "msmodelslim", "cann", "torch", "torch_npu", "triton-ascend", "mooncake", "transformers", "python", "driver", "release"}
)
_NAMES = {
    "vllm-ascend": "vllm-ascend", "vllm": "vLLM", "mindie": "MindIE", "msmodelslim": "msModelSlim", "cann": "CANN", "torch": "torch",
    "torch_npu": "torch_npu", "triton-ascend": "triton-ascend", "mooncake": "Mooncake", "transformers": "transformers",
    "python": "Python", "driver": "driver", "os": "OS", "image": "image", "chip": "chip", "card": "card",
    "release": "release",
}
MAX_VALUE_CHARS = 120  # a value longer than this is not a version, a chip or an image name

_V = r"v?(?P<v>\d{1,3}\.\d{1,3}(?:\.\d{1,4}){0,2}(?:\.?rc\d{1,3})?(?:\.post\d{1,3})?(?:\.(?:dev|alpha|beta|b)\d{1,12})?(?:\+[\w.]{1,40})?)"
_PIP_NAMES = {
    "vllm": "vllm", "vllm-ascend": "vllm-ascend", "vllm_ascend": "vllm-ascend", "torch": "torch", "torch-npu": "torch_npu",
    "torch_npu": "torch_npu", "triton-ascend": "triton-ascend", "triton_ascend": "triton-ascend", "transformers": "transformers",
    "mooncake-transfer-engine": "mooncake", "mooncake_transfer_engine": "mooncake", "mindie": "mindie",
    "msmodelslim": "msmodelslim",
}
_PY_MODULES = {"vllm": "vllm", "vllm_ascend": "vllm-ascend", "torch": "torch", "torch_npu": "torch_npu"}

# `pip show vllm-ascend`: "Name: vllm_ascend" then "Version: 0.9.1" on the next line.
_PIP_SHOW = re.compile(r"(?im)^[ \t]{0,4}name:[ \t]{0,4}([A-Za-z][\w.\-]{0,40})[ \t]*\r?\n[ \t]{0,4}version:[ \t]{0,4}" + _V + r"[ \t]*$")
# `vllm --version` prints the bare version on the next line.
_VLLM_VERSION_CMD = re.compile(r"(?i)vllm[ \t]{1,4}--version[^\n]{0,40}\n(?:[^\n]{0,200}warning[^\n]{0,300}\n){0,3}[ \t]{0,4}" + _V + r"[ \t]*$", re.M)
# `>>> torch_npu.__version__` / `print(vllm_ascend.__version__)` then the value, same or next line.
_MODULE_VERSION = re.compile(
    r"(?<![\w.])(vllm_ascend|vllm|torch_npu|torch)\.__version__\)?[ \t]{0,4}(?:\r?\n[ \t>.]{0,8})?[:=]?[ \t]{0,4}['\"]?" + _V + r"['\"]?"
)
# CANN `version.cfg`: runtime_running_version=[7.6.0.1.220:8.1.RC1]; toolkit install paths.
_CANN_CFG = re.compile(r"(?i)(?:runtime|compiler|toolkit|opp|aoe|ncs)_running_version[ \t]{0,2}=[ \t]{0,2}\[[\d.]{1,30}:" + _V + r"\]")
_CANN_PATH = re.compile(r"(?i)ascend-toolkit/" + _V + r"/")
# /usr/local/Ascend/driver/version.info: "Version=24.1.rc2".
_DRIVER_INFO = re.compile(r"(?i)driver/version\.info[^\n]{0,40}\n(?:[^\n]{0,120}\n){0,3}?[ \t]{0,4}version[ \t]{0,2}=[ \t]{0,2}(?P<v>\d{1,3}\.\d{1,3}\.\w{1,12})")
# collect_env "OS: Ubuntu 22.04.5 LTS (aarch64)"; /etc/os-release PRETTY_NAME="openEuler 24.03 (LTS)".
_OS = re.compile(r"(?m)^[ \t]{0,4}OS:[ \t]{1,4}(?P<os>[A-Za-z][^\n]{1,79}?)[ \t]*$|PRETTY_NAME=\"(?P<pretty>[^\"\n]{1,80})\"")
# npu-smi info rows: "| 0     910B4     | OK  |" (the second row of each NPU has no name).
_NPU_ROW = re.compile(r"(?m)^\|[ \t]{0,4}(\d{1,3})[ \t]{1,10}([A-Za-z0-9_]{3,20})[ \t]{1,40}\|[ \t]{0,4}(?:OK|Warning|Alarm|Critical|Unknown)\b")
# A card model in prose: 910B4, 310P3, Ascend910B3.
_CARD = re.compile(r"(?i)(?<![A-Za-z0-9])(?:ascend)?(910b\d|910_93\d{1,2}|310p\d)(?![A-Za-z0-9])")
# Image references: quay.io/ascend/vllm-ascend:v0.9.1-a3, ascendhub/mindie:2.0.RC2-800I-A2-py311-openeuler24.03-lts.
_IMAGE = re.compile(r"(?i)(?<![\w.\-/])((?:[\w.\-]{1,60}/){0,3}(vllm-ascend|mindie)):([\w][\w.\-]{0,80})")
_IMAGE_TAG_VERSION = re.compile(r"(?i)^v?(\d{1,3}\.\d{1,3}(?:\.\d{1,4})?(?:\.?rc\d{1,3})?(?:\.post\d{1,3})?)")
# "we are on 0.9.1", "running v0.11.0rc1", "版本是 0.9.1", "用的 0.9.1": a version without a product name.
_UNNAMED = re.compile(
    r"(?i)(?:\b(?:we are|we're|i am|i'm|currently|still)[ \t]{1,3}(?:on|using|running)|\b(?:on|using|running|upgraded to)"
    r"|版本(?:号)?(?:是|为|:|：)?|用的(?:是)?|使用(?:的)?(?:是)?|升级到(?:了)?)[ \t]{0,3}" + _V + r"(?![\w.])"
)
# A release named the way users write it in a sentence with no product word: "v0.9.1 上想用…",
# "0.10.2rc1 跑 Qwen3", "on v0.21.0rc1 with HDK 25.3", "from 0.11.0 to v0.14.0rc1": a `v` prefix or an
# rc/post suffix marks a release; a plain X.Y.Z needs a word after it that says "my release"
# (上/跑/里/中/版本/这版, "release"). Another package's version is excluded by the words before it.
_BARE_RELEASE = re.compile(
    r"(?i)(?<![\w.\-/:=])(?:v(?P<a>\d{1,3}\.\d{1,3}\.\d{1,4}(?:\.?rc\d{1,3})?(?:\.post\d{1,3})?)"
    r"|(?P<b>\d{1,3}\.\d{1,3}\.\d{1,4}(?:\.?rc\d{1,3}|\.post\d{1,3}))"
    r"|(?P<c>\d{1,3}\.\d{1,3}\.\d{1,4})(?=[ \t]{0,2}(?:上|跑|里|中|版本|这版|这个版本|release\b)))(?![\w\-+]|\.\w)"
)
# "pinned to vllm-ascend 0.8.4rc2." : a product's version that ends a sentence (the shared version
# patterns of core/signals.py stop at a following '.').
_SENTENCE_END_RELEASE = re.compile(
    r"(?i)(?<![\w\-])(vllm[ _\-]ascend|vllm|mindie)[ \t]{0,3}(?:==|=|:)?[ \t]{0,2}v?"
    r"(?P<v>\d{1,3}\.\d{1,3}\.\d{1,4}(?:\.?rc\d{1,3})?(?:\.post\d{1,3})?)(?=[。，；！？）]|[.,;!?)](?:\s|$))",
    re.M,
)
# "msModelSlim 8.3.0", "modelslim 26.0.0.alpha02" (signals.py has no pattern for it).
_MSMODELSLIM = re.compile(
    r"(?i)(?<![\w\-])(?:ms)?modelslim[ \t]{0,3}(?:==|=|:|版本|version)?[ \t]{0,3}v?"
    r"(?P<v>\d{1,3}\.\d{1,3}\.\d{1,4}(?:[.\-]?(?:rc|alpha|beta|post)\.?\d{1,4})?)(?![\w.]\w|\w)"
)
_PACKAGE_WORDS = re.compile(
    r"(?i)(?:vllm|ascend|cann|torch|npu|python|triton|mooncake|mindie|transformers|driver|驱动|cmake|gcc|clang|libc|numpy|kernel|linux"
    r"|ubuntu|openeuler|euler|kylin|centos|debian|hdk|firmware|固件|sglang|modelslim|msit|docker|transformer)[^\n]{0,12}$"
)
# A value right after a negation is the one being corrected away ("CANN 8.2.RC1, not 8.1.RC1", "不是 910B").
_NEGATED = re.compile(
    r"(?i)(?:\bnot|n't|\binstead of|\brather than|不是|而非|并非)[ \t]{0,2}(?:the[ \t]{1,2})?"
    r"(?:(?:vllm[ _\-]?ascend|vllm|cann|torch[_\-]?npu|torch|python|triton[ _\-]ascend|mooncake|mindie|driver|驱动)[ \t]{0,2})?"
    r"(?:version[ \t]{0,2}|版本[ \t]{0,2})?v?$"
)
_LOOKBEHIND = 48  # characters read before a value to see a negation or a package name

# A3 cards list as plain "Ascend910" in npu-smi (core/knowledge/hardware.json); 910A/910ProB are the first generation.
_NPU_SMI_A3 = re.compile(r"(?i)^ascend910$")


@dataclass(frozen=True)
class Conflict:
    """One field with different values in the same message: `used` is the last one."""

    field: str
    values: tuple[str, ...]  # distinct values in text order
    used: str


@dataclass(frozen=True)
class Environment:
    """What we know about the user's stack. `values` maps a field of FIELDS to its value."""

    values: tuple[tuple[str, str], ...] = ()
    conflicts: tuple[Conflict, ...] = ()
    corrected: tuple[tuple[str, str], ...] = ()  # (field, the earlier value) when this message changed it

    def get(self, field: str) -> str | None:
        return next((v for k, v in self.values if k == field), None)

    @property
    def is_empty(self) -> bool:
        return not self.values

    @property
    def chip(self) -> str | None:
        """The chip id: read directly, else implied by the image the user runs."""
        return self.get("chip") or self.get("image_target")

    def release_of(self, repo: str) -> str | None:
        """The user's release of a canonical repository ("vllm-project/vllm-ascend" -> "0.9.1"), or None.

        Stable interface (issue 23 items 3-4 read it). The version is as read, without a leading
        "v" ("0.9.1rc1", "0.7.3.post1", "0.9.2.dev45+gabc1234"); a version the user gave without
        naming a product is returned only after `with_unnamed_release_as` assigned it."""
        field = RELEASE_FIELDS.get(repo)
        return self.get(field) if field else None

    def with_unnamed_release_as(self, repos: tuple[str, ...]) -> "Environment":
        """"we are on 0.9.1" names no product: it is the release of the one routed product that has
        releases and no version of its own yet (several candidates: it stays unnamed)."""
        unnamed = self.get("release")
        fields = {RELEASE_FIELDS[r] for r in repos if r in RELEASE_FIELDS}
        if fields == {"vllm-ascend", "vllm"}:
            # Routed to both (an upstream feature on an NPU): the plugin's releases are named after the
            # vLLM release they pair with, so the number means one release line either way, and the
            # plugin's is the one its advice (release ranges, the matrix row) is keyed on.
            fields = {"vllm-ascend"}
        if unnamed is None or len(fields) != 1:
            return self
        (field,) = fields
        if self.get(field) is not None:
            return self
        kept = tuple((k, v) for k, v in self.values if k != "release") + ((field, unnamed),)
        return Environment(_ordered(dict(kept)), self.conflicts, self.corrected)

    def as_session(self) -> dict[str, str]:
        return dict(self.values)

    def summary(self, language: Language) -> str:
        """One line: "read: vllm-ascend 0.9.1, vLLM 0.9.1, CANN 8.1.RC1, 910B" (empty when nothing was read)."""
        zh = language == "zh"
        sep = "，" if zh else ", "
        conflicts = {c.field: c for c in self.conflicts}
        corrected = dict(self.corrected)
        parts = []
        for field, value in self.values:
            if field in ("card", "cards", "image_target"):
                continue
            shown = _shown(field, value, self)
            if field == "chip" and "card" in conflicts and "chip" not in conflicts:
                field, value = "card", self.get("card") or value  # the chip is shown by its card: so is the card's conflict
            if field in ("card", "chip") and field in conflicts:
                # Two cards or chips in prose are most often the failing machine and the one that works, or
                # the images they found ("only 910b and a3 ones"): which is theirs cannot be read, so none is
                # shown as theirs (judges read "910B2" and "910C" there as wrong claims).
                named = "/".join(conflicts[field].values)
                shown = f"{named}（消息中提到多种卡，请说明是哪一台出问题）" if zh else f"{named} (the message names more than one card: which one is this about?)"
            elif field in conflicts:
                others = "/".join(v for v in conflicts[field].values if v != value)
                shown += f"（消息中还有 {others}，以最后出现的为准）" if zh else f" (the message also says {others}; the last one is used)"
            elif field in corrected:
                shown += f"（之前为 {corrected[field]}）" if zh else f" (was {corrected[field]})"
            parts.append(shown)
        if not parts:
            return ""
        return ("已读取：" if zh else "read: ") + sep.join(parts) + (
            "。如有不对，直接告诉我正确的值。" if zh else ". If any of this is wrong, just tell me the right value."
        )


def _shown(field: str, value: str, env: Environment) -> str:
    if field == "chip":
        card, cards = env.get("card"), env.get("cards")
        shown = card if card and _chip_of_card(card) == value else value
        return f"{cards}× {shown}" if cards and cards != "1" else shown
    if field == "image":
        return f"image {value}"
    if field == "release":
        return f"release {value}"
    return f"{_NAMES.get(field, field)} {value}"


def _ordered(values: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    return tuple((f, values[f]) for f in FIELDS if f in values)


def _norm(value: str) -> str:
    v = value.strip().lower()
    return (v[1:] if v.startswith("v") else v).replace(".rc", "rc")


def _chip_of_card(card: str) -> str | None:
    if _NPU_SMI_A3.match(card):
        return "910C"
    chips = find_chips(card)
    return chips[0] if chips else None


# ------------------------------------------------------------------ reading


@dataclass(frozen=True)
class _Mention:
    pos: int
    field: str
    value: str
    negated: bool = False


def _negated(text: str, pos: int) -> bool:
    before = text[max(0, pos - _LOOKBEHIND) : pos]
    return bool(_NEGATED.search(before))


def _image_mentions(text: str) -> tuple[list[_Mention], list[tuple[int, int]]]:
    out: list[_Mention] = []
    spans: list[tuple[int, int]] = []
    for m in _IMAGE.finditer(text):
        name, product, tag = m.group(1), m.group(2).lower(), m.group(3).rstrip(".-")
        spans.append((m.start(), m.end()))
        out.append(_Mention(m.start(), "image", f"{name}:{tag}"[:MAX_VALUE_CHARS]))
        low = tag.lower()
        version = _IMAGE_TAG_VERSION.match(tag)
        if version and product == "vllm-ascend":
            out.append(_Mention(m.start(), "vllm-ascend", version.group(1)))
            target = "910C" if "-a3" in low else "310P" if "-310p" in low else "950" if ("-a5" in low or "950" in low) else "910B"
            out.append(_Mention(m.start(), "image_target", target))
        elif version and product == "mindie":
            out.append(_Mention(m.start(), "mindie", version.group(1)))
            target = "910C" if "a3" in low else "310P" if ("300i" in low or "duo" in low) else "910B" if "a2" in low else None
            if target:
                out.append(_Mention(m.start(), "image_target", target))
            py = re.search(r"py3(\d{1,2})", low)
            if py:
                out.append(_Mention(m.start(), "python", f"3.{py.group(1)}"))
        for os_name in ("openeuler", "ubuntu"):
            if os_name in low:
                out.append(_Mention(m.start(), "os", "openEuler" if os_name == "openeuler" else "Ubuntu"))
    return out, spans


def _inside(pos: int, spans: list[tuple[int, int]]) -> bool:
    return any(start <= pos < end for start, end in spans)


def _mentions(text: str) -> list[_Mention]:
    low = text.lower()
    found, image_spans = _image_mentions(text)
    for pos, pkg, version in version_mentions(text, low):
        if not _inside(pos, image_spans):
            found.append(_Mention(pos, pkg, version, _negated(text, pos)))
    for m in _PIP_SHOW.finditer(text):
        pkg = _PIP_NAMES.get(m.group(1).lower())
        if pkg:
            found.append(_Mention(m.start("v"), pkg, m.group("v")))
    if "--version" in low:
        found += [_Mention(m.start("v"), "vllm", m.group("v")) for m in _VLLM_VERSION_CMD.finditer(text)]
    if "__version__" in low:
        found += [_Mention(m.start("v"), _PY_MODULES[m.group(1)], m.group("v")) for m in _MODULE_VERSION.finditer(text)]
    if "running_version" in low:
        found += [_Mention(m.start("v"), "cann", m.group("v")) for m in _CANN_CFG.finditer(text)]
    if "ascend-toolkit/" in low:
        found += [_Mention(m.start("v"), "cann", m.group("v")) for m in _CANN_PATH.finditer(text) if not m.group("v")[0] == "0"]
    if "version.info" in low:
        found += [_Mention(m.start("v"), "driver", m.group("v")) for m in _DRIVER_INFO.finditer(text)]
    for m in _OS.finditer(text):
        value = (m.group("os") or m.group("pretty") or "").strip()
        if value and "could not collect" not in value.lower():
            found.append(_Mention(m.start(), "os", value[:MAX_VALUE_CHARS]))
    found += _npu_smi(text)
    for start, _end, chip in chip_mentions(text, low):
        if not _inside(start, image_spans):
            found.append(_Mention(start, "chip", chip, _negated(text, start)))
    for m in _CARD.finditer(text):
        found.append(_Mention(m.start(1), "card", m.group(1).upper(), _negated(text, m.start())))
    if "modelslim" in low:
        found += [_Mention(m.start("v"), "msmodelslim", m.group("v")) for m in _MSMODELSLIM.finditer(text)]
    have = {(m.field, _norm(m.value)) for m in found}
    for m in _SENTENCE_END_RELEASE.finditer(text):
        field = "vllm-ascend" if "ascend" in m.group(1).lower() else m.group(1).lower()
        if (field, _norm(m.group("v"))) not in have:
            found.append(_Mention(m.start("v"), field, m.group("v"), _negated(text, m.start(1))))
    found += _unnamed(text, found)
    return sorted(found, key=lambda x: x.pos)


def _npu_smi(text: str) -> list[_Mention]:
    """Card name and count from the NPU rows of `npu-smi info` (A3 shows as "Ascend910")."""
    if "npu-smi" not in text.lower() and "Health" not in text:
        return []
    rows = [(m.start(2), m.group(1), m.group(2)) for m in _NPU_ROW.finditer(text)]
    if not rows:
        return []
    pos, _, name = rows[-1]
    out = [_Mention(rows[0][0], "cards", str(len({npu for _, npu, _ in rows})))]
    chip = _chip_of_card(name)
    if chip:
        out.append(_Mention(pos, "chip", chip))
        out.append(_Mention(pos, "card", "Ascend910 (A3)" if _NPU_SMI_A3.match(name) else name.upper()))
    return out


def _unnamed(text: str, found: list[_Mention]) -> list[_Mention]:
    """A version given without a product name, unless a read value already covers it."""
    taken = {(_norm(m.value)) for m in found if m.field in _VERSION_FIELDS}
    out = []
    for m in _UNNAMED.finditer(text):
        value = m.group("v")
        before = text[max(0, m.start() - 24) : m.start("v")]
        if _norm(value) in taken or _PACKAGE_WORDS.search(before) or value.count(".") < 2:
            continue
        out.append(_Mention(m.start("v"), "release", value, _negated(text, m.start("v"))))
    seen = {m.pos for m in out}
    for m in _BARE_RELEASE.finditer(text):
        group = "a" if m.group("a") else "b" if m.group("b") else "c"
        value, pos = m.group(group), m.start(group)
        before = text[max(0, m.start() - 24) : m.start()]
        if pos in seen or _norm(value) in taken or _PACKAGE_WORDS.search(before) or _listed_line(text, m.start()):
            continue
        out.append(_Mention(pos, "release", value, _negated(text, m.start())))
    return out


def _listed_line(text: str, pos: int) -> bool:
    """The value sits on a `pip list` / requirements-like line ("numpy  1.26.4", "foo==0.9.1"): another package's."""
    start = text.rfind("\n", 0, pos) + 1
    head = text[start:pos]
    return "==" in head[-4:] or (bool(head.strip()) and head.endswith(("  ", "\t")) and " " not in head.strip())


def read_environment(text: str) -> Environment:
    """The environment one message states; conflicting values: the last wins and is reported."""
    if not isinstance(text, str) or not text.strip():
        return Environment()
    by_field: dict[str, list[_Mention]] = {}
    for mention in _mentions(text):
        if mention.value and len(mention.value) <= MAX_VALUE_CHARS:
            by_field.setdefault(mention.field, []).append(mention)
    values: dict[str, str] = {}
    conflicts = []
    for field, mentions in by_field.items():
        kept = [m for m in mentions if not m.negated] or mentions
        values[field] = kept[-1].value.lstrip("vV") if field in _VERSION_FIELDS else kept[-1].value
        distinct = list(dict.fromkeys(_norm(m.value) for m in kept)) if field in _VERSION_FIELDS else list(
            dict.fromkeys(m.value for m in kept)
        )
        # Two card models in prose ("stuck on 910B4 ... starts fine on 910B2") are a conflict to show;
        # the rows of an `npu-smi info` table are one machine's cards, not a disagreement.
        tabled = field == "card" and "npu-smi" in text.lower()
        if len(distinct) > 1 and field not in ("cards", "os", "image_target") and not tabled:
            shown = list(dict.fromkeys(m.value.lstrip("vV") if field in _VERSION_FIELDS else m.value for m in kept))
            conflicts.append(Conflict(field, tuple(shown), values[field]))
    _drop_stale_card(values)
    return Environment(_ordered(values), tuple(c for c in conflicts if c.field in values))


def _drop_stale_card(values: dict[str, str]) -> None:
    """A card of another chip than the one that won ("910B4 ... 不是，是 910C") is stale."""
    card, chip = values.get("card"), values.get("chip")
    if card and chip and _chip_of_card(card.split(" ")[0]) not in (chip, None):
        values.pop("card")


# ------------------------------------------------------------------ session


def environment_from_session(env: Mapping[str, object] | None) -> Environment:
    """The thread's environment from the session dict (unknown keys and non-strings ignored)."""
    if not env:
        return Environment()
    values = {k: v.strip() for k, v in env.items() if k in FIELDS and isinstance(v, str) and v.strip()}
    values = {k: v[:MAX_VALUE_CHARS] for k, v in values.items()}
    if "chip" in values:
        chip = values["chip"].split(",")[0].strip().upper()  # older sessions kept "910B,310P"
        if chip in CHIP_IDS:
            values["chip"] = chip
        else:
            values.pop("chip")
    return Environment(_ordered(values))


def updated(known: Environment, message: Environment) -> Environment:
    """The thread's environment after a message: its values win; what it changed is remembered."""
    values = dict(known.values)
    corrected = []
    for field, value in message.values:
        before = values.get(field)
        if before is not None and _norm(before) != _norm(value) and field not in ("cards", "image_target"):
            corrected.append((field, before))
        values[field] = value
    if message.get("chip") and not message.get("card"):
        _drop_stale_card(values)
    if message.get("image") and not message.get("image_target"):
        values.pop("image_target", None)
    return Environment(_ordered(values), message.conflicts, tuple(corrected))


def merge_session_env(session_env: Mapping[str, object] | None, message: Environment) -> dict[str, str]:
    """The session's `env` dict after a message (later values win)."""
    return updated(environment_from_session(session_env), message).as_session()
