"""A request's prompt tokens: the chat template rendered, fitted to the context, tokenized.

Re-tokenizing our own earlier answer need not give the tokens we generated (BPE is not
canonical), which would spoil the KV cache: recent chat prompts with their answers are remembered
as text and tokens (:class:`AnswerMemory`, a few, most recent first), and the longest one the next
prompt starts with is reused, so conversation A's answer keeps its tokens through a turn of B
(whose KV state the prompt cache may then restore: docs/prompt-cache.md).

The target's reasoning (:class:`TemplateReasoning`) is read from its template when it loads:
earlier answers reach the template with their reasoning apart (it keeps or drops it as it is
written to), and a request's Think switch becomes the template's variable. So are its tools
(:class:`TemplateTools`): a request's tools reach the template as its ``tools`` variable, or, on a
template without tools, its system turn in llama.cpp's generic format.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

from desktop_app.engine.api import GenerateRequest, ModelInfo, OverflowPolicy, Tool
from desktop_app.engine.context_size import PromptSize
from desktop_app.engine.errors import ContextOverflowError, EmptyPromptError, EngineError
from desktop_app.engine.events import Finished
from desktop_app.engine.llama.chat_template import ChatTemplate, Message, validate_messages
from desktop_app.engine.llama.model import LlamaModel
from desktop_app.engine.llama.template_limits import MAX_RENDER_CHARS
from desktop_app.engine.llama.template_reasoning import NO_REASONING, TemplateReasoning, detect_reasoning
from desktop_app.engine.llama.template_tools import NO_TOOLS, TemplateTools, detect_tools, template_message
from desktop_app.engine.llama.vision import MediaSpans
from desktop_app.engine.loop.answer_memory import AnswerMemory
from desktop_app.engine.loop.image_prompt import RequestImages
from desktop_app.engine.loop.model_set import ModelSet, describe_model
from desktop_app.engine.loop.prompt_fit import PromptFitter, TokenCounts

MIN_ANSWER_ROOM = 64


def _special_text(model: LlamaModel, token: int) -> str:
    return model.token_text(token).decode(errors="replace") if token >= 0 else ""


class PromptBuilder:
    def __init__(self, models: ModelSet) -> None:
        self._models = models
        self.template: ChatTemplate | None = None
        self._history = AnswerMemory()  # recent chat prompts + answers, as text and tokens
        self.last_text = ""  # the text of the last chat prompt built
        self.reasoning: TemplateReasoning = NO_REASONING  # the target's (read from its template)
        self.tools: TemplateTools = NO_TOOLS  # the target's (read from its template)
        self.opened = ""  # the reasoning marker the last prompt left open ("": none)
        self._token_counts = TokenCounts(self.tokenize_text)  # per message text, for fitting prompts
        self.images = RequestImages()  # the images of the request being built (image_prompt.py)

    def on_target(self, model: LlamaModel) -> None:
        """A new target: its template, and nothing remembered in the old vocabulary."""
        self._history.clear()
        self._token_counts = TokenCounts(self.tokenize_text)
        self.template = ChatTemplate(
            model.info.chat_template,
            _special_text(model, model.bos_id),
            _special_text(model, model.eos_id),
            origin=model.path.name,
        )
        self.reasoning = detect_reasoning(self.template, lambda text: len(self.tokenize_text(text)) == 1)
        if self.reasoning.format is not None:
            model.show_special(self.reasoning.format.markers)
        self.tools = detect_tools(self.template)
        if self.tools.format is not None:
            model.show_special(self.tools.format.markers)

    def describe(self, target: LlamaModel) -> ModelInfo:
        """What the window shows of the target, with its template's reasoning."""
        return describe_model(target, self.reasoning, self.tools.format)

    def forget_last_answer(self) -> None:
        self._history.clear()

    def build(
        self, request: GenerateRequest, cancel: threading.Event | None, clock: Callable[[], float]
    ) -> tuple[list[int], int]:
        """Token ids for the request and how many oldest turns were dropped to fit (see
        prompt_fit). Raises FitCancelled when ``cancel`` is set meanwhile, and
        ContextOverflowError when messages would have to be dropped under the REFUSE policy or
        even the last one leaves too little room."""
        target = self._models.require_target()
        self.images.clear()
        if request.suffix is not None:
            tokens = fill_in_the_middle(target, request.prompt or "", request.suffix)
            self._check_fits(tokens)
            self.opened = ""
            return tokens, 0
        if request.prompt is not None:
            tokens = target.tokenize(request.prompt, add_special=True, parse_special=request.parse_special)
            if not tokens:
                # Generation continues from the last prompt token: with no BOS there is none.
                raise EmptyPromptError("The prompt is empty: give some text to continue")
            self._check_fits(tokens)
            self.opened = self.reasoning.opened(request.prompt)
            return tokens, 0
        messages = validate_messages(self.images.keyed(target, list(request.messages or [])))
        size, text, tokens = self._fit(messages, request, cancel, clock)
        if size.dropped and request.overflow is OverflowPolicy.REFUSE:
            self._refuse(messages, size)
        self.last_text = text
        # Going on with an answer: its text already holds any reasoning marker its prompt opened.
        self.opened = "" if request.continue_answer else self.reasoning.opened(text)
        if size.tokens > size.limit:  # even the last message alone leaves too little room
            self._check_fits(tokens)
        return tokens, size.dropped

    def count(self, request: GenerateRequest, clock: Callable[[], float]) -> PromptSize:
        """The size of the prompt :meth:`build` would make for this chat request, without
        refusing: its tokens (the oldest messages left out when they do not fit, as many as
        ``dropped`` says), so the window can show it before the user sends."""
        target = self._models.require_target()
        self.images.clear()
        if request.prompt is not None:
            tokens = target.tokenize(request.prompt, add_special=True, parse_special=request.parse_special)
            return PromptSize(len(tokens), target.n_ctx, self._limit(request))
        if not request.messages:
            return PromptSize(0, target.n_ctx, self._limit(request))
        messages = validate_messages(self.images.keyed(target, list(request.messages)))
        return self._fit(messages, request, None, clock)[0]

    def media(self, prompt: list[int]) -> MediaSpans | None:
        """Where the images of the prompt :meth:`build` just made sit (None: it has none)."""
        return self.images.spans(self._models.require_target(), prompt)

    def _limit(self, request: GenerateRequest) -> int:
        """The most tokens a prompt may take: the context less the room kept for the answer."""
        return self._models.require_target().n_ctx - min(request.max_tokens, MIN_ANSWER_ROOM)

    def _fit(
        self,
        messages: list[Message],
        request: GenerateRequest,
        cancel: threading.Event | None,
        clock: Callable[[], float],
    ) -> tuple[PromptSize, str, list[int]]:
        limit = self._limit(request)
        self._check_system_prompt(messages, limit)
        fitter = PromptFitter(
            lambda ms: self.render(ms, request.think, request.tools, request.continue_answer),
            self._token_counts,
            limit,
            cancel,
            clock=clock,
        )
        kept_from, text, tokens = fitter.fit(messages)
        dropped = kept_from - (1 if messages[0]["role"] == "system" else 0)
        return PromptSize(len(tokens), self._models.require_target().n_ctx, limit, dropped), text, tokens

    def _check_system_prompt(self, messages: list[Message], limit: int) -> None:
        """Refuse a system prompt that cannot fit however many turns are left out, naming it: it
        is part of the prompt (a 10 MB one was once reported as the template's fault). A token
        most often covers a character or more, so only one longer than ``limit`` characters is
        tokenized to be measured; one past what any template may render is refused unmeasured."""
        if not messages or messages[0]["role"] != "system" or len(messages[0]["content"]) <= limit:
            return
        n_ctx, chars = self._models.require_target().n_ctx, len(messages[0]["content"])
        if chars > MAX_RENDER_CHARS:
            raise ContextOverflowError(
                f"The system prompt is {chars:,} characters long, more than any context holds "
                f"(this one {n_ctx:,} tokens): shorten the system prompt"
            )
        tokens = len(self.tokenize_text(messages[0]["content"]))
        if tokens > limit:
            raise ContextOverflowError(
                f"The system prompt is {tokens:,} tokens long but the context holds {n_ctx:,} ({limit:,} for the "
                "prompt): shorten the system prompt"
                + self._or_raise("raise the context length (Preferences → Model → Context length)")
            )

    def _refuse(self, messages: list[Message], size: PromptSize) -> None:
        whole = len(self.render(messages)[1])
        raise ContextOverflowError(
            f"The conversation is {whole:,} tokens long but the context holds {size.n_ctx:,} "
            f"({size.limit:,} for the prompt, {size.n_ctx - size.limit:,} kept for the answer), and "
            "leaving the oldest messages out is turned off: start a new conversation or let the oldest messages be "
            "left out (the context meter's menu)" + self._or_raise("raise the context length (Preferences → Model)")
        )

    def _or_raise(self, how: str) -> str:
        """The end of an overflow's advice: ``how`` to raise the context, unless it is already what
        the model was trained for (llama.cpp serves no more: docs/api.md)."""
        target = self._models.require_target()
        trained = target.info.context_length or 0
        if trained and target.n_ctx >= trained:
            return f" (the context is the {trained:,} tokens the model was trained for, the most it serves)"
        return f", or {how}"

    def render(
        self,
        messages: Sequence[Message],
        think: bool | None = None,
        tools: Sequence[Tool] = (),
        continue_answer: bool = False,
    ) -> tuple[str, list[int]]:
        """The prompt text for these messages and its tokens (``think``: the Think switch;
        ``tools``: the functions offered; ``continue_answer``: the last message is an answer to go
        on with: the prompt for the messages before it, then its text, as generated)."""
        target = self._models.require_target()
        assert self.template is not None
        r = self.reasoning
        head = list(messages[:-1]) if continue_answer else messages
        shown = [template_message(m) for m in self.tools.messages(r.messages(head), tools)]
        text = self.template.render(
            shown, add_generation_prompt=True, **r.variables(think), **self.tools.variables(tools)
        )
        if continue_answer:  # the prompt it was answering, then its text (which carries the marker opened)
            answer, opened = messages[-1]["content"], r.opened(text)
            text += answer[len(opened) :] if opened and answer.startswith(opened) else answer
        # Reuse the tokens generated earlier when the text matches (see the module's docstring).
        if (known := self._history.longest_prefix(text)) is not None:
            hist_text, hist_tokens = known
            return text, hist_tokens + self._tokenize(text[len(hist_text) :], False)
        bos_text = self.template.bos_token
        add_special = target.add_bos and not (bos_text and text.startswith(bos_text))
        return text, self._tokenize(text, add_special)

    def _tokenize(self, text: str, add_special: bool) -> list[int]:
        """A rendered prompt's tokens, its images' where their markers stand (image_prompt.py)."""
        target = self._models.require_target()
        if self.images.active:
            return self.images.tokenize(
                lambda t, a: target.tokenize(t, add_special=a, parse_special=True), text, add_special
            )
        return target.tokenize(text, add_special=add_special, parse_special=True)

    def tokenize_text(self, text: str) -> list[int]:
        return self._tokenize(text, False)

    def remember(self, target: LlamaModel, prompt_text: str, prompt: list[int], answer: Finished) -> None:
        """Keep a chat answer's tokens for the next prompt (when they read back as its text; the
        reasoning marker its prompt opened, which its text starts with, is the prompt's own)."""
        opened = self.opened if answer.text.startswith(self.opened) else ""
        text = answer.text[len(opened) :]
        if prompt_text and target.detokenize(answer.token_ids) == text:
            self._history.add(prompt_text + text, prompt + answer.token_ids)

    def _check_fits(self, tokens: list[int]) -> None:
        target = self._models.require_target()
        if len(tokens) + 1 > target.n_ctx:
            raise ContextOverflowError(
                f"The message is {len(tokens):,} tokens long but the context holds {target.n_ctx:,}: shorten it"
                + self._or_raise(
                    "raise the context length (Preferences → Model → Context length; --ctx on the command line)"
                )
            )


def fill_in_the_middle(target: LlamaModel, prefix: str, suffix: str) -> list[int]:
    """llama.cpp's infill prompt (prefix-suffix-middle): [BOS] FIM_PRE prefix FIM_SUF suffix FIM_MID.
    The texts are tokenized as text: a special token's name in the code stays text."""
    ids = target.fim_ids
    if ids is None:
        raise EngineError(
            f"{target.name} has no fill-in-the-middle tokens: use a code model trained for it "
            "(Qwen2.5-Coder, StarCoder2, CodeLlama, DeepSeek-Coder...)"
        )
    pre, suf, mid = ids
    start = [target.bos_id] if target.add_bos and target.bos_id >= 0 else []
    body = target.tokenize(prefix, add_special=False, parse_special=False)
    tail = target.tokenize(suffix, add_special=False, parse_special=False)
    return [*start, pre, *body, suf, *tail, mid]
