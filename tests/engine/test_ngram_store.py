"""The on-disk n-gram cache as a function of the history (llama-free: a toy tokenizer)."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop_app.engine.drafters import ngram_store
from desktop_app.engine.drafters.ngram_cache import HISTORY_RULE
from desktop_app.engine.drafters.ngram_store import CacheFileError, SourceMessage, load, sync


class Tokenizer:
    """Words to ids; counts the messages it tokenized."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        self.calls = 0

    def __call__(self, text: str) -> list[int]:
        self.calls += 1
        return [self.ids.setdefault(word, len(self.ids)) for word in text.split()]


def _quiet(line: str) -> None:
    pass


def test_messages_left_out_by_the_budget_stay_out(tmp_path: Path) -> None:
    path, tokenize = tmp_path / "c.npz", Tokenizer()
    messages = [SourceMessage(i, f"m{i} a b c") for i in range(1, 6)]  # 4 tokens each
    state = sync(path, "v", messages, tokenize, _quiet, max_tokens=10)
    assert set(state.manifest) == {4, 5}  # the newest within 10 tokens
    tokenize.calls = 0
    state = sync(path, "v", [*messages, SourceMessage(6, "m6 a b c")], tokenize, _quiet, max_tokens=10)
    assert tokenize.calls == 1 and set(state.manifest) == {4, 5, 6}  # only the new message


def test_deleting_every_message_it_learned_empties_the_file(tmp_path: Path) -> None:
    path, tokenize = tmp_path / "c.npz", Tokenizer()
    sync(path, "v", [SourceMessage(1, "x y z x y z")], tokenize, _quiet)
    assert len(load(path, "v")[0]) > 0
    state = sync(path, "v", [], tokenize, _quiet)
    counts, manifest = load(path, "v")
    assert len(state.counts) == 0 and len(counts) == 0 and manifest == {}


def test_an_edited_message_is_relearned(tmp_path: Path) -> None:
    path, tokenize = tmp_path / "c.npz", Tokenizer()
    lines: list[str] = []
    sync(path, "v", [SourceMessage(1, "red green blue red green blue")], tokenize, lines.append)
    state = sync(path, "v", [SourceMessage(1, "red green gold red green gold")], tokenize, lines.append)
    red, green, gold = tokenize.ids["red"], tokenize.ids["green"], tokenize.ids["gold"]
    assert state.counts.chain([red, green], 1, HISTORY_RULE) == [gold]
    assert any("deleted or edited" in line for line in lines)


def test_the_known_state_is_used_while_the_file_is_the_one_saved(tmp_path: Path) -> None:
    path, tokenize = tmp_path / "c.npz", Tokenizer()
    messages = [SourceMessage(1, "a b c a b c")]
    state = sync(path, "v", messages, tokenize, _quiet)
    assert sync(path, "v", messages, tokenize, _quiet, known=state) is state
    path.write_bytes(b"junk")  # changed behind its back: read (and rebuilt) again
    lines: list[str] = []
    again = sync(path, "v", messages, tokenize, lines.append, known=state)
    assert again is not state and any("damaged" in line for line in lines)
    load(path, "v")


@pytest.mark.parametrize(
    "meta",
    [
        '{"version": 1, "vocab": "v", "orders": [], "tokens_added": 0}',
        '{"version": 1, "vocab": "v", "orders": ["x"], "tokens_added": 0}',
        '{"version": 1, "vocab": "v", "orders": [4, 3, 2], "tokens_added": "lots"}',
        "[1, 2]",
    ],
)
def test_odd_metadata_is_a_damaged_file_not_a_crash(tmp_path: Path, meta: str) -> None:
    import numpy as np

    path = tmp_path / "c.npz"
    sync(path, "v", [SourceMessage(1, "a b c a b c")], Tokenizer(), _quiet)
    with np.load(path) as data:
        arrays = {name: data[name] for name in data.files}
    arrays["meta"] = np.frombuffer(meta.encode(), dtype=np.uint8)
    np.savez(path, **arrays)
    with pytest.raises(CacheFileError):
        load(path, "v")
    lines: list[str] = []
    sync(path, "v", [SourceMessage(1, "a b c a b c")], Tokenizer(), lines.append)
    assert any("rebuilding it from the history" in line for line in lines)
    load(path, "v")


def test_a_cache_that_cannot_be_saved_is_still_used(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    lines: list[str] = []
    state = sync(blocker / "c.npz", "v", [SourceMessage(1, "a b c a b c")], Tokenizer(), lines.append)
    assert len(state.counts) > 0 and any("cannot be saved" in line for line in lines)


def _valid_arrays(tmp_path: Path) -> dict[str, object]:
    import numpy as np

    path = tmp_path / "valid.npz"
    sync(path, "v", [SourceMessage(1, "a b c a b c d e")], Tokenizer(), _quiet)
    with np.load(path) as data:
        return {name: data[name] for name in data.files}


def _write_bomb(path: Path, arrays: dict[str, object], name: str, items: int) -> None:
    """A cache whose ``name`` array is ``items`` int32 zeros, deflated: 400 MB in 400 KB."""
    import zipfile

    import numpy as np

    chunk = bytes(1 << 20)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for key, value in arrays.items():
            if key != name:
                with archive.open(key + ".npy", "w") as member:
                    np.lib.format.write_array(member, np.asarray(value))
        with archive.open(name + ".npy", "w", force_zip64=True) as member:
            header = {"descr": "<i4", "fortran_order": False, "shape": (items,)}
            np.lib.format.write_array_header_1_0(member, header)
            left = items * 4
            while left > 0:
                member.write(chunk[: min(left, len(chunk))])
                left -= len(chunk)


def test_a_zip_bomb_is_refused_before_it_is_inflated(tmp_path: Path) -> None:
    """Issue 33: a 1 MB file inflating to gigabytes took the engine to 1.3 GB before the rebuild."""
    import subprocess
    import sys

    path = tmp_path / "c.npz"
    _write_bomb(path, _valid_arrays(tmp_path), "followers", 100_000_000)
    assert path.stat().st_size < 1_000_000
    # The peak resident size (ru_maxrss, kB) of a fresh process, before and after loading: a
    # freed array would no longer show in the current size.
    probe = (
        "import resource, sys\n"
        "from pathlib import Path\n"
        "from desktop_app.engine.drafters.ngram_store import CacheFileError, load\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "try:\n"
        "    load(Path(sys.argv[1]), 'v')\n"
        "except CacheFileError as exc:\n"
        "    print(exc)\n"
        "print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) // 1024)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe, str(path)],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[2],
    ).stdout.splitlines()
    assert out[0] == "it is damaged (ValueError: followers inflates to 400000128 bytes, more than 9600000)"
    assert int(out[1]) < 100, f"peak memory grew by {out[1]} MB"
    lines: list[str] = []
    state = sync(path, "v", [SourceMessage(1, "a b c a b c")], Tokenizer(), lines.append)
    assert len(state.counts) > 0 and any("damaged" in line and "rebuilding" in line for line in lines)
    load(path, "v")  # the rebuilt file


def test_an_array_header_beyond_the_limits_is_refused_before_reading(tmp_path: Path) -> None:
    import zipfile

    import numpy as np

    arrays = _valid_arrays(tmp_path)
    path = tmp_path / "c.npz"
    with zipfile.ZipFile(path, "w") as archive:
        for key, value in arrays.items():
            with archive.open(key + ".npy", "w") as member:
                if key == "ids":  # a header claiming more messages than any history, then little data
                    np.lib.format.write_array_header_1_0(
                        member, {"descr": "<i8", "fortran_order": False, "shape": (ngram_store.MAX_MESSAGES + 1,)}
                    )
                    member.write(bytes(64))
                elif key == "keys":  # floats where token ids belong
                    np.lib.format.write_array(member, np.asarray(value, dtype=np.float32))
                else:
                    np.lib.format.write_array(member, np.asarray(value))
    with pytest.raises(CacheFileError, match=r"keys holds float32, not int32"):
        load(path, "v")
    arrays["keys"] = np.asarray(arrays["keys"], dtype=np.int32)
    with zipfile.ZipFile(path, "w") as archive:
        for key, value in arrays.items():
            with archive.open(key + ".npy", "w") as member:
                if key == "ids":
                    np.lib.format.write_array_header_1_0(
                        member, {"descr": "<i8", "fortran_order": False, "shape": (ngram_store.MAX_MESSAGES + 1,)}
                    )
                    member.write(bytes(64))
                else:
                    np.lib.format.write_array(member, np.asarray(value))
    with pytest.raises(CacheFileError, match=r"ids has shape \(2000001,\)"):
        load(path, "v")


def test_any_damage_to_the_file_is_a_cache_file_error(tmp_path: Path) -> None:
    """The loader names the exceptions a damaged file raises instead of catching every one:
    flipped bytes and cut files anywhere in a real cache raise CacheFileError and nothing else."""
    import random

    path = tmp_path / "c.npz"
    sync(path, "v", [SourceMessage(i, f"m{i} a b c a b c d e") for i in range(20)], Tokenizer(), _quiet)
    good = path.read_bytes()
    rng = random.Random(33)
    refused = 0
    for trial in range(400):
        data = bytearray(good)
        if trial % 4 == 0:
            data = data[: rng.randrange(len(data))]
        else:
            for _ in range(rng.randint(1, 8)):
                data[rng.randrange(len(data))] = rng.randrange(256)
        path.write_bytes(bytes(data))
        try:
            load(path, "v", n_vocab=64)
        except CacheFileError:
            refused += 1
    assert refused > 300
