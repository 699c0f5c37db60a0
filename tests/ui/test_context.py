"""The model's context in the real window with the real engine process: the meter counts what
the engine reads, the transcript says where the context begins, the overflow policy, raising the
context, and a long prompt's progress."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QMenu

from desktop_app.engine.api import OverflowPolicy
from tests.ui.conftest import ANSWER_TIMEOUT_MS, LOAD_TIMEOUT_MS
from tests.ui.helpers import last_answer, next_answer, send_and_wait, type_and_send

SMALL_CTX = 256
TOPICS = ["lighthouses", "volcanoes", "glaciers", "deserts", "rivers", "forests", "islands", "canyons"]


def question(i: int) -> str:
    topic = TOPICS[i % len(TOPICS)]
    return f"Question {i}: please tell me everything you know about {topic}, their history and their future."


def counted(qtbot: Any, window: Any) -> int:
    """Wait for the meter to show the count of what the box holds now; its number of tokens."""
    qtbot.waitUntil(lambda: not window.context.counting and window.meter.prompt_size is not None, timeout=30_000)
    size = window.meter.prompt_size
    assert f"{size.tokens:,} / {size.n_ctx:,} tokens" in window.meter.label.text()
    return size.tokens


def test_the_meter_counts_the_prompt_the_engine_reads(qtbot: Any, make_window: Any, models: Any) -> None:
    window = make_window(target_path=models.target, drafter="none", max_tokens=24)
    empty = counted(qtbot, window)
    first = send_and_wait(qtbot, window, "Hello there, how are you?")
    assert first.stats.prompt_tokens > empty  # the typed message and its template markup
    # a follow-up typed in the box: counted while it is typed, with the conversation before it
    window.input.setFocus()
    qtbot.keyClicks(window.input, "And what about the weather today?")
    shown = counted(qtbot, window)
    assert shown > first.stats.prompt_tokens + first.stats.generated_tokens
    assert window.meter.level == "ok" and not window.meter.raise_button.isVisible()
    with next_answer(qtbot, window.client) as watch:
        qtbot.keyClick(window.input, Qt.Key.Key_Return)
    assert watch.done is not None, watch.failure
    assert watch.done.stats.prompt_tokens == shown  # exactly what the engine read, generation prompt included
    assert watch.done.stats.dropped_turns == 0


def _send_until_dropped(qtbot: Any, window: Any) -> Any:
    for i in range(12):
        done = send_and_wait(qtbot, window, question(i))
        if done.stats.dropped_turns:
            return done
    raise AssertionError("the conversation never outgrew the context")


def test_left_out_messages_are_noted_where_the_context_begins(qtbot: Any, make_window: Any, models: Any) -> None:
    window = make_window(target_path=models.target, drafter="none", max_tokens=16, n_ctx=SMALL_CTX)
    note = window.context.note
    at_first_text: dict[int, bool] = {}  # per answer: was the note shown when its first text came?
    window.client.generation_started.connect(
        lambda handle: handle.token_received.connect(
            lambda _t, _d, answer=handle.id: at_first_text.setdefault(answer, note.isVisible())
        )
    )
    done = _send_until_dropped(qtbot, window)
    dropped = done.stats.dropped_turns
    words = "The oldest message is" if dropped == 1 else f"The {dropped} oldest messages are"
    assert note.isVisible() and note.label.text() == f"{words} not in the model's context"
    assert at_first_text[max(at_first_text)] is True  # shown as the answer began, not after it
    view = window.chat_view
    first_kept = view.messages[dropped]  # no empty answers here: the dropped are the oldest `dropped`
    assert note.above is first_kept
    layout = view.widget().layout()
    assert layout.indexOf(note) == layout.indexOf(first_kept) - 1  # just above it
    # the conversation opened again: the note comes back from the stored answer's stats
    conversation = window.session.conversation_id
    window.session.open(None)
    assert not note.isVisible()
    window.session.open(conversation)
    assert note.isVisible() and note.label.text() == f"{words} not in the model's context"
    assert note.above is view.messages[dropped] and layout.indexOf(note) == layout.indexOf(view.messages[dropped]) - 1
    # the meter says the next prompt does not fit whole either
    type_text = "One more question about everything we discussed so far, please."
    window.input.setPlainText(type_text)
    counted(qtbot, window)
    assert window.meter.level == "over" and "oldest left out" in window.meter.label.text()


def test_the_refuse_policy_fails_clearly_and_keeps_the_message(qtbot: Any, make_window: Any, models: Any) -> None:
    window = make_window(target_path=models.target, drafter="none", max_tokens=16, n_ctx=SMALL_CTX)
    # chosen in the meter's menu: saved, and in the next request
    window.meter._menu(QPoint(0, 0))
    menu = window.meter.findChildren(QMenu)[-1]
    refuse = next(a for a in menu.actions() if a.text() == OverflowPolicy.REFUSE.label)
    refuse.trigger()
    menu.close()
    assert window.settings["context_overflow"] == "refuse"
    assert window.answers.request_for([]).overflow is OverflowPolicy.REFUSE
    failure = None
    for i in range(12):
        text = question(i)
        with next_answer(qtbot, window.client) as watch:
            type_and_send(qtbot, window, text)
        qtbot.waitUntil(lambda: not window.session.busy, timeout=5000)
        if watch.failure is not None:
            failure = watch.failure
            break
    assert failure is not None, "the conversation never outgrew the context"
    assert f"but the context holds {SMALL_CTX}" in failure and "raise the context size" in failure
    assert f"{SMALL_CTX - 16} for the prompt" in failure
    assert "failed: " + failure == last_answer(window).footer.text()
    # the user's message is kept, on screen and in the history
    user_messages = [m for m in window.chat_view.messages if m.role == "user"]
    assert user_messages[-1].text == text
    stored = window.history.messages(window.session.conversation_id)
    assert [m.content for m in stored if m.role == "user"][-1] == text
    window.input.setPlainText("Another one?")
    counted(qtbot, window)
    assert window.meter.level == "over" and "the model will refuse" in window.meter.label.text()


def test_raising_the_context_reloads_the_model_with_it(qtbot: Any, make_window: Any, models: Any) -> None:
    window = make_window(target_path=models.target, drafter="none", max_tokens=16, n_ctx=SMALL_CTX)
    _send_until_dropped(qtbot, window)
    window.input.setPlainText("And one more?")
    counted(qtbot, window)
    button = window.meter.raise_button
    assert button.isVisible() and button.text() == "Raise the context to 4,096"  # the factory model's trained context
    assert "available now" in button.toolTip() and "per token" in button.toolTip()
    assert window.context.note.raise_button.text() == "Raise the context to 4,096"
    with qtbot.waitSignal(window.client.model_loaded, timeout=LOAD_TIMEOUT_MS):
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert window.client.models.target.n_ctx == 4096 and window.settings["n_ctx"] == 4096
    counted(qtbot, window)
    assert window.meter.prompt_size.n_ctx == 4096 and window.meter.level == "ok"
    assert not button.isVisible()
    done = send_and_wait(qtbot, window, "And now?")
    assert done.stats.dropped_turns == 0


def test_a_long_prompt_shows_its_reading_progress_and_ttft_counts_from_send(qtbot: Any, make_window: Any) -> None:
    window = make_window(drafter="none", max_tokens=8)  # the built-in model reads ~1,700 tokens in seconds
    footers: list[str] = []
    window.client.generation_started.connect(
        lambda handle: handle.prompt_progress.connect(lambda _p: footers.append(last_answer(window).footer.text()))
    )
    long_text = "The quick brown fox jumps over the lazy dog near the river bank. " * 120
    window.input.setPlainText(long_text)
    with next_answer(qtbot, window.client, ANSWER_TIMEOUT_MS) as watch:
        qtbot.keyClick(window.input, Qt.Key.Key_Return)
    assert watch.done is not None, watch.failure
    stats = watch.done.stats
    total = stats.prompt_tokens
    assert total > 1500
    reading = [f for f in footers if f.startswith("reading your message… ")]
    assert reading[0] == f"reading your message… 0/{total:,} tokens"
    assert len(set(reading)) >= 3, footers  # it moved while the engine read, batch by batch
    # time to first token from Send: at least the engine's own, shown and stored
    assert stats.ttft_s >= stats.engine_ttft_s > 0
    assert f"TTFT {stats.ttft_s * 1000:.0f} ms" in last_answer(window).footer.text()
    stored = window.history.messages(window.session.conversation_id)[-1].stats
    assert stored["ttft_s"] == round(stats.ttft_s, 5) and stored["engine_ttft_s"] == round(stats.engine_ttft_s, 5)
