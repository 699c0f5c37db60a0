"""Streaming text: whole characters only, stop strings held back and never shown."""

from __future__ import annotations

from desktop_app.engine.llama.model import LlamaModel
from desktop_app.engine.loop.text_stream import TextStream

KOREAN = "안녕하세요! 오늘 날씨가 정말 좋네요. 🌤️ 커피 한 잔 어때요? ☕"


def test_characters_split_across_tokens_stream_intact(default_model) -> None:
    model = LlamaModel(default_model)
    tokens = model.tokenize(KOREAN, add_special=False)
    pieces = [model.piece(t) for t in tokens]
    split = [p for p in pieces if _invalid_utf8(p)]
    assert split, "the test needs tokens that end mid-character"
    stream = TextStream()
    chunks = [stream.push(p) for p in pieces] + [stream.flush()]
    assert "".join(chunks) == KOREAN
    assert all("\ufffd" not in c for c in chunks)
    model.close()


def _invalid_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def test_stop_string_across_pieces_is_cut_and_hidden() -> None:
    stream = TextStream(stop=["</answer>"])
    out = [stream.push(p.encode()) for p in ["The result", " is 4.</", "ans", "wer> tail"]]
    assert "".join(out) == "The result is 4."
    assert stream.stopped
    assert stream.push(b"more") == ""


def test_a_false_start_of_a_stop_string_is_released() -> None:
    stream = TextStream(stop=["STOP"])
    assert stream.push(b"ST") == ""  # might be the stop string: held
    assert stream.push(b"ART") == "START"
    assert stream.flush() == ""
    assert stream.text == "START"
