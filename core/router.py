"""Which repositories a question is about, or what to ask when that is unclear.

Rules (from the domain seed):
- Repository names and aliases match case-insensitively, English and Chinese;
  strong evidence (a `vllm_ascend/` frame, `VLLM_ASCEND_*` variables,
  `VLLM_OPTIMIZATION_LEVEL` for MindIE-Turbo...) settles the repository.
- Bare "vllm" with Ascend context (NPU, 昇腾, 910B, CANN, torch_npu...) is vllm-ascend:
  vLLM runs on an NPU only through the plugin. It is upstream vLLM as well when the
  text says "upstream" or uses vocabulary only vLLM owns (a vLLM module path).
  Without Ascend context it is vLLM.
- "MindIE" without a component: diffusion words mean MindIE-SD, cluster words
  (coordinator, controller, msctl) MindIE-Motor; next to another framework or with
  any serving context it is MindIE-LLM's service; ask only when nothing hints.
- No product named: the repositories' own vocabulary (core/vocabulary, built from the
  clones) settles it when one product owns the identifiers; with Ascend context and no
  vocabulary, diffusion work is MindIE-SD, quantizing a model msModelSlim, and serving
  an LLM vllm-ascend. Ask which project only when nothing narrows it, offering only
  the products the vocabulary left in play.
- Several named repositories: all of them (comparisons); more than four: ask which.
- Repositories chosen earlier in the thread settle follow-ups that name none.
- Ascend error strings (ACL codes, EZ9999-style codes, aclnn, PTA/ACL API
  failures, HCCL) are Ascend context: never out of scope.
- Out of scope only on positive evidence: another inference stack (TensorRT-LLM,
  llama.cpp, Ollama...), CUDA kernels, a phone, or an off-topic request. An LLM
  serving question naming no product and no Ascend hardware is upstream vLLM's.

Pure: the only input is the text, the session's repositories, the knowledge
base and the vocabulary map; compiled patterns are cached per knowledge base.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, replace
from typing import Literal

from core.entity_routing import names_a_vllm_ascend_release, products_of_named_entities
from core.knowledge.base import KnowledgeBase
from core.knowledge.loader import load_knowledge_base
from core.knowledge.schema import Repository
from core.messages import Language, Option
from core.signals import Guarded, find_chips, find_error_codes, guarded
from core.vocabulary.map import VocabularyMap, VocabularyVotes
from core.vocabulary.tokens import (
    ENV, FILE, FLAG, IMAGE, KEY, MODULE, RELEASE, file_tokens, flag_tokens, image_tokens, module_tokens, release_tokens,
    word_tokens,
)

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
MINDIE_LLM = "verylucky01/MindIE-LLM"
MINDIE_SD = "verylucky01/MindIE-SD"
MINDIE_MOTOR = "verylucky01/MindIE-Motor"
MINDIE_PYMOTOR = "verylucky01/MindIE-PyMotor"
MINDIE_TURBO = "verylucky01/MindIE-Turbo"
MSMODELSLIM = "verylucky01/MindStudio-ModelSlim"
ASCEND_ONLY = frozenset(MINDIE_COMPONENTS) | {MSMODELSLIM}
# Vocabulary votes: a product needs this much evidence, and this lead over the next one to stand alone.
MIN_VOTE = 1.0
LEAD = 1.5
# More named products than this is not a comparison but a list: ask which one matters.
MAX_NAMED = 4
# Question token kinds that name an identifier (core/vocabulary/tokens.py); "class" is left out
# because model names look like classes ("DeepSeek", "Qwen3VL").
_IDENTIFIER_KINDS = frozenset({FLAG, ENV, KEY, MODULE, FILE, IMAGE, RELEASE})


@dataclass(frozen=True)
class RouteDecision:
    """What to do with a question.

    For `clarify`, `repos` is what is already settled (empty from this router: it asks only when
    nothing is; a named product always answers) and `options` the products still in play; the final
    set is `repos` plus the chosen option's repo.
    """

    action: Action
    repos: tuple[str, ...]
    options: tuple[Option, ...] = ()
    reason: str = ""
    question_en: str = ""
    question_zh: str = ""
    # What the text showed, for the thread lookup that may still settle or widen the route
    # (core/conversation.py): an Ascend signal, and an identifier of some product's vocabulary.
    ascend: bool = False
    specific: bool = True

    def question(self, language: Language) -> str:
        return self.question_zh if language == "zh" else self.question_en


_MINDIE_QUESTION = (
    "Which MindIE component is this about: MindIE-LLM, MindIE-SD, MindIE-Motor, MindIE-PyMotor or MindIE-Turbo?",
    "你问的是哪个 MindIE 组件：MindIE-LLM、MindIE-SD、MindIE-Motor、MindIE-PyMotor 还是 MindIE-Turbo？",
)
_SEP = r"[\s_\-]*"
_CJK_RUN = re.compile(r"[\u3400-\u9fff]+|[^\u3400-\u9fff\s_\-]+")

# "vllm" on its own: not vllm-ascend, not vllm-project, not another vllm-* project.
_BARE_VLLM = guarded(r"(?<![A-Za-z0-9_\-])vllm(?![A-Za-z0-9_]|[ _\-]?ascend|-[A-Za-z0-9])", ("vllm",))
# vLLM's own CamelCase names in a log ("Worker proc VllmWorker-3 died", VllmConfig): vLLM is running.
_VLLM_CLASS = guarded(r"(?<![A-Za-z0-9_])Vllm[A-Z][a-z]{2,20}", ("vllm",), 0)
# Mentions of vllm that are not a repository choice: versions ("vllm==0.11.0",
# "which vLLM version", version pairing is a vllm-ascend question per the seed),
# the CLI ("vllm serve"), imports, traceback paths ("/vllm/v1/engine") and an install line
# ("pip install vllm vllm-ascend": vLLM is the plugin's dependency there).
_VLLM_INCIDENTAL = guarded(
    r"(?<![A-Za-z0-9_\-])vllm(?:[ \t]{0,3}(?:==|=|:|：|版本|version)?[ \t]{0,3}v?\d+\.\d+|[ \t]{0,3}(?:version|版本|commit|tag)|[ \t]+(?:serve|bench|chat|complete|run-batch)(?![A-Za-z])|[/\\.][A-Za-z_])"
    r"|(?:-m|from|import)[ \t]+vllm(?![A-Za-z0-9_\-])"
    r"|(?<![A-Za-z])(?:pip3?|uv)[ \t]+(?:pip[ \t]+)?install[ \t][^\n]{0,60}?(?<![A-Za-z0-9_\-])vllm(?![A-Za-z0-9_\-])",
    ("vllm",),
)
# A value in a MindIE-PyMotor deployment config ("engine_type: vllm") names the backend
# engine; it is not a question about vLLM at all.
_VLLM_VALUE = guarded(r"engine[_ ]type[\"': \t=：填为是]{0,8}vllm", ("engine",))
# A product's name as the value of another product's option: SGLang's `--quantization modelslim` names
# a weight format, like PyMotor's `"engine_type": "vllm"` names an engine.
_QUANT_VALUE = guarded(r"quantization[\"' \t=:]{1,4}(?:ms)?modelslim", ("quantization",))
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
_ASCEND_MORE = guarded(
    r"(?<![A-Za-z])vnpu|hiascend|(?<![A-Za-z])aclop|pta[ \t]call[ \t]acl|(?<![A-Za-z])tbe(?![A-Za-z])",
    ("vnpu", "hiascend", "aclop", "pta call", "tbe"),
)
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
# Technical text with no product named: a source file, an ENV_VAR, a snake_case name, an error word.
_TECHNICAL = guarded(
    r"(?<![\w.])[A-Za-z_]\w{0,60}\.(?:cpp|cc|cxx|h|hpp|py|so)(?![\w])|(?<![\w])[A-Z][A-Z0-9]{1,20}_[A-Z0-9_]{1,80}(?![\w])"
    r"|(?<![\w])[a-z][a-z0-9]{1,30}_[a-z0-9_]{1,80}(?![\w])|(?<![A-Za-z])(?:error|errors|exception|traceback|failed|fails?)(?![A-Za-z])"
    r"|报错|错误|异常|失败",
    ("_", ".", "error", "exception", "traceback", "fail", "报错", "错误", "异常", "失败"),
)
# A GPU-only setting (NCCL, a consumer NVIDIA card): positive evidence that the question is about another stack.
_GPU_ONLY = guarded(r"(?<![A-Za-z])(?:nccl|rtx|geforce|nvidia)|(?<![\w.])[1-5]0[5-9]0(?:[ \-]?ti)?s?(?![\w.])", ("nccl", "rtx", "geforce", "nvidia", "0"))
# "The Python one" of MindIE's cluster layer is MindIE-PyMotor.
_PY_HINT = guarded(r"(?<![A-Za-z])python(?![A-Za-z])|(?<![A-Za-z])py(?![A-Za-z])", ("py",))
# Which framework to use: the answer compares the LLM serving stacks on Ascend.
_FRAMEWORK_CHOICE = guarded(
    r"(?:哪个|哪种|什么|which|what)[ \t]{0,2}(?:推理)?[ \t]{0,2}(?:框架|frameworks?|engines?|引擎)|"
    r"(?:推荐|recommend)[^\n]{0,12}(?:框架|framework|engine|引擎)|有什么推荐|what can i use",
    ("框架", "framework", "engine", "引擎", "推荐", "what can i use"),
)
SERVING_STACKS = (VLLM_ASCEND, MINDIE_LLM, "sgl-project/sglang")
_WHICH = guarded(r"哪个|哪种|哪一个|(?<![A-Za-z])which(?![A-Za-z])", ("哪", "which"))
# What runs on an NPU by itself (vLLM only through the plugin; Motor/PyMotor manage the others).
ASCEND_RUNTIMES = (*SERVING_STACKS, MINDIE_SD, MSMODELSLIM)
# A bare "MindIE" with these is its LLM service.
_SERVICE = guarded(
    r"服务|service|server|接口|endpoint|(?<![A-Za-z])api(?![A-Za-z])|config\.json|请求|request|实例|instance|启动|起不来|start",
    ("服务", "service", "server", "接口", "endpoint", "api", "config.json", "请求", "request", "实例", "instance", "启动",
     "起不来", "start"),
)
# Words of MindIE's cluster layer (MindIE-Motor) next to a bare "MindIE".
_MOTOR_HINT = guarded(
    r"coordinator|controller|msctl|deployer|mindie[ _\-]?client|集群管理|调度器",
    ("coordinator", "controller", "msctl", "deployer", "client", "集群管理", "调度器"),
)
# Producing quantized weights (the toolkit's job), not serving them.
_QUANTIZE = guarded(
    r"(?<![A-Za-z])(?:quantiz(?:e|ing)|calibrat(?:e|ion|ing)|anti[ _\-]?outlier)|(?:怎么|如何|用什么|做)[ \t]{0,2}量化|量化(?:工具|脚本|命令|时|过程|校准|报错|失败)|校准(?:数据|集)|离群值",
    ("quantiz", "calibrat", "anti", "量化", "校准", "离群值"),
)
# Features upstream vLLM implements and the plugin inherits: on an NPU the answer needs both.
_VLLM_FEATURE = guarded(
    r"structured[ _\-]output|guided[ _\-]decod|xgrammar|reasoning[ _\-]parser|tool[ _\-]call[ _\-]parser|"
    r"enable[ _\-]auto[ _\-]tool[ _\-]choice",
    ("structured", "guided", "xgrammar", "reasoning", "tool"),
)
# vLLM's engine generations: "the V0 engine", "V1 引擎", "V0/V1". Neither SGLang nor MindIE names its engine
# so; on an NPU the vLLM line runs through the plugin.
_VLLM_ENGINE = guarded(
    r"(?<![A-Za-z0-9])v[01][ \t]{0,2}(?:(?:/|or|and|和|或)[ \t]{0,2}v[01][ \t]{0,2})?(?:engine|引擎)",
    ("engine", "引擎"),
)
# Serving a (quantized) model rather than producing it.
_SERVE_WORDS = guarded(r"serv(?:e|ing)(?![A-Za-z])|部署|推理|加载|load(?:ing)?[ \t]the|vllm", ("serv", "部署", "推理", "加载", "load", "vllm"))
# An LLM inference question: upstream vLLM's domain when no product or Ascend signal is given.
_LLM_WORDS = (
    "llm", "大模型", "inference", "推理", "serv", "部署", "deploy", "tok", "throughput", "吞吐", "latency", "时延", "kv",
    "prefix", "prefill", "decod", "speculative", "投机", "draft", "reasoning", "tool", "function", "structured",
    "guided", "json", "openai", "completions", "sampling", "temperature", "lora", "moe", "expert", "parallel",
    "并行", "量化", "quantiz", "qwen", "deepseek", "llama", "glm", "gemma", "mistral", "mixtral", "kimi", "minimax",
    "baichuan", "internlm", "chatglm", "phi-", "context", "上下文", "max", "model", "模型", "vllm", "attention", "flash",
    "cuda",
)
_LLM_CONTEXT = guarded(
    r"(?<![A-Za-z])llms?(?![A-Za-z])|大模型|inference|推理|serv(?:e|ing|er)(?![A-Za-z])|部署|deploy|tok(?:en)?s?(?:/s|[ \t]per[ \t]s)|"
    r"throughput|吞吐|latency|时延|kv[ _\-]?cache|prefix[ _\-]cach|prefill|decod(?:e|ing)|speculative|投机|draft[ _\-]model|"
    r"reasoning[ _\-]parser|tool[ _\-]?call|function[ _\-]call|structured[ _\-]output|guided[ _\-]decod|json[ _\-]schema|"
    r"openai|chat/completions|/v1/completions|sampling|temperature|lora(?![A-Za-z])|(?<![A-Za-z])moe(?![A-Za-z])|"
    r"expert[ _\-]parallel|tensor[ _\-]parallel|pipeline[ _\-]parallel|并行|量化|quantiz|"
    r"(?<![A-Za-z])(?:qwen|deepseek|llama|glm|gemma|mistral|mixtral|kimi|minimax|baichuan|internlm|chatglm|phi-\d)|"
    r"context[ _\-]length|上下文|max[ _\-]model[ _\-]len|(?<![A-Za-z])(?:model|vllm)(?![A-Za-z])|模型|"
    r"attention|flash[ _\-]?attn|cuda[ _\-]?graph",
    _LLM_WORDS,
)
# Another stack named positively: the only ground for declining a question about inference.
_OTHER_STACK_WORDS = (
    "tensorrt", "trt", "llama", "ollama", "studio", "mlx", "ml", "openvino", "lmdeploy", "text-generation-inference",
    "tgi", "exllama", "rocm", "nvcc", "__global__", "cuda", "iphone", "android", "手机", "snapdragon", "骁龙", "jetson",
    "raspberry", "树莓派", "apple", "macbook", "fine", "微调", "llamafactory", "llama-factory", "keras",
    "tensorflow", "angelslim", "autoawq", "auto-gptq", "auto_gptq", "bitsandbytes", "mindformers", "llama-",
)
_OTHER_STACK = guarded(
    r"tensorrt|trt[ _\-]?llm|llama[ ._\-]?cpp|ollama|lm[ _]?studio|(?<![A-Za-z])mlx(?![A-Za-z])|core[ _]?ml(?![A-Za-z])|openvino|lmdeploy|"
    r"text-generation-inference|(?<![A-Za-z])tgi(?![A-Za-z])|exllama|(?<![A-Za-z])rocm(?![A-Za-z])|(?<![A-Za-z])nvcc(?![A-Za-z])|"
    r"__global__|cuda[ _\-]?kernels?(?![A-Za-z])|iphone|android|手机|snapdragon|骁龙|jetson|raspberry|树莓派|apple[ _]silicon|macbook|"
    r"fine[ _\-]?tun(?:e|ing)|微调|llama[ _\-]?factory|keras|tensorflow|"
    r"angelslim|autoawq|auto[ _\-]gptq|bitsandbytes|mindformers|llama-(?:server|cli|bench|quantize)(?![A-Za-z])",
    _OTHER_STACK_WORDS,
)
# A short all-capitals acronym: the name of a technique, format or metric, not an identifier.
_PLAIN_WORD = re.compile(r"[A-Z]{2,5}")
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


def _clarify(
    kb: KnowledgeBase, reason: str, choices: tuple[str, ...], question: tuple[str, str] | None = None
) -> RouteDecision:
    """Ask which of `choices` (the products still in play; never all nine by default)."""
    if question is None:
        names = [r.display_name for r in (kb.repository(c) for c in choices) if r is not None]
        question = (
            f"Which project is this about: {', '.join(names[:-1])} or {names[-1]}?",
            f"这个问题涉及哪个项目：{'、'.join(names[:-1])} 还是 {names[-1]}？",
        )
    return RouteDecision("clarify", (), _options(kb, choices), reason, *question)


def route(
    text: str,
    *,
    session_repos: tuple[str, ...] = (),
    kb: KnowledgeBase | None = None,
    vocabulary: VocabularyMap | None = None,
) -> RouteDecision:
    kb = kb or load_knowledge_base()
    if not isinstance(text, str):
        text = ""
    clean = _normalise(text)
    low = clean.lower()
    ascend_ctx = _has_ascend_context(clean, low)
    decision = _route(clean, low, ascend_ctx, session_repos, kb, vocabulary)
    return replace(decision, ascend=ascend_ctx, specific=names_an_identifier(clean))


def names_an_identifier(text: str) -> bool:
    """The text names something a product's vocabulary could own: a flag, an env var, a snake_case
    key, a module or file path, an image or release tag. Model names, chips, formats (W8A8) and
    prose do not count: a thread that shares only those says nothing about which stack the user runs."""
    for tokens in (flag_tokens, module_tokens, image_tokens, release_tokens, file_tokens):
        if next(iter(tokens(text)), None) is not None:
            return True
    return any(kind in _IDENTIFIER_KINDS for kind, _ in word_tokens(text))  # env vars and snake_case keys


def _route(
    clean: str,
    low: str,
    ascend_ctx: bool,
    session_repos: tuple[str, ...],
    kb: KnowledgeBase,
    vocabulary: VocabularyMap | None,
) -> RouteDecision:
    known = {r.repo for r in kb.repositories}
    session = tuple(r for r in session_repos if r in known)

    named = [r for r in named_repositories(clean, kb, low) if not _only_a_config_value(clean, low, kb, r)]
    bare_mindie = bool(_BARE_MINDIE.search(clean, low))
    plugin_release = _names_a_plugin_release(clean, kb, vocabulary)
    # SGLang also runs on GPUs, so only MindIE-* and msModelSlim imply Ascend by themselves.
    ascend_only_named = any(r in ASCEND_ONLY for r in named)
    votes = (vocabulary or VocabularyMap()).votes(clean, ascend=ascend_ctx or ascend_only_named)

    if VLLM in named and ascend_ctx and not any(r in ASCEND_ONLY or r == VLLM_ASCEND for r in named):
        named.append(VLLM_ASCEND)  # vLLM named on an NPU: the plugin is what runs it
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
        elif ascend_only_named or bare_mindie or ascend_ctx:
            # vLLM next to Ascend (hardware, an error, another Ascend product) runs through the plugin;
            # upstream vLLM too when the text says so or uses names only vLLM owns.
            named.append(VLLM_ASCEND)
            if _UPSTREAM.search(clean, low) or _upstream_names(clean, vocabulary) >= MIN_VOTE:
                named.append(VLLM)
        else:
            named.append(VLLM)

    if bare_mindie and not any(r in MINDIE_COMPONENTS for r in named):
        component = _mindie_component(clean, low, bool(named) or plugin_release, votes)
        if component is None and any(r in MINDIE_COMPONENTS for r in session):
            component = next(r for r in session if r in MINDIE_COMPONENTS)  # the thread already said which
        if component is None:
            return _clarify(kb, "ambiguous: MindIE component", MINDIE_COMPONENTS, _MINDIE_QUESTION)
        named.append(component)

    if not named and not session:
        # An env var, config key, CLI tool, error sentence or release version that only one
        # product has settles the question instead of the menu or an out-of-scope note.
        settled_by_entity = [r for r in products_of_named_entities(clean, kb, lambda t: _shared_identifier(t, vocabulary)) if r in known]
        named.extend(settled_by_entity or _vocabulary_choice(votes))

    if not named and not session:
        if _OTHER_STACK.search(clean, low):
            # Another stack named positively (llama.cpp's CANN backend, LMDeploy or MindFormers on an NPU
            # included): not ours to answer, Ascend context or not.
            return RouteDecision("out_of_scope", (), reason="another stack")
        if ascend_ctx:
            prior = _ascend_prior(clean, low)
            if prior:
                named.extend(prior)
            else:
                # The serving stacks' answers differ and nothing here says which one runs: ask, offering
                # only what is in play (the vocabulary's candidates, else the stacks for an LLM question).
                ranked = [(r, score) for r, score in votes.ranked() if score > 0]
                if len(ranked) == 1 and ranked[0][1] >= MIN_VOTE / 2:
                    # One product's names and no other's (`max_num_seqs` on an NPU): weak, but all there is.
                    return RouteDecision("research", (ranked[0][0],), reason="vocabulary: " + ranked[0][0])
                in_play = tuple(r for r, _ in ranked)[:4]
                if len(in_play) < 2:
                    stacks = SERVING_STACKS if _LLM_CONTEXT.search(clean, low) else ASCEND_RUNTIMES
                    in_play = tuple(dict.fromkeys((*in_play, *stacks)))
                return _clarify(kb, "ambiguous: ascend", in_play)
        elif _OFF_TOPIC.search(clean, low):
            return RouteDecision("out_of_scope", (), reason="another topic")
        elif _SD_HINT.search(clean, low):
            # Image or video diffusion off Ascend: MindIE-SD is the only diffusion product here, and it
            # needs an NPU; upstream vLLM serves language models.
            return RouteDecision("out_of_scope", (), reason="diffusion on another stack")
        elif _LLM_CONTEXT.search(clean, low):
            # vLLM is in scope: an inference question with no product and no Ascend signal is its.
            named.append(VLLM)

    if VLLM_ASCEND in named and VLLM not in named and _VLLM_FEATURE.search(clean, low):
        named.append(VLLM)  # a feature upstream vLLM implements, used through the plugin: both answer
    if MINDIE_TURBO in named and VLLM_ASCEND not in named and ascend_ctx:
        named.append(VLLM_ASCEND)  # Turbo runs only inside vllm-ascend (v0.7.3): its questions span both
    if named and VLLM_ASCEND not in named and plugin_release:
        named.append(VLLM_ASCEND)  # a plugin release or image tag next to another product: a comparison
    if len(_dedupe(named)) > MAX_NAMED:
        # A bare "MindIE" in the list is its LLM service, like next to any other framework.
        stacks = tuple(r for r in SERVING_STACKS if r in named or (r == MINDIE_LLM and bare_mindie))
        if stacks and _WHICH.search(clean, low):  # "which of these runs X": the serving stacks answer
            return RouteDecision("research", stacks, reason="which of many: the serving stacks")
        return _clarify(kb, "too many products named", _dedupe(named))
    if named:
        return RouteDecision("research", _dedupe(named), reason="named: " + ", ".join(_dedupe(named)))
    if session and clean.strip() and not _OFF_TOPIC.search(clean, low):
        return RouteDecision("research", session, reason="follow-up in a thread about " + ", ".join(session))
    if not clean.strip():
        return RouteDecision("out_of_scope", (), reason="empty message")
    if _TECHNICAL.search(clean, low) and not _GPU_ONLY.search(clean, low):
        # A technical message (a source file, an env var, a snake_case name, an error) that names no
        # product and no other stack: declining needs positive evidence of another stack, so ask among
        # the NPU runtimes and upstream vLLM; a thread or the vocabulary may still settle it.
        return _clarify(kb, "technical, nothing named", (*ASCEND_RUNTIMES[:3], VLLM))
    return RouteDecision("out_of_scope", (), reason="no repository or Ascend context")


def _mindie_component(text: str, low: str, other_named: bool, votes: VocabularyVotes) -> str | None:
    """The MindIE component a bare "MindIE" means; None when nothing hints (then ask)."""
    if _SD_HINT.search(text, low):
        return MINDIE_SD
    if _MOTOR_HINT.search(text, low):
        return MINDIE_PYMOTOR if _PY_HINT.search(text, low) else MINDIE_MOTOR
    voted = [r for r in _vocabulary_choice(votes) if r in MINDIE_COMPONENTS]
    if len(voted) == 1:
        return voted[0]
    # Next to another framework ("MindIE vs vllm-ascend") or about serving a model, MindIE is what
    # users deploy by that name: its LLM service (MindIE-LLM holds the server since the split).
    if other_named or _LLM_CONTEXT.search(text, low) or _SERVICE.search(text, low):
        return MINDIE_LLM
    return None


def _names_a_plugin_release(text: str, kb: KnowledgeBase, vocabulary: VocabularyMap | None) -> bool:
    """A vllm-ascend release candidate or post release: a row of its matrix or a tag of its clone."""
    if names_a_vllm_ascend_release(text, kb):
        return True
    return vocabulary is not None and any(VLLM_ASCEND in vocabulary.owners("release", v) for v in release_tokens(text))


def _shared_identifier(identifier: str, vocabulary: VocabularyMap | None) -> bool:
    """An identifier a knowledge-base fact names that does not single out its product: an error the
    Ascend runtime raises under every product, an acronym (the name of a technique, format or metric
    every stack uses: MTP, GGUF, TPOT), or a name the clones show upstream vLLM owns
    (`max_num_seqs`, `--enforce-eager`: vllm-ascend's facts use them, but so does every vLLM user)."""
    if _has_ascend_failure(identifier, identifier.lower()) or _PLAIN_WORD.fullmatch(identifier):
        return True
    return vocabulary is not None and VLLM in vocabulary.owners_of_identifier(identifier)


def _upstream_names(text: str, vocabulary: VocabularyMap | None) -> float:
    """vLLM's own vote from the names a user types (flags, env vars, keys, classes). Module and file
    paths are left out: on an NPU they come from traceback frames and import errors, which run
    through vLLM's code whatever the plugin did ("No module named 'vllm.v1…'" is a plugin question)."""
    if vocabulary is None:
        return 0.0
    return vocabulary.votes(text, skip_kinds=(MODULE, FILE)).scores.get(VLLM, 0.0)


def _vocabulary_choice(votes: VocabularyVotes) -> tuple[str, ...]:
    """The product(s) whose own identifiers the text uses: the leader, or the two leaders when
    neither stands out (an answer about both beats a question)."""
    ranked = votes.ranked()
    if not ranked or ranked[0][1] < MIN_VOTE:
        return ()
    if len(votes.tokens.get(ranked[0][0], ())) < 2 and ranked[0][1] < LEAD * MIN_VOTE:
        return ()  # one class-like name alone is often part of a model's name ("…-w8a8-QuaRot")
    if len(ranked) > 1 and ranked[1][1] >= MIN_VOTE and ranked[0][1] < LEAD * ranked[1][1]:
        return (ranked[0][0], ranked[1][0])
    return (ranked[0][0],)


def _ascend_prior(text: str, low: str) -> tuple[str, ...]:
    """With Ascend context and nothing else to go on: the product(s) that do the job asked about."""
    if _SD_HINT.search(text, low):
        return (MINDIE_SD,)
    if _QUANTIZE.search(text, low) and not _SERVE_WORDS.search(text, low):
        return (MSMODELSLIM,)
    if _FRAMEWORK_CHOICE.search(text, low):
        return SERVING_STACKS
    if _VLLM_FEATURE.search(text, low):
        return (VLLM_ASCEND, VLLM)
    if _VLLM_ENGINE.search(text, low):
        return (VLLM_ASCEND,)
    return ()  # the products' answers differ: ask (threads may still settle it)


def _repo_spans(text: str, low: str, kb: KnowledgeBase, repo: str) -> list[tuple[int, int]]:
    """Where the aliases and evidence of `repo` match."""
    for candidate, checks in _matcher(kb).repos:
        if candidate.repo == repo:
            return [m.span() for c in checks for m in c.finditer(text, low)]
    return []


def _only_a_config_value(text: str, low: str, kb: KnowledgeBase, repo: str) -> bool:
    if repo != MSMODELSLIM:
        return False
    values = [m.span() for m in _QUANT_VALUE.finditer(text, low)]
    return bool(values) and all(any(a <= p < b for a, b in values) for p, _ in _repo_spans(text, low, kb, repo))


def _bare_vllm(text: str, low: str, kb: KnowledgeBase) -> frozenset[int]:
    """Where "vllm" stands on its own, leaving out config values and the "vLLM" inside a
    descriptive name of vllm-ascend ("the Ascend plugin for vLLM", "昇腾 vLLM 插件")."""
    bare = [m.start() for m in _BARE_VLLM.finditer(text, low)] + [m.start() for m in _VLLM_CLASS.finditer(text, low)]
    if not bare:
        return frozenset()
    skip = [m.span() for m in _VLLM_VALUE.finditer(text, low)]
    skip += _repo_spans(text, low, kb, VLLM_ASCEND)
    return frozenset(p for p in bare if not any(a <= p < b for a, b in skip))


def _only_incidental_vllm(text: str, low: str, bare: frozenset[int]) -> bool:
    """Every bare "vllm" is a version, a command or an import."""
    incidental = set()
    for m in _VLLM_INCIDENTAL.finditer(text, low):
        # the match may start at "from "/"-m "/"pip install "; record where the bare "vllm" (the last) starts
        incidental.add(m.start() + m.group(0).lower().rindex("vllm"))
    return bare <= incidental


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
