"""`search_code` and `read_file` over local clones (REPOS_DIR/<owner>/<name>).

Both work on a commit, never on the working tree: `git grep <sha>` and
`git show <sha>:<path>` read any ref without a checkout, and every result
carries a permalink at that commit, so a citation keeps pointing at the code
the bot read.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from pydantic import Field, ValidationInfo, field_validator

from core.messages import Language, Source
from core.research.git import GitError, is_safe_path, is_safe_ref, run_git
from core.research.repos import RepoInfo, local_path, permalink, web_base
from core.research.tools.base import RepoArgs, ToolOutput, failure, short
from core.releases.pinning import current_pins, pinned_tag

MAX_FILES = 20
MAX_LINES_PER_FILE = 4
MAX_LINE_CHARS = 200
DEFAULT_READ_LINES = 200
MAX_READ_LINES = 400
_REF = "Optional branch, tag or commit."


@dataclass(frozen=True)
class Checkout:
    repo: RepoInfo
    path: Path
    commit: str
    ref: str
    web: str

    def link(self, file: str, start: int | None = None, end: int | None = None) -> str:
        return permalink(self.web, self.commit, file, start, end)


class LocalRepos:
    """Finds the local clone of an allowlisted repository and resolves refs in it."""

    def __init__(self, repos_dir: Path, clone_urls: dict[str, str], git_timeout: float = 20.0) -> None:
        self.repos_dir = repos_dir
        self.clone_urls = clone_urls
        self.git_timeout = git_timeout

    async def resolve(self, repo: RepoInfo, ref: str | None) -> Checkout | ToolOutput:
        path = local_path(self.repos_dir, repo)
        if not (path / ".git").exists() and not (path / "HEAD").exists():
            return failure(
                f"There is no local clone of {repo.name} (an operator runs `python -m bot sync`). "
                "Use ask_deepwiki or search_issues for this repository instead."
            )
        wanted = ref or "HEAD"
        if not is_safe_ref(wanted):
            return failure(f"'{short(wanted, 80)}' is not a valid git ref.")
        for candidate in (wanted, f"origin/{wanted}", f"refs/tags/{wanted}"):
            result = await run_git(
                ["rev-parse", "--verify", "--quiet", f"{candidate}^{{commit}}"], path, self.git_timeout
            )
            if result.ok:
                commit = result.stdout.decode().strip()
                return Checkout(repo, path, commit, wanted, web_base(repo, self.clone_urls, path))
        return failure(
            f"The ref '{wanted}' is not in the local clone of {repo.name} (shallow clones hold only the "
            "default branch). Search without a ref, or use search_issues / ask_deepwiki for other versions."
        )

    async def clean_worktree(self, checkout: Checkout) -> bool:
        """True when the working tree holds exactly the resolved commit (sync keeps it so)."""
        if checkout.ref != "HEAD" or not (checkout.path / ".git").exists():
            return False
        result = await run_git(["diff-index", "--quiet", "HEAD", "--"], checkout.path, self.git_timeout)
        return result.ok

    async def git(self, checkout: Checkout, args: list[str]) -> bytes:
        result = await run_git(args, checkout.path, self.git_timeout)
        # git grep exits 1 for "no match"; anything above is a real failure
        if result.returncode > 1:
            raise GitError(f"git {args[0]} failed: {result.stderr.decode(errors='replace').strip()[:200]}")
        return result.stdout


def _release_ref(value: str | None, info: ValidationInfo) -> str | None:
    """No ref given: the user's release when this answer is pinned to one (core/releases/pinning.py).
    Filled in the arguments, so the research cache keys the result by the ref it was read at."""
    if value is not None or not isinstance(info.data.get("repo"), str):
        return value
    return pinned_tag(info.data["repo"])


def _as_of(checkout: "Checkout") -> str:
    """", as of v0.9.1 (the user's release)" when the checkout is the answer's pinned release."""
    choice = current_pins().get(checkout.repo.name)
    if choice is None or choice.tag != checkout.ref:
        return ""
    return f", as of {choice.tag} (the user's release" + ("" if choice.exact else f"; nearest at or below their {choice.asked}") + ")"


class SearchCodeArgs(RepoArgs):
    query: str = Field(min_length=1, max_length=200, description="Literal text to find (identifier, error code, message), in English.")
    ref: str | None = Field(default=None, validate_default=True, description=_REF)

    _release = field_validator("ref")(_release_ref)


@dataclass
class SearchCode:
    name: ClassVar[str] = "search_code"
    description: ClassVar[str] = (
        "Search the source code of one repository (local git clone) for a literal string, case-insensitive: "
        "an identifier, an error code, a config key, a log message. Returns matching lines grouped by file, "
        "each file with a permalink at the searched commit. Use short, specific queries; several words "
        "match files containing all of them when the exact phrase is absent. `ref` is a branch, tag or "
        "commit (default: the user's release when known, else the clone's current commit)."
    )
    Args: ClassVar[type[SearchCodeArgs]] = SearchCodeArgs
    repos: LocalRepos
    cache_ttl: int
    timeout: float

    def describe(self, args: SearchCodeArgs, language: Language) -> str:
        if language == "zh":
            return f"正在 {args.repo} 的代码中搜索 {short(args.query)}"
        return f"Searching {args.repo} code for {short(args.query)}"

    async def run(self, args: SearchCodeArgs) -> ToolOutput:
        checkout = await self.repos.resolve(args.info, args.ref)
        if isinstance(checkout, ToolOutput):
            return checkout
        base = ["grep", "-n", "-I", "-i", "-F", "-z", f"--max-count={MAX_LINES_PER_FILE}"]
        # A clean checkout of the commit is searched in the working tree: same content, about twice as fast.
        where = [] if args.ref is None and await self.repos.clean_worktree(checkout) else [checkout.commit]
        prefix = f"{checkout.commit}:" if where else ""
        out = await self.repos.git(checkout, [*base, "-e", args.query, *where, "--"])
        hits = _parse_grep(out, prefix)
        mode = "exact phrase"
        words = [w for w in args.query.split() if len(w) > 1]
        if not hits and len(words) > 1:
            patterns: list[str] = []
            for word in words[:6]:
                patterns += ["-e", word]
            out = await self.repos.git(checkout, [*base, "--all-match", *patterns, *where, "--"])
            hits = _parse_grep(out, prefix)
            mode = "files containing all words"
        head = f"search_code in {checkout.repo.name} at commit {checkout.commit[:12]} (ref {checkout.ref}{_as_of(checkout)}) for \"{args.query}\""
        if not hits:
            return ToolOutput(f"{head}: no matches. Try a shorter identifier, a different spelling, or ask_deepwiki.")
        files = list(hits.items())
        lines = [f"{head} ({mode}): matches in {len(files)} file(s)" + (f", showing {MAX_FILES}" if len(files) > MAX_FILES else "")]
        sources = []
        for file, matches in files[:MAX_FILES]:
            link = checkout.link(file, matches[0][0])
            sources.append(Source(f"{checkout.repo.name}: {file}", link))
            lines.append(f"\n{file}\n{link}")
            lines += [f"  {number}: {text}" for number, text in matches]
        return ToolOutput("\n".join(lines), tuple(sources))


def _parse_grep(output: bytes, prefix: str) -> dict[str, list[tuple[int, str]]]:
    hits: dict[str, list[tuple[int, str]]] = {}
    for raw in output.decode("utf-8", errors="replace").splitlines():
        parts = raw.split("\0", 2)
        if len(parts) != 3 or not parts[0].startswith(prefix) or not parts[1].isdigit():
            continue
        text = parts[2].strip()
        if len(text) > MAX_LINE_CHARS:
            text = text[:MAX_LINE_CHARS] + "…"
        hits.setdefault(parts[0][len(prefix):], []).append((int(parts[1]), text))
    return hits


class ReadFileArgs(RepoArgs):
    path: str = Field(min_length=1, max_length=500, description="File or directory path relative to the repository root.")
    start_line: int | None = Field(default=None, ge=1, description="First line to read (1-based).")
    end_line: int | None = Field(default=None, ge=1, description="Last line to read (inclusive).")
    ref: str | None = Field(default=None, validate_default=True, description=_REF)

    _release = field_validator("ref")(_release_ref)

    @field_validator("path")
    @classmethod
    def _relative(cls, value: str) -> str:
        value = value.strip()
        while value.startswith("./"):
            value = value[2:]
        if value in ("", "/", "."):
            return "."
        value = value.rstrip("/")
        if not is_safe_path(value):
            raise ValueError("path must be relative to the repository root, without '..'")
        return value


@dataclass
class ReadFile:
    name: ClassVar[str] = "read_file"
    description: ClassVar[str] = (
        "Read a file (or list a directory) from one repository's local git clone at a ref (default: the user's "
        "release when known), with line "
        "numbers and a permalink to the exact lines. Default: the first 200 lines; at most 400 lines per "
        "call, so read long files in ranges. Use a path that search_code or DeepWiki returned; "
        "path '.' lists the repository root."
    )
    Args: ClassVar[type[ReadFileArgs]] = ReadFileArgs
    repos: LocalRepos
    cache_ttl: int
    timeout: float

    def describe(self, args: ReadFileArgs, language: Language) -> str:
        return f"正在阅读 {args.repo} 的 {args.path}" if language == "zh" else f"Reading {args.path} in {args.repo}"

    async def run(self, args: ReadFileArgs) -> ToolOutput:
        checkout = await self.repos.resolve(args.info, args.ref)
        if isinstance(checkout, ToolOutput):
            return checkout
        spec = f"{checkout.commit}:" if args.path == "." else f"{checkout.commit}:{args.path}"
        kind = await run_git(["cat-file", "-t", spec], checkout.path, self.repos.git_timeout)
        if not kind.ok:
            return failure(
                f"{args.path} does not exist in {checkout.repo.name} at {checkout.commit[:12]}. "
                "Use search_code to find the right path, or read_file with path '.' to list the root."
            )
        if kind.stdout.strip() == b"tree":
            return await self._list(checkout, args.path, spec)
        return await self._read(checkout, args, spec)

    async def _list(self, checkout: Checkout, path: str, spec: str) -> ToolOutput:
        out = await self.repos.git(checkout, ["ls-tree", spec])
        names = []
        for row in out.decode("utf-8", errors="replace").splitlines():
            meta, _, name = row.partition("\t")
            names.append(name + "/" if " tree " in f" {meta} " else name)
        url = f"{checkout.web}/tree/{checkout.commit}" + ("" if path == "." else f"/{path}")
        body = "\n".join(names[:300]) + (f"\n… {len(names) - 300} more" if len(names) > 300 else "")
        text = f"Directory {path} of {checkout.repo.name} at {checkout.commit[:12]}{_as_of(checkout)}\n{url}\n{body}"
        # The listed entries come from git, not from file contents: the bot vouches for these paths.
        prefix = "" if path == "." else f"{path}/"
        listed = tuple(prefix + name.rstrip("/") for name in names[:300])
        return ToolOutput(text, (Source(f"{checkout.repo.name}: {path}/", url),), paths=listed)

    async def _read(self, checkout: Checkout, args: ReadFileArgs, spec: str) -> ToolOutput:
        content = (await self.repos.git(checkout, ["cat-file", "blob", spec])).decode("utf-8", errors="replace")
        if "\0" in content[:8000]:
            return failure(f"{args.path} is a binary file.")
        lines = content.splitlines()
        start = min(args.start_line or 1, max(len(lines), 1))
        end = args.end_line or start + DEFAULT_READ_LINES - 1
        end = max(start, min(end, start + MAX_READ_LINES - 1, len(lines)))
        link = checkout.link(args.path, start, end)
        numbered = "\n".join(f"{n}| {lines[n - 1]}" for n in range(start, end + 1)) if lines else "(empty file)"
        more = f"\n… file has {len(lines)} lines; read further with start_line={end + 1}" if end < len(lines) else ""
        text = f"{args.path} in {checkout.repo.name} at {checkout.commit[:12]}{_as_of(checkout)}, lines {start}-{end}\n{link}\n{numbered}{more}"
        # Links and paths written inside the file are the file's claims, not ours.
        source = Source(f"{checkout.repo.name}: {args.path} L{start}-{end}", link)
        return ToolOutput(text, (source,), origin=args.path)
