"""Recent chat prompts with their answers, as text and the tokens they were generated as."""

from __future__ import annotations

# Conversations remembered: a main one and a few side requests or switched-to chats. An entry is
# a conversation's text and token ids (about 30 KB at 2,500 tokens), so this costs little; the
# prompt cache's byte budget, not this count, bounds how many of them also keep their KV state.
REMEMBERED = 8


class AnswerMemory:
    """Least recently used first; the text of an entry that a newer one extends is dropped."""

    def __init__(self, size: int = REMEMBERED) -> None:
        self.size = size
        self._entries: list[tuple[str, list[int]]] = []

    def add(self, text: str, tokens: list[int]) -> None:
        self._entries = [e for e in self._entries if not text.startswith(e[0])]
        self._entries.append((text, tokens))
        del self._entries[: -self.size]

    def longest_prefix(self, text: str) -> tuple[str, list[int]] | None:
        """The longest remembered text that ``text`` starts with (all of it: an answer continued),
        with its tokens; it becomes the most recent."""
        found = max(
            (e for e in self._entries if text.startswith(e[0])),
            key=lambda e: len(e[0]),
            default=None,
        )
        if found is not None:
            self._entries.remove(found)
            self._entries.append(found)
        return found

    def clear(self) -> None:
        self._entries = []
