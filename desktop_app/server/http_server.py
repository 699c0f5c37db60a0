"""uvicorn, configured once for ``specchat serve``, the window's API and the tests.

uvicorn times out idle keep-alive connections, but not a request whose headers never finish nor
a body nobody reads, and it answers a malformed request in plain text. :class:`GuardedH11Protocol`
(its h11 protocol with those things changed) answers 408 and closes a connection whose request
line and headers take longer than ``head_timeout_s`` from their first byte, closes one whose
answer went out before its body arrived, answers every protocol error with the OpenAI error
object, and at shutdown drops every connection with an unfinished answer (its handler then ends
quietly, as for any client that leaves) so that no handler is cancelled mid-await. The body's own
deadline is the request-parsing layer's (``desktop_app.server.request_body``).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from desktop_app.server.limits import DEFAULT_LIMITS, ServerLimits


def host_text(host: str) -> str:
    """``host`` as a URL writes it: an IPv6 address in brackets (``[::]``)."""
    return f"[{host}]" if ":" in host else host


def base_url(host: str, port: int) -> str:
    """The API's URL on ``host``: ``http://[::]:8080/v1``."""
    return f"http://{host_text(host)}:{port}/v1"


def _raw_error(status: int, reason: str, message: str, code: str) -> bytes:
    """A whole JSON error response, for the moments h11 has no request to answer."""
    body = json.dumps(
        {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": code}}
    ).encode()
    head = (
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n"
        "connection: close\r\n\r\n"
    ).encode()
    return head + body


class GuardedH11Protocol(H11Protocol):
    head_timeout_s = DEFAULT_LIMITS.head_timeout_s  # set per server by protocol_for()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._head_timer: asyncio.TimerHandle | None = None
        super().connection_made(transport)
        self._time_head()  # a connection that sends nothing at all is timed too

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._time_head()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_head_timer()
        super().connection_lost(exc)

    def _time_head(self) -> None:
        """Run the head's clock while the client owes us a request line and headers: from the
        first byte, not reset by each byte (a slowloris trickles them)."""
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            if self._head_timer is None:
                self._head_timer = self.loop.call_later(self.head_timeout_s, self._head_timed_out)
        else:
            self._stop_head_timer()

    def _stop_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if self.conn.their_state is not h11.IDLE or self.transport.is_closing():
            return
        self.transport.write(
            _raw_error(
                408,
                "Request Timeout",
                f"the request headers did not arrive within {self.head_timeout_s:g} s",
                "request_timeout",
            )
        )
        self.transport.close()

    def on_response_complete(self) -> None:
        if self.conn.their_state is h11.SEND_BODY and not self.transport.is_closing():
            # Answered before the body arrived (401, 404, 413...): nobody will read the rest, and
            # a client trickling it would keep the connection open for ever.
            self.transport.close()
        super().on_response_complete()

    def send_400_response(self, msg: str) -> None:
        # uvicorn's own answer is plain text (it has logged the message already).
        self.transport.write(_raw_error(400, "Bad Request", f"this is not a valid HTTP request: {msg}", "bad_http"))
        self.transport.close()

    def shutdown(self) -> None:
        if self.cycle is not None and not self.cycle.response_complete:
            # An answer in progress (or a body still arriving) ends as if its client had left: its
            # handler sees the disconnect at its next poll, cancels its generation and returns.
            # uvicorn would wait for it (a long answer: minutes), then cancel it mid-await, and
            # every such cancellation is a CancelledError traceback in the log.
            self.transport.close()
            return
        super().shutdown()


def protocol_for(limits: ServerLimits) -> type[GuardedH11Protocol]:
    return type("GuardedH11Protocol", (GuardedH11Protocol,), {"head_timeout_s": limits.head_timeout_s})


def make_server(app: Any, host: str, port: int, limits: ServerLimits = DEFAULT_LIMITS) -> uvicorn.Server:
    """A uvicorn server for ``app`` with every connection bound of ``limits``; ``run()`` it on
    any thread, set ``should_exit`` to stop it (connections with unfinished answers are dropped)."""
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        http=protocol_for(limits),
        lifespan="off",
        timeout_keep_alive=limits.keep_alive_s,
        h11_max_incomplete_event_size=limits.max_head_bytes,
        timeout_graceful_shutdown=limits.shutdown_grace_s,
    )
    return uvicorn.Server(config)
