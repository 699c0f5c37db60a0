"""What one request may cost the server before it is refused: every bound in one object.

The defaults suit a local API (a chat's JSON is kilobytes, numbers are a few digits); tests
construct a :class:`ServerLimits` with short timeouts to see them act.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ServerLimits:
    # The request body, checked by desktop_app.server.request_body before any other work.
    max_body_bytes: int = 32 * 2**20  # a 20 MB image or file as base64 (27 MB) in its JSON
    max_depth: int = 32  # JSON nesting; a chat request needs 4 or 5
    max_number_chars: int = 40  # a float's repr is at most 24 characters, an int64 20 digits
    body_timeout_s: float = 15.0  # the whole body must arrive within this (a slow upload is a slowloris)
    # The connection, enforced by desktop_app.server.http_server.
    head_timeout_s: float = 10.0  # from a connection's first byte of a request to the end of its headers
    max_head_bytes: int = 16 * 2**10  # request line and headers
    keep_alive_s: int = 5  # an idle connection between requests
    # A streamed answer: its headers go once the engine has its prompt (a prompt it refuses is
    # still a 400), or after this wait (queued behind another answer: a refusal is then an
    # error event); then a keep-alive whenever it has had nothing to send for stream_ping_s.
    stream_start_s: float = 1.0
    stream_ping_s: float = 5.0
    # At shutdown unfinished answers are dropped and their handlers end within a poll; one that
    # has not ended after this is cancelled by uvicorn (a bug, logged with its traceback).
    shutdown_grace_s: int = 2


DEFAULT_LIMITS = ServerLimits()
