"""Every keyboard shortcut of the window, declared once: its keys and what it does, in the order
Help → Keyboard shortcuts lists them (what users look for first: sending and stopping, finding,
the last answer, conversations, then the window and the menus).

Each place that makes a shortcut's QAction or QShortcut gives it its declaration (:func:`bind`);
the list reads the window's real actions and shortcuts (ui/window/shortcut_list.py), so it shows
what works. The message box's own keys (Enter, Shift+Enter) have no QAction: the list adds
:data:`TYPED` for them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import QWidget

RANK = "specchatShortcutRank"  # the property holding a bound object's place in the list


@dataclass(frozen=True)
class Shortcut:
    """Keys (portable text, as QKeySequence reads it) and what they do; ``standard``: the
    platform's keys for it, before ``keys``; ``where``: the widget it works in, when not everywhere."""

    keys: tuple[str, ...]
    does: str
    standard: QKeySequence.StandardKey | None = None
    where: str = ""

    def sequences(self) -> list[QKeySequence]:
        own = [QKeySequence(k) for k in self.keys]
        platform = QKeySequence.keyBindings(self.standard) if self.standard is not None else []
        return [*(k for k in platform if k not in own), *own]


SEND = Shortcut(("Enter",), "Send the message", where="the message box")
NEW_LINE = Shortcut(("Shift+Enter",), "New line in the message", where="the message box")
STOP = Shortcut(("Esc",), "Stop the answer")
FIND = Shortcut(("Ctrl+F",), "Find in the conversation")  # not StandardKey.Find: it adds a "Find" key
FIND_NEXT = Shortcut(("F3",), "Next match (Enter in the find bar)")
FIND_PREVIOUS = Shortcut(("Shift+F3",), "Previous match (Shift+Enter in the find bar)")
COPY_ANSWER = Shortcut(("Ctrl+Shift+C",), "Copy the last answer")
REGENERATE = Shortcut(("Ctrl+R",), "Regenerate the last answer")
CONTINUE = Shortcut(("Ctrl+Shift+Return",), "Continue the last answer where it ended")
EDIT_LAST = Shortcut(("Ctrl+E",), "Edit and resend your last message")
NEW_CHAT = Shortcut(("Ctrl+N",), "New conversation")
RENAME_CHAT = Shortcut(("F2",), "Rename the conversation", where="Conversations")
DELETE_CHAT = Shortcut(("Del",), "Delete the conversation", where="Conversations")
SPEED_PANEL = Shortcut(("F9",), "Show or hide the speed panel")
LARGER_TEXT = Shortcut(("Ctrl+=", "Ctrl++"), "Larger text")
SMALLER_TEXT = Shortcut(("Ctrl+-",), "Smaller text")
NORMAL_TEXT = Shortcut(("Ctrl+0",), "Text size back to normal")
LIBRARY = Shortcut(("Ctrl+L",), "Model library")
PREFERENCES = Shortcut(("Ctrl+,",), "Preferences", QKeySequence.StandardKey.Preferences)  # Linux has none
QUIT = Shortcut((), "Quit", QKeySequence.StandardKey.Quit)

ORDER: tuple[Shortcut, ...] = (
    SEND, NEW_LINE, STOP, FIND, FIND_NEXT, FIND_PREVIOUS, COPY_ANSWER, REGENERATE, CONTINUE, EDIT_LAST, NEW_CHAT,
    RENAME_CHAT, DELETE_CHAT, SPEED_PANEL, LARGER_TEXT, SMALLER_TEXT, NORMAL_TEXT, LIBRARY, PREFERENCES, QUIT,
)  # fmt: skip
TYPED: tuple[Shortcut, ...] = (SEND, NEW_LINE)  # keys the message box handles itself


def bind(target: QAction | QShortcut, shortcut: Shortcut) -> None:
    """Give ``target`` the declared keys, its words (whatsThis) and its place in the list."""
    keys = shortcut.sequences()
    if isinstance(target, QAction):
        target.setShortcuts(keys)
    else:
        target.setKeys(keys)
    target.setWhatsThis(shortcut.does)
    target.setProperty(RANK, ORDER.index(shortcut))


def shortcut(
    parent: QWidget, declared: Shortcut, slot: Callable[[], object], context: Qt.ShortcutContext | None = None
) -> QAction:
    """A QAction of ``parent`` (it works where ``parent`` is) bound to ``declared``, triggering ``slot``."""
    action = QAction(declared.does, parent)
    bind(action, declared)
    if context is not None:
        action.setShortcutContext(context)
    action.triggered.connect(lambda: slot())
    parent.addAction(action)
    return action
