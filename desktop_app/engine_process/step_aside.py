"""A long prompt steps aside for the answers waiting behind it.

One engine answers one request at a time, and reading a prompt of a few thousand tokens takes
tens of seconds on a small CPU (a 3,320-token message: 27-29 s at one thread on the built-in
model, docs/benchmarks/2026-12-05-field.md): a chat sent meanwhile, from the window or another
client, waited all that time. Now, between two batches of a prompt being read, an answer waiting
at the head of the queue runs first. The prompt's generation is stopped there (what it read stays
in the cache), the waiting answers run (their prefill saves that state to the prompt cache, as for
any other conversation: docs/prompt-cache.md), and it starts again: the prompt cache restores
what it had read, so it goes on from there, and its answer is the one it would have given
uninterrupted (the bytes restored are the cache as it was). Only the prompt reading steps aside:
once an answer has text, it runs to its end. With the prompt cache off it does not step aside
(the part read would be read again). The figures of an answer that stepped aside are its last
start's: what it had read before counts as cached (``prompt_tokens_new``), and the engine's own
time to first token counts from that start (the window counts it from Send).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from desktop_app.engine.events import Event, PromptProgress


def stepping_aside(
    generate: Callable[[], Iterator[Event]], waiting: Callable[[], bool], run_waiting: Callable[[], None]
) -> Iterator[Event]:
    """The events of ``generate()``; when ``waiting()`` says an answer waits while the prompt is
    still being read, the generation is closed, ``run_waiting()`` runs, and it starts again."""
    while True:
        events = generate()
        aside = False
        try:
            for event in events:
                yield event
                if isinstance(event, PromptProgress) and event.done < event.total and waiting():
                    aside = True
                    break
        finally:
            close = getattr(events, "close", None)
            if callable(close):
                close()
        if not aside:
            return
        run_waiting()
