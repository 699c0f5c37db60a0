"""Chatting in the real window with the real engine process and the factory models."""

from __future__ import annotations

import re
from typing import Any

from PySide6.QtCore import Qt

from desktop_app.engine.api import DrafterKind
from desktop_app.store import History
from desktop_app.ui.transcript.drafter_tints import drafter_tint
from desktop_app.ui.transcript.message_format import format_drafts
from desktop_app.ui.transcript.rich_text import message_html
from tests.ui.conftest import ANSWER_TIMEOUT_MS
from tests.ui.helpers import last_answer, next_answer, pick, send_and_wait, type_and_send


def test_a_message_streams_an_answer_with_its_footer(qtbot: Any, make_window: Any, models: Any) -> None:
    window = make_window(target_path=models.target, drafter="ngram", spec_mode="on", max_tokens=120)
    # Shift+Enter is a new line, not a send
    window.input.setFocus()
    qtbot.keyClicks(window.input, "Hello")
    qtbot.keyClick(window.input, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    assert window.input.toPlainText() == "Hello\n"
    assert window.chat_view.messages == []
    with next_answer(qtbot, window.client) as watch:
        qtbot.keyClicks(window.input, "there")
        qtbot.keyClick(window.input, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: not window.session.busy)
    answer = last_answer(window)
    assert watch.done is not None
    text = watch.done.text
    assert text and "".join(watch.pieces) == text == answer.text
    assert len(watch.pieces) > 1  # it streamed in pieces, not one block at the end
    assert window.chat_view.messages[0].text == "Hello\nthere"
    assert window.input.toPlainText() == ""
    footer = answer.footer.text()
    for part in ("tokens/s", "first token after", "120 tokens"):
        assert part in footer
    drafted, accepted = watch.done.stats.by_drafter.get("ngram", (0, 0))
    assert (
        f"repeats from this chat drafted {drafted} tokens, {accepted}" if drafted else "nothing was drafted"
    ) in footer
    assert window.send_button.isEnabled() and not window.stop_button.isEnabled()
    # the answer is in the history with its stats
    stored = window.history.messages(window.session.conversation_id)
    assert [m.role for m in stored] == ["user", "assistant"]
    assert stored[1].content == text and stored[1].stats["generated_tokens"] == 120


def test_the_gauge_shows_live_speed_while_streaming(qtbot: Any, make_window: Any) -> None:
    # the default model is slow enough here for several live updates
    window = make_window(drafter="none", max_tokens=160)
    gauge = window.findChild(type(window.side.gauge), "speedGauge")
    live: list[float] = []
    window.client.generation_started.connect(
        lambda handle: handle.stats_updated.connect(lambda _s: live.append(gauge.property("tokensPerSecond")))
    )
    repaints_at_start = gauge.repaints
    with next_answer(qtbot, window.client) as watch:
        type_and_send(qtbot, window, "Tell me about the sea.")
        qtbot.waitUntil(lambda: len(live) >= 3, timeout=ANSWER_TIMEOUT_MS)
        assert window.session.busy and max(live) > 0
    assert watch.done is not None
    stats = watch.done.stats
    # the needle moves to new figures in steps (more repaints than figures; on a loaded machine
    # Qt coalesces the animation's timer ticks, so not a fixed number per figure) ...
    assert gauge.repaints - repaints_at_start > len(set(live))
    # idle: the gauge shows the last answer's figure, and stops repainting once the needle is there
    qtbot.waitUntil(lambda: gauge.caption == "last answer")
    assert abs(gauge.property("tokensPerSecond") - stats.decode_tokens_per_s) < 0.01
    qtbot.waitUntil(lambda: not gauge.moving())
    settled = gauge.repaints
    qtbot.wait(600)
    assert gauge.repaints == settled


def test_speculation_mode_changes_between_messages_without_reloading(qtbot: Any, make_window: Any, models: Any) -> None:
    window = make_window(target_path=models.target, drafter="ngram", max_tokens=40)
    loads: list[dict] = []
    window.client.model_loaded.connect(loads.append)
    mode = window.side.mode
    assert mode.objectName() == "speculationMode"
    pick(mode, "off")
    send_and_wait(qtbot, window, "First question")
    assert "without speculation" in last_answer(window).footer.text()
    pick(mode, "ngram")
    window.side.always.setChecked(True)
    send_and_wait(qtbot, window, "Second question")
    footer = last_answer(window).footer.text()
    assert "\nrepeats from this chat drafted " in footer  # it drafted
    assert loads == []
    assert window.settings["spec_mode"] == "on"


def test_stop_ends_the_answer_and_keeps_what_was_shown(qtbot: Any, make_window: Any) -> None:
    window = make_window(drafter="none", max_tokens=3000)
    with next_answer(qtbot, window.client) as watch:
        type_and_send(qtbot, window, "Write a very long story about a lighthouse.")
        qtbot.waitUntil(lambda: len(last_answer(window).text) > 20, timeout=ANSWER_TIMEOUT_MS)
        assert window.stop_button.isEnabled()
        # the answer is written to the history while it streams (a crash keeps what was shown)
        conversation = window.session.conversation_id
        qtbot.waitUntil(lambda: window.history.messages(conversation)[-1].content != "", timeout=5000)
        assert window.session.busy
        qtbot.mouseClick(window.stop_button, Qt.MouseButton.LeftButton)
    assert watch.done is not None
    stats = watch.done.stats
    assert stats.finish_reason == "cancelled"
    assert stats.generated_tokens < 3000
    answer = last_answer(window)
    assert "stopped" in answer.footer.text()
    assert window.send_button.isEnabled()
    stored = window.history.messages(window.session.conversation_id)[-1]
    assert stored.content == answer.text != ""


def test_escape_in_the_input_stops_too(qtbot: Any, make_window: Any) -> None:
    window = make_window(drafter="none", max_tokens=3000)
    with next_answer(qtbot, window.client) as watch:
        type_and_send(qtbot, window, "Count to a thousand.")
        qtbot.waitUntil(lambda: len(last_answer(window).text) > 10, timeout=ANSWER_TIMEOUT_MS)
        qtbot.keyClick(window.input, Qt.Key.Key_Escape)
    assert watch.done is not None and watch.done.stats.finish_reason == "cancelled"


def test_regenerate_and_edit_and_resend(qtbot: Any, make_window: Any, models: Any) -> None:
    window = make_window(target_path=models.target, drafter="none", max_tokens=30)
    send_and_wait(qtbot, window, "Original question")
    first_id = window.history.messages(window.session.conversation_id)[-1].id
    with next_answer(qtbot, window.client):
        qtbot.mouseClick(last_answer(window).action_button, Qt.MouseButton.LeftButton)  # Regenerate
    qtbot.waitUntil(lambda: not window.session.busy)
    stored = window.history.messages(window.session.conversation_id)
    assert [m.role for m in stored] == ["user", "assistant"] and stored[1].id != first_id
    assert len(window.chat_view.messages) == 2
    # edit and resend: the last user message goes back into the input
    user_widget = window.chat_view.messages[0]
    qtbot.mouseClick(user_widget.action_button, Qt.MouseButton.LeftButton)
    assert window.input.toPlainText() == "Original question"
    assert len(window.chat_view.messages) == 2  # nothing goes before the edit is sent (tests/ui/test_versions.py)
    assert len(window.history.messages(window.session.conversation_id)) == 2
    window.input.setPlainText("Edited question")
    with next_answer(qtbot, window.client):
        qtbot.mouseClick(window.send_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not window.session.busy)
    assert [m.content for m in window.history.messages(window.session.conversation_id)][0] == "Edited question"


def test_draft_highlighting_tints_accepted_draft_text(qtbot: Any, make_window: Any, models: Any) -> None:
    window = make_window(
        target_path=models.target,
        draft_path=models.draft,
        drafter="model",
        spec_mode="on",
        max_tokens=80,
        highlight_drafts=True,
    )
    done = send_and_wait(qtbot, window, "Hello there")
    answer = last_answer(window)
    assert answer.draft_text  # the factory draft agrees with the target on most tokens
    assert answer.drafters == ["model"]
    palette = answer.palette()
    html = answer.body.text()
    assert f"text-decoration-color:{drafter_tint('model', palette).name()}" in html
    assert drafter_tint("ngram", palette).name() not in html
    assert "Draft model" in answer.body.toolTip()
    drafted, accepted = done.stats.by_drafter["model"]
    assert f"draft model drafted {drafted} tokens, {accepted} were right" in answer.footer.text()
    # the side panel's legend names every drafter on its tint while highlighting is on
    legend = window.side.legend
    assert not legend.isHidden()
    for kind in DrafterKind:
        assert kind.label in legend.text() and drafter_tint(kind.value, palette).name() in legend.text()
    window.side.highlight.setChecked(False)
    assert "text-decoration-color" not in answer.body.text()
    assert answer.body.toolTip() == "" and legend.isHidden()
    assert window.settings["highlight_drafts"] is False


def test_a_drafted_answer_names_its_drafters_in_the_footer_and_tints_their_text(qtbot: Any, make_window: Any) -> None:
    """The embedded default model correcting typos copies most of the prompt: drafted tokens.
    Speculation on, not Auto: Auto measures this machine's costs, and on a busy 2-core machine
    it may rightly draft nothing (the two-drafter footer is checked with given stats below)."""
    window = make_window(spec_mode="on", drafter="ngram", max_tokens=60, highlight_drafts=True)
    paragraph = (
        "The quick brown fox jumpd over the lazy dog. It was a sunny day and the fox was verry happy "
        "to be outside in the feilds, runing around with his freinds until the evening came."
    )
    window.input.setPlainText(
        "Correct the typos in this paragraph and output the full corrected paragraph:\n\n" + paragraph
    )
    with next_answer(qtbot, window.client) as watch:
        qtbot.mouseClick(window.send_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not window.session.busy)
    assert watch.done is not None, watch.failure
    by_drafter = {d: c for d, c in watch.done.stats.by_drafter.items() if c[0]}
    assert by_drafter and sum(a for _, a in by_drafter.values()) > 0
    answer = last_answer(window)
    # the footer: each drafter's drafted and right tokens, most accepted first
    footer = answer.footer.text()
    shown = sorted(by_drafter.items(), key=lambda item: (-item[1][1], -item[1][0]))
    drafts = format_drafts(dict(shown))
    assert drafts.startswith(f"{DrafterKind(shown[0][0]).label.lower()} drafted {shown[0][1][0]} tokens")
    assert f"\n{drafts}" in footer
    # the text: each run knows its drafter, as the engine process sent it; every drafter's text
    # is on that drafter's tint and no other drafter's tint is used
    assert [run for run in watch.runs if run[1]] and "".join(t for t, _ in watch.runs) == answer.text
    assert answer.drafters and set(answer.drafters) <= set(by_drafter)
    assert "".join(t for t, d in answer.segments if d) == "".join(t for t, d in watch.runs if d)
    palette = answer.palette()
    html = answer.body.text()
    for kind in DrafterKind:
        assert (f"text-decoration-color:{drafter_tint(kind.value, palette).name()}" in html) == (
            kind.value in answer.drafters
        ), kind
        assert (kind.label in answer.body.toolTip()) == (kind.value in answer.drafters)
    # stored with the answer: the same footer when the conversation is opened again
    conversation = window.session.conversation_id
    window.session.open(None)
    window.session.open(conversation)
    assert f"\n{drafts}" in last_answer(window).footer.text()


def test_each_drafters_text_is_underlined_in_its_own_colour(qtbot: Any) -> None:
    from PySide6.QtWidgets import QWidget

    palette = QWidget().palette()
    html = message_html(
        [("Hello ", ""), ("**bold** copy", "ngram"), (" and map", "ngram-map"), (" end", "")], palette
    ).html
    ngram, ngram_map = drafter_tint("ngram", palette).name(), drafter_tint("ngram-map", palette).name()
    assert ngram != ngram_map
    spans = re.findall(r'<span style="([^"]*)">([^<]*)</span>', html)
    tinted = {text.strip(): style for style, text in spans if "text-decoration-color" in style}
    assert f"text-decoration-color:{ngram}" in tinted["bold"] and f"text-decoration-color:{ngram}" in tinted["copy"]
    assert f"text-decoration-color:{ngram_map}" in tinted["and map"]
    assert "Hello" not in tinted and "end" not in tinted and "Hello" in html and "end" in html


def test_history_survives_closing_and_reopening_the_window(qtbot: Any, make_window: Any, models: Any) -> None:
    window = make_window(target_path=models.target, drafter="ngram", max_tokens=30)
    pick(window.side.mode, "ngram")
    window.side.always.setChecked(True)
    send_and_wait(qtbot, window, "Remember me")
    answer_text, footer = last_answer(window).text, last_answer(window).footer.text()
    window.close()
    reopened = make_window()
    assert reopened.settings["target_path"] == str(models.target)
    assert reopened.side.mode.currentData() == "ngram" and reopened.side.always.isChecked()
    assert reopened.client.models.target.path == str(models.target)
    assert reopened.conversations.titles() == ["Remember me"]
    assert [(m.role, m.text) for m in reopened.chat_view.messages] == [
        ("user", "Remember me"),
        ("assistant", answer_text),
    ]
    assert reopened.chat_view.messages[1].footer.text() == footer  # from the stats stored with it
    # the stored conversation continues where it stopped
    send_and_wait(qtbot, reopened, "And now?")
    assert len(History(reopened.history.path).messages(reopened.session.conversation_id)) == 4
