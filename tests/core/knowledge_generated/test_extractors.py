"""Each extractor reads its table from files written here (never from a real clone)."""
from __future__ import annotations

import pytest

from core.knowledge.generated.env_vars import EnvFileError, parse_env_vars
from core.knowledge.generated.md_tables import tables, text
from core.knowledge.generated.supported_features import FeaturesDocError, parse_features
from core.knowledge.generated.supported_models import ModelsDocError, parse_models

ENVS = '''import os
raise SystemExit("parsing must never run this file")

def helper():
    return 1

env_variables: dict[str, object] = {
    # a comment that must not be copied
    "PLAIN": lambda: os.getenv("PLAIN"),
    "FLAG": lambda: bool(int(os.getenv("FLAG", "1"))),
    "LEVEL": lambda: int(os.environ.get("LEVEL", 2)),
    "MODE": lambda: os.getenv("MODE", "fast").lower(),
    "WHERE": lambda: os.getenv("WHERE", os.path.join("a", "b")),
}
'''


def test_env_vars_are_read_with_ast_without_running_the_file() -> None:
    rows = parse_env_vars(ENVS)
    assert [(r.name, r.default, r.type) for r in rows] == [
        ("PLAIN", None, "str"), ("FLAG", "1", "bool"), ("LEVEL", "2", "int"), ("MODE", "fast", "str"), ("WHERE", "(computed)", "str")]
    assert rows[0].line == 9 and rows[-1].line == 13
    assert all("comment" not in repr(r) for r in rows)


@pytest.mark.parametrize("source", ["x = {", "other = {'A': 1}\n", "env_variables = {}\n"])
def test_an_env_file_without_the_dict_is_rejected(source: str) -> None:
    with pytest.raises(EnvFileError):
        parse_env_vars(source)


MODELS = """# Supported Models

## Text-Only

### Core

=== "A2/A3"

    | Model | Support | Note | Extra Column | BF16 | Supported Hardware | LoRA | max-model-len | Doc |
    |-------|---------|------|--------------|------|--------------------|------|---------------|-----|
    | Alpha-7B | ✅ | words we drop | x | ✅ | A2/A3 | ❌ | 128k | [Alpha](../../tutorials/models/Alpha.md) |
    | Beta<br>Gamma | 🔵 |  |  |  | A3 | 🟡<sup>1</sup> |  |  |

=== "Atlas 300I DUO"

    | Support | Model | Supported Hardware |
    |---|---|---|
    | ❌ | Alpha-7B | 300I |

Text at the margin ends the tab.

| Model | Support |
|---|---|
| Delta | 🟡 |
"""


def test_models_are_read_by_header_words_in_their_section_and_tab() -> None:
    rows = parse_models(MODELS, "docs/source/user_guide/support_matrix/supported_models.md")
    assert [(r.tab, r.model, r.support, r.hardware) for r in rows] == [
        ("A2/A3", "Alpha-7B", "supported", "A2/A3"), ("A2/A3", "Beta / Gamma", "experimental", "A3"),
        ("Atlas 300I DUO", "Alpha-7B", "not supported", "300I"), ("", "Delta", "untested", "")]
    alpha = rows[0]
    assert alpha.section == "Text-Only / Core" and alpha.max_model_len == "128k"
    assert alpha.features == {"BF16": "supported", "LoRA": "not supported"}  # the added column holds no status
    assert alpha.doc == "docs/source/tutorials/models/Alpha.md"
    assert rows[1].features == {"LoRA": "untested"}
    assert "words we drop" not in repr(rows)
    with pytest.raises(ModelsDocError):
        parse_models("# Nothing\n\n| A | B |\n|---|---|\n| 1 | 2 |\n")


def test_features_keep_the_status_words_not_the_next_step() -> None:
    doc = "# F\n\n| Status | Feature | Next Step |\n|--|--|--|\n| 🟢 Functional | Graph Mode | a sentence |\n| 🟡 Planned | Enc-dec | |\n"
    assert [(r.feature, r.status) for r in parse_features(doc)] == [("Graph Mode", "functional"), ("Enc-dec", "planned")]
    with pytest.raises(FeaturesDocError):
        parse_features("# F\n\nno table\n")


def test_cells_keep_words_and_tables_know_their_headings() -> None:
    assert text('[<abbr title="Data Parallel">DP</abbr>](https://x.invalid/dp)<sup>2</sup>') == "DP"
    found = list(tables("# T\n\n## A\n\n| x | y |\n|--|--|\n| 1 | 2 |\n\n## B\n\n| z |\n|--|\n"))
    assert [(t.headings, t.header, len(t.rows)) for t in found] == [(("T", "A"), ("x", "y"), 1), (("T", "B"), ("z",), 0)]
