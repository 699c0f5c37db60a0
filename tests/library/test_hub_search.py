"""Searching the hub for GGUF repositories (issue 49): quantizations read from file names, split
files as one choice, the default choice by fit and speed, and plain words without a network."""

from __future__ import annotations

import socket

import pytest

from desktop_app.library.fit import MachineMemory
from desktop_app.library.hub_search import (
    NO_CONNECTION,
    GgufChoice,
    HubSearchError,
    default_choice,
    group_gguf_files,
    quantization_of,
    repo_choices,
    search_gguf,
)
from desktop_app.library.speed import SpeedGuess
from tests.library.hub_server import FakeHub

GB = 10**9


@pytest.mark.parametrize(
    ("name", "quant"),
    [
        ("Qwen2.5-7B-Instruct-Q4_K_M.gguf", "Q4_K_M"),
        ("llama-2-7b-chat.Q5_K_S.gguf", "Q5_K_S"),
        ("gemma-3-27b-it-Q8_0.gguf", "Q8_0"),
        ("Meta-Llama-3.1-8B-Instruct-IQ4_XS.gguf", "IQ4_XS"),
        ("Phi-3-mini-4k-instruct-IQ2_XXS.gguf", "IQ2_XXS"),
        ("Qwen3-30B-A3B-UD-Q4_K_XL.gguf", "UD-Q4_K_XL"),
        ("Qwen3-8B-BF16.gguf", "BF16"),
        ("model-f16.gguf", "F16"),
        ("qwen2.5-7b-instruct-fp16-00001-of-00004.gguf", "F16"),  # Qwen's own repositories
        ("Q8_0/Big-Model-Q8_0-00001-of-00003.gguf", "Q8_0"),
        ("tinyllama-q4_0.gguf", "Q4_0"),
        ("Qwen2-7B.gguf", None),
    ],
)
def test_the_quantization_is_read_from_the_file_name(name: str, quant: str | None) -> None:
    assert quantization_of(name) == quant


def test_files_are_grouped_by_quantization_with_split_parts_as_one() -> None:
    files = [
        ("README.md", 5_000),
        ("Model-Q8_0/Model-Q8_0-00002-of-00002.gguf", 4 * GB),
        ("Model-Q4_K_M.gguf", 5 * GB),
        ("Model-Q8_0/Model-Q8_0-00001-of-00002.gguf", 5 * GB),
        ("mmproj-Model-f16.gguf", GB),
        ("Model-Q2_K.gguf", 3 * GB),
    ]
    choices = group_gguf_files(files, "someone/Model-GGUF")

    assert [(c.quantization, c.size_bytes) for c in choices] == [
        ("Q2_K", 3 * GB),
        ("Q4_K_M", 5 * GB),
        ("Q8_0", 9 * GB),
    ]
    q8 = choices[-1]
    assert q8.files == ("Model-Q8_0/Model-Q8_0-00001-of-00002.gguf", "Model-Q8_0/Model-Q8_0-00002-of-00002.gguf")
    assert q8.files_text == "Model-Q8_0-00001-of-00002.gguf (+1 parts)" and q8.size_text == "9.0 GB"


def test_a_mixture_of_experts_reads_its_active_share_per_token() -> None:
    (moe,) = group_gguf_files([("Qwen3-30B-A3B-Q4_K_M.gguf", 18 * GB)], "unsloth/Qwen3-30B-A3B-GGUF")
    (dense,) = group_gguf_files([("Qwen3-32B-Q4_K_M.gguf", 18 * GB)], "unsloth/Qwen3-32B-GGUF")
    speed = SpeedGuess(5.0)
    assert moe.active_share == pytest.approx(0.1)
    assert moe.tokens_per_s(speed) == pytest.approx(10 * dense.tokens_per_s(speed))


def _choices(*sizes_gb: float) -> list[GgufChoice]:
    return group_gguf_files([(f"M-Q{i + 2}_K.gguf", int(s * GB)) for i, s in enumerate(sizes_gb)])


def test_the_default_is_the_largest_that_fits_and_is_fast_enough() -> None:
    choices = _choices(0.5, 0.9, 2.0, 4.0, 12.0)  # Q2_K ... Q6_K
    big_memory = MachineMemory(64 * GB)
    # 5 GB/s: under 1 GB per token is >= 5 tokens/s
    assert default_choice(choices, big_memory, SpeedGuess(5.0)) == choices[1]
    # a fast machine: the largest that fits with room to spare
    assert default_choice(choices, MachineMemory(16 * GB), SpeedGuess(100.0)) == choices[3]
    # nothing fast enough: the fastest (smallest) that fits
    assert default_choice(choices[2:], big_memory, SpeedGuess(1.0)) == choices[2]
    # none fits at all
    assert default_choice(choices[4:], MachineMemory(8 * GB), SpeedGuess(100.0)) is None


def test_fit_text_says_what_it_needs() -> None:
    (choice,) = _choices(10.0)
    assert choice.fit_text(MachineMemory(23 * GB)) == "fits: needs ~11.5 GB of 23.0 GB"
    assert choice.fit_text(MachineMemory(8 * GB)) == "needs ~11.5 GB, this machine has 8.0 GB"


def test_search_and_files_from_the_fake_hub(hub: FakeHub, models_dir) -> None:
    hub.add_file("someone/Tiny-GGUF", "Tiny-Q4_K_M.gguf", b"x" * 1000)
    hub.add_file("someone/Tiny-GGUF", "Tiny-Q8_0.gguf", b"x" * 10, listed_size=2 * GB)
    hub.add_file("other/Popular-Tiny-GGUF", "Popular-Q4_0.gguf", b"y" * 10)
    hub.repos["other/Popular-Tiny-GGUF"].downloads = 900
    hub.add_file("other/Unrelated-GGUF", "U-Q4_0.gguf", b"z")

    found = search_gguf("tiny", endpoint=hub.endpoint)

    assert [r.repo_id for r in found] == ["other/Popular-Tiny-GGUF", "someone/Tiny-GGUF"]
    assert found[0].downloads == 900 and found[0].updated_text == "2026-11-02"
    choices = repo_choices("someone/Tiny-GGUF", endpoint=hub.endpoint)
    assert [(c.quantization, c.size_bytes) for c in choices] == [("Q4_K_M", 1000), ("Q8_0", 2 * GB)]


def test_no_network_is_one_plain_line_within_the_timeout(models_dir) -> None:
    with socket.socket() as probe:  # a port nobody listens on: as good as no network
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(HubSearchError) as caught:
        search_gguf("qwen", endpoint=f"http://127.0.0.1:{port}", timeout=3)
    assert caught.value.plain == NO_CONNECTION


def test_switched_off_says_so(models_dir, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(HubSearchError) as caught:
        search_gguf("qwen", endpoint="http://127.0.0.1:9")
    assert "HF_HUB_OFFLINE" in caught.value.plain
