"""Tools a request offers that this server cannot run: left out of the prompt, with a note.

Agents send, beside their own function tools, tools their provider runs for them: the Responses
API's ``web_search``, ``file_search``, ``mcp``, ``namespace`` groups (Codex sends both of the
first and last kind), Chat Completions' ``custom`` tools, Anthropic's server tools
(``web_search_20250305``, ``bash_20250124``, ``text_editor_...``, ``computer_...``). One local
model has nobody to run them, so the request is answered with the function tools alone rather
than refused: the model never sees the others, so it cannot call them. The server's log says so
once per endpoint, kind and name (a client sends the same tools with every request).
"""

from __future__ import annotations

import logging
import threading

from desktop_app.engine.ranges import shown

log = logging.getLogger("specchat.server")
MAX_NOTED = 256  # distinct notes remembered; past them a note may repeat, never grow memory
_noted: set[tuple[str, str, str]] = set()
_lock = threading.Lock()


def leave_out(endpoint: str, kind: object, name: object) -> None:
    """Note that ``endpoint``'s request offered a ``kind`` tool (named ``name``, if it has one)
    that is left out of the prompt; the log says it the first time only."""
    key = (endpoint, shown(kind), shown(name))
    with _lock:
        if key in _noted:
            return
        if len(_noted) < MAX_NOTED:
            _noted.add(key)
    called = f" {key[2]}" if name is not None else ""
    log.warning(
        "specchat: %s: the %s tool%s is left out of the prompt: this server runs no tools of its own "
        "(only the client's function tools reach the model)",
        endpoint,
        key[1],
        called,
    )
