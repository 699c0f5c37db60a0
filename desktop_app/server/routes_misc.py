"""llama-server's routes: ``/health`` and ``/infill`` (infill_api.py)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from desktop_app.server.infill_api import infill_events, infill_result, parse_infill_request
from desktop_app.server.route_context import RouteContext


class LlamaServerRoutes:
    def __init__(self, ctx: RouteContext) -> None:
        self.ctx = ctx

    def routes(self) -> list[Route]:
        return [
            Route("/health", self.health, methods=["GET"]),
            Route("/infill", self.infill, methods=["POST"]),
        ]

    async def health(self, request: Request) -> Response:
        # No key needed (as llama-server's): it says only whether a model is loaded.
        if self.ctx.backend.served_models():
            return JSONResponse({"status": "ok"})
        return JSONResponse({"status": "no model loaded"}, status_code=503)

    async def infill(self, request: Request) -> Response:
        ctx = self.ctx
        begun = await ctx.started(request, lambda body: parse_infill_request(body, ctx.default_spec))
        if isinstance(begun, Response):
            return begun
        _, stream, job, event = begun
        if stream:
            return ctx.sse_response(infill_events(job, request, event), job, event)
        return JSONResponse(infill_result(event.text, event.stats))
