"""A real HTTP server on 127.0.0.1 that answers like the Hugging Face Hub, for download tests.

``/{repo}/resolve/{revision}/{file}`` (HEAD and GET) answers as the hub does for LFS files: a
302 to a CDN URL with ``X-Repo-Commit``, ``X-Linked-Etag`` (the SHA-256) and ``X-Linked-Size``;
errors carry the hub's ``X-Error-Code`` header. The "CDN" is the same server reached as
``localhost``: another origin, as the real CDN is, so huggingface_hub stops at the redirect and
the token must not follow. ``/cdn/...`` serves the bytes with Range support and can cut the
connection or crawl, to test resume and cancel. ``/api/models?search=…`` lists the repos whose
id holds the search text, most downloaded first, and ``/api/models/{repo}`` (``/revision/main``)
a repo's files with their sizes, as the hub's search and model info do.
"""

from __future__ import annotations

import hashlib
import json
import re
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, quote, unquote, urlsplit

COMMIT = "0123456789abcdef0123456789abcdef01234567"
_RESOLVE = re.compile(r"^/(?P<repo>[^/]+/[^/]+)/resolve/(?P<rev>[^/]+)/(?P<file>.+)$")
_INFO = re.compile(r"^/api/models/(?P<repo>[^/]+/[^/]+?)(?:/revision/(?P<rev>[^/]+))?$")
_CDN = re.compile(r"^/cdn/(?P<repo>[^/]+/[^/]+)/(?P<file>.+)$")
_RANGE = re.compile(r"^bytes=(\d+)-$")
CHUNK = 64 * 1024


@dataclass
class HostedFile:
    data: bytes
    advertised_sha256: str
    cut_after: int | None = None  # the first GET sends this many bytes, then drops the connection
    chunk_delay_s: float = 0.0  # pause between 64 KiB chunks: a slow download
    gets: int = 0
    listed_size: int | None = None  # the size the API lists, when not the bytes served (a big file)


@dataclass
class HostedRepo:
    files: dict[str, HostedFile] = field(default_factory=dict)
    refuse_status: int | None = None  # 401 / 403 (gated) or 500 ...
    refuse_code: str | None = None  # X-Error-Code sent with refuse_status
    downloads: int = 0
    likes: int = 0
    last_modified: str = "2026-11-02T10:00:00.000Z"


@dataclass(frozen=True)
class SeenRequest:
    method: str
    path: str
    host: str
    headers: dict[str, str]


class FakeHub:
    def __init__(self) -> None:
        self.repos: dict[str, HostedRepo] = {}
        self.requests: list[SeenRequest] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(self))
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.cdn = f"http://localhost:{self.port}"
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def start(self) -> FakeHub:
        self._thread.start()
        return self

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def add_file(
        self,
        repo: str,
        name: str,
        source: Path | bytes,
        *,
        advertised_sha256: str | None = None,
        cut_after: int | None = None,
        chunk_delay_s: float = 0.0,
        listed_size: int | None = None,
    ) -> HostedFile:
        data = source if isinstance(source, bytes) else Path(source).read_bytes()
        sha256 = advertised_sha256 or hashlib.sha256(data).hexdigest()
        hosted = HostedFile(data, sha256, cut_after, chunk_delay_s, listed_size=listed_size)
        self.repos.setdefault(repo, HostedRepo()).files[name] = hosted
        return hosted

    def refuse(self, repo: str, status: int, code: str | None = None) -> None:
        hosted = self.repos.setdefault(repo, HostedRepo())
        hosted.refuse_status, hosted.refuse_code = status, code

    def seen(self, method: str | None = None, cdn: bool | None = None) -> list[SeenRequest]:
        return [
            r
            for r in self.requests
            if (method is None or r.method == method) and (cdn is None or r.path.startswith("/cdn/") == cdn)
        ]


def _make_handler(hub: FakeHub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:  # keep test output clean
            pass

        def do_HEAD(self) -> None:
            self._handle(body=False)

        def do_GET(self) -> None:
            self._handle(body=True)

        def _handle(self, body: bool) -> None:
            headers = {k.lower(): v for k, v in self.headers.items()}
            hub.requests.append(SeenRequest(self.command, self.path, headers.get("host", ""), headers))
            path = unquote(self.path.split("?", 1)[0])
            if path == "/api/models":
                self._search(parse_qs(urlsplit(self.path).query))
            elif match := _INFO.match(path):
                self._info(match["repo"])
            elif match := _RESOLVE.match(path):
                self._resolve(match["repo"], match["rev"], match["file"])
            elif match := _CDN.match(path):
                self._serve(match["repo"], match["file"], body)
            else:
                self._error(404, None, "Not Found")

        def _error(self, status: int, code: str | None, message: str) -> None:
            payload = f'{{"error": "{message}"}}'.encode()
            self.send_response(status)
            if code:
                self.send_header("X-Error-Code", code)
            self.send_header("X-Error-Message", message)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(payload)

        def _json(self, value: object) -> None:
            payload = json.dumps(value).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def _search(self, query: dict[str, list[str]]) -> None:
            text = query.get("search", [""])[0].lower()
            found = [(i, r) for i, r in hub.repos.items() if text in i.lower() and "gguf" in query.get("filter", [])]
            found.sort(key=lambda item: -item[1].downloads)
            limit = int(query.get("limit", ["1000"])[0])
            self._json(
                [
                    {"id": i, "downloads": r.downloads, "likes": r.likes, "lastModified": r.last_modified}
                    for i, r in found[:limit]
                ]
            )

        def _info(self, repo_id: str) -> None:
            repo = hub.repos.get(repo_id)
            if repo is None:
                return self._error(404, "RepoNotFound", "Repository not found")
            siblings = [
                {"rfilename": name, "size": f.listed_size if f.listed_size is not None else len(f.data)}
                for name, f in repo.files.items()
            ]
            self._json({"id": repo_id, "downloads": repo.downloads, "likes": repo.likes, "siblings": siblings})

        def _resolve(self, repo_id: str, revision: str, name: str) -> None:
            repo = hub.repos.get(repo_id)
            if repo is None:
                return self._error(404, "RepoNotFound", "Repository not found")
            if repo.refuse_status is not None:
                return self._error(repo.refuse_status, repo.refuse_code, f"Access to model {repo_id} is restricted.")
            hosted = repo.files.get(name)
            if hosted is None or revision != "main":
                return self._error(404, "EntryNotFound", f'{name} does not exist on "{revision}"')
            self.send_response(302)
            self.send_header("Location", f"{hub.cdn}/cdn/{repo_id}/{quote(name)}")
            self.send_header("X-Repo-Commit", COMMIT)
            self.send_header("X-Linked-Etag", f'"{hosted.advertised_sha256}"')
            self.send_header("X-Linked-Size", str(len(hosted.data)))
            self.send_header("ETag", '"pointer-git-sha"')
            self.send_header("Content-Length", "0")
            self.end_headers()

        def _serve(self, repo_id: str, name: str, body: bool) -> None:
            hosted = hub.repos.get(repo_id, HostedRepo()).files.get(name)
            if hosted is None:
                return self._error(404, None, "no such object")
            size = len(hosted.data)
            start = 0
            wanted = self.headers.get("Range")
            if wanted and (match := _RANGE.match(wanted)):
                start = int(match[1])
                if start >= size:
                    self.send_response(416)
                    self.send_header("Content-Range", f"bytes */{size}")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                self.send_response(206)
                self.send_header("Content-Range", f"bytes {start}-{size - 1}/{size}")
            else:
                self.send_response(200)
            self.send_header("Accept-Ranges", "bytes")
            self.send_header("ETag", f'"{hosted.advertised_sha256}"')
            self.send_header("Content-Length", str(size - start))
            self.end_headers()
            if not body:
                return
            hosted.gets += 1
            end = size
            if hosted.cut_after is not None and hosted.gets == 1:
                end = min(size, start + hosted.cut_after)
            try:
                for offset in range(start, end, CHUNK):
                    self.wfile.write(hosted.data[offset : min(offset + CHUNK, end)])
                    if hosted.chunk_delay_s:
                        self.wfile.flush()
                        time.sleep(hosted.chunk_delay_s)
                self.wfile.flush()
                if end < size:  # simulate a dropped connection mid-body
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
            except (ConnectionError, OSError):
                self.close_connection = True  # the client went away (cancel)

    return Handler
