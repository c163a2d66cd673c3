"""Docs and READMEs name no folder of the machine they were written on (issue 25 item 8).

A newcomer's checkout has no `/work/repos` and no `../shared` beside it: a path like that in the
docs is a step they cannot follow. Paths inside the repository, and `/tmp/…` as a place the reader
chooses for output, are fine.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted({*ROOT.glob("*.md"), *ROOT.glob("docs/**/*.md"), *ROOT.glob("eval/*.md")})

# home and workspace folders of Linux, macOS and Windows machines
MACHINE_FOLDER = re.compile(r"(?<![\w.~-])(?:/(?:work|home|Users|root|mnt|data|opt/[a-z]+/home)/|[A-Z]:\\Users\\)")
PARENT_PATH = re.compile(r"(?:\.\./)+[\w.-]*")


def machine_paths(page: Path, root: Path = ROOT) -> list[str]:
    """Each line of `page` naming a machine folder, or a `../` path that leaves `root` or leads nowhere."""
    found = []
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        outside = any(
            not (target := (page.parent / match.group()).resolve()).is_relative_to(root) or not target.exists()
            for match in PARENT_PATH.finditer(line)
        )
        if outside or MACHINE_FOLDER.search(line):
            found.append(f"{page.relative_to(root)}:{number}: {line.strip()}")
    return found


def test_the_pages_are_found():
    names = {str(p.relative_to(ROOT)) for p in PAGES}
    assert {"README.md", "README.zh-CN.md", "docs/index.md", "docs/zh/index.md", "eval/README.md"} <= names


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_page_names_a_folder_of_the_machine_it_was_written_on(page: Path):
    assert machine_paths(page) == []


def test_the_check_catches_each_kind_of_machine_path(tmp_path):
    # the shapes issue 25 found, in a checkout's README and in a page of its docs folder
    (tmp_path / "deploy").mkdir()
    (tmp_path / "docs").mkdir()
    (tmp_path / "deploy" / "slack-app-manifest.yaml").write_text("")
    lines = (
        "REPOS_DIR=/work/repos python bench/index_bench.py\n"
        "see `/home/alice/notes`\n"
        "notes in /Users/bob/ref\n"
        "serve `../shared/data/issues`\n"
        "fine: `--out /tmp/eval`, `./repos`, `~/.cache`\n"
    )
    (tmp_path / "README.md").write_text(lines, encoding="utf-8")
    (tmp_path / "docs" / "page.md").write_text(lines + "fine: [manifest](../deploy/slack-app-manifest.yaml)\n", encoding="utf-8")
    for page in (tmp_path / "README.md", tmp_path / "docs" / "page.md"):
        found = machine_paths(page, root=tmp_path)
        assert [line.split(": ", 1)[0].rsplit(":", 1)[1] for line in found] == ["1", "2", "3", "4"], found
