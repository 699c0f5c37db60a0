"""SpecChat's model manager: curated pairs, Hugging Face downloads, the local library.

Qt-free (the GUI is a client of it; tests/test_qt_boundary.py keeps it so).
"""

from __future__ import annotations

from desktop_app.library.catalog import CatalogFile, CatalogPair, load_catalog
from desktop_app.library.downloads import DownloadProgress, DownloadResult, DownloadTask, download_file
from desktop_app.library.errors import (
    CatalogError,
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

__all__ = [
    "CatalogError",
    "CatalogFile",
    "CatalogPair",
    "ChecksumMismatchError",
    "DiskSpaceError",
    "DownloadCancelled",
    "DownloadError",
    "DownloadProgress",
    "DownloadResult",
    "DownloadTask",
    "GatedRepoError",
    "HubHTTPError",
    "HubUnreachableError",
    "InvalidNameError",
    "LibraryError",
    "LocalModel",
    "OfflineError",
    "RemoteNotFoundError",
    "compatibility_matrix",
    "delete_model",
    "download_file",
    "import_model",
    "link_model",
    "load_catalog",
    "scan_models",
]
