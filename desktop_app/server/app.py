"""The Starlette application: OpenAI's ``/v1/models``, ``/v1/chat/completions``, ``/v1/completions``
(openai_stream.py) ``/v1/embeddings`` and ``/v1/responses`` (responses_api.py, responses_answer.py),
Anthropic's ``/v1/messages`` and ``/v1/messages/count_tokens`` (anthropic_api.py,
anthropic_stream.py), llama-server's ``/infill`` (infill_api.py), and ``/health``; each family's
routes in its own module (routes_openai.py, routes_anthropic.py, routes_misc.py), sharing one
:class:`~desktop_app.server.route_context.RouteContext`.

Streamed answers are server-sent events, their headers sent as soon as the engine has the prompt
and keep-alives while there is nothing to send (keep_alive.py); a client that goes away cancels
its generation at once (the engine stops at its next cycle). With an API key set, every request needs
``Authorization: Bearer KEY`` (or Anthropic's ``x-api-key: KEY``). No request names a file or reaches the history: the models are
the ones the server (or the window) loaded.
"""

from __future__ import annotations

from starlette.applications import Starlette

from desktop_app.engine.api import DEFAULT_SPEC_MODE, SpecMode
from desktop_app.server.backend import Counter, GenerationBackend
from desktop_app.server.errors import EXCEPTION_HANDLERS
from desktop_app.server.limits import DEFAULT_LIMITS, ServerLimits
from desktop_app.server.request_log import RecordedRequests
from desktop_app.server.route_context import RouteContext
from desktop_app.server.routes_anthropic import AnthropicRoutes
from desktop_app.server.routes_misc import LlamaServerRoutes
from desktop_app.server.routes_openai import OpenAIRoutes


def create_app(
    backend: GenerationBackend,
    api_key: str | None = None,
    counter: Counter | None = None,
    default_spec: SpecMode = DEFAULT_SPEC_MODE,
    limits: ServerLimits = DEFAULT_LIMITS,
) -> Starlette:
    ctx = RouteContext(backend, api_key, counter or Counter(), default_spec, limits)
    routes = [*OpenAIRoutes(ctx).routes(), *AnthropicRoutes(ctx).routes(), *LlamaServerRoutes(ctx).routes()]
    app = Starlette(routes=routes, exception_handlers=EXCEPTION_HANDLERS)
    app.add_middleware(RecordedRequests, log=ctx.counter.log)  # the window's API page lists them
    app.state.counter = ctx.counter
    return app
