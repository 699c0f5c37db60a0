"""First run: while the built-in demo model is loaded and no conversation is open, a card above the
transcript says the demo is tiny, names the best catalog pair for this machine (it fits the memory
and is predicted fast enough here: library/speed.py, docs/speed-advice.md) with its predicted
speed and download size, and gets it in one click (the model library's download). Dismissed, it
stays away (the ``welcome_dismissed`` setting)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, Slot
from PySide6.QtWidgets import QBoxLayout, QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from desktop_app.engine import find_default_model
from desktop_app.engine.api import LoadedModels
from desktop_app.library.catalog import CatalogPair, load_catalog
from desktop_app.library.errors import LibraryError
from desktop_app.library.fit import MachineMemory, best_pair, measure_memory
from desktop_app.library.speed import SpeedGuess, machine_speed, speed_text, start_read_measurement
from desktop_app.store import Settings
from desktop_app.ui.conversations.chat_session import ChatSession
from desktop_app.ui.engine.engine_client import EngineClient
from desktop_app.ui.widgets.plain_text import plain_tip

if TYPE_CHECKING:  # imported when first opened: the library checks vocabularies with llama.cpp
    from desktop_app.ui.models.model_library import ModelLibraryWindow


def is_builtin(path: str) -> bool:
    """Whether ``path`` is the built-in demo model ("" is what the settings call it)."""
    default = find_default_model()
    return not path or (default is not None and default.resolve() == Path(path).resolve())


class WelcomeCard(QFrame):
    """The card itself: a headline, a line of text, "Get it" and "Not now"."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("welcomeCard")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setStyleSheet("#welcomeCard { border: 1px solid palette(mid); border-radius: 8px; }")
        self.headline = QLabel("Welcome to SpecChat")
        self.headline.setObjectName("welcomeHeadline")
        font = self.headline.font()
        font.setPointSizeF(font.pointSizeF() * 1.3)
        font.setBold(True)
        self.headline.setFont(font)
        self.text = QLabel()
        self.text.setObjectName("welcomeText")
        self.text.setWordWrap(True)
        self.text.setTextFormat(Qt.TextFormat.PlainText)
        self.get_button = QPushButton("Get it")
        self.get_button.setObjectName("welcomeGet")
        self.dismiss_button = QPushButton("Not now")
        self.dismiss_button.setObjectName("welcomeDismiss")
        self.dismiss_button.setAccessibleName("Dismiss the welcome card")
        buttons = QHBoxLayout()
        buttons.addWidget(self.get_button)
        buttons.addWidget(self.dismiss_button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addWidget(self.headline)
        layout.addWidget(self.text)
        layout.addLayout(buttons)


class FirstRunWelcome(QObject):
    """Shows the :class:`WelcomeCard` above ``transcript`` (in its column) when it applies (see
    the module docstring): ``client`` says which model loaded, ``session`` which conversation is
    open; "Get it" calls ``open_library()``, "Not now" saves the setting through
    ``save_settings()`` and gives the focus back to ``message_box``. ``memory`` is this
    machine's (measured RAM by default: the window process does not load llama.cpp, so GPU
    memory is the library's to see); ``speed_of()`` gives its predicted speed (what the models
    run here taught, read again at each load)."""

    def __init__(
        self,
        transcript: QWidget,
        message_box: QWidget,
        client: EngineClient,
        session: ChatSession,
        settings: Settings,
        open_library: Callable[[], ModelLibraryWindow],
        save_settings: Callable[[], None],
        memory: MachineMemory | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._message_box, self._session, self._settings = message_box, session, settings
        self._open_library, self._save_settings = open_library, save_settings
        self.memory = memory or measure_memory()
        self.speed_of: Callable[[], SpeedGuess] = machine_speed
        self.speed = SpeedGuess()  # read again at each load: the quick measurement is taken meanwhile
        start_read_measurement()
        self.pair: CatalogPair | None = None
        self._builtin_loaded = False
        try:
            self._catalog = load_catalog()
        except LibraryError:
            self._catalog = []
        self.card = WelcomeCard()
        self.card.hide()
        centre = transcript.parentWidget()
        column = centre.layout() if centre is not None else None
        if isinstance(column, QBoxLayout):  # above the transcript, in its column
            column.insertWidget(column.indexOf(transcript), self.card)
        self.card.get_button.clicked.connect(self.get)
        self.card.dismiss_button.clicked.connect(self.dismiss)
        client.model_loaded.connect(self._on_model_loaded)
        client.loading_started.connect(lambda _text: self._set_builtin(False))
        session.conversation_changed.connect(lambda _id: self.refresh_speed())
        self._suggest()

    def set_memory(self, memory: MachineMemory) -> None:
        self.memory = memory
        self._suggest()

    def set_speed(self, speed: SpeedGuess) -> None:
        """Suggest for this predicted speed from now on (a test's, or one measured elsewhere)."""
        self.speed_of = lambda: speed
        self.speed = speed
        self._suggest()

    def _suggest(self) -> None:
        pair = self.pair = best_pair(self._catalog, self.memory, self.speed)
        if pair is not None:
            tokens_s = self.speed.of_pair(pair)
            verdict = "can run" if self.speed.fast_enough(pair) else "is slow for every model that fits; the fastest is"
            self.card.text.setText(
                f"The built-in model is a tiny demo (135M parameters): its answers are often nonsense. "
                f"This computer ({self.memory.describe()}) {verdict} {pair.name}: "
                f"{speed_text(tokens_s)} (predicted), a {pair.download_text} download, ~{pair.ram_gb:.1f} GB in use."
            )
            self.card.text.setToolTip(
                plain_tip(f"Predicted: decoding reads the model's weights once per token, at {self.speed.basis()}.")
            )
            self.card.get_button.setText(f"Download it ({pair.download_text})")
        self.update()

    def refresh_speed(self) -> None:
        """Read the predicted speed again (an answer since may have taught a figure) and show."""
        speed = self.speed_of()
        if speed != self.speed:
            self.speed = speed
            self._suggest()
        self.update()

    @Slot(object)
    def _on_model_loaded(self, loaded: LoadedModels) -> None:
        self.refresh_speed()
        self._set_builtin(is_builtin(loaded.target.path))

    def _set_builtin(self, loaded: bool) -> None:
        self._builtin_loaded = loaded
        self.update()

    def wanted(self) -> bool:
        return (
            self.pair is not None
            and self._builtin_loaded
            and not self._session.conversation_id
            and not self._settings["welcome_dismissed"]
        )

    def update(self) -> None:
        self.card.setVisible(self.wanted())

    def get(self) -> None:
        """Open the model library on the catalog and download the suggested pair."""
        if self.pair is None:
            return
        library = self._open_library()
        library.tabs.setCurrentWidget(library.catalog_tab)
        library.catalog_tab.download_pair(self.pair)

    def dismiss(self) -> None:
        self._settings.set("welcome_dismissed", True)
        self._save_settings()
        self.update()
        self._message_box.setFocus()
