"""Speculation in plain words: the footer's sentence, one acceptance figure, one control for "off"
with only the drafters the models offer, and a gauge that only the chat's own answers move."""

from __future__ import annotations

import re
import threading
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QStandardItemModel

from desktop_app.engine.api import DrafterKind
from desktop_app.store import Settings
from desktop_app.ui.transcript.message_format import footer_details, format_footer
from tests.ui.conftest import ANSWER_TIMEOUT_MS
from tests.ui.helpers import last_answer, send_and_wait
from tests.ui.test_api_in_window import _ask, _free_port

PERCENT = re.compile(r"\d+ ?%")


def _enabled(box: Any, key: str) -> bool:
    model = box.model()
    assert isinstance(model, QStandardItemModel)
    item = model.item(box.findData(key))
    return bool(item.isEnabled())


def test_the_footer_says_what_the_drafters_did_with_one_acceptance_figure(
    qtbot: Any, make_window: Any, models: Any
) -> None:
    window = make_window(
        target_path=models.target, draft_path=models.draft, drafter="model", spec_mode="auto", max_tokens=80
    )
    done = send_and_wait(qtbot, window, "Tell me a story")
    stats = done.stats
    drafted, accepted = stats.by_drafter["model"]
    assert drafted > 0 and stats.auto_reason  # Auto drafted, and has a plan of its own
    footer = last_answer(window).footer.text()
    speed, words = footer.split("\n")
    assert speed.startswith(f"{stats.decode_tokens_per_s:.1f} tokens/s · first token after {stats.ttft_s:.2f} s")
    assert f"· {stats.generated_tokens} tokens" in speed
    assert words.startswith(
        f"draft model drafted {drafted} tokens, {accepted} {'was' if accepted == 1 else 'were'} right"
    )
    for jargon in ("TTFT", "tok/s", "k ≤", "k=", "passes", "predicted", "calibration"):
        assert jargon not in footer and jargon not in window.side.detail.text()
    # one acceptance figure: accepted over drafted, the same in the meter, the panel and the details
    share = f"{accepted / drafted:.0%}"
    assert window.side.acceptance.text() == f"{share} of drafts right"
    assert PERCENT.findall(window.side.detail.text()) == []  # no second figure next to the meter
    tooltip = last_answer(window).footer.toolTip()
    assert f"Acceptance: {accepted}/{drafted} drafted tokens ({share})" in tooltip
    assert "TTFT" in tooltip and "target passes" in tooltip  # the exact figures, for experts
    assert "a prediction, not a result" in tooltip  # Auto's plan is named for what it is
    assert window.side.detail.text() == footer  # the side panel says it in the same words


def test_the_footer_counts_drafters_thinking_and_measured_speedups_in_words() -> None:
    stats: dict[str, Any] = {
        "decode_tokens_per_s": 42.14,
        "ttft_s": 0.312,
        "generated_tokens": 180,
        "mode": "auto",
        "drafted": 57,
        "accepted": 43,
        "by_drafter": {"ngram-map": [5, 3], "ngram": [52, 40], "model": [0, 0]},
    }
    assert format_footer(stats) == (
        "42.1 tokens/s · first token after 0.31 s · 180 tokens\n"
        "repeats from this chat drafted 52 tokens, 40 were right; common phrases here drafted 5, 3 were right"
    )
    thinking = {**stats, "thinking_tokens": 120, "thinking_drafted": 40, "thinking_accepted": 30}
    assert "thought 120 tokens (75% of drafts right), answered 60 (76%)" in format_footer(thinking)
    measured = {**stats, "measured_speedup": 1.62}
    assert format_footer(measured).endswith("1.6x faster than plain decoding, measured by the engine")
    raced = {**measured, "race": {"speedup": 1.8, "rounds": 3, "low": 1.5, "high": 2.1}}
    assert format_footer(raced).endswith("1.8x faster than without speculation in a race of 3 (1.5–2.1x per round)")
    assert format_footer({**stats, "measured_speedup": 0.5}).endswith(
        "2.0x slower than plain decoding, measured by the engine"
    )
    assert format_footer({**stats, "measured_speedup": 1.01}).endswith(
        "about as fast as plain decoding, measured by the engine"
    )
    off = {"decode_tokens_per_s": 30.0, "ttft_s": 0.1, "generated_tokens": 9, "mode": "off"}
    assert format_footer(off).endswith("\nwithout speculation")
    # answers stored before drafters were counted: the totals, with the main drafter
    older = {k: v for k, v in stats.items() if k != "by_drafter"} | {"drafter": "ngram"}
    assert format_footer(older).endswith("drafted 57 tokens, 43 were right (mostly repeats from this chat)")
    assert "Acceptance: 43/57 drafted tokens (75%)" in footer_details(stats)


def test_one_control_for_off_greys_drafters_the_models_lack(qtbot: Any, make_window: Any, models: Any) -> None:
    # an old settings file: drafter "none" was the second switch for off
    window = make_window(target_path=models.target, drafter="none", spec_mode="on", max_tokens=12)
    box = window.side.mode
    assert window.findChild(type(box), "drafterChoice") is None  # the model bar's drafter box is gone
    assert box.currentData() == "off" and not window.side.always.isEnabled()
    assert window.settings["spec_mode"] == "off" and window.settings["drafter"] == "best"  # migrated
    assert Settings.load()["spec_mode"] == "off"  # and saved
    send_and_wait(qtbot, window, "Hi")
    assert window.session.conversation_id and "without speculation" in last_answer(window).footer.text()
    reasons = {
        DrafterKind.MODEL: "needs a draft model: choose one in the model bar",
        DrafterKind.MTP: "has no MTP head",
        DrafterKind.ASSISTANT: "needs a Gemma 4 assistant file",
    }
    for kind, reason in reasons.items():
        assert not _enabled(box, kind.value)
        assert reason in box.itemData(box.findData(kind.value), Qt.ItemDataRole.ToolTipRole)
    for kind in (DrafterKind.NGRAM, DrafterKind.NGRAM_MAP, DrafterKind.NGRAM_CACHE):
        assert _enabled(box, kind.value)
    # a user going through the list with the keyboard never lands on a greyed drafter
    box.setFocus()
    seen = []
    for _ in range(box.count()):
        qtbot.keyClick(box, Qt.Key.Key_Down)
        seen.append(box.currentData())
    assert set(seen) == {"best", "ngram", "ngram-map", "ngram-cache"}
    assert window.settings["drafter"] in ("best", "ngram", "ngram-map", "ngram-cache")
    assert window.settings["spec_mode"] == "auto"  # any entry but Off drafts
    # loading a draft model makes "Draft model" available
    with qtbot.waitSignal(window.client.model_loaded, timeout=ANSWER_TIMEOUT_MS):
        window.model_bar.choose_draft(str(models.draft))
    assert _enabled(box, DrafterKind.MODEL.value)


def test_a_saved_drafter_the_models_lack_is_not_used_silently(qtbot: Any, make_window: Any, models: Any) -> None:
    window = make_window(target_path=models.target, drafter="mtp", max_tokens=12)
    assert window.side.mode.currentData() == "best"  # shown as what drafts: Auto
    note = window.side.choice_note.text()
    assert note.startswith("Built-in drafter: Not available:") and "has no MTP head" in note and "Using Auto" in note


def test_api_answers_leave_the_gauge_on_the_chats_last_answer(qtbot: Any, make_window: Any, models: Any) -> None:
    port = _free_port()
    window = make_window(target_path=models.target, max_tokens=40, api_port=port)
    done = send_and_wait(qtbot, window, "Hello there")
    gauge, detail = window.side.gauge, window.side.detail.text()
    shown = gauge.value()
    assert shown == done.stats.decode_tokens_per_s and gauge.caption == "last answer"
    window.serve_action.trigger()
    results: list[Any] = []
    asker = threading.Thread(target=_ask, args=(port, results), kwargs={"max_tokens": 30}, daemon=True)
    asker.start()
    qtbot.waitUntil(lambda: bool(results), timeout=ANSWER_TIMEOUT_MS)
    assert not isinstance(results[0], Exception), results[0]
    qtbot.wait(200)  # any late report of the API's answer
    assert gauge.value() == shown and gauge.caption == "last answer" and window.side.detail.text() == detail
    window.serve_action.trigger()


EXPERT_WORDS = ("MTP", "N-gram", "n-gram", "Prompt lookup", "prompt lookup", "Draft up to", " k", "(k)")


def test_settings_speak_plain_words_with_the_experts_terms_in_tooltips(
    qtbot: Any, make_window: Any, models: Any, tmp_path: Any
) -> None:
    from PySide6.QtWidgets import QFormLayout, QLabel

    from tests.ui.test_preferences import number_fields, open_preferences, type_into

    window = make_window(target_path=models.target, max_tokens=12)
    box = window.side.mode
    for index in range(box.count()):
        text = box.itemText(index)
        assert not any(word in text for word in EXPERT_WORDS), text
    for kind in DrafterKind:
        tip = str(box.itemData(box.findData(kind.value), Qt.ItemDataRole.ToolTipRole))
        assert kind.label in box.itemText(box.findData(kind.value)) and kind.term in tip.replace("<br>", " ")
    assert "prompt lookup" in DrafterKind.NGRAM.term and "n-gram map" in DrafterKind.NGRAM_MAP.term
    labels = [w.text() for w in window.side.findChildren(QLabel)]
    assert "Draft up to" not in labels and "Guess up to" in labels
    # draft underlining is off by default (it read as links or spelling errors), and still there
    assert window.settings["highlight_drafts"] is False and not window.side.highlight.isChecked()
    assert window.chat_view.highlight is False
    send_and_wait(qtbot, window, "Hi")
    assert "text-decoration" not in last_answer(window).content.answer_text.shown_html()
    window.side.highlight.setChecked(True)
    assert window.settings["highlight_drafts"] is True and window.chat_view.highlight is True
    # a bad value in Preferences says the setting's label and its range in words
    dialog = open_preferences(qtbot, window)
    fields = number_fields(dialog)
    dialog.show_section("Model")
    type_into(qtbot, fields["n_ctx"].edit, "5")
    error = fields["n_ctx"].error.text()
    assert error.startswith("Context length: enter a whole number from ") and "n_ctx" not in error
    dialog.show_section("Sampling")
    type_into(qtbot, fields["top_k"].edit, "-3")
    assert fields["top_k"].error.text() == "Top-k: enter a whole number from 0 to 1,048,576"
    form_labels = [w.text() for w in dialog.findChildren(QLabel) if isinstance(w.parentWidget().layout(), QFormLayout)]
    assert not any("(k)" in label for label in form_labels)
    window.side_fold.action.setChecked(True)  # the speed panel, open, in the screenshot
    window.resize(1280, 800)
    qtbot.wait(100)
    window.grab().save(str(tmp_path / "plain_words.png"))
    dialog.grab().save(str(tmp_path / "plain_words_preferences.png"))
    dialog.reject()
