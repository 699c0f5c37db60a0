"""Download one GGUF file from the hub into the models folder: resumable, cancellable, verified.

huggingface_hub's ``hf_hub_download`` writes to a per-process temporary file that it deletes
on failure, so it cannot resume across runs, and it reports progress only through tqdm. Here the
bytes come from the same URL and headers (``hf_hub_url``, ``get_hf_file_metadata``,
``build_hf_headers``, huggingface_hub's HTTP session), into ``<name>.<sha>.incomplete`` next to
the destination; an interrupted download continues with an HTTP Range request. The SHA-256 is
computed while the bytes arrive and compared with the hub's LFS etag before the file is renamed
into place.
"""

from __future__ import annotations

import errno
import hashlib
import shutil
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx2
from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled
from huggingface_hub.utils import get_session, hf_raise_for_status

from desktop_app import paths
from desktop_app.engine.stats import SpeedWindow
from desktop_app.library.errors import (
    ChecksumMismatchError,
    DiskSpaceError,
    DownloadCancelled,
    DownloadError,
    HubUnreachableError,
)
from desktop_app.library.hub import DEFAULT_TIMEOUT_S, RemoteFile, describe_failure, fetch_remote_file, hub_headers
from desktop_app.library.names import check_hub_file, check_name

DISK_MARGIN_BYTES = 16 * 2**20  # keep a little room for the OS and the rename
REPORT_INTERVAL_S = 0.1  # the default gap between two progress reports (a parameter of download_file)
HASH_BLOCK = 4 * 2**20


@dataclass(frozen=True)
class DownloadProgress:
    """A snapshot of one download. ``phase``: checking, downloading, verifying or done."""

    filename: str
    done: int
    total: int | None
    speed: float  # bytes per second over the last few seconds
    eta_s: float | None
    phase: str

    @property
    def fraction(self) -> float | None:
        return self.done / self.total if self.total else None


@dataclass(frozen=True)
class DownloadResult:
    path: Path
    size: int
    sha256: str | None  # None when the hub gave no SHA-256 to check against
    verified: bool
    resumed_from: int = 0
    already_present: bool = False


ProgressCallback = Callable[[DownloadProgress], None]


class SpeedMeter:
    """Bytes per second over a sliding window (the engine's SpeedWindow, fed byte counts), and
    the time left at that speed."""

    def __init__(self, window_s: float = 3.0) -> None:
        self._window = SpeedWindow(window_s)
        self._done = 0
        self._last_t: float | None = None

    def add(self, done: int, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        self._window.add(done - self._done, now)
        self._done, self._last_t = done, now

    def speed(self) -> float:
        return self._window.rate(self._last_t) if self._last_t is not None else 0.0

    def eta(self, done: int, total: int | None) -> float | None:
        speed = self.speed()
        if not total or speed <= 0:
            return None
        return max(total - done, 0) / speed


class _Transfer:
    """The state of one download: the partial file, the running hash, progress reporting."""

    def __init__(
        self,
        remote: RemoteFile,
        partial: Path,
        progress: ProgressCallback | None,
        cancel: threading.Event | None,
        report_interval_s: float,
    ) -> None:
        self.remote = remote
        self.partial = partial
        self.progress = progress
        self.cancel = cancel or threading.Event()
        self.hasher = hashlib.sha256()
        self.done = 0
        self.meter = SpeedMeter()
        self.report_interval_s = report_interval_s
        self._last_report = 0.0

    def report(self, phase: str, force: bool = False) -> None:
        now = time.monotonic()
        self.meter.add(self.done, now)
        if self.progress is None or (not force and now - self._last_report < self.report_interval_s):
            return
        self._last_report = now
        total = self.remote.size
        speed, eta = self.meter.speed(), self.meter.eta(self.done, total)
        self.progress(DownloadProgress(self.remote.filename, self.done, total, speed, eta, phase))

    def check_cancel(self) -> None:
        if self.cancel.is_set():
            raise DownloadCancelled(
                f"download of {self.remote.filename} cancelled; {self.done / 1e6:.1f} MB kept, the next attempt resumes"
            )

    def hash_existing(self) -> None:
        """Hash the bytes a previous attempt left, so the final digest covers the whole file."""
        with self.partial.open("rb") as handle:
            while block := handle.read(HASH_BLOCK):
                self.check_cancel()
                self.hasher.update(block)
                self.done += len(block)
                self.report("checking")

    def restart(self) -> None:
        self.hasher = hashlib.sha256()
        self.done = 0
        self.partial.write_bytes(b"")

    def stream(self, headers: dict[str, str], timeout: float) -> None:
        """One GET from ``self.done`` on; returns at the end of the body, raises on errors."""
        request_headers = dict(headers)
        if self.done:
            request_headers["Range"] = f"bytes={self.done}-"
        http_timeout = httpx2.Timeout(timeout, connect=timeout)
        stream = get_session().stream(
            "GET", self.remote.location, headers=request_headers, timeout=http_timeout, follow_redirects=True
        )
        with stream as response:
            if response.status_code == 416 and self.remote.size is not None and self.done == self.remote.size:
                return  # nothing left to fetch
            if response.status_code >= 400:
                response.read()
                hf_raise_for_status(response)
            if self.done and response.status_code != 206:
                self.restart()  # the server ignored the Range header: start over
            with self.partial.open("ab") as handle:
                for chunk in response.iter_bytes():
                    self.check_cancel()
                    handle.write(chunk)
                    self.hasher.update(chunk)
                    self.done += len(chunk)
                    self.report("downloading")


def _auth_headers_for(remote: RemoteFile, token: str | None) -> dict[str, str]:
    headers = hub_headers(token)
    headers["Accept-Encoding"] = "identity"
    if urlsplit(remote.location).netloc != urlsplit(remote.endpoint).netloc:
        headers.pop("authorization", None)  # never send the token to a CDN
        headers.pop("Authorization", None)
    return headers


def _check_disk_space(folder: Path, needed: int, filename: str) -> None:
    free = shutil.disk_usage(folder).free
    if free < needed + DISK_MARGIN_BYTES:
        raise DiskSpaceError(
            f"not enough disk space for {filename}: it needs {needed / 1e9:.2f} GB more, "
            f"{free / 1e9:.2f} GB is free in {folder}"
        )


def partial_path(dest: Path, remote: RemoteFile) -> Path:
    """Where the bytes collect; keyed by content hash so a changed upstream file never resumes."""
    key = (remote.sha256 or remote.commit or "unversioned")[:16]
    return dest.with_name(f"{dest.name}.{key}.incomplete")


def download_file(
    repo_id: str,
    filename: str,
    *,
    revision: str = "main",
    dest_dir: Path | None = None,
    endpoint: str | None = None,
    token: str | None = None,
    progress: ProgressCallback | None = None,
    cancel: threading.Event | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
    max_retries: int = 3,
    force: bool = False,
    report_interval_s: float = REPORT_INTERVAL_S,
    save_as: str | None = None,
) -> DownloadResult:
    """Download ``filename`` from ``repo_id`` into ``dest_dir`` (default: the models folder).

    A file already there is returned without touching the network (unless ``force``). A dropped
    connection is retried ``max_retries`` times with a Range request; whatever arrived stays in
    the ``.incomplete`` file, so calling again later resumes too. ``progress`` is called at most
    once per ``report_interval_s`` while bytes arrive (0: on every chunk); the start, the
    verification and the end are always reported. ``save_as`` names the file in the folder when
    the repo's name will not do (a pair's projector: catalog.py).
    """
    name = check_hub_file(repo_id, filename, revision)  # before any path or URL is built from them
    if save_as is not None:
        name = check_name(save_as)
    folder = Path(dest_dir) if dest_dir else paths.models_dir()
    folder.mkdir(parents=True, exist_ok=True)
    dest = folder / name
    if dest.exists() and not force:
        size = dest.stat().st_size
        return DownloadResult(dest, size, None, verified=False, already_present=True)

    remote = fetch_remote_file(repo_id, filename, revision, endpoint, token, timeout)
    partial = partial_path(dest, remote)
    transfer = _Transfer(remote, partial, progress, cancel, report_interval_s)
    if partial.exists() and remote.size is not None and partial.stat().st_size > remote.size:
        partial.unlink()
    if partial.exists():
        transfer.hash_existing()
    resumed_from = transfer.done
    if remote.size is not None:
        _check_disk_space(folder, remote.size - transfer.done, dest.name)
    headers = _auth_headers_for(remote, token)
    transfer.report("downloading", force=True)

    failures = 0
    while remote.size is None or transfer.done < remote.size:
        before = transfer.done
        try:
            transfer.stream(headers, timeout)
            if remote.size is None or transfer.done >= remote.size:
                break
            raise httpx2.RemoteProtocolError("the server ended the response early")
        except DownloadError:
            raise
        except (HfHubHTTPError, OfflineModeIsEnabled) as exc:
            raise describe_failure(exc, repo_id, filename, revision, remote.endpoint, timeout) from None
        except (httpx2.TransportError, ConnectionError) as exc:
            # Count consecutive attempts; one that brought new bytes starts the count again.
            failures = 1 if transfer.done > before else failures + 1
            if failures > max_retries:
                got = f"{transfer.done / 1e6:.1f} of {(remote.size or 0) / 1e6:.1f} MB"
                raise HubUnreachableError(
                    f"the connection dropped after {got} of {dest.name} ({exc}); run the download again to resume",
                    plain=f"The connection dropped after {got}: Retry resumes the download.",
                ) from None
            time.sleep(min(0.2 * 2**failures, 5.0))
        except OSError as exc:
            if exc.errno == errno.ENOSPC:
                raise DiskSpaceError(
                    f"the disk filled up while writing {dest.name}; "
                    "free some space and run the download again to resume"
                ) from None
            raise
        except Exception as exc:  # noqa: BLE001 - described in one line for the user, as every failure is
            raise describe_failure(exc, repo_id, filename, revision, remote.endpoint, timeout) from None

    if remote.size is not None and transfer.done != remote.size:
        raise HubUnreachableError(f"{dest.name}: received {transfer.done} bytes but the hub announced {remote.size}")
    transfer.report("verifying", force=True)
    digest = transfer.hasher.hexdigest()
    if remote.sha256 is not None and digest != remote.sha256:
        partial.unlink(missing_ok=True)
        raise ChecksumMismatchError(
            f"{dest.name} is corrupt: its SHA-256 is {digest[:12]}… but the hub says {remote.sha256[:12]}…; "
            "the file was deleted, download it again"
        )
    partial.replace(dest)
    transfer.report("done", force=True)
    return DownloadResult(dest, transfer.done, digest, remote.sha256 is not None, resumed_from)


class DownloadTask:
    """:func:`download_file` on a background thread, with callbacks and cancel.

    Callbacks run on the download thread: a GUI must hand them to its own thread (Qt signals
    do this) and never touch widgets from them. Nor may they emit signals of an object that the
    GUI thread can delete meanwhile (a widget, anything a window owns): the GUI thread can free
    it in the middle of the emit, and no check or ``except RuntimeError`` here can prevent that.
    Emit on an object the callbacks themselves keep alive (see desktop_app/ui/models/download_widget.py).
    ``cancel`` only sets :attr:`cancel_event`, so it is safe from any thread; the thread notices
    it at the next block and ends with ``DownloadCancelled`` through ``on_failed``. Exactly one
    of ``on_finished`` / ``on_failed`` is the thread's last call. Do not connect a Qt signal to
    ``cancel`` itself: the task may be freed on its own thread as that thread ends, while the GUI
    thread emits into PySide's receiver for the bound method (a segfault, 1 in about 3,000
    downloads whose widget went as they ended); set :attr:`cancel_event` from a QObject's slot.
    """

    def __init__(
        self,
        repo_id: str,
        filename: str,
        *,
        on_progress: ProgressCallback | None = None,
        on_finished: Callable[[DownloadResult], None] | None = None,
        on_failed: Callable[[DownloadError], None] | None = None,
        **options: object,
    ) -> None:
        self.repo_id = repo_id
        self.filename = filename
        self._on_progress = on_progress
        self._on_finished = on_finished
        self._on_failed = on_failed
        self._options = options
        self._cancel = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"download {filename}", daemon=True)
        self.result: DownloadResult | None = None
        self.error: DownloadError | None = None

    def start(self) -> DownloadTask:
        self._thread.start()
        return self

    @property
    def thread(self) -> threading.Thread:
        """The thread the download runs (and calls back) on."""
        return self._thread

    @property
    def cancel_event(self) -> threading.Event:
        return self._cancel

    def cancel(self) -> None:
        self._cancel.set()

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def wait(self, timeout: float | None = None) -> DownloadResult:
        """Block until done (for scripts and tests); raise the download's error if it failed."""
        self._thread.join(timeout)
        if self._thread.is_alive():
            raise TimeoutError(f"download of {self.filename} still running after {timeout} s")
        if self.error is not None:
            raise self.error
        assert self.result is not None
        return self.result

    def _run(self) -> None:
        try:
            self.result = download_file(
                self.repo_id,
                self.filename,
                progress=lambda p: self._notify(self._on_progress, p),
                cancel=self._cancel,
                **self._options,  # type: ignore[arg-type]
            )
        except DownloadError as exc:
            self.error = exc
        except Exception as exc:  # noqa: BLE001 - a bug or an OS error: still report it, never die silently
            self.error = DownloadError(f"download of {self.filename} failed: {exc}")
        if self.error is not None:
            self._notify(self._on_failed, self.error)
        elif self.result is not None:
            self._notify(self._on_finished, self.result)

    @staticmethod
    def _notify(callback: Callable[[Any], None] | None, value: object) -> None:
        if callback is not None:
            callback(value)
