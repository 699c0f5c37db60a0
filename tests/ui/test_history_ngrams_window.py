"""The window keeps the engine's n-gram cache in line with the chat history.

Through the real engine process: the cache file next to the history learns the history after
the model loads, learns each answer when it is saved, and forgets a deleted conversation.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from desktop_app.engine.drafters import ngram_store
from desktop_app.engine_process.history_sync import CACHE_FOLDER
from desktop_app.store import History
from tests.ui.conftest import LOAD_TIMEOUT_MS
from tests.ui.helpers import send_and_wait

NOTE = "Remember this: the quartz zebra orchestra rehearses marmalade sonatas beneath violet lanterns."


def _manifest(folder: Path) -> set[int] | None:
    """The message ids the cache file learned from (None while there is no sound file)."""
    files = list(folder.glob("*.npz"))
    if len(files) != 1:
        return None
    try:
        return set(ngram_store.load(files[0], files[0].stem)[1])
    except ngram_store.CacheFileError:
        return None


def test_the_cache_on_disk_learns_answers_and_forgets_deleted_conversations(
    qtbot: Any,
    make_window: Any,
    home: Path,
) -> None:
    history = History()  # the window's history (SPECCHAT_HOME), written before it starts
    secret = history.create_conversation("secret").id
    history.add_message(secret, "user", NOTE)
    history.add_message(secret, "assistant", NOTE, {"finish_reason": "stop"})
    kept = history.create_conversation("kept").id
    history.add_message(kept, "user", "What is the capital of France?")
    secret_ids = {m.id for m in history.messages(secret)}
    kept_ids = {m.id for m in history.messages(kept)}
    history.close()

    window = make_window(drafter="none", max_tokens=8)
    folder = window.history.path.parent / CACHE_FOLDER
    qtbot.waitUntil(lambda: (_manifest(folder) or set()) >= secret_ids | kept_ids, timeout=LOAD_TIMEOUT_MS)

    send_and_wait(qtbot, window, "Tell me about penguins")
    saved = {m.id for m in window.history.messages(window.session.conversation_id) if m.content}
    qtbot.waitUntil(lambda: (_manifest(folder) or set()) >= saved, timeout=LOAD_TIMEOUT_MS)  # the answer, once saved

    window.conversations.delete(secret)
    qtbot.waitUntil(lambda: not (_manifest(folder) or secret_ids) & secret_ids, timeout=LOAD_TIMEOUT_MS)
    assert (_manifest(folder) or set()) >= kept_ids | saved  # rebuilt from what is left
