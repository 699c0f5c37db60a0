"""First run (issue 35, point 13): with the built-in demo model loaded and no conversation open, a
card names the best catalog pair that fits this machine, with its download size, and gets it in
one click; dismissed, it stays away. The built-in model is labelled a demo."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from desktop_app.library.fit import MachineMemory  # noqa: E402
from tests.library.hub_server import FakeHub  # noqa: E402

GB = 10**9


def test_the_welcome_card_suggests_a_pair_that_fits_and_gets_it(
    qtbot, make_window, hub: FakeHub, models_dir: Path, models, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_ENDPOINT", hub.endpoint)  # the library's downloads go to the local hub
    window = make_window()  # the built-in model
    assert "demo" in window.model_bar.target_picker.currentText()
    welcome = window.welcome
    welcome.set_memory(MachineMemory(16 * GB))

    card = welcome.card
    assert card.isVisible()
    pair = welcome.pair
    assert pair is not None and pair.ram_gb <= 16 * 0.8 and "chat" in pair.uses
    assert pair.name in card.text.text() and pair.download_text in card.text.text()
    assert "demo" in card.text.text()
    welcome.set_memory(MachineMemory(8 * GB))  # a smaller machine gets a smaller pair
    assert welcome.pair is not None and welcome.pair.ram_gb <= 8 * 0.8 < pair.ram_gb

    pair = welcome.pair
    for entry in pair.files:
        hub.add_file(entry.repo, entry.file, models.draft)
    card.get_button.click()
    library = window.library
    assert library is not None and library.isVisible()
    assert library.tabs.currentWidget() is library.catalog_tab
    expected = [models_dir / entry.filename for entry in pair.files]
    qtbot.waitUntil(lambda: all(path.exists() for path in expected), timeout=60_000)


def test_the_card_hides_with_an_open_conversation_and_stays_dismissed(qtbot, make_window, models) -> None:
    window = make_window()
    card = window.welcome.card
    window.welcome.set_memory(MachineMemory(16 * GB))
    assert card.isVisible()

    conv = window.history.create_conversation("Earlier chat")
    window.history.add_message(conv.id, "user", "hello")
    window.session.open(conv.id)
    assert not card.isVisible()
    window.session.open(None)
    assert card.isVisible()

    card.dismiss_button.click()
    assert not card.isVisible() and window.settings["welcome_dismissed"]
    window.close()
    again = make_window()
    again.welcome.set_memory(MachineMemory(16 * GB))
    assert not again.welcome.card.isVisible()


def test_no_card_when_a_real_model_is_loaded(qtbot, make_window, models) -> None:
    window = make_window(target_path=models.target)
    window.welcome.set_memory(MachineMemory(16 * GB))

    assert not window.welcome.card.isVisible()
