"""Which files are indexed, and how each kind of file is cut into units. Pure: text in, chunks out."""
from __future__ import annotations

import re
from pathlib import PurePosixPath

from core.index.chunk_code import chunk_c_like, chunk_config, chunk_python
from core.index.chunk_markdown import chunk_markdown
from core.index.chunks import Chunk

MAX_FILE_BYTES = 512_000  # bigger files are data or generated code, not something to quote
MAX_DATA_FILE_BYTES = 64_000  # JSON/JSONL/CSV beyond this are datasets, not configuration

_DOC = {".md", ".markdown", ".rst", ".txt"}
_PY = {".py", ".pyi"}
_C = {".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".cu", ".cuh", ".proto", ".go", ".java", ".rs", ".ts", ".js"}
_SH = {".sh", ".bash"}
_CONFIG = {".yaml", ".yml", ".json", ".toml", ".ini", ".cfg", ".conf", ".jsonl", ".properties", ".env"}
_CONFIG_NAMES = {"dockerfile", "makefile", "cmakelists.txt", "requirements.txt", ".env.example"}
_DATA_EXT = {".json", ".jsonl", ".csv"}
_SKIP_DIRS = re.compile(r"(?:^|/)(?:third_party|3rdparty|thirdparty|vendor|vendored|node_modules|\.git|__pycache__|site-packages|dist|build)/", re.IGNORECASE)
_GENERATED = re.compile(r"(?:_pb2(?:_grpc)?\.py|\.min\.js|\.lock|\.pb\.h|\.pb\.cc|\.po|\.pot)$", re.IGNORECASE)


def file_kind(path: str) -> str | None:
    """'doc', 'python', 'c', 'shell', 'config', or None when the file is not indexed."""
    if _SKIP_DIRS.search(path) or _GENERATED.search(path):
        return None
    p = PurePosixPath(path)
    name = p.name.lower()
    suffix = p.suffix.lower()
    if name in _CONFIG_NAMES or name.startswith("dockerfile") or name.startswith("requirements"):
        return "config"
    if suffix in _DOC or name.startswith("readme"):
        return "doc"
    if suffix in _PY:
        return "python"
    if suffix in _C:
        return "c"
    if suffix in _SH:
        return "shell"
    if suffix in _CONFIG:
        return "config"
    return None


def should_index(path: str, size: int) -> bool:
    kind = file_kind(path)
    if kind is None or size > MAX_FILE_BYTES:
        return False
    return not (PurePosixPath(path).suffix.lower() in _DATA_EXT and size > MAX_DATA_FILE_BYTES)


def decode(data: bytes) -> str | None:
    """Text of a file, or None for binaries (a NUL byte near the start)."""
    if b"\0" in data[:8000]:
        return None
    return data.decode("utf-8", errors="replace")


def chunk_file(path: str, text: str) -> list[Chunk]:
    kind = file_kind(path)
    if kind == "doc":
        return chunk_markdown(text, path, rst=path.lower().endswith(".rst"))
    if kind == "python":
        return chunk_python(text)
    if kind == "c":
        return chunk_c_like(text)
    if kind == "shell":
        return chunk_c_like(text, shell=True)
    if kind == "config":
        return chunk_config(text)
    return []
