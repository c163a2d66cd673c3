"""`python -m bot search [--repo OWNER/NAME …] [-k N] [--json] QUERY|-`: ranked passages from the index.

With `-`, stdin holds one query per line: plain text, or {"query": "...", "repos": ["owner/name", …]}.

Everything printed comes from the index (issue text written by anyone, file contents) or from the
query: terminal escapes (colours, cursor moves, OSC 8 links, OSC 52 clipboard writes) and control
characters are stripped from text output, as `ask` does, and escaped in JSON output, which keeps the
data exact while no raw control byte reaches the terminal.
"""
from __future__ import annotations

import json
import sys
from collections.abc import Sequence

from adapters.terminal.render import strip_controls
from bot.settings import Settings
from bot.wiring import build_retriever
from core.index.passage import Passage
from core.research.repos import find_repo

MAX_K = 50
MAX_QUERY_CHARS = 4000


# json.dumps(ensure_ascii=False) escapes C0 controls but writes DEL and C1 (0x80-0x9f, 8-bit CSI/OSC) raw.
_RAW_IN_JSON = {code: f"\\u{code:04x}" for code in range(0x7F, 0xA0)}


def _say(text: str) -> None:
    print(strip_controls(text), flush=True)


def _say_json(data: object) -> None:
    print(json.dumps(data, ensure_ascii=False).translate(_RAW_IN_JSON), flush=True)


class BadQuery(ValueError):
    pass


def resolve_repos(names: Sequence[str], indexed: Sequence[str]) -> list[str]:
    out: list[str] = []
    for name in names:
        if not isinstance(name, str):
            raise BadQuery(f"repository names must be strings, got {type(name).__name__}")
        info = find_repo(name)
        if info is None:
            raise BadQuery(f"unknown repository '{name}'")
        if info.name not in indexed:
            raise BadQuery(f"{info.name} is not in the index (indexed: {', '.join(indexed)})")
        out.append(info.name)
    return out


def parse_line(line: str) -> tuple[str, list[str] | None]:
    """A stdin line: plain text, or a JSON object with "query" and optional "repos"."""
    stripped = line.strip()
    if stripped.startswith("{"):
        try:
            obj = json.loads(stripped)
        except ValueError as exc:
            raise BadQuery(f"not valid JSON: {exc.msg}") from exc
        if not isinstance(obj, dict) or not isinstance(obj.get("query"), str):
            raise BadQuery('a JSON line needs a "query" string')
        repos = obj.get("repos")
        if repos is not None and not isinstance(repos, list):
            raise BadQuery('"repos" must be a list of owner/name strings')
        return obj["query"], repos
    return stripped, None


def _text(query: str, passages: list[Passage]) -> str:
    if not passages:
        return f"{query}\n  no passage clears the relevance threshold"
    lines = [query]
    for n, p in enumerate(passages, 1):
        lines.append(f"{n}. [{p.score:.1f}] {p.repo} {p.path}:{p.start_line}-{p.end_line} ({p.kind})  {p.title}")
        lines.append(f"   {p.url}")
        body = [s for s in p.text.splitlines() if s.strip()][:3]
        lines += [f"   | {s[:160]}" for s in body]
    return "\n".join(lines)


def run_search(settings: Settings, query: list[str], repos: list[str], k: int, as_json: bool) -> int:
    if not 1 <= k <= MAX_K:
        _say(f"-k must be between 1 and {MAX_K}")
        return 2
    index = build_retriever(settings, warm=False)
    if index is None:
        _say(f"no knowledge index in {settings.index_path}: run `python -m bot index` first")
        return 1
    try:
        default_repos = resolve_repos(repos, index.repos)
    except BadQuery as exc:
        _say(str(exc))
        return 2

    def one(text: str, wanted: list[str]) -> None:
        passages = index.search(text[:MAX_QUERY_CHARS], wanted, k)
        if as_json:
            _say_json({"query": text, "results": [p.to_dict() for p in passages]})
        else:
            _say(_text(text, passages) + "\n")

    if query != ["-"]:
        text = " ".join(query).strip()
        if not text:
            _say("empty query: give the question as arguments, or '-' to read one per line from stdin")
            return 2
        one(text, default_repos)
        return 0
    failed = 0
    for raw in sys.stdin.buffer.read().decode("utf-8", errors="replace").splitlines():
        if not raw.strip():
            continue
        try:
            text, line_repos = parse_line(raw)
            if not text.strip():
                raise BadQuery("empty query")
            wanted = resolve_repos(line_repos, index.repos) if line_repos is not None else default_repos
        except BadQuery as exc:
            failed += 1
            if as_json:
                _say_json({"query": raw.strip()[:200], "error": str(exc)})
            else:
                _say(f"{raw.strip()[:200]}\n  error: {exc}\n")
            continue
        one(text.strip(), wanted)
    return 1 if failed else 0
