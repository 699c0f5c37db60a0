"""SpecChat's model manager: curated pairs, Hugging Face downloads, the local library.

Qt-free (the GUI is a client of it; tests/test_qt_boundary.py keeps it so). Names are imported
lazily: ``desktop_app.library.catalog`` and ``.fit`` (what the window's welcome card reads) do not
load llama.cpp; nor does ``desktop_app.library.local``: its vocabulary checks run in a child
process (``vocab.py``), so a file that crashes llama.cpp takes down that child, not the caller;
the GPU memory measure (``fit.measure_memory(with_gpu=True)``) runs in such a child too
(``child.py`` runs both).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "CatalogFile": "catalog",
    "CatalogPair": "catalog",
    "load_catalog": "catalog",
    "DownloadProgress": "downloads",
    "DownloadResult": "downloads",
    "DownloadTask": "downloads",
    "download_file": "downloads",
    "LocalModel": "local",
    "compatibility_matrix": "local",
    "delete_model": "local",
    "import_model": "local",
    "link_model": "local",
    "scan_models": "local",
    **{
        name: "errors"
        for name in (
            "CatalogError",
            "CheckerCrashed",
            "ChecksumMismatchError",
            "DiskSpaceError",
            "DownloadCancelled",
            "DownloadError",
            "GatedRepoError",
            "HubHTTPError",
            "HubUnreachableError",
            "InvalidNameError",
            "LibraryError",
            "OfflineError",
            "RemoteNotFoundError",
        )
    },
}
__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:
    from desktop_app.library.catalog import CatalogFile, CatalogPair, load_catalog
    from desktop_app.library.downloads import DownloadProgress, DownloadResult, DownloadTask, download_file
    from desktop_app.library.errors import (
        CatalogError,
        CheckerCrashed,
        ChecksumMismatchError,
        DiskSpaceError,
        DownloadCancelled,
        DownloadError,
        GatedRepoError,
        HubHTTPError,
        HubUnreachableError,
        InvalidNameError,
        LibraryError,
        OfflineError,
        RemoteNotFoundError,
    )
    from desktop_app.library.local import (
        LocalModel,
        compatibility_matrix,
        delete_model,
        import_model,
        link_model,
        scan_models,
    )


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'desktop_app.library' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"desktop_app.library.{module}"), name)
    globals()[name] = value
    return value
