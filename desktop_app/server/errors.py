"""OpenAI's error object for every error the server answers, whoever raises it.

Handlers raise :class:`ApiError`; Starlette's own 404/405 (:class:`HTTPException`) and anything
unexpected are turned into the same ``{"error": {"message", "type", "param", "code"}}`` by the
handlers in :data:`EXCEPTION_HANDLERS`, so a client never has to parse plain text.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

log = logging.getLogger("specchat.server")

CLIENT_GONE = 499  # nginx's "client closed request": nobody reads it, the access log shows it


class BadRequest(Exception):
    """Becomes HTTP 400 with ``{"error": {"message", "type": "invalid_request_error", "param"}}``."""

    def __init__(self, message: str, param: str | None = None, code: str | None = None) -> None:
        self.param = param
        self.code = code
        super().__init__(message)


def error(
    status: int,
    message: str,
    kind: str = "invalid_request_error",
    param: str | None = None,
    code: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> JSONResponse:
    body = {"error": {"message": message, "type": kind, "param": param, "code": code}}
    return JSONResponse(body, status_code=status, headers=headers)


def anthropic_error(
    status: int, message: str, kind: str = "invalid_request_error", headers: Mapping[str, str] | None = None
) -> JSONResponse:
    """Anthropic's error object (its /v1/messages endpoints)."""
    body = {"type": "error", "error": {"type": kind, "message": message}}
    return JSONResponse(body, status_code=status, headers=headers)


class ApiError(Exception):
    """An answer other than success, raised wherever it is found and answered by :func:`_api_error`."""

    def __init__(
        self,
        status: int,
        message: str,
        kind: str = "invalid_request_error",
        param: str | None = None,
        code: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status, self.kind, self.param, self.code = status, kind, param, code
        self.headers = headers

    def response(self) -> JSONResponse:
        return error(self.status, str(self), self.kind, self.param, self.code, self.headers)


ANTHROPIC_PATH = "/v1/messages"  # Anthropic's endpoints (and count_tokens) answer in Anthropic's shape
ANTHROPIC_KINDS = {
    401: "authentication_error",
    404: "not_found_error",
    413: "request_too_large",
    529: "overloaded_error",
}


def _in_shape(request: Request, response: JSONResponse, status: int, message: str) -> JSONResponse:
    """``response`` (OpenAI's shape), or the same error in Anthropic's under its endpoints."""
    if not request.url.path.startswith(ANTHROPIC_PATH):
        return response
    kind = ANTHROPIC_KINDS.get(status, "api_error" if status >= 500 else "invalid_request_error")
    headers = {k: v for k, v in response.headers.items() if k.lower() not in ("content-length", "content-type")}
    return anthropic_error(status, message, kind, headers)


async def _api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return _in_shape(request, exc.response(), exc.status, str(exc))


async def _http_exception(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    messages = {
        404: f"no such endpoint: {request.url.path} (this server has {endpoints(request.scope.get('app'))})",
        405: f"{request.method} is not allowed on {request.url.path}",
    }
    message = messages.get(exc.status_code, str(exc.detail))
    response = error(
        exc.status_code,
        message,
        "invalid_request_error" if exc.status_code < 500 else "server_error",
        code={404: "not_found", 405: "method_not_allowed"}.get(exc.status_code),
        headers=exc.headers,
    )
    return _in_shape(request, response, exc.status_code, message)


def endpoints(app: object) -> str:
    """Every endpoint the app's routes declare, as "GET /v1/models, POST /v1/chat/completions..."."""
    listed = []
    for route in getattr(app, "routes", ()):
        path, methods = getattr(route, "path", None), getattr(route, "methods", None) or ()
        if path:
            verbs = "/".join(m for m in ("GET", "POST", "PUT", "DELETE") if m in methods)
            listed.append(f"{verbs} {re.sub(r':[a-z]+}', '}', path)}".strip())
    return ", ".join(listed) or "no endpoints"


async def _unexpected(request: Request, exc: Exception) -> Response:
    # A bug, not the client's fault: the client gets a generic message (no internals), our log one
    # line. Starlette then re-raises it so that uvicorn logs the traceback, for whoever fixes it.
    log.error("specchat: %s %s failed: %s: %s", request.method, request.url.path, type(exc).__name__, exc)
    message = "the server failed to answer this request"
    return _in_shape(request, error(500, message, "server_error", code="internal_error"), 500, message)


EXCEPTION_HANDLERS: dict[Any, Any] = {
    ApiError: _api_error,
    HTTPException: _http_exception,
    Exception: _unexpected,
}
