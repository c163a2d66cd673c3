"""Format checks for the evaluation sets under eval/*.jsonl.

Every line of every eval/*.jsonl is validated: required keys and their types,
unique ids, a known language and category, canonical repository names, and
evidence given either as "owner/name:path" of one of the nine repositories or
as an https URL. Questions must not repeat across files (a tuning set that
shares questions with the held-out set would leak). When the clones exist
(REPOS_DIR or /work/repos), every "owner/name:path" evidence must name a file
tracked in that clone; without clones that part is skipped.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
EVAL_DIR = ROOT / "eval"
REPOSITORIES_JSON = ROOT / "core" / "knowledge" / "repositories.json"

CATEGORIES = frozenset({"troubleshooting", "howto", "config", "code_location", "version", "feature"})
LANGS = frozenset({"zh", "en"})
REQUIRED: dict[str, type | tuple[type, ...]] = {
    "id": str,
    "question": str,
    "expected_repos": list,
    "needs_clarification": bool,
    "out_of_scope": bool,
    "evidence": list,
    "answer_facts": list,
    "category": str,
    "lang": str,
    "source_note": str,
}
# Keys a set may leave out (the answer-quality set does not mark cross-language
# questions); when present they must have this type. The index dev set requires them.
OPTIONAL: dict[str, type] = {"cross_language": bool, "question_unpinned": str}
# owner/name:path — owner and name as GitHub spells them, path relative (no leading "/" or
# space; inner spaces are allowed, MindIE-Motor has "docs/zh/API Reference/"). Linear: each part
# is one character class with no nesting, and "." does not cross a newline.
_EVIDENCE_RE = re.compile(r"([A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*):([^\s/].*)")


@cache
def canonical_repos() -> frozenset[str]:
    data = json.loads(REPOSITORIES_JSON.read_text(encoding="utf-8"))
    return frozenset(entry["repo"] for entry in data["repositories"])


@dataclass(frozen=True)
class Problem:
    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


def _is_str_list(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) and item.strip() for item in value)


def split_evidence(item: str) -> tuple[str, str] | None:
    """("owner/name", "path") for a repository evidence, None when it is not one."""
    match = _EVIDENCE_RE.fullmatch(item)
    if match is None or match.group(2) != match.group(2).rstrip():
        return None
    return match.group(1), match.group(2)


def check_row(row: object, where: str, repos: frozenset[str]) -> list[Problem]:
    """Problems with one parsed line (empty when the line is valid)."""
    if not isinstance(row, dict):
        return [Problem(where, "line is not a JSON object")]
    problems: list[Problem] = []
    for key, kind in REQUIRED.items():
        if key not in row:
            problems.append(Problem(where, f"missing key {key!r}"))
        elif not isinstance(row[key], kind):
            problems.append(Problem(where, f"{key!r} should be {kind}, got {type(row[key]).__name__}"))
    for key, kind in OPTIONAL.items():
        if key in row and not isinstance(row[key], kind):
            problems.append(Problem(where, f"{key!r} should be {kind}, got {type(row[key]).__name__}"))
    if problems:
        return problems
    if not row["id"].strip() or not row["question"].strip():
        problems.append(Problem(where, "empty id or question"))
    # The release-blind wording of a question (`bot eval --variant unpinned`) must be a real
    # question and a different one, or the two runs would measure the same text.
    if "question_unpinned" in row:
        if not row["question_unpinned"].strip():
            problems.append(Problem(where, "question_unpinned is blank"))
        elif normalise_question(row["question_unpinned"]) == normalise_question(row["question"]):
            problems.append(Problem(where, "question_unpinned repeats question"))
    if row["lang"] not in LANGS:
        problems.append(Problem(where, f"lang {row['lang']!r} not in {sorted(LANGS)}"))
    # Each set keeps its own category vocabulary (the answer-quality set also files routing,
    # clarification and out-of-scope questions); the index set's six are checked by its own test.
    if not row["category"].strip():
        problems.append(Problem(where, "empty category"))
    for key in ("expected_repos", "evidence", "answer_facts"):
        if not _is_str_list(row[key]):
            problems.append(Problem(where, f"{key!r} must be a list of non-empty strings"))
    if problems:
        return problems
    for repo in row["expected_repos"]:
        if repo not in repos:
            problems.append(Problem(where, f"expected_repos has non-canonical {repo!r}"))
    for item in row["evidence"]:
        if item.startswith("https://"):
            continue
        parsed = split_evidence(item)
        if parsed is None:
            problems.append(Problem(where, f"evidence {item!r} is neither owner/name:path nor an https URL"))
        elif parsed[0] not in repos:
            problems.append(Problem(where, f"evidence {item!r} names a repository outside the allowlist"))
        elif ".." in parsed[1].split("/"):
            problems.append(Problem(where, f"evidence {item!r} has a '..' path segment"))
    answerable = not row["needs_clarification"] and not row["out_of_scope"]
    if answerable and (not row["expected_repos"] or not row["evidence"]):
        problems.append(Problem(where, "an answerable question needs expected_repos and evidence"))
    return problems


def normalise_question(text: str) -> str:
    return " ".join(text.casefold().split())


def check_files(files: Iterable[tuple[str, str]], repos: frozenset[str]) -> list[Problem]:
    """Problems across (name, text) files: per-line checks, duplicate ids per file, duplicate questions across files."""
    problems: list[Problem] = []
    questions: dict[str, str] = {}
    for name, text in files:
        ids: set[str] = set()
        for number, line in enumerate(text.splitlines(), start=1):
            where = f"{name}:{number}"
            if not line.strip():
                problems.append(Problem(where, "blank line"))
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as error:
                problems.append(Problem(where, f"invalid JSON ({error.msg})"))
                continue
            row_problems = check_row(row, where, repos)
            problems.extend(row_problems)
            if row_problems:
                continue
            if row["id"] in ids:
                problems.append(Problem(where, f"duplicate id {row['id']!r}"))
            ids.add(row["id"])
            key = normalise_question(row["question"])
            if key in questions:
                problems.append(Problem(where, f"question repeats {questions[key]}"))
            else:
                questions[key] = where
    return problems


def eval_files() -> list[Path]:
    return sorted(EVAL_DIR.glob("*.jsonl"))


@cache
def tracked_files(clone: Path) -> frozenset[str]:
    out = subprocess.run(
        ["git", "-C", str(clone), "ls-files", "-z"], capture_output=True, check=True
    ).stdout.decode("utf-8", "surrogateescape")
    return frozenset(path for path in out.split("\0") if path)


def repos_dir() -> Path:
    return Path(os.environ.get("REPOS_DIR") or "/work/repos")


# ---------------------------------------------------------------- the real files


def test_eval_sets_exist() -> None:
    assert eval_files(), f"no *.jsonl under {EVAL_DIR}"


def test_every_eval_line_is_well_formed() -> None:
    files = [(path.name, path.read_text(encoding="utf-8")) for path in eval_files()]
    problems = check_files(files, canonical_repos())
    assert not problems, "\n".join(str(problem) for problem in problems[:40])


def test_index_dev_set_size_and_spread() -> None:
    path = EVAL_DIR / "index_dev.jsonl"
    if not path.exists():
        pytest.skip("eval/index_dev.jsonl not present")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert len(rows) >= 100
    assert all(isinstance(row.get("cross_language"), bool) for row in rows), "index_dev marks cross_language on every line"
    assert {row["category"] for row in rows} <= CATEGORIES
    assert all(row["answer_facts"] for row in rows), "every index question states what the answer contains"
    assert not any(row["needs_clarification"] or row["out_of_scope"] for row in rows), "a retrieval set: answerable only"
    assert {row["lang"] for row in rows} == LANGS
    assert sum(row["cross_language"] for row in rows) >= 25
    covered = {repo for row in rows for repo in row["expected_repos"]}
    assert covered == set(canonical_repos()), f"products without a question: {set(canonical_repos()) - covered}"


def test_repository_evidence_exists_in_the_clones() -> None:
    base = repos_dir()
    checked = 0
    missing: list[str] = []
    for path in eval_files():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            for item in json.loads(line).get("evidence", []):
                parsed = split_evidence(item) if isinstance(item, str) else None
                if parsed is None:
                    continue
                clone = base / parsed[0]
                if not (clone / ".git").exists():
                    continue
                checked += 1
                if parsed[1] not in tracked_files(clone):
                    missing.append(f"{path.name}:{number}: {item}")
    if checked == 0:
        pytest.skip(f"no clones under {base}")
    assert not missing, "\n".join(missing[:40])


# ---------------------------------------------------------------- the validator itself

REPOS = frozenset({"vllm-project/vllm-ascend", "verylucky01/MindIE-LLM"})


def good_row(**changes: object) -> dict[str, object]:
    row: dict[str, object] = {
        "id": "t-1",
        "question": "Where is the ascend platform class?",
        "expected_repos": ["vllm-project/vllm-ascend"],
        "needs_clarification": False,
        "out_of_scope": False,
        "evidence": ["vllm-project/vllm-ascend:vllm_ascend/platform.py", "https://docs.vllm.ai/en/latest/"],
        "answer_facts": ["NPUPlatform lives in platform.py"],
        "category": "code_location",
        "lang": "en",
        "cross_language": False,
        "source_note": "fixture",
    }
    row.update(changes)
    return row


def dump(*rows: dict[str, object]) -> str:
    return "\n".join(json.dumps(row, ensure_ascii=False) for row in rows) + "\n"


def test_validator_accepts_a_good_line() -> None:
    assert check_files([("a.jsonl", dump(good_row()))], REPOS) == []


def test_evidence_paths_may_contain_inner_spaces_only() -> None:
    assert split_evidence("verylucky01/MindIE-LLM:docs/zh/API Reference/README.md") == (
        "verylucky01/MindIE-LLM",
        "docs/zh/API Reference/README.md",
    )
    assert split_evidence("verylucky01/MindIE-LLM: README.md") is None
    assert split_evidence("verylucky01/MindIE-LLM:README.md ") is None
    assert split_evidence("verylucky01/MindIE-LLM:a\nb") is None


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"lang": "fr"}, "lang"),
        ({"category": " "}, "category"),
        ({"expected_repos": ["vllm/vllm-ascend"]}, "non-canonical"),
        ({"evidence": ["vllm_ascend/platform.py"]}, "neither"),
        ({"evidence": ["http://example.com/a"]}, "neither"),
        ({"evidence": ["someone/else:README.md"]}, "allowlist"),
        ({"evidence": ["vllm-project/vllm-ascend:/etc/passwd"]}, "neither"),
        ({"evidence": ["vllm-project/vllm-ascend:docs/../../x"]}, ".."),
        ({"evidence": []}, "answerable"),
        ({"cross_language": "no"}, "cross_language"),
        ({"answer_facts": [""]}, "answer_facts"),
        ({"question_unpinned": "  "}, "question_unpinned is blank"),
        ({"question_unpinned": " Where is the ASCEND platform  class?"}, "question_unpinned repeats question"),
        ({"question_unpinned": ["Where is it?"]}, "question_unpinned"),
    ],
)
def test_validator_rejects_a_bad_field(changes: dict[str, object], expected: str) -> None:
    problems = check_files([("a.jsonl", dump(good_row(**changes)))], REPOS)
    assert problems and any(expected in problem.message for problem in problems), problems


def test_validator_accepts_an_unpinned_wording() -> None:
    row = good_row(question="Where is the platform class in v0.9.1?", question_unpinned="Where is the platform class in my release?")
    assert check_files([("a.jsonl", dump(row))], REPOS) == []


def test_release_sets_carry_an_unpinned_wording_on_every_line() -> None:
    for name in ("release_dev.jsonl", "release_heldout.jsonl"):
        rows = [json.loads(line) for line in (EVAL_DIR / name).read_text(encoding="utf-8").splitlines() if line.strip()]
        assert rows and all("question_unpinned" in row for row in rows), name


def test_validator_rejects_missing_key_and_broken_json() -> None:
    row = good_row()
    del row["source_note"]
    problems = check_files([("a.jsonl", dump(row) + "{not json\n")], REPOS)
    messages = [problem.message for problem in problems]
    assert any("missing key 'source_note'" in message for message in messages)
    assert any("invalid JSON" in message for message in messages)


def test_validator_allows_empty_evidence_for_out_of_scope() -> None:
    row = good_row(out_of_scope=True, category="out_of_scope", expected_repos=[], evidence=[], answer_facts=[])
    assert check_files([("a.jsonl", dump(row))], REPOS) == []


def test_validator_rejects_duplicate_ids_and_questions_across_files() -> None:
    first = good_row()
    same_id = good_row(question="Another question")
    same_question = good_row(id="t-9", question="  where IS the ascend   platform class?")
    problems = check_files([("a.jsonl", dump(first, same_id)), ("b.jsonl", dump(same_question))], REPOS)
    messages = [str(problem) for problem in problems]
    assert any("duplicate id" in message and message.startswith("a.jsonl:2") for message in messages)
    assert any("question repeats a.jsonl:1" in message and message.startswith("b.jsonl:1") for message in messages)


def test_evidence_check_uses_the_clone(tmp_path: Path) -> None:
    clone = tmp_path / "vllm-project" / "vllm-ascend"
    (clone / "docs").mkdir(parents=True)
    (clone / "docs" / "faq.md").write_text("# FAQ\n", encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "add", "docs/faq.md"], check=True)
    files = tracked_files(clone)
    assert "docs/faq.md" in files
    assert "docs/missing.md" not in files
