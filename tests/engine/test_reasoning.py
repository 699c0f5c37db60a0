"""The reasoning splitter the window, the engine and the API share."""

from __future__ import annotations

from desktop_app.engine.reasoning import (
    GEMMA4_CHANNEL,
    GPT_OSS_CHANNELS,
    THINK_TAGS,
    ReasoningFormat,
    SectionStream,
    split_reasoning,
)


def test_a_think_section_splits_from_the_answer() -> None:
    s = split_reasoning("<think>\nweigh a < b\n</think>\n\nThe answer is 4.")
    assert (s.reasoning, s.answer, s.thinking) == ("weigh a < b", "The answer is 4.", False)


def test_an_open_section_is_still_thinking_and_a_partial_end_marker_is_held_back() -> None:
    s = split_reasoning("<think>let me see</th", streaming=True)
    assert (s.reasoning, s.answer, s.thinking) == ("let me see", "", True)


def test_think_in_the_middle_of_an_answer_is_text() -> None:
    text = "Write <think> tags like this: <think>x</think>"
    assert split_reasoning(text).answer == text


def test_no_format_means_all_answer() -> None:
    assert split_reasoning("<think>a</think>b", None).answer == "<think>a</think>b"


def test_a_format_that_starts_open_reads_reasoning_from_the_first_character() -> None:
    fmt = ReasoningFormat("r1", "<think>", "</think>", starts_open=True)
    s = split_reasoning("hmm</think>Yes.", fmt)
    assert (s.reasoning, s.answer) == ("hmm", "Yes.")


def test_a_start_marker_still_arriving_shows_nothing_yet() -> None:
    assert split_reasoning("<thi", THINK_TAGS, streaming=True).answer == ""
    assert split_reasoning("<thi", THINK_TAGS).answer == "<thi"


def test_gpt_oss_channels_split_into_analysis_and_final() -> None:
    text = "<|channel|>analysis<|message|>The user greets.<|end|><|start|>assistant<|channel|>final<|message|>Hello!"
    s = split_reasoning(text, GPT_OSS_CHANNELS)
    assert (s.reasoning, s.answer, s.thinking) == ("The user greets.", "Hello!", False)
    # straight to the final channel: no reasoning, the header is not answer text
    assert split_reasoning("<|channel|>final<|message|>Hi", GPT_OSS_CHANNELS).answer == "Hi"
    # the final channel's header still arriving shows nothing yet
    streamed = split_reasoning("<|channel|>analysis<|message|>x<|end|><|start|>assi", GPT_OSS_CHANNELS, streaming=True)
    assert (streamed.reasoning, streamed.answer) == ("x", "")


def test_gemma4_thought_channel_splits_from_the_answer() -> None:
    s = split_reasoning("<|channel>thought\nCount the letters.<channel|>There are 3.", GEMMA4_CHANNEL)
    assert (s.reasoning, s.answer) == ("Count the letters.", "There are 3.")


def test_streamed_deltas_add_up_to_the_split_of_the_whole_text() -> None:
    text = "<think>\nfirst a < b, then</think>\n\nThe answer & more."
    for size in (1, 2, 3, 7):
        stream = SectionStream(THINK_TAGS)
        pieces = [stream.push(text[i : i + size]) for i in range(0, len(text), size)] + [stream.push("", final=True)]
        assert "".join(r for r, _ in pieces) == "first a < b, then"
        assert "".join(a for _, a in pieces) == "The answer & more."
