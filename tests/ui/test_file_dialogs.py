"""The window's file dialogs open in a sensible folder, never the working directory: model files
in the models folder, conversations in Documents (or home); then where the last file was picked,
also after a restart (issue 49, item 11)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QStandardPaths
from PySide6.QtWidgets import QFileDialog

from desktop_app.paths import models_dir
from desktop_app.ui.models.model_bar import OPEN_FILE
from desktop_app.ui.widgets import file_dialogs
from desktop_app.ui.widgets.file_dialogs import CONVERSATIONS, MODELS, ask_open_file, ask_save_file, default_folder
from tests.ui.helpers import pick


class Dialogs:
    """Stands in for QFileDialog: notes the folder each dialog was opened in, answers ``answer``."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.folders: list[str] = []
        self.answer = ""
        monkeypatch.setattr(QFileDialog, "getOpenFileName", self._open)
        monkeypatch.setattr(QFileDialog, "getSaveFileName", self._save)

    def _open(self, _parent: Any, _title: str, folder: str, _filters: str) -> tuple[str, str]:
        self.folders.append(folder)
        return self.answer, ""

    def _save(self, _parent: Any, _title: str, name: str, _filters: str) -> tuple[str, str]:
        self.folders.append(str(Path(name).parent))
        return self.answer, ""


def test_the_windows_dialogs_open_in_the_models_folder_and_documents_not_the_working_directory(
    qtbot: Any, make_window: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    dialogs = Dialogs(monkeypatch)
    window = make_window(wait_loaded=False)
    window.transfer.import_action.trigger()  # File → Import conversation…, cancelled
    pick(window.model_bar.target_picker, OPEN_FILE)  # Open GGUF…, cancelled
    window.loader.open_library()
    qtbot.waitUntil(lambda: window.library is not None)
    window.library.import_button.click()  # the library's Add file…, cancelled
    conversations, models = str(default_folder(CONVERSATIONS)), str(models_dir())
    assert dialogs.folders == [conversations, models, models]
    assert str(work) not in dialogs.folders and "" not in dialogs.folders
    documents = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.DocumentsLocation)
    assert conversations == (documents if Path(documents).is_dir() else str(Path.home()))


def test_the_next_dialog_opens_where_the_last_file_was_picked_also_after_a_restart(
    qtbot: Any, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dialogs = Dialogs(monkeypatch)
    exports, ggufs = tmp_path / "exports", tmp_path / "ggufs"
    exports.mkdir(), ggufs.mkdir()
    dialogs.answer = str(exports / "chat.md")
    assert ask_save_file(None, "Export conversation", CONVERSATIONS, "chat.md", "") == dialogs.answer
    dialogs.answer = str(ggufs / "m.gguf")
    assert ask_open_file(None, "Open GGUF model", MODELS, "") == dialogs.answer
    dialogs.answer = ""  # cancelled: nothing changes
    ask_open_file(None, "Import a conversation", CONVERSATIONS, "")
    ask_open_file(None, "Add a GGUF model", MODELS, "")
    assert dialogs.folders[2:] == [str(exports), str(ggufs)]
    assert (file_dialogs.config_dir() / "last-folders.json").is_file()  # kept for the next start
    ggufs.rmdir()  # gone: back to the models folder
    ask_open_file(None, "Add a GGUF model", MODELS, "")
    assert dialogs.folders[-1] == str(models_dir())
