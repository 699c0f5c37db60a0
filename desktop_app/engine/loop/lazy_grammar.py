"""A grammar that waits for its trigger: llama.cpp's lazy grammar (``common/chat.cpp``'s
``grammar_lazy`` and ``grammar_triggers``), which lets a model answer in free text under
``tool_choice`` "auto" and still writes every call it starts in a form that parses.

The answer is free (plain rows, drafts unchecked) until its text matches one of the triggers
(a tool format's :attr:`~desktop_app.engine.tool_calls.ToolFormat.trigger`); from the match on,
it follows the grammar, which is given the text from the match first. That text is tokenized
anew: a grammar reads text, so any tokenization of it leaves the grammar in the same state, and
a trigger that starts in the middle of a token (" <tool_call>" written as " <", "tool_call>")
is read from its first character.

Speculation stays on, and lossless (docs/drafting.md): only the LAST token of a verify pass may
complete a trigger, because :meth:`LazyGrammar.check` cuts a draft before the first token that
would. So every row of a pass before the trigger is plain, the token that completes it is drawn
from a plain row with or without drafts, and every row after it is the grammar's
(:class:`~desktop_app.engine.loop.target_rows.GrammarGuide`, drafts checked as under any grammar).

Triggers are looked for in the answer after any reasoning section (a call is not made while the
model reasons). A trigger whose text the grammar refuses (a token that wrote past the call's
opening in a way no call starts) leaves the answer free, as it would be with no grammar.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from desktop_app.engine.api import SamplingParams
from desktop_app.engine.drafters import Draft
from desktop_app.engine.llama.grammar import GrammarState
from desktop_app.engine.llama.model import LlamaModel
from desktop_app.engine.loop.target_rows import GrammarGuide, PlainRows, Rows
from desktop_app.engine.reasoning import ReasoningFormat, split_reasoning


class LazyGrammar:
    """One answer's lazy grammar: free until a trigger, then :attr:`guide`'s. ``start``: the
    grammar's first state (compiled before any work, so a bad grammar fails first); ``opened``:
    the text the prompt left open (a reasoning marker), which the answer starts with."""

    def __init__(
        self,
        target: LlamaModel,
        start: GrammarState,
        triggers: Sequence[str],
        reasoning: ReasoningFormat | None = None,
        opened: str = "",
    ) -> None:
        self._target = target
        self._start: GrammarState | None = start
        self._triggers = [re.compile(t) for t in triggers]
        self._reasoning = reasoning
        self._answer = opened.encode()  # the answer so far, while the grammar waits
        self.guide: GrammarGuide | None = None
        self.free = False  # the grammar refused its trigger's text: the answer stays free

    @property
    def waiting(self) -> bool:
        return self.guide is None and not self.free

    def trigger_at(self, data: bytes) -> int | None:
        """Where in ``data`` (the answer's bytes) the grammar's text starts, if a trigger matched."""
        text = data.decode(errors="ignore")  # a character still arriving is no trigger's
        sections = split_reasoning(text, self._reasoning)
        if sections.thinking:
            return None
        offset = len(text) - len(sections.answer)  # the answer is the text's end
        for trigger in self._triggers:
            found = trigger.search(sections.answer)
            if found is not None:
                group = next((g for g in range(1, (found.lastindex or 0) + 1) if found.group(g)), 0)
                return len(text[: offset + found.start(group)].encode())
        return None

    def check(self, draft: Draft) -> int:
        """As :meth:`GrammarGuide.check`; while waiting, the draft is cut before its first token
        that completes a trigger, and all of it is allowed."""
        if self.guide is not None:
            return self.guide.check(draft)
        if self.waiting:
            data = self._answer
            for j, token in enumerate(draft.tokens):
                data += self._target.piece(token)
                if self.trigger_at(data) is not None:
                    del draft.tokens[j:]
                    break
        return len(draft.tokens)

    def rows(
        self, target: LlamaModel, params: SamplingParams, context: Sequence[int] = (), drafted: Sequence[int] = ()
    ) -> Rows:
        if self.guide is not None:
            return self.guide.rows(target, params, context, drafted)
        return PlainRows(target, params, context, drafted)

    def commit(self, tokens: list[int], n_accepted: int) -> None:
        """The pass's tokens; the grammar takes over when the last one completed a trigger."""
        if self.guide is not None:
            self.guide.commit(tokens, n_accepted)
            return
        if not self.waiting:
            return
        self._answer += b"".join(self._target.piece(t) for t in tokens)
        start = self.trigger_at(self._answer)
        if start is not None:
            self._begin(self._answer[start:].decode(errors="ignore"))

    def _begin(self, text: str) -> None:
        state, self._start = self._start, None
        assert state is not None
        for token in self._target.tokenize(text, add_special=False, parse_special=True):
            if not state.allows(token):
                state.close()
                self.free = True
                return
            state.accept(token)
        self.guide = GrammarGuide(state)

    def close(self) -> None:
        if self.guide is not None:
            self.guide.close()
        if self._start is not None:
            self._start.close()


def answer_grammar(
    target: LlamaModel,
    start: GrammarState | None,
    triggers: Sequence[str],
    reasoning: ReasoningFormat | None = None,
    opened: str = "",
) -> GrammarGuide | LazyGrammar | None:
    """An answer's grammar from its ``start`` state: followed from the first token, or lazily from
    a trigger (``tool_choice`` "auto"); None: no grammar."""
    if start is None:
        return None
    return LazyGrammar(target, start, triggers, reasoning, opened) if triggers else GrammarGuide(start)
