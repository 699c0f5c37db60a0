"""The shipped catalog is valid, current and covers what users need; bad entries are named."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from desktop_app.library.catalog import (
    DEFAULT_CATALOG,
    DRAFTING_METHODS,
    METHODS_WITH_DRAFT,
    RUNTIME_OVERHEAD_GB,
    CatalogPair,
    load_catalog,
    parse_catalog,
)
from desktop_app.library.errors import CatalogError

PAIRS = load_catalog()
_PAIR_LINE = re.compile(r"^\[\[pair\]\]$", re.M)


def test_the_shipped_catalog_is_valid_and_broad() -> None:
    assert DEFAULT_CATALOG.name == "catalog.toml" and len(PAIRS) >= 15
    families = {p.family for p in PAIRS}
    assert {"qwen2.5", "qwen2.5-coder", "llama-3", "gemma-3"} <= families  # the pairs that still make sense
    assert {"qwen3", "qwen3.5", "qwen3.6", "gemma-4"} <= families  # the current families
    assert any(p.family.startswith("exaone") for p in PAIRS)
    assert {"chat", "code", "multilingual", "korean", "reasoning"} <= {u for p in PAIRS for u in p.uses}
    assert set(DRAFTING_METHODS) == {"model", "mtp", "assistant", "ngram"}
    assert {p.drafting for p in PAIRS} == set(DRAFTING_METHODS)  # every method has at least one pair


def test_korean_users_get_a_korean_model_with_a_same_tokenizer_draft() -> None:
    korean = [p for p in PAIRS if "korean" in p.uses and p.drafting == "model" and p.family.startswith("exaone")]
    assert korean
    for pair in korean:
        assert pair.draft is not None and "exaone" in pair.draft.repo.lower()


@pytest.mark.parametrize("pair", PAIRS, ids=[p.id for p in PAIRS])
def test_every_entry_follows_the_schema_for_its_drafting_method(pair: CatalogPair) -> None:
    assert pair.drafting in DRAFTING_METHODS
    assert (pair.draft is not None) == (pair.drafting in METHODS_WITH_DRAFT)
    assert pair.notes and "\n" not in pair.notes and pair.license and pair.family
    for f in pair.files:
        assert f.size_bytes > 0 and f.file.endswith(".gguf")
        assert f.source.startswith(f"https://huggingface.co/{f.repo}/resolve/") and f.source.endswith("/" + f.file)
        if f.quantization:
            assert f.quantization.lower() in f.file.lower(), f"{pair.id}: {f.file} is not {f.quantization}"
        assert f.repo.lower().endswith("gguf")
    # RAM need: both files, the KV cache at the catalog's context, the runtime's buffers.
    assert pair.context_tokens == 8192 and pair.kv_cache_gb >= 0
    expected = pair.download_bytes / 1e9 + pair.kv_cache_gb + RUNTIME_OVERHEAD_GB
    assert pair.ram_gb == pytest.approx(expected) and pair.ram_gb > pair.target.size_gb


@pytest.mark.parametrize("pair", [p for p in PAIRS if p.drafting == "model"], ids=lambda p: p.id)
def test_a_draft_model_is_a_much_smaller_sibling_with_the_same_tokenizer(pair: CatalogPair) -> None:
    assert pair.draft is not None and pair.target.repo != pair.draft.repo
    ratio = pair.size_ratio
    assert ratio is not None and 3 <= ratio <= 100, pair.id  # the draft is much smaller than the target
    # Same family means same tokenizer: a cross-family pair would never pass the vocab check.
    stem = pair.family.split("-")[0].split(".")[0]
    for f in (pair.target, pair.draft):
        assert stem in f.repo.lower() or stem in f.file.lower()


@pytest.mark.parametrize("pair", [p for p in PAIRS if p.drafting == "assistant"], ids=lambda p: p.id)
def test_an_assistant_drafter_ships_beside_its_gemma_4_target(pair: CatalogPair) -> None:
    assert pair.family == "gemma-4" and pair.draft is not None
    assert pair.draft.repo == pair.target.repo  # Google's drafter only fits the target it was trained with
    assert pair.draft.filename.startswith("mtp-gemma-4-")
    assert pair.draft.size_bytes < pair.target.size_bytes / 10


@pytest.mark.parametrize("pair", [p for p in PAIRS if p.drafting == "mtp"], ids=lambda p: p.id)
def test_an_mtp_target_is_a_gguf_that_keeps_its_nextn_layers(pair: CatalogPair) -> None:
    assert pair.draft is None
    assert "mtp" in pair.target.repo.lower()  # ordinary conversions strip the nextn layers


def test_sizes_are_exact_unless_marked_approximate() -> None:
    for pair in PAIRS:
        for f in pair.files:
            if f.size_approx:
                assert f.size_text.startswith("~")
                assert f.size_bytes % 1_000_000 == 0, f"{pair.id}: a rounded size should look rounded"
            else:
                assert not f.size_text.startswith("~")


def test_every_entry_records_the_evidence_for_its_files() -> None:
    blocks = _PAIR_LINE.split(DEFAULT_CATALOG.read_text(encoding="utf-8"))
    for before, pair in zip(blocks, PAIRS):
        comment = before.rstrip().rsplit("\n\n", 1)[-1]
        assert "# evidence:" in comment, f"{pair.id} has no evidence comment above it"


GOOD = """
schema_version = 2
context_tokens = 4096
[[pair]]
id = "tiny"
name = "Tiny"
family = "x"
drafting = "model"
license = "mit"
uses = ["chat"]
kv_cache_gb = 0.3
notes = "Pays on CPU."
[pair.target]
repo = "a/b-GGUF"
file = "b-Q4_K_M.gguf"
quantization = "Q4_K_M"
size_bytes = 4000000000
parameters_b = 7.0
source = "https://huggingface.co/a/b-GGUF/resolve/main/b-Q4_K_M.gguf"
[pair.draft]
repo = "a/c-GGUF"
file = "c-Q8_0.gguf"
quantization = "Q8_0"
size_bytes = 500000000
parameters_b = 0.5
source = "https://huggingface.co/a/c-GGUF/resolve/main/c-Q8_0.gguf"
"""


def _without_draft(text: str) -> str:
    return text.split("[pair.draft]")[0]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (('uses = ["chat"]', 'uses = ["poetry"]'), r"pair #1 \('tiny'\): 'uses' must be"),
        (
            ('drafting = "model"', 'drafting = "eagle"'),
            r"pair #1 \('tiny'\): 'drafting' must be one of mtp, assistant, model, ngram",
        ),
        (('drafting = "model"\n', ""), r"missing required key 'drafting'"),
        (('drafting = "model"', 'drafting = "mtp"'), r"drafting 'mtp' uses no draft file"),
        (('drafting = "model"', 'drafting = "ngram"'), r"drafting 'ngram' uses no draft file"),
        (("size_bytes = 4000000000\n", ""), r"pair #1 \('tiny'\) target: missing required key 'size_bytes'"),
        (("size_bytes = 500000000", "size_bytes = 0"), r"draft: 'size_bytes' must be positive"),
        (("size_bytes = 500000000", "size_bytes = -5"), r"draft: 'size_bytes' must be positive"),
        (("size_bytes = 4000000000", "size_bytes = 4.0"), r"target: 'size_bytes' must be an integer, not float"),
        (("size_bytes = 500000000", "size_bytes = 5000000000"), r"the draft file must be smaller than the target"),
        (("parameters_b = 0.5", "parameters_b = 9.0"), r"the draft \(9.0B\) must be smaller"),
        (("parameters_b = 0.5\n", ""), r"needs 'parameters_b' on the target and the draft"),
        (("kv_cache_gb = 0.3", "kv_cache_gb = -1"), r"'kv_cache_gb' must not be negative"),
        (('notes = "Pays on CPU."', 'notes = ""'), r"'notes' must be one line"),
        (('repo = "a/c-GGUF"', 'repo = "not a repo"'), r"draft: repo 'not a repo' is not a Hugging Face repo id"),
        (('license = "mit"', 'license = "mit"\nstars = 5'), r"unknown key\(s\) stars"),
        (('file = "c-Q8_0.gguf"', 'file = "c.bin"'), r"must be a .gguf path inside the repo"),
        (('file = "c-Q8_0.gguf"', 'file = "../c-Q8_0.gguf"'), r"must be a .gguf path inside the repo"),
        (('file = "c-Q8_0.gguf"', 'file = "sub/\\u0000c-Q8_0.gguf"'), r"has a control character \(U\+0000\)"),
        (('repo = "a/c-GGUF"', 'repo = "a/.."'), r"draft: repo 'a/\.\.' is not a Hugging Face repo id"),
        (('quantization = "Q8_0"', 'quantization = "Q6_K"'), r"quantization 'Q6_K' does not appear in file"),
        (
            ("resolve/main/c-Q8_0.gguf", "resolve/main/other.gguf"),
            r"draft: source .* must be the hub URL of a/c-GGUF/c-Q8_0.gguf",
        ),
        (
            ("https://huggingface.co/a/b-GGUF/", "https://example.com/a/b-GGUF/"),
            r"target: source .* must be the hub URL",
        ),
        (("schema_version = 2", "schema_version = 1"), r"schema_version must be 2"),
        (("context_tokens = 4096", "context_tokens = 0"), r"context_tokens must be a positive integer"),
    ],
)
def test_a_bad_entry_raises_a_clear_error_naming_it(tmp_path: Path, change: tuple[str, str], message: str) -> None:
    path = tmp_path / "catalog.toml"
    path.write_text(GOOD.replace(*change, 1))

    with pytest.raises(CatalogError, match=message):
        load_catalog(path)


@pytest.mark.parametrize("method", ["model", "assistant"])
def test_a_method_that_drafts_with_a_file_must_name_one(tmp_path: Path, method: str) -> None:
    path = tmp_path / "catalog.toml"
    path.write_text(_without_draft(GOOD).replace('drafting = "model"', f'drafting = "{method}"'))
    with pytest.raises(CatalogError, match=rf"drafting '{method}' needs a \[pair.draft\] file"):
        load_catalog(path)


@pytest.mark.parametrize("method", ["mtp", "ngram"])
def test_a_method_without_a_draft_file_loads_without_one(tmp_path: Path, method: str) -> None:
    path = tmp_path / "catalog.toml"
    path.write_text(_without_draft(GOOD).replace('drafting = "model"', f'drafting = "{method}"'))
    (pair,) = load_catalog(path)
    assert pair.drafting == method and pair.draft is None and pair.files == (pair.target,)
    assert pair.size_ratio is None
    assert pair.ram_gb == pytest.approx(4.0 + 0.3 + RUNTIME_OVERHEAD_GB)


def test_an_assistant_draft_may_sit_in_a_folder_and_carry_no_parameter_count(tmp_path: Path) -> None:
    text = (
        GOOD.replace('drafting = "model"', 'drafting = "assistant"')
        .replace('repo = "a/c-GGUF"', 'repo = "a/b-GGUF"')
        .replace('file = "c-Q8_0.gguf"', 'file = "MTP/mtp-b-Q8_0.gguf"')
        .replace(
            "https://huggingface.co/a/c-GGUF/resolve/main/c-Q8_0.gguf",
            "https://huggingface.co/a/b-GGUF/resolve/main/MTP/mtp-b-Q8_0.gguf",
        )
        .replace("parameters_b = 0.5\n", "")
    )
    path = tmp_path / "catalog.toml"
    path.write_text(text)
    (pair,) = load_catalog(path)
    assert (
        pair.draft is not None and pair.draft.file == "MTP/mtp-b-Q8_0.gguf" and pair.draft.filename == "mtp-b-Q8_0.gguf"
    )
    assert pair.drafting_label == "Gemma 4 assistant" and pair.size_ratio is None


def test_the_good_example_loads_with_its_derived_figures(tmp_path: Path) -> None:
    path = tmp_path / "catalog.toml"
    path.write_text(GOOD)
    (pair,) = load_catalog(path)
    assert pair.target.parameters_b == 7.0 and pair.uses == ("chat",) and pair.context_tokens == 4096
    assert pair.download_bytes == 4_500_000_000 and pair.download_text == "4.5 GB"
    assert pair.ram_gb == pytest.approx(4.5 + 0.3 + RUNTIME_OVERHEAD_GB)
    assert pair.ram_text == "~5.3 GB @ 4K ctx"
    assert pair.drafting_label == "Draft model" and pair.size_ratio == 14.0


def test_an_approximate_size_is_shown_with_a_tilde(tmp_path: Path) -> None:
    path = tmp_path / "catalog.toml"
    path.write_text(GOOD.replace("size_bytes = 500000000", "size_bytes = 500000000\nsize_approx = true"))
    (pair,) = load_catalog(path)
    assert pair.draft is not None and pair.draft.size_text == "~500.0 MB"
    assert pair.target.size_text == "4.0 GB" and pair.download_text == "~4.5 GB"


PROJECTOR = """[pair.projector]
repo = "a/b-GGUF"
file = "mmproj-model-f16.gguf"
size_bytes = 800000000
source = "https://huggingface.co/a/b-GGUF/resolve/main/mmproj-model-f16.gguf"
"""


def test_a_vision_target_s_projector_is_fetched_with_the_pair_under_the_target_s_name(tmp_path: Path) -> None:
    path = tmp_path / "catalog.toml"
    path.write_text(GOOD + PROJECTOR)
    (pair,) = load_catalog(path)
    assert pair.projector is not None and pair.projector.file == "mmproj-model-f16.gguf"  # the repo's name
    # saved under a name tied to its target: several repos call theirs mmproj-model-f16.gguf
    assert pair.projector.filename == "mmproj-b-Q4_K_M.gguf"
    assert pair.files == (pair.target, pair.draft, pair.projector)
    assert pair.download_bytes == 5_300_000_000 and pair.download_text == "5.3 GB"
    assert pair.ram_gb == pytest.approx(5.3 + 0.3 + RUNTIME_OVERHEAD_GB)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("size_bytes = 800000000", "size_bytes = 9000000000"), r"the projector file must be smaller than the target"),
        (("resolve/main/mmproj-model-f16.gguf", "resolve/main/x.gguf"), r"projector: source .* must be the hub URL"),
        (('file = "mmproj-model-f16.gguf"', 'file = "mmproj.bin"'), r"projector: file 'mmproj.bin' must be a .gguf"),
    ],
)
def test_a_bad_projector_entry_is_named(tmp_path: Path, change: tuple[str, str], message: str) -> None:
    path = tmp_path / "catalog.toml"
    path.write_text(GOOD + PROJECTOR.replace(*change, 1))
    with pytest.raises(CatalogError, match=message):
        load_catalog(path)


def test_the_gemma_3_pairs_see_images_and_no_m_rope_family_is_paired() -> None:
    gemma_3 = [p for p in PAIRS if p.family == "gemma-3"]
    assert gemma_3 and all(p.projector is not None for p in gemma_3)
    for pair in PAIRS:
        if pair.projector is not None:
            assert "mmproj" in pair.projector.file and pair.projector.repo == pair.target.repo
            assert pair.projector.filename == f"mmproj-{pair.target.filename.removesuffix('.gguf')}.gguf"
            assert not pair.family.startswith("qwen")  # Qwen-VL projectors use M-RoPE: the engine refuses them
    names = [p.projector.filename for p in PAIRS if p.projector is not None]
    assert len(set(names)) == len(names)  # two pairs' projectors never share a name in the flat models folder


def test_a_duplicate_id_is_reported() -> None:
    data = tomllib.loads(GOOD)
    data["pair"].append(data["pair"][0])
    with pytest.raises(CatalogError, match="pair id 'tiny' appears twice"):
        parse_catalog(data)


def test_the_shipped_file_says_how_ram_is_derived() -> None:
    header = _PAIR_LINE.split(DEFAULT_CATALOG.read_text(encoding="utf-8"))[0]
    assert "ram_gb = (target bytes + draft bytes + projector bytes) / 1e9 + kv_cache_gb + 0.5 GB" in header
    assert re.search(r"^context_tokens = 8192$", header, re.M)


def test_invalid_toml_and_a_missing_file_are_reported(tmp_path: Path) -> None:
    with pytest.raises(CatalogError, match="not found"):
        load_catalog(tmp_path / "nope.toml")
    bad = tmp_path / "catalog.toml"
    bad.write_text("[[pair]\n")
    with pytest.raises(CatalogError, match="not valid TOML"):
        load_catalog(bad)
