"""Errors the model manager raises: one line each, meant for the user.

They derive from :class:`~desktop_app.engine.errors.EngineError`, so the CLI prints them as
``specchat: error: ...`` and the GUI can show them as they are.
"""

from __future__ import annotations

from desktop_app.engine.errors import EngineError


class LibraryError(EngineError):
    """Base class of the model manager's errors."""


class CatalogError(LibraryError):
    """``models/catalog.toml`` is missing or an entry breaks the schema."""


class DownloadError(LibraryError):
    """A download could not finish; the subclass says why.

    ``str(error)`` is the full reason (the CLI prints it); :attr:`plain` is what the window
    shows: the same thing in a user's words ("No internet connection: ..."), without URLs or
    errno codes, defaulting to the full reason."""

    def __init__(self, message: str, plain: str | None = None) -> None:
        super().__init__(message)
        self.plain = plain or message


class OfflineError(DownloadError):
    """HF_HUB_OFFLINE is set (or the hub cannot be reached) and the file is not on disk."""


class HubUnreachableError(DownloadError):
    """The hub did not answer (no network, DNS failure, timeout, connection cut too often)."""


class GatedRepoError(DownloadError):
    """401/403: the repository is gated or private and needs a token with access."""


class RemoteNotFoundError(DownloadError):
    """404: no such repository, revision or file."""


class HubHTTPError(DownloadError):
    """Any other HTTP error from the hub."""


class DiskSpaceError(DownloadError):
    """Not enough free space in the models folder for the file."""


class ChecksumMismatchError(DownloadError):
    """The downloaded bytes do not hash to the hub's SHA-256; the file was deleted."""


class DownloadCancelled(DownloadError):
    """The user cancelled; the partial file is kept so the next attempt resumes."""


class InvalidNameError(DownloadError):
    """A repo id, revision or file name that is empty, ``.``, ``..``, has a separator or a control
    character: it is refused before any URL or path is built from it."""


class CheckerCrashed(LibraryError):
    """A child process running llama.cpp for the library died (llama.cpp crashed) or hung: one
    checking vocabularies (on a file), or the one measuring the GPU memory (library/child.py)."""
