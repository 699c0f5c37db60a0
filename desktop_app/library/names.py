"""Names from users and the hub that become URLs and paths: repo ids, revisions, a file's path
inside a repo and its name in the models folder.

They are checked here, before any URL or path is built from them: ``..`` in a hub file name
would otherwise climb out of the repo in the resolve URL (the HTTP client normalises
``/resolve/main/../../x``), and an empty name or ``.`` is the models folder itself, which looks
like a file that is "already in the library".
"""

from __future__ import annotations

import unicodedata

from huggingface_hub.errors import HFValidationError
from huggingface_hub.utils import validate_repo_id

from desktop_app.engine.ranges import shown
from desktop_app.library.errors import InvalidNameError

SEPARATORS = ("/", "\\")  # the path separators of every system a name may reach


def check_name(name: str, what: str = "file name", folders: bool = False) -> str:
    """``name`` if it is one plain name (or, with ``folders``, plain names joined by '/', as a
    file's path inside a repo or a revision such as ``refs/pr/1`` is); else InvalidNameError
    saying what is wrong. Plain: not empty, not ``.`` or ``..``, no separator, no control
    character (NUL included)."""
    parts = name.split("/") if folders else [name]
    for part in parts:
        problem = _problem(part, name, folders)
        if problem:
            raise InvalidNameError(f"{what} {shown(name)} {problem}")
    return name


def check_repo_id(repo_id: str) -> str:
    """A Hugging Face repo id (``owner/name`` or ``name``), by huggingface_hub's own rule."""
    check_name(repo_id, "repo id", folders=True)  # our words for the common mistakes
    try:
        validate_repo_id(repo_id)
    except HFValidationError:
        raise InvalidNameError(
            f"repo id {shown(repo_id)} is not a Hugging Face repo id: write owner/name, with letters, digits, "
            "'-', '_' and '.' (e.g. bartowski/Qwen2.5-0.5B-Instruct-GGUF)"
        ) from None
    return repo_id


def check_hub_file(repo_id: str, filename: str, revision: str) -> str:
    """Check all three parts of a hub file's address; the name it gets in the models folder."""
    check_repo_id(repo_id)
    check_name(revision, "revision", folders=True)
    return check_name(filename, folders=True).rsplit("/", 1)[-1]


def _problem(part: str, whole: str, folders: bool) -> str | None:
    if part == "":
        if not whole:
            return "is empty"
        return "has an empty folder name (a '/' at the start or end, or '//')"
    if part in (".", ".."):
        if part == whole:
            return "is a folder, not a name"
        return f"has '{part}' as a part: '.' and '..' mean folders, not names"
    separator = next((s for s in SEPARATORS if s in part), None)
    if separator is not None:
        return f"has a '{separator}': give a name without folders"
    control = next((c for c in part if unicodedata.category(c) == "Cc"), None)
    if control is not None:
        return f"has a control character (U+{ord(control):04X})"
    return None
