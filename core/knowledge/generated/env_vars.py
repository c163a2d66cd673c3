"""vllm-ascend's env vars, read from the dict that defines them (vllm_ascend/envs.py's `env_variables`).

The file is parsed with `ast`, never imported or run. A row keeps the name, the default, how the value
is read (bool, int, float, str) when the code shows it, and the line: the comments above each entry
are vllm-ascend's own words and are not copied.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.knowledge.generated.tables import Extraction, GeneratedTable
from core.knowledge.schema import Bilingual, EnvVar

NAME = "env_vars"
REPO = "vllm-project/vllm-ascend"
PATH = "vllm_ascend/envs.py"
DICT_NAME = "env_variables"
MAX_SOURCE_BYTES = 1_000_000
_CASTS = {"bool": "bool", "int": "int", "float": "float", "str": "str"}


class EnvFileError(ValueError):
    """envs.py has no `env_variables` dict we can read."""


@dataclass(frozen=True)
class EnvVarRow:
    name: str
    default: str | None  # the literal default as text; None when unset, "(computed)" when not a literal
    type: str  # bool, int, float, str; "" when the code does not show it
    line: int


def _is_env_read(call: ast.Call) -> bool:
    """os.getenv(...), os.environ.get(...), getenv(...)."""
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.attr == "getenv" or (func.attr == "get" and isinstance(func.value, ast.Attribute) and func.value.attr == "environ")
    return isinstance(func, ast.Name) and func.id == "getenv"


def _default(call: ast.Call) -> str | None:
    node = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "default"), None)
    if node is None:
        return None
    try:
        value = ast.literal_eval(node)
    except ValueError:
        return "(computed)"
    return None if value is None else str(value)


def _type(body: ast.expr) -> str:
    """The outermost cast around the read: bool(int(os.getenv(...))) is a bool; a comparison is a bool."""
    if isinstance(body, ast.Compare):
        return "bool"
    if isinstance(body, ast.Call) and isinstance(body.func, ast.Name) and body.func.id in _CASTS:
        return _CASTS[body.func.id]
    if isinstance(body, ast.Call) and _is_env_read(body):
        return "str"
    if isinstance(body, ast.Call) and isinstance(body.func, ast.Attribute) and isinstance(body.func.value, ast.Call):
        return "str" if _is_env_read(body.func.value) else ""  # os.getenv(...).lower()
    return ""


def _row(name: str, value: ast.expr) -> EnvVarRow:
    body = value.body if isinstance(value, ast.Lambda) else value
    read = next((n for n in ast.walk(body) if isinstance(n, ast.Call) and _is_env_read(n)), None)
    return EnvVarRow(name, _default(read) if read is not None else None, _type(body), value.lineno)


def parse_env_vars(source: str) -> tuple[EnvVarRow, ...]:
    """The rows of `env_variables = {...}` (annotated or not), in the file's order."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise EnvFileError(f"not Python ({exc.msg}, line {exc.lineno})") from exc
    for node in tree.body:
        target = node.target if isinstance(node, ast.AnnAssign) else node.targets[0] if isinstance(node, ast.Assign) else None
        if isinstance(target, ast.Name) and target.id == DICT_NAME and isinstance(node.value, ast.Dict):  # type: ignore[union-attr]
            pairs = zip(node.value.keys, node.value.values)  # type: ignore[union-attr]
            rows = tuple(_row(k.value, v) for k, v in pairs if isinstance(k, ast.Constant) and isinstance(k.value, str))
            if rows:
                return rows
    raise EnvFileError(f"no `{DICT_NAME}` dict with string keys")


def extract(clone: Path) -> Extraction:
    """Raises EnvFileError or OSError."""
    path = clone / PATH
    if path.stat().st_size > MAX_SOURCE_BYTES:
        raise EnvFileError(f"{PATH} is larger than {MAX_SOURCE_BYTES} bytes")
    return Extraction(PATH, parse_env_vars(path.read_text(encoding="utf-8", errors="replace")))


def _purpose(row: dict[str, Any]) -> tuple[str, str]:
    """A line in our words: where it is defined, how it is read, its default."""
    default = row.get("default")
    kind = str(row.get("type") or "")
    shown = "unset" if default is None else f"`{default}`"
    shown_zh = "未设置" if default is None else f"`{default}`"
    read_en = f", read as {kind}" if kind else ""
    read_zh = f"，按 {kind} 读取" if kind else ""
    return (f"defined in vllm_ascend/envs.py{read_en}; default {shown}.", f"在 vllm_ascend/envs.py 中定义{read_zh}；默认值 {shown_zh}。")


def with_generated(shipped: tuple[EnvVar, ...], table: GeneratedTable) -> tuple[EnvVar, ...]:
    """The shipped entries (they explain what a variable does), then every variable of the table they
    lack, so a variable the clone defines is recognised even before anyone wrote a line about it."""
    known = {v.name for v in shipped}
    added = []
    for row in table.rows:
        name = str(row.get("name", ""))
        if not name or name in known:
            continue
        known.add(name)
        purpose_en, purpose_zh = _purpose(row)
        link = f"https://github.com/{table.repo}/blob/{table.commit}/{table.source.partition(':')[2]}#L{row.get('line', 1)}"
        # Built from the clone's table, not read from a knowledge file: no file rules (an empty example) apply.
        added.append(EnvVar.model_construct(name=name, scope="vllm-ascend", products=(table.repo,), value="setting", example="",
                                            purpose=Bilingual(purpose_en, purpose_zh), source=link))
    return shipped + tuple(added)
