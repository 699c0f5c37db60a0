"""Bytes from tokens to text: valid UTF-8 even when a character spans tokens, and stop strings
held back until it is clear they are not the start of a stop sequence."""

from __future__ import annotations

import codecs
from collections.abc import Sequence


class TextStream:
    def __init__(self, stop: Sequence[str] = ()) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._stop = [s for s in stop if s]
        self._pending = ""
        self.text = ""  # everything emitted so far
        self.stopped = False
        self.stopped_by = ""  # the stop string that matched

    def push(self, data: bytes) -> str:
        """Feed a token's bytes; return the text that is now safe to show."""
        if self.stopped:
            return ""
        self._pending += self._decoder.decode(data)
        return self._release(final=False)

    def flush(self) -> str:
        if self.stopped:
            return ""
        self._pending += self._decoder.decode(b"", final=True)
        return self._release(final=True)

    def _release(self, final: bool) -> str:
        pending = self._pending
        for stop in self._stop:
            at = pending.find(stop)
            if at >= 0:
                self.stopped, self.stopped_by = True, stop
                self._pending = ""
                return self._emit(pending[:at])
        hold = 0 if final else self._held_suffix(pending)
        out, self._pending = pending[: len(pending) - hold], pending[len(pending) - hold :]
        return self._emit(out)

    def _held_suffix(self, text: str) -> int:
        """Length of the longest tail of ``text`` that starts some stop string."""
        best = 0
        for stop in self._stop:
            for n in range(min(len(stop) - 1, len(text)), best, -1):
                if stop.startswith(text[-n:]):
                    best = n
                    break
        return best

    def _emit(self, out: str) -> str:
        self.text += out
        return out
