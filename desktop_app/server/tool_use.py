"""A request's tools, whatever the endpoint: which functions are offered, how the model must use
them (``tool_choice``), and its answer as text and calls, whole or streamed.

Each endpoint reads its own wire shape into a :class:`ToolUse` (OpenAI's chat ``tools``,
the Responses API's flat function tools, Anthropic's ``input_schema`` tools) and writes the calls
back in its own; the rules are the same for all:

- ``auto``: the tools are rendered by the model's template, its answer is parsed for calls in
  its family's syntax (:mod:`~desktop_app.engine.tool_calls`); the grammar of the calls is lazy
  (llama.cpp's ``grammar_lazy``): the model writes freely until it starts a call (its family's
  ``trigger``), and from there the call follows the grammar, so a call it starts always parses;
- ``none``: no tools are rendered and nothing is parsed (a plain answer);
- ``required`` or one named function: the answer is forced into a call by a grammar
  (:mod:`~desktop_app.server.tool_grammar`), of the named function only when one is named;
- ``parallel`` false: one call at most (the grammar's and the answer's).

An answer cut short (``max_tokens`` or a full context in the middle of a call: with ``parallel``
a forced grammar lets a model that does not stop write call after call) keeps its complete calls;
the unfinished one is dropped, and so is any markup it began (``<tool_c``, ``</tool``), rather
than the answer turned into call syntax as text. Streamed, a call is announced only once its
arguments are complete, so a cut call is never half sent. The endpoints report such an answer
as cut (``length``, ``max_tokens``, ``incomplete``), whatever calls it kept.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from desktop_app.engine.api import GenerateRequest, Tool
from desktop_app.engine.tool_calls import ParsedAnswer, ToolFormat, parse_tool_calls
from desktop_app.server.errors import BadRequest
from desktop_app.server.tool_grammar import tool_call_grammar

AUTO, NONE, REQUIRED = "auto", "none", "required"


@dataclass(frozen=True)
class Call:
    """One call as the API answers it: its id, function and arguments (JSON text)."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class ToolUse:
    """The tools of one request and how they are used; ``choice`` is auto, none, required or the
    name of the one function to call. ``param``: the request's field to name in errors."""

    format: ToolFormat | None
    tools: tuple[Tool, ...]
    choice: str = AUTO
    parallel: bool = True
    param: str = "tools"

    def __post_init__(self) -> None:
        names = [t["function"]["name"] for t in self.tools]
        if self.choice not in (AUTO, NONE, REQUIRED) and self.choice not in names:
            raise BadRequest(f"tool_choice names the function '{self.choice}', which is not in tools", "tool_choice")
        if self.choice == REQUIRED and not self.tools:
            raise BadRequest("tool_choice 'required' needs tools", "tool_choice")

    @property
    def offered(self) -> tuple[Tool, ...]:
        """The tools the template renders (none for ``none``)."""
        return self.tools if self.choice != NONE else ()

    @property
    def parses(self) -> bool:
        return bool(self.offered) and self.format is not None

    @property
    def forced(self) -> bool:
        """A grammar forces the answer into calls (``required`` or a named function)."""
        return self.parses and self.choice not in (AUTO, NONE)

    def parse(self, text: str, final: bool = True, cut: bool = False) -> ParsedAnswer:
        """The answer's text and calls (``final``: the whole answer; else one still streaming;
        ``cut``: the whole answer, ended by a limit: only its complete calls, and its text without
        the start of a call)."""
        assert self.format is not None
        if final and cut:
            held = parse_tool_calls(text, self.format, partial=True)
            return ParsedAnswer(held.content, tuple(c for c in held.calls if c.arguments is not None))
        parsed = parse_tool_calls(text, self.format, partial=not final)
        if final and self.forced and not parsed.calls:
            held = parse_tool_calls(text, self.format, partial=True)
            complete = tuple(c for c in held.calls if c.arguments is not None)
            if complete:
                return ParsedAnswer(held.content, complete)
        return parsed

    def grammar(self) -> str | None:
        """The grammar of the calls: it forces one (``required``, a named function), or under
        ``auto`` it waits for :attr:`triggers`; None: no grammar (``none``, no tools, or under
        ``auto`` a schema no grammar takes: the calls go unchecked, as any model's would)."""
        if self.choice == NONE or not self.tools or self.format is None:
            return None
        forced = [t for t in self.tools if self.choice in (AUTO, REQUIRED) or t["function"]["name"] == self.choice]
        try:
            return tool_call_grammar(self.format, forced, self.parallel and self.choice in (AUTO, REQUIRED))
        except ValueError as exc:
            if self.choice == AUTO:
                return None
            raise BadRequest(str(exc), self.param) from None

    @property
    def triggers(self) -> tuple[str, ...]:
        """Where the grammar of :meth:`grammar` takes over (empty: from the first token)."""
        return (self.format.trigger,) if self.choice == AUTO and self.format is not None else ()

    def answer(self, text: str, cut: bool = False) -> tuple[str, list[Call]]:
        """A whole answer's text and calls (``cut``: it was ended by a limit)."""
        if not self.parses:
            return text, []
        parsed = self.parse(text, cut=cut)
        return parsed.content, self._calls(parsed)

    def _calls(self, parsed: ParsedAnswer) -> list[Call]:
        assert self.format is not None
        calls = [Call(c.id or self.format.new_call_id(), c.name, c.arguments or "{}") for c in parsed.calls]
        return calls if self.parallel else calls[:1]


NO_TOOLS = ToolUse(None, ())


def with_tools(request: GenerateRequest, use: ToolUse) -> GenerateRequest:
    """The engine request with the tools rendered and the grammar of the calls, if any. Under
    ``auto`` a request's own grammar (response_format) wins, as in llama.cpp's server."""
    if request.grammar is not None and use.triggers:
        return dataclasses.replace(request, tools=use.offered)
    grammar = use.grammar()
    if grammar is not None and request.grammar is not None:
        raise BadRequest("a forced tool call cannot also follow another grammar (response_format)", "tool_choice")
    triggers = use.triggers if grammar is not None else ()
    return dataclasses.replace(
        request, tools=use.offered, grammar=grammar or request.grammar, grammar_triggers=triggers
    )


def function_tool(name: object, description: object, parameters: object, where: str, param: str) -> Tool:
    """One function as the engine takes it, from any endpoint's fields; BadRequest naming ``where``."""
    if not isinstance(name, str) or not name:
        raise BadRequest(f"{where}: a function needs a 'name'", param)
    if description is not None and not isinstance(description, str):
        raise BadRequest(f"{where}: 'description' must be a string", param)
    if parameters is not None and not isinstance(parameters, dict):
        raise BadRequest(f"{where}: 'parameters' must be a JSON schema object", param)
    function: dict[str, object] = {"name": name, "parameters": parameters or {"type": "object", "properties": {}}}
    if description:
        function["description"] = description
    return {"type": "function", "function": function}


@dataclass
class CallStream:
    """A streamed answer as text deltas and call events: :meth:`push` takes the answer's new text
    and gives (new text, [(index, call, new arguments)...]); a call appears once its arguments are
    complete: first its id and name (arguments ""), then its arguments in pieces of at most
    ``piece`` characters. One still being written is not sent: a cut answer drops it."""

    use: ToolUse
    piece: int = 64
    text: str = ""
    sent_text: int = 0
    calls: list[Call] = field(default_factory=list)
    sent_arguments: list[int] = field(default_factory=list)

    def push(self, delta: str, final: bool = False, cut: bool = False) -> tuple[str, list[tuple[int, Call, str]]]:
        """``final``: the answer ended (``cut``: by a limit)."""
        self.text += delta
        if not self.use.parses:
            return delta, []
        assert self.use.format is not None
        parsed = self.use.parse(self.text, final, cut)
        content = parsed.content if parsed.calls or final else parsed.content.rstrip()
        new_text = content[self.sent_text :] if len(content) > self.sent_text else ""
        self.sent_text = max(self.sent_text, len(content))
        events: list[tuple[int, Call, str]] = []
        for i, call in enumerate(parsed.calls if self.use.parallel else parsed.calls[:1]):
            arguments = call.arguments
            if arguments is None:
                break  # still being written (a whole answer's calls always have arguments)
            if i == len(self.calls):
                self.calls.append(Call(call.id or self.use.format.new_call_id(), call.name, ""))
                self.sent_arguments.append(0)
                events.append((i, self.calls[i], ""))
            if self.sent_arguments[i] < len(arguments):
                self.calls[i] = Call(self.calls[i].id, call.name, arguments)
                for start in range(self.sent_arguments[i], len(arguments), self.piece):
                    events.append((i, self.calls[i], arguments[start : start + self.piece]))
                self.sent_arguments[i] = len(arguments)
        return new_text, events
