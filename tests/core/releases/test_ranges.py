"""Release ranges of knowledge-base advice: derived from a clone's tags, stated in the files, applied."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from core.knowledge.loader import KNOWLEDGE_DIR
from core.releases.ranges import NO_RANGE, FILES, Releases, derive, main, needs, outside, stated, write
from tests.fixtures.git_repos import commit_files, git, make_repo

VA = "vllm-project/vllm-ascend"


def test_a_range_holds_from_since_up_to_until_and_not_on_its_gaps() -> None:
    r = Releases("0.10.1rc1", "0.12.0", ("0.11.0rc0",))
    assert [r.holds(v) for v in ("0.9.1", "0.10.1rc1", "0.11.0rc0", "0.11.0", "0.12.0", "0.13.0")] == [
        False, True, False, True, False, False]
    assert r.holds("main") and r.holds("0.9.2.dev45+gabc")  # nothing to place: no claim
    assert outside(r, "0.9.1") and not outside(r, "0.11.0") and not outside(r, None) and not outside(NO_RANGE, "0.9.1")


def test_the_words_say_what_the_release_lacks() -> None:
    r = Releases("0.10.1rc1", "0.12.0")
    assert needs(r, "0.9.1", "en") == "needs v0.10.1rc1 or later"
    assert needs(r, "0.13.0", "en") == "removed in v0.12.0"
    assert needs(r, "0.9.1", "zh") == "需要 v0.10.1rc1 或更高版本"
    assert needs(r, None, "en") == "v0.10.1rc1 up to, not including, v0.12.0"
    assert needs(Releases("0.14.0rc1"), None, "zh") == "v0.14.0rc1 及以后"


# ------------------------------------------------------------------ deriving from a small clone

TAGS = ("v0.7.1rc1", "v0.7.3", "v0.8.4rc1", "v0.9.1", "v0.10.1rc1", "v0.11.0", "v0.12.0")


def _code(*names: str) -> str:
    return "".join(f'x = config.get("{n}")\n' for n in names) or "pass\n"


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`cudagraph_mode` from v0.10.1rc1 on; `VLLM_ASCEND_ENABLE_X` from v0.9.1 to v0.11.0 (gone in
    v0.12.0); `enable_lora` until v0.11.0 (an upstream name: the plugin dropping it proves nothing);
    the default of `VLLM_ASCEND_ENABLE_Y` turns to "1" in v0.11.0."""
    root = tmp_path_factory.mktemp("ranges") / "vllm-ascend"
    plan = {
        "v0.7.1rc1": ("enable_lora",), "v0.7.3": ("enable_lora",), "v0.8.4rc1": ("enable_lora",),
        "v0.9.1": ("enable_lora", "VLLM_ASCEND_ENABLE_X"), "v0.10.1rc1": ("enable_lora", "VLLM_ASCEND_ENABLE_X", "cudagraph_mode"),
        "v0.11.0": ("enable_lora", "VLLM_ASCEND_ENABLE_X", "cudagraph_mode"), "v0.12.0": ("cudagraph_mode",),
    }
    for i, tag in enumerate(TAGS):
        default = "1" if tag in ("v0.11.0", "v0.12.0") else "0"
        files = {"vllm_ascend/config.py": _code(*plan[tag]), "VERSION": tag,
                 "vllm_ascend/envs.py": f'"VLLM_ASCEND_ENABLE_Y": lambda: os.getenv("VLLM_ASCEND_ENABLE_Y", "{default}"),\n'}
        if i == 0:
            make_repo(root, files, "first")
        else:
            commit_files(root, files, f"release {tag}")
        git(root, "tag", tag)
    return root


def _knowledge(root: Path) -> Path:
    """A knowledge directory with the ranged files, holding one item of each kind."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "products").mkdir()
    note = lambda en: {"en": en, "zh": en + "。"}  # noqa: E731 - a row of the fixture
    (root / "problem_patterns.json").write_text(json.dumps({"patterns": [{
        "id": "graph", "products": [VA], "title_en": "graph mode and cudagraph_mode", "keywords_en": ["graph"],
        "causes": [note("capture fails")],
        "steps": [note("Switch cudagraph_mode to PIECEWISE."), note("Set VLLM_ASCEND_ENABLE_X=0."), note("Restart.")],
        "commands": ["vllm serve <model> --enforce-eager", "vllm serve <model> --enable-lora"],
    }]}, indent=2), encoding="utf-8")
    (root / "error_codes.json").write_text(json.dumps({"codes": [{
        "code": "507015", "aliases": [], "products": [VA, "sgl-project/sglang"], "steps": [note("Check ASCEND_LAUNCH_BLOCKING=1.")],
        "commands": []}]}, indent=2), encoding="utf-8")
    (root / "incompatibilities.json").write_text(json.dumps({"combinations": [{
        "id": "x", "products": [VA], "title_en": "X with graph", "explanation_en": "VLLM_ASCEND_ENABLE_X breaks capture.",
        "workaround_en": "Turn it off."}]}, indent=2), encoding="utf-8")
    (root / "env_vars.json").write_text(json.dumps({"variables": [{
        "name": "VLLM_ASCEND_ENABLE_X", "products": [VA], "purpose_en": "X; replaced by cudagraph_mode later."}]}, indent=2),
        encoding="utf-8")
    (root / "products" / "vllm_ascend.json").write_text(json.dumps({"facts": [{
        "id": "y-on", "products": [VA], "title_en": "Y", "text_en": "Y is on by default.", "commands": [],
        "range_anchor": {"path": "vllm_ascend/envs.py", "pattern": "ENABLE_Y\", \"1\""}}]}, indent=2), encoding="utf-8")
    return root


def test_ranges_come_from_the_tags_whose_code_names_the_identifier(clone: Path, tmp_path: Path) -> None:
    derived = derive(clone, _knowledge(tmp_path / "knowledge"))
    steps = ".patterns[graph].steps"
    assert derived[("problem_patterns.json", f"{steps}[0]")] == Releases("0.10.1rc1")
    assert derived[("problem_patterns.json", f"{steps}[1]")] == Releases("0.9.1", "0.12.0")  # the plugin's own name
    assert ("problem_patterns.json", f"{steps}[2]") not in derived  # names nothing
    assert ("problem_patterns.json", ".patterns[graph].commands[1]") not in derived  # --enable-lora: upstream, only dropped
    assert ("error_codes.json", ".codes[507015].steps[0]") not in derived  # a CANN variable is never ranged
    assert derived[("incompatibilities.json", ".combinations[x]")] == Releases("0.9.1", "0.12.0")
    # an env var entry is about its own name, not the name its text says replaces it
    assert derived[("env_vars.json", ".variables[VLLM_ASCEND_ENABLE_X]")] == Releases("0.9.1", "0.12.0")
    assert derived[("products/vllm_ascend.json", ".facts[y-on]")] == Releases("0.11.0")  # from its anchor


def test_write_states_the_ranges_and_the_check_then_agrees(clone: Path, tmp_path: Path) -> None:
    knowledge = _knowledge(tmp_path / "knowledge")
    assert main([str(clone), "--knowledge", str(knowledge)]) == 1  # nothing stated yet: disagrees
    changed = write(clone, knowledge)
    assert "problem_patterns.json: .patterns[graph].steps[0]" in changed
    steps = json.loads((knowledge / "problem_patterns.json").read_text(encoding="utf-8"))["patterns"][0]["steps"]
    assert steps[1]["since"] == "0.9.1" and steps[1]["until"] == "0.12.0" and "VLLM_ASCEND_ENABLE_X" in steps[1]["range_from"]
    assert "since" not in steps[2]
    assert main([str(clone), "--knowledge", str(knowledge)]) == 0
    assert stated(knowledge) == derive(clone, knowledge)
    # a hand edit that disagrees with the clone is caught
    data = json.loads((knowledge / "problem_patterns.json").read_text(encoding="utf-8"))
    data["patterns"][0]["steps"][0]["since"] = "0.9.1"
    (knowledge / "problem_patterns.json").write_text(json.dumps(data), encoding="utf-8")
    assert main([str(clone), "--knowledge", str(knowledge)]) == 1


def test_the_built_in_ranges_agree_with_the_vllm_ascend_clone(tmp_path: Path) -> None:
    """The ranges in core/knowledge/ are what the clone says (skipped without a clone)."""
    clone = next((Path(c) / VA for c in (os.environ.get("REPOS_DIR"), "/work/repos") if c and (Path(c) / VA / ".git").exists()), None)
    if clone is None:
        pytest.skip("no vllm-ascend clone under REPOS_DIR or /work/repos")
    copy = tmp_path / "knowledge"
    (copy / "products").mkdir(parents=True)
    for name in FILES:
        shutil.copy(KNOWLEDGE_DIR / name, copy / name)
    derived, claimed = derive(clone, copy), stated(copy)
    wrong = {k: (claimed.get(k), derived.get(k)) for k in set(derived) | set(claimed)
             if derived.get(k, NO_RANGE) != claimed.get(k, NO_RANGE)}
    assert not wrong, "run: python -m core.releases.ranges <clone> --write"
