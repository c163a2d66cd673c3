"""References between threads: what a PR closes, a duplicate's original, the PR a maintainer names."""
from __future__ import annotations

from core.resolution import links


def test_closing_keywords_in_this_repository_only() -> None:
    body = "Fixes #12, closes #13. Resolves https://github.com/o/n/issues/14 and fixes https://github.com/other/repo/issues/15. 修复 #16"
    assert links.fixes(body, "o/n") == (12, 13, 14, 16)
    assert links.fixes("see #12 for context", "o/n") == ()


def test_duplicates_and_named_fixes() -> None:
    assert links.duplicate_of("Duplicate of #4412, please follow there") == 4412
    assert links.duplicate_of("this is fine") is None
    assert links.fixed_by("This was fixed by #2301 and #2302 should fix the rest") == (2301, 2302)
    assert links.fixed_by("PR #77 fixes it") == (77,)
    assert links.fixed_by("I tried #88 but no luck") == ()
