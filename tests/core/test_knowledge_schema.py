"""core/knowledge/schema.py: the JSON Schema editors use is current and agrees with the loader, and
bilingual pairs on disk become one value."""
from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from core.knowledge.loader import KNOWLEDGE_DIR, PRODUCTS_DIR, ProductFactError, load_knowledge_base, load_product_facts
from core.knowledge.schema import FILES, JSON_SCHEMA_DIR, PRODUCT_FILE_SCHEMA, Bilingual, json_schemas, main, render, stale_schemas

jsonschema = pytest.importorskip("jsonschema")


def _schema(name: str) -> dict[str, Any]:
    return json.loads((JSON_SCHEMA_DIR / name).read_text(encoding="utf-8"))


def _shipped() -> list[tuple[Path, str]]:
    """Every shipped knowledge file and the schema file it must satisfy."""
    out = [(KNOWLEDGE_DIR / name, name.replace(".json", ".schema.json")) for name in FILES]
    out += [(path, PRODUCT_FILE_SCHEMA) for path in sorted(PRODUCTS_DIR.glob("*.json"))]
    return out


def test_the_committed_schema_files_are_what_the_models_emit() -> None:
    assert stale_schemas() == [], "run: python -m core.knowledge.schema --write"
    assert sorted(p.name for p in JSON_SCHEMA_DIR.glob("*.json")) == sorted(json_schemas())


def test_every_top_level_file_has_a_schema() -> None:
    data_files = {p.name for p in KNOWLEDGE_DIR.glob("*.json")}
    assert data_files == set(FILES)


@pytest.mark.parametrize(("path", "schema"), _shipped(), ids=lambda v: v.name if isinstance(v, Path) else v)
def test_every_shipped_file_satisfies_its_schema(path: Path, schema: str) -> None:
    validator = jsonschema.Draft202012Validator(_schema(schema))
    validator.check_schema(validator.schema)
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(json.loads(path.read_text(encoding="utf-8")))]
    assert errors == []


def test_the_schema_keeps_the_disk_shape_and_catches_a_missing_translation() -> None:
    data = json.loads((KNOWLEDGE_DIR / "error_codes.json").read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(_schema("error_codes.schema.json"))
    broken = copy.deepcopy(data)
    broken["codes"][0]["steps"][0].pop("zh")
    assert any("'zh' is a required property" in e.message for e in validator.iter_errors(broken))
    broken = copy.deepcopy(data)
    broken["codes"][0].pop("meaning_en")
    assert any("'meaning_en' is a required property" in e.message for e in validator.iter_errors(broken))
    # A command may be a plain string or an object, as the loader accepts.
    fine = copy.deepcopy(data)
    fine["codes"][0]["commands"] = ["npu-smi info", {"run": "npu-smi info -t board"}]
    assert list(validator.iter_errors(fine)) == []


def test_a_product_fact_schema_names_the_allowed_kinds() -> None:
    validator = jsonschema.Draft202012Validator(_schema(PRODUCT_FILE_SCHEMA))
    data = json.loads((PRODUCTS_DIR / "vllm_ascend.json").read_text(encoding="utf-8"))
    data["facts"][0]["kind"] = "rumour"
    assert any("'rumour' is not one of" in e.message for e in validator.iter_errors(data))


def test_check_reports_a_stale_schema_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for name, schema in json_schemas().items():
        (tmp_path / name).write_text(render(schema), encoding="utf-8")
    assert stale_schemas(tmp_path) == []
    (tmp_path / "env_vars.schema.json").write_text("{}", encoding="utf-8")
    (tmp_path / "hardware.schema.json").unlink()
    assert sorted(stale_schemas(tmp_path)) == ["env_vars.schema.json", "hardware.schema.json"]
    assert main(["--check"]) == 0  # the committed copy is current


def test_bilingual_pairs_become_one_value() -> None:
    kb = load_knowledge_base()
    raw = json.loads((KNOWLEDGE_DIR / "error_codes.json").read_text(encoding="utf-8"))["codes"][0]
    code = kb.error_code(raw["code"])
    assert code is not None
    assert (code.meaning.of("en"), code.meaning.of("zh")) == (raw["meaning_en"], raw["meaning_zh"])
    assert (code.steps[0].text.en, code.steps[0].text.zh) == (raw["steps"][0]["en"], raw["steps"][0]["zh"])
    assert Bilingual("a", "甲").of("zh") == "甲" and Bilingual("a", "甲").of("en") == "a"


def test_a_product_fact_error_is_a_knowledge_error(tmp_path: Path) -> None:
    (tmp_path / "x.json").write_text(json.dumps({"facts": [{"id": "x-y"}]}), encoding="utf-8")
    with pytest.raises(ProductFactError, match=r"^x\.json: id='x-y': "):
        load_product_facts(tmp_path)
