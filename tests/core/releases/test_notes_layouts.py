"""Release notes in the three layouts the products use, and a release the clone has no tag for."""
from __future__ import annotations

from pathlib import Path

from core.releases.changes import parse_numbered_notes, parse_release_notes, parse_table_notes
from core.releases.news import bullet_kind, release_news
from core.releases.tags import ReleaseChoice
from core.resolution.releases import version_key
from tests.fixtures.git_repos import make_repo

TABLE = """# 版本说明书

## 版本配套说明<a name="x"></a>

| 组件 | 版本 |

## 3.0.0 更新说明<a name="y"></a>

### 新增特性<a name="z"></a>

<table><thead align="left"><tr><th><p>编号</p></th><th><p>特性</p></th><th><p>具体内容</p></th></tr></thead>
<tbody><tr><td class="c"><p>1</p>
</td>
<td class="c"><p>功能</p>
</td>
<td class="c"><ul><li>新增`response_format`结构化输出能力，可选类型为json_object/json_schema。<a href="https://gitcode.com/Ascend/MindIE-LLM/issues/257">#Issue257</a></li><li>支持enable_thinking。<a href="https://gitcode.com/Ascend/MindIE-LLM/issues/240">#Issue240</a></li></ul>
</td>
</tr>
</tbody>
</table>

### 遗留问题<a name="w"></a>

<table><tbody><tr><td><p>1</p></td><td><p>beamsearch场景在openeuler镜像上时延劣化。</p></td><td><p>推荐使用ubuntu镜像。</p></td></tr></tbody></table>
"""

NUMBERED = """# 版本说明

## 特性变更说明

### 26.0.0.alpha02

1. 支持Qwen3.5 MOE模型W8A8量化
2. 优化自动调优功能

### 8.3.0

1. DeepSeek-V3.2-Exp模型W8A8量化
"""


def test_a_table_layout_gives_one_bullet_per_list_item_with_its_issue() -> None:
    bullets = parse_table_notes(TABLE)
    assert [(b.release, b.section, b.issues) for b in bullets] == [
        ("3.0.0", "新增特性", (257,)), ("3.0.0", "新增特性", (240,)), ("3.0.0", "遗留问题", ())]
    assert bullets[0].text == "功能 — 新增`response_format`结构化输出能力，可选类型为json_object/json_schema。"
    assert bullets[2].text == "beamsearch场景在openeuler镜像上时延劣化。 — 推荐使用ubuntu镜像。"
    assert [bullet_kind(b) for b in bullets] == ["added", "added", "known"]


def test_a_numbered_layout_gives_the_items_of_each_version() -> None:
    bullets = parse_numbered_notes(NUMBERED)
    assert [(b.release, b.text) for b in bullets] == [
        ("26.0.0.alpha02", "支持Qwen3.5 MOE模型W8A8量化"), ("26.0.0.alpha02", "优化自动调优功能"), ("8.3.0", "DeepSeek-V3.2-Exp模型W8A8量化")]
    assert parse_release_notes(NUMBERED) == []  # each layout has its own reader


def test_pre_releases_sort_before_their_release() -> None:
    order = sorted(["3.0.0", "3.0.0.beta.1", "3.0.0alpha1", "26.0.0.alpha02", "8.3.0", "v0.9.1rc1", "v0.9.1"], key=lambda t: version_key(t) or ())
    assert order == ["v0.9.1rc1", "v0.9.1", "3.0.0alpha1", "3.0.0.beta.1", "3.0.0", "8.3.0", "26.0.0.alpha02"]


def test_a_release_without_a_tag_is_framed_by_version_order(tmp_path: Path) -> None:
    clone = tmp_path / "MindIE-LLM"
    make_repo(clone, {"docs/zh/release_notes.md": TABLE + "\n".join(
        f"<table><tbody><tr><td><p>{i}</p></td><td><p>组件{i}</p></td><td><ul><li>填充条目{i}，与问题无关。</li></ul></td></tr></tbody></table>"
        for i in range(30))})
    mine = ReleaseChoice("verylucky01/MindIE-LLM", "2.3.0", "2.3.0", "")
    news = release_news(clone, mine, "MindIE 2.3.0 服务化，请求里带 response_format json_schema 不生效，是没支持吗", "zh")
    assert news.lead[0] == ("MindIE-LLM 3.0.0 新增（issue #257）：功能 — 新增`response_format`结构化输出能力，可选类型为"
                            "json_object/json_schema。 您的 2.3.0 还没有：请升级到 3.0.0 或更高版本。")
