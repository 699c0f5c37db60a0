"""First run: while the built-in demo model is loaded and no conversation is open, a card above the
transcript says the demo is tiny, names the best catalog pair that fits this machine with its
download size, and gets it in one click (the model library's download). Dismissed, it stays away
(the ``welcome_dismissed`` setting)."""

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
from desktop_app.store import Settings
from desktop_app.ui.conversations.chat_session import ChatSession
from desktop_app.ui.engine.engine_client import EngineClient

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
    memory is the library's to see)."""

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
        session.conversation_changed.connect(lambda _id: self.update())
        self.set_memory(self.memory)

    def set_memory(self, memory: MachineMemory) -> None:
        self.memory = memory
        self.pair = best_pair(self._catalog, memory)
        if self.pair is not None:
            self.card.text.setText(
                f"The built-in model is a tiny demo (135M parameters): its answers are often nonsense. "
                f"This computer ({memory.describe()}) can run {self.pair.name}: "
                f"a {self.pair.download_text} download, ~{self.pair.ram_gb:.1f} GB in use."
            )
            self.card.get_button.setText(f"Download it ({self.pair.download_text})")
        self.update()

    @Slot(object)
    def _on_model_loaded(self, loaded: LoadedModels) -> None:
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
