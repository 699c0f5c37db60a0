"""Talking to the Hugging Face Hub (or a mirror named by ``HF_ENDPOINT``): where a file lives,
how big it is, its SHA-256, and what an HTTP failure means in words.

Built on huggingface_hub's own URL, header (token) and metadata helpers, so proxies, tokens and
endpoints behave as they do for every other Hugging Face tool.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

import httpx2
from huggingface_hub import constants, errors, get_hf_file_metadata, hf_hub_url
from huggingface_hub.utils import build_hf_headers

from desktop_app.library.errors import (
    DownloadError,
    GatedRepoError,
    HubHTTPError,
    HubUnreachableError,
    OfflineError,
    RemoteNotFoundError,
)
from desktop_app.library.names import check_hub_file

DEFAULT_TIMEOUT_S = 10.0
_SHA256_RE = re.compile(r"^[0-9a-f]{64}$")
_TRUE = {"1", "on", "yes", "true"}


def hub_endpoint(endpoint: str | None = None) -> str:
    """The hub to talk to: the argument, else ``HF_ENDPOINT`` now, else huggingface_hub's default."""
    return (endpoint or os.environ.get("HF_ENDPOINT") or constants.ENDPOINT).rstrip("/")


def is_offline() -> bool:
    """``HF_HUB_OFFLINE`` as set now (huggingface_hub reads it only once, at import)."""
    value = os.environ.get("HF_HUB_OFFLINE") or os.environ.get("TRANSFORMERS_OFFLINE") or ""
    return value.strip().lower() in _TRUE or constants.is_offline_mode()


def hub_headers(token: str | None = None) -> dict[str, str]:
    """huggingface_hub's request headers; the token comes from ``token``, ``HF_TOKEN`` or ``hf auth login``."""
    return build_hf_headers(token=token)


@dataclass(frozen=True)
class RemoteFile:
    """One file on the hub, as its resolve URL describes it."""

    repo_id: str
    filename: str
    revision: str
    endpoint: str
    location: str  # where the bytes are (the hub itself or a CDN it redirects to)
    size: int | None
    sha256: str | None  # LFS files only: their etag is the SHA-256 of the content
    commit: str | None

    @property
    def label(self) -> str:
        return f"{self.filename} from {self.repo_id}"


def fetch_remote_file(
    repo_id: str,
    filename: str,
    revision: str = "main",
    endpoint: str | None = None,
    token: str | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
) -> RemoteFile:
    """HEAD the file's resolve URL; raise a DownloadError subclass with a one-line reason."""
    check_hub_file(repo_id, filename, revision)  # before the URL is built from them
    base = hub_endpoint(endpoint)
    if is_offline():
        raise OfflineError(
            f"HF_HUB_OFFLINE is set, so {filename} from {repo_id} cannot be downloaded: "
            "unset HF_HUB_OFFLINE or copy the file into the models folder",
            plain="Downloads are switched off on this computer (HF_HUB_OFFLINE is set).",
        )
    url = hf_hub_url(repo_id, filename, revision=revision, endpoint=base)
    try:
        meta = get_hf_file_metadata(url, token=token, timeout=timeout, endpoint=base)
    except Exception as exc:  # noqa: BLE001 - any hub/network failure is mapped to a user-facing error below
        raise describe_failure(exc, repo_id, filename, revision, base, timeout) from None
    etag = (meta.etag or "").lower()
    return RemoteFile(
        repo_id=repo_id,
        filename=filename,
        revision=revision,
        endpoint=base,
        location=meta.location,
        size=meta.size,
        sha256=etag if _SHA256_RE.match(etag) else None,
        commit=meta.commit_hash,
    )


OFFLINE_TEXT = "No internet connection: the model could not be downloaded."
HUB_NAME = "Hugging Face"


def describe_failure(
    exc: BaseException, repo_id: str, filename: str, revision: str, endpoint: str, timeout: float
) -> DownloadError:
    """Turn a huggingface_hub / httpx error into one of ours: a full reason the user can act on,
    and a plain one for the window (``plain``)."""
    if isinstance(exc, DownloadError):
        return exc
    token_hint = "set HF_TOKEN to a token with access (or run `hf auth login`)"
    page = f"{endpoint}/{repo_id}"
    if isinstance(exc, errors.OfflineModeIsEnabled):
        return OfflineError(
            f"HF_HUB_OFFLINE is set, so {filename} from {repo_id} cannot be downloaded",
            plain="Downloads are switched off on this computer (HF_HUB_OFFLINE is set).",
        )
    status = _status(exc)
    answered = f"{HUB_NAME} answered {status}"
    if isinstance(exc, errors.GatedRepoError):
        return GatedRepoError(
            f"{repo_id} is a gated repository: accept its terms at {page} and {token_hint}",
            plain=f"{answered}: {repo_id} is a gated repository; accept its terms at {page}.",
        )
    if status in (401, 403):
        return GatedRepoError(
            f"access to {repo_id} was refused (HTTP {status}): the repository is gated or private; "
            f"request access at {page} and {token_hint}",
            plain=f"{answered}: {repo_id} is gated or private; request access at {page}.",
        )
    not_found = f"{answered}: {filename} was not found in {repo_id}."
    if isinstance(exc, errors.RevisionNotFoundError):
        return RemoteNotFoundError(f"revision '{revision}' not found in {repo_id} (HTTP 404)", plain=not_found)
    if isinstance(exc, errors.RemoteEntryNotFoundError):
        return RemoteNotFoundError(
            f"{filename} not found in {repo_id} at revision '{revision}' (HTTP 404)", plain=not_found
        )
    if isinstance(exc, errors.RepositoryNotFoundError) or status == 404:
        return RemoteNotFoundError(
            f"{repo_id}/{filename} not found on {endpoint} (HTTP 404): check the repo id and file name",
            plain=f"{HUB_NAME} answered 404: {repo_id}/{filename} was not found.",
        )
    if status is not None:
        return HubHTTPError(
            f"{endpoint} answered HTTP {status} for {filename} from {repo_id}",
            plain=f"{answered}: the model could not be downloaded. Try again later.",
        )
    if isinstance(exc, httpx2.TimeoutException):
        return HubUnreachableError(
            f"{endpoint} did not answer within {timeout:g} s: check the network connection",
            plain=f"{HUB_NAME} did not answer within {timeout:g} s: the model could not be downloaded.",
        )
    if isinstance(exc, (httpx2.TransportError, OSError)):
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return HubUnreachableError(
            f"cannot reach {endpoint} ({reason}): check the network, or set HF_ENDPOINT to a reachable mirror",
            plain=OFFLINE_TEXT,
        )
    return HubHTTPError(f"downloading {filename} from {repo_id} failed: {type(exc).__name__}: {exc}")


def _status(exc: BaseException) -> int | None:
    response = getattr(exc, "response", None)
    code = getattr(response, "status_code", None)
    return int(code) if isinstance(code, int) else None
