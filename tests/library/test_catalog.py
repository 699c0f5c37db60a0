"""The shipped catalog is valid and covers what users need; bad entries are named."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop_app.library.catalog import DEFAULT_CATALOG, load_catalog
from desktop_app.library.errors import CatalogError


def test_the_shipped_catalog_is_valid_and_broad() -> None:
    pairs = load_catalog()

    assert DEFAULT_CATALOG.name == "catalog.toml" and len(pairs) >= 6
    assert {"qwen2.5", "qwen2.5-coder", "llama-3", "gemma-3"} <= {p.family for p in pairs}
    assert {"chat", "code", "multilingual", "korean"} <= {u for p in pairs for u in p.uses}
    for pair in pairs:
        assert pair.target.repo != pair.draft.repo
        assert 3 <= pair.size_ratio <= 100, pair.id  # the draft is much smaller than the target
        for f in (pair.target, pair.draft):
            assert f.quantization in f.file, f"{pair.id}: {f.file} is not {f.quantization}"
            assert f.repo.lower().endswith("gguf")


def test_catalog_pairs_share_a_family_tokenizer() -> None:
    # Same family means same tokenizer: a cross-family pair would never pass the vocab check.
    for pair in load_catalog():
        stem = pair.family.split("-")[0].split(".")[0]
        assert stem in pair.target.repo.lower() or stem in pair.target.file.lower()
        assert stem in pair.draft.repo.lower() or stem in pair.draft.file.lower()


GOOD = """
schema_version = 1
[[pair]]
id = "tiny"
name = "Tiny"
family = "x"
license = "mit"
uses = ["chat"]
[pair.target]
repo = "a/b-GGUF"
file = "b-Q4_K_M.gguf"
quantization = "Q4_K_M"
size_gb = 4.0
parameters_b = 7.0
[pair.draft]
repo = "a/c-GGUF"
file = "c-Q8_0.gguf"
quantization = "Q8_0"
size_gb = 0.5
parameters_b = 0.5
"""


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (('uses = ["chat"]', 'uses = ["poetry"]'), r"pair #1 \('tiny'\): 'uses' must be"),
        (('size_gb = 4.0\n', ''), r"pair #1 \('tiny'\) target: missing required key 'size_gb'"),
        (('repo = "a/c-GGUF"', 'repo = "not a repo"'), r"draft: repo 'not a repo' is not a Hugging Face repo id"),
        (('license = "mit"', 'license = "mit"\nstars = 5'), r"unknown key\(s\) stars"),
        (('parameters_b = 0.5', 'parameters_b = 9.0'), r"the draft \(9.0B\) must be smaller"),
        (('file = "c-Q8_0.gguf"', 'file = "c.bin"'), r"must be a .gguf file name"),
        (('schema_version = 1', 'schema_version = 2'), r"schema_version must be 1"),
    ],
)
def test_a_bad_entry_raises_a_clear_error_naming_it(tmp_path: Path, change: tuple[str, str], message: str) -> None:
    path = tmp_path / "catalog.toml"
    path.write_text(GOOD.replace(*change, 1))

    with pytest.raises(CatalogError, match=message):
        load_catalog(path)


def test_the_good_example_loads(tmp_path: Path) -> None:
    path = tmp_path / "catalog.toml"
    path.write_text(GOOD)
    (pair,) = load_catalog(path)
    assert pair.target.parameters_b == 7.0 and pair.uses == ("chat",)


def test_invalid_toml_and_a_missing_file_are_reported(tmp_path: Path) -> None:
    with pytest.raises(CatalogError, match="not found"):
        load_catalog(tmp_path / "nope.toml")
    bad = tmp_path / "catalog.toml"
    bad.write_text("[[pair]\n")
    with pytest.raises(CatalogError, match="not valid TOML"):
        load_catalog(bad)
