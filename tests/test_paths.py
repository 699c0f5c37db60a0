"""Where user data lives, and what the user reads when a folder for it cannot be made."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from desktop_app import paths


def test_one_variable_relocates_every_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(paths.HOME_ENV, str(tmp_path / "home"))
    assert paths.config_dir() == tmp_path / "home" / "config"
    assert paths.models_dir() == tmp_path / "home" / "data" / "models" and paths.models_dir().is_dir()


@pytest.mark.parametrize(
    "folder", [paths.config_dir, paths.data_dir, paths.models_dir], ids=["config", "data", "models"]
)
def test_a_home_under_a_file_names_the_folder_and_what_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, folder: Callable[[], Path]
) -> None:
    # A real state even root cannot write through (tests may run as root, where chmod stops nothing).
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv(paths.HOME_ENV, str(blocker / "home"))
    with pytest.raises(paths.DataDirError) as caught:
        folder()
    message = str(caught.value)
    assert message.startswith(f"SpecChat cannot create its folder {blocker / 'home'}/")
    assert f"(Not a directory): {blocker} is a file, not a folder: move it away, or set SPECCHAT_HOME" in message
    assert isinstance(caught.value, OSError)  # every OSError handler (the CLI's one line) still takes it
