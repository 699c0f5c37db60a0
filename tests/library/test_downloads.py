"""Downloads against a real local HTTP server that speaks the hub's protocol."""

from __future__ import annotations

import hashlib
import socket
import time
from pathlib import Path

import pytest

from desktop_app.library import downloads, local
from desktop_app.library.downloads import DownloadProgress, DownloadTask, download_file
from desktop_app.library.errors import (
    ChecksumMismatchError,
    DiskSpaceError,
    DownloadCancelled,
    GatedRepoError,
    HubHTTPError,
    HubUnreachableError,
    InvalidNameError,
    OfflineError,
    RemoteNotFoundError,
)
from tests.library.conftest import REPO
from tests.library.hub_server import CHUNK, FakeHub


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_full_download_is_verified_lands_in_the_models_folder_and_is_listed(
    hub: FakeHub, models_dir: Path, models
) -> None:
    hub.add_file(REPO, "draft.gguf", models.draft, chunk_delay_s=0.002)
    seen: list[DownloadProgress] = []

    result = download_file(REPO, "draft.gguf", endpoint=hub.endpoint, token="hf_secret", progress=seen.append)

    assert result.path == models_dir / "draft.gguf"
    assert result.verified and result.sha256 == sha256(models.draft) == sha256(result.path)
    assert not list(models_dir.glob("*.incomplete"))
    assert seen[-1].phase == "done" and seen[-1].done == seen[-1].total == models.draft.stat().st_size
    assert [p.done for p in seen] == sorted(p.done for p in seen)
    midway = [p for p in seen if p.phase == "downloading" and 0 < p.done < p.total]
    assert midway and all(p.speed > 0 for p in midway[1:])
    for p in midway[1:]:  # the time left shown is what remains at the speed shown
        assert p.total is not None and p.eta_s == pytest.approx((p.total - p.done) / p.speed)
    listed = {m.path.name: m for m in local.scan_models()}
    assert listed["draft.gguf"].architecture == "llama" and listed["draft.gguf"].quantization == "Q8_0"
    # The token goes to the hub, never to the CDN it redirects to.
    (head,) = hub.seen("HEAD")
    (get,) = hub.seen("GET")
    assert head.headers["authorization"] == "Bearer hf_secret"
    assert get.host.startswith("localhost") and "authorization" not in get.headers


def test_a_connection_cut_midway_is_resumed_with_a_range_request(hub: FakeHub, models_dir: Path, models) -> None:
    hub.add_file(REPO, "target.gguf", models.target, cut_after=1_000_000)

    result = download_file(REPO, "target.gguf", endpoint=hub.endpoint)

    first, second = hub.seen("GET", cdn=True)
    assert "range" not in first.headers
    assert second.headers["range"] == "bytes=1000000-"
    assert result.sha256 == sha256(models.target) == sha256(result.path)


def test_an_interrupted_download_resumes_on_the_next_run(hub: FakeHub, models_dir: Path, models) -> None:
    hub.add_file(REPO, "target.gguf", models.target, cut_after=2_000_000)

    with pytest.raises(HubUnreachableError, match="run the download again to resume"):
        download_file(REPO, "target.gguf", endpoint=hub.endpoint, max_retries=0)
    (partial,) = models_dir.glob("target.gguf.*.incomplete")
    assert partial.stat().st_size == 2_000_000
    assert not (models_dir / "target.gguf").exists()

    result = download_file(REPO, "target.gguf", endpoint=hub.endpoint)

    assert result.resumed_from == 2_000_000
    assert hub.seen("GET", cdn=True)[-1].headers["range"] == "bytes=2000000-"
    assert sha256(result.path) == sha256(models.target) and result.verified
    assert not partial.exists()


def test_a_checksum_mismatch_deletes_the_file_and_says_so(hub: FakeHub, models_dir: Path, models) -> None:
    hub.add_file(REPO, "draft.gguf", models.draft, advertised_sha256=hashlib.sha256(b"something else").hexdigest())

    with pytest.raises(ChecksumMismatchError, match="SHA-256.*deleted"):
        download_file(REPO, "draft.gguf", endpoint=hub.endpoint)

    assert list(models_dir.iterdir()) == []


@pytest.mark.parametrize(
    ("repo", "filename", "expected"),
    [(REPO, "missing.gguf", "missing.gguf not found in specchat/tiny-GGUF"), ("nobody/nothing", "x.gguf", "not found")],
)
def test_404_gives_a_clear_message(
    hub: FakeHub, models_dir: Path, models, repo: str, filename: str, expected: str
) -> None:
    hub.add_file(REPO, "draft.gguf", models.draft)

    with pytest.raises(RemoteNotFoundError, match="404") as info:
        download_file(repo, filename, endpoint=hub.endpoint)

    assert expected in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize(("status", "code"), [(401, "GatedRepo"), (403, "GatedRepo"), (401, None), (403, None)])
def test_a_gated_repo_says_it_needs_access_and_a_token(
    hub: FakeHub, models_dir: Path, models, status: int, code: str | None
) -> None:
    hub.add_file("meta/gated-GGUF", "model.gguf", models.draft)
    hub.refuse("meta/gated-GGUF", status, code)

    with pytest.raises(GatedRepoError) as info:
        download_file("meta/gated-GGUF", "model.gguf", endpoint=hub.endpoint)

    message = str(info.value)
    assert "gated" in message and "HF_TOKEN" in message and "\n" not in message
    assert not hub.seen("GET", cdn=True)


def test_other_http_errors_name_the_status(hub: FakeHub, models_dir: Path, models) -> None:
    hub.add_file(REPO, "draft.gguf", models.draft)
    hub.refuse(REPO, 500)

    with pytest.raises(HubHTTPError, match="HTTP 500"):
        download_file(REPO, "draft.gguf", endpoint=hub.endpoint)


def test_offline_mode_with_the_file_missing_says_what_is_missing_without_a_request(
    hub: FakeHub, models_dir: Path, models, monkeypatch: pytest.MonkeyPatch
) -> None:
    hub.add_file(REPO, "draft.gguf", models.draft)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")

    with pytest.raises(OfflineError, match="HF_HUB_OFFLINE.*draft.gguf from specchat/tiny-GGUF"):
        download_file(REPO, "draft.gguf", endpoint=hub.endpoint)

    assert hub.requests == []


def test_a_file_already_present_is_used_without_touching_the_network(
    hub: FakeHub, models_dir: Path, models, monkeypatch: pytest.MonkeyPatch
) -> None:
    (models_dir / "draft.gguf").write_bytes(models.draft.read_bytes())
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")

    result = download_file(REPO, "draft.gguf", endpoint=hub.endpoint)

    assert result.already_present and result.path == models_dir / "draft.gguf"
    assert hub.requests == []


def test_an_unreachable_hub_fails_fast_with_a_clear_message(models_dir: Path) -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    start = time.monotonic()

    with pytest.raises(HubUnreachableError, match="cannot reach http://127.0.0.1"):
        download_file(REPO, "draft.gguf", endpoint=f"http://127.0.0.1:{port}", timeout=2)

    assert time.monotonic() - start < 5


def test_not_enough_disk_space_stops_before_downloading(
    hub: FakeHub, models_dir: Path, models, monkeypatch: pytest.MonkeyPatch
) -> None:
    hub.add_file(REPO, "target.gguf", models.target)
    monkeypatch.setattr(downloads.shutil, "disk_usage", lambda _p: type("Usage", (), {"free": 1_000_000})())

    with pytest.raises(DiskSpaceError, match="not enough disk space for target.gguf"):
        download_file(REPO, "target.gguf", endpoint=hub.endpoint)

    assert not hub.seen("GET", cdn=True)


def test_cancel_stops_a_background_download_and_keeps_the_partial_file(hub: FakeHub, models_dir: Path, models) -> None:
    hub.add_file(REPO, "target.gguf", models.target, chunk_delay_s=0.02)
    started: list[DownloadProgress] = []
    task = DownloadTask(REPO, "target.gguf", endpoint=hub.endpoint, on_progress=started.append).start()
    deadline = time.monotonic() + 10
    while not any(p.done > 0 for p in started) and time.monotonic() < deadline:
        time.sleep(0.01)

    task.cancel()

    with pytest.raises(DownloadCancelled, match="cancelled"):
        task.wait(timeout=10)
    (partial,) = models_dir.glob("target.gguf.*.incomplete")
    assert 0 < partial.stat().st_size < models.target.stat().st_size
    assert not (models_dir / "target.gguf").exists()


def test_progress_comes_at_most_once_per_report_interval(hub: FakeHub, models_dir: Path) -> None:
    data = hashlib.sha256(b"report").digest() * (16 * CHUNK // 32)  # 1 MiB: many network reads
    hub.add_file(REPO, "every.gguf", data)
    hub.add_file(REPO, "rare.gguf", data)
    every: list[DownloadProgress] = []
    rare: list[DownloadProgress] = []

    download_file(REPO, "every.gguf", endpoint=hub.endpoint, progress=every.append, report_interval_s=0.0)
    download_file(REPO, "rare.gguf", endpoint=hub.endpoint, progress=rare.append, report_interval_s=3600.0)

    arriving = [p.done for p in every if p.phase == "downloading"]
    assert len(arriving) >= 8 and arriving == sorted(set(arriving))  # one report per read as bytes come
    assert arriving[0] == 0 and arriving[-1] == len(data)
    assert [(p.phase, p.done) for p in rare] == [("downloading", 0), ("verifying", len(data)), ("done", len(data))]


def test_speed_and_time_left_come_from_the_recent_rate() -> None:
    meter = downloads.SpeedMeter(window_s=3.0)
    meter.add(0, now=0.0)
    meter.add(1_000_000, now=1.0)
    meter.add(2_000_000, now=2.0)

    assert meter.speed() == pytest.approx(1_000_000)
    assert meter.eta(2_000_000, 5_000_000) == pytest.approx(3.0)
    meter.add(2_000_000, now=10.0)  # a stall: old samples age out, the speed drops
    assert meter.speed() < 1_000_000
    assert downloads.SpeedMeter().eta(0, None) is None


@pytest.mark.parametrize(
    "filename",
    ["", ".", "..", "../../../tmp/qa-escape.gguf", "x\x00.gguf", "sub\\..\\x.gguf"],
    ids=["empty", "dot", "dot-dot", "climbs out", "NUL", "backslashes"],
)
def test_a_bad_file_name_is_refused_before_any_request_or_path(hub: FakeHub, models_dir: Path, filename: str) -> None:
    hub.add_file(REPO, "x.gguf", b"GGUF")

    with pytest.raises(InvalidNameError, match=r"^file name "):
        download_file(REPO, filename, endpoint=hub.endpoint)

    assert hub.requests == []  # the URL was never built, so the hub saw nothing (it once got HEAD /tmp/...)
    assert not models_dir.exists() or list(models_dir.iterdir()) == []


def test_a_bad_revision_or_repo_is_refused_before_any_request(hub: FakeHub, models_dir: Path) -> None:
    with pytest.raises(InvalidNameError, match=r"^revision '\.\.' "):
        download_file(REPO, "x.gguf", revision="..", endpoint=hub.endpoint)
    with pytest.raises(InvalidNameError, match=r"^repo id 'specchat/\.\.' "):
        download_file("specchat/..", "x.gguf", endpoint=hub.endpoint)
    assert hub.requests == []


def test_a_file_in_a_folder_of_the_repo_lands_under_its_own_name(hub: FakeHub, models_dir: Path) -> None:
    hub.add_file(REPO, "MTP/x-Q8_0.gguf", b"GGUF" * 100)

    result = download_file(REPO, "MTP/x-Q8_0.gguf", endpoint=hub.endpoint)

    assert result.path == models_dir / "x-Q8_0.gguf" and result.verified


def test_two_projectors_of_the_same_name_land_under_their_models_names_and_resume(
    hub: FakeHub, models_dir: Path
) -> None:
    # ggml-org calls every projector mmproj-model-f16.gguf; the catalog saves each under its target's name
    first, second = b"GGUF" + b"a" * 3_000_000, b"GGUF" + b"b" * 2_000_000
    hub.add_file("ggml-org/a-GGUF", "mmproj-model-f16.gguf", first, cut_after=1_000_000)
    hub.add_file("ggml-org/b-GGUF", "mmproj-model-f16.gguf", second)

    with pytest.raises(HubUnreachableError, match="mmproj-a-Q4_K_M.gguf.*run the download again to resume"):
        download_file(
            "ggml-org/a-GGUF",
            "mmproj-model-f16.gguf",
            endpoint=hub.endpoint,
            max_retries=0,
            save_as="mmproj-a-Q4_K_M.gguf",
        )
    (partial,) = models_dir.glob("mmproj-a-Q4_K_M.gguf.*.incomplete")
    other = download_file("ggml-org/b-GGUF", "mmproj-model-f16.gguf", endpoint=hub.endpoint, save_as="mmproj-b.gguf")
    resumed = download_file(
        "ggml-org/a-GGUF", "mmproj-model-f16.gguf", endpoint=hub.endpoint, save_as="mmproj-a-Q4_K_M.gguf"
    )

    assert resumed.resumed_from == 1_000_000 and not resumed.already_present and not other.already_present
    assert resumed.path.read_bytes() == first and other.path.read_bytes() == second
    assert sorted(p.name for p in models_dir.iterdir()) == ["mmproj-a-Q4_K_M.gguf", "mmproj-b.gguf"]
    with pytest.raises(InvalidNameError, match="has a '/'"):
        download_file("ggml-org/b-GGUF", "mmproj-model-f16.gguf", endpoint=hub.endpoint, save_as="../x.gguf")
