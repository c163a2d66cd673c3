"""What one file of a repository says the repository owns.

Ownership comes from definitions and documentation, not from mere use: classes defined in its code,
flags it adds to a parser or documents, env vars it reads or documents, config keys of its config
files, the module paths of its own packages, messages it raises or logs as errors, image references
in its docs. Names a file imports from vLLM or SGLang belong to those projects ("shared vocabulary":
vllm-ascend code is full of vLLM's names), so they are recorded for the imported project, whether or
not its clone is present.
"""
from __future__ import annotations

import re
from collections.abc import Iterator

from core.vocabulary.tokens import (
    CLASS, ENV, ERROR, FILE, FLAG, IMAGE, KEY, MODULE, flag_tokens, image_tokens, module_windows, shingles,
    source_file_name, word_tokens,
)

VLLM = "vllm-project/vllm"
SGLANG = "sgl-project/sglang"
VLLM_ASCEND = "vllm-project/vllm-ascend"
_IMPORTED_PROJECTS = {"vllm": VLLM, "sglang": SGLANG}

_CODE = (".py", ".cpp", ".cc", ".c", ".h", ".hpp", ".sh")
_DOCS = (".md", ".rst", ".txt")
_CONFIG = (".json", ".yaml", ".yml", ".toml", ".ini", ".cfg")
READ_SUFFIXES = _CODE + _DOCS + _CONFIG
MAX_FILE_BYTES = 400_000

_CLASS_DEF = re.compile(r"^[ \t]{0,12}(?:class|struct)[ \t]{1,4}([A-Za-z_][A-Za-z0-9_]{3,60})", re.M)
_PY_DEF = re.compile(r"^[ \t]{0,12}(?:async[ \t]{1,4})?def[ \t]{1,4}([a-z][a-z0-9]{1,30}(?:_[a-z0-9]{1,30}){1,8})[ \t]{0,4}\(", re.M)
_ADD_ARGUMENT = re.compile(r"add_argument\([ \t\n]{0,40}[\"'](--[a-z][a-z0-9_\-]{1,60})[\"']")
_ENV_READ = re.compile(r"(?:getenv|environ(?:\.get)?|environ\[|env_var|setdefault)[ \t(\[]{0,3}[\"']([A-Z][A-Z0-9_]{3,80})[\"']")
_ENV_LITERAL = re.compile(r"[\"']([A-Z][A-Z0-9]{1,30}(?:_[A-Z0-9]{1,30}){1,8})[\"'][ \t]{0,3}:")
_EXPORT = re.compile(r"(?:export|set)[ \t]{1,4}([A-Z][A-Z0-9]{1,30}(?:_[A-Z0-9]{1,30}){1,8})=")
_RAISE = re.compile(
    r"(?:raise[ \t]{1,4}[A-Za-z_][A-Za-z0-9_.]{0,60}|(?:logger|logging|LOG|log)\.(?:error|exception|critical|fatal)"
    r"|throw[ \t]{1,4}[A-Za-z_:]{1,60}|LOG_ERROR|_LOG_ERROR|LOGE)[ \t]{0,4}\([ \t\n]{0,40}(?:f|r)?[\"']([^\"'\n]{12,240})[\"']"
)
_IMPORT = re.compile(r"^[ \t]{0,12}from[ \t]{1,4}(vllm|sglang)((?:\.[A-Za-z_][A-Za-z0-9_]{0,60}){0,8})[ \t]{1,4}import[ \t]{1,4}(\([^)]{0,2000}\)|[^\n]{1,400})", re.M)
_CONFIG_KEY = re.compile(r"(?:^|[{,][ \t]{0,8}|\n[ \t\-]{0,16})[\"']?([A-Za-z_][A-Za-z0-9_]{4,60})[\"']?[ \t]{0,3}:", re.M)
_VLLM_SERVE = re.compile(r"vllm[ \t]{1,4}serve[^\n]{0,2000}(?:\\\n[^\n]{0,400}){0,40}")
_PLACEHOLDER = re.compile(r"\{[^{}\n]{0,80}\}|%[sdrif]")

Token = tuple[str, str, str]  # (repo, kind, token)


def _package_root(path: str) -> bool:
    low = path.lower()
    return not any(part in low for part in ("tests/", "test/", "/test_", "examples/", "benchmarks/")) and not low.startswith("test")


def file_tokens(repo: str, path: str, text: str) -> Iterator[Token]:
    """The tokens `path` says `repo` (or an imported project) owns."""
    low_path = path.lower()
    if low_path.endswith(_CODE):
        yield from _code_tokens(repo, path, text)
    elif low_path.endswith(_DOCS):
        yield from _doc_tokens(repo, text)
    elif low_path.endswith(_CONFIG):
        for m in _CONFIG_KEY.finditer(text):
            yield from ((repo, kind, tok) for kind, tok in word_tokens(m.group(1)))


def _code_tokens(repo: str, path: str, text: str) -> Iterator[Token]:
    own = _package_root(path)
    if path.endswith(".py") and own:
        yield from ((repo, MODULE, t) for t in module_windows(path[:-3].split("/")))
    if own and (name := source_file_name(path.rsplit("/", 1)[-1])):
        yield repo, FILE, name
    if own:
        for m in _CLASS_DEF.finditer(text):
            yield from ((repo, kind, tok) for kind, tok in word_tokens(m.group(1)) if kind == CLASS)
        for m in _PY_DEF.finditer(text):
            yield repo, KEY, m.group(1)
    # Each pattern runs only when its literal is in the file: most files have none of them.
    if "add_argument" in text:
        for m in _ADD_ARGUMENT.finditer(text):
            yield repo, FLAG, m.group(1).replace("_", "-")
    for pattern, needle in ((_ENV_READ, "env"), (_ENV_LITERAL, "_"), (_EXPORT, "export")):
        if needle in text:
            for m in pattern.finditer(text):
                if "_" in m.group(1):
                    yield repo, ENV, m.group(1).lower()
    if any(n in text for n in ("raise", "rror", "throw", "LOG", "fatal", "critical", "exception")):
        for m in _RAISE.finditer(text):
            yield from ((repo, ERROR, s) for s in shingles(_PLACEHOLDER.sub(" ", m.group(1))))
    for m in (_IMPORT.finditer(text) if "from vllm" in text or "from sglang" in text else ()):
        owner = _IMPORTED_PROJECTS[m.group(1)]
        module = (m.group(1) + m.group(2)).split(".")
        yield from ((owner, MODULE, t) for t in module_windows(module))
        for kind, tok in word_tokens(m.group(3)):
            yield owner, kind, tok


def _doc_tokens(repo: str, text: str) -> Iterator[Token]:
    served: set[str] = set()
    for m in _VLLM_SERVE.finditer(text):
        # Flags on a `vllm serve` line are vLLM's own, whichever project's docs show them.
        served.update(flag_tokens(m.group(0)))
    yield from ((VLLM, FLAG, f) for f in served)
    for flag in flag_tokens(text):
        if flag not in served:
            yield repo, FLAG, flag
            if repo == VLLM_ASCEND:
                # A plugin: the serve flags its docs show are vLLM's too (its own options are keys of
                # --additional-config, read from its code), so vLLM shares them.
                yield VLLM, FLAG, flag
    for m in _EXPORT.finditer(text):
        yield repo, ENV, m.group(1).lower()
    for kind, tok in word_tokens(text):
        if kind == ENV:
            yield repo, ENV, tok
    yield from ((repo, IMAGE, t) for t in image_tokens(text))
