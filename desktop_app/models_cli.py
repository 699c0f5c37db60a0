"""``specchat models list | pull | pair | catalog``: the model manager from a terminal.

Errors are raised as EngineError subclasses (the library's DownloadError and friends) or
CliError; ``desktop_app.cli.main`` prints them as one line and exits 1.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import PurePosixPath
from typing import TextIO

from desktop_app import paths
from desktop_app.library.catalog import load_catalog
from desktop_app.library.downloads import DownloadProgress, download_file
from desktop_app.library.local import LocalModel, describe, scan_models
from desktop_app.library.units import human_duration, human_params, human_size
from desktop_app.library.vocab import check_pair

COMPATIBLE, INCOMPATIBLE = 0, 1


def cmd_models(args: argparse.Namespace) -> int:
    command = args.models_command
    if command == "list":
        return _list(args.json)
    if command == "pull":
        return _pull(args.repo, args.filename, getattr(args, "revision", "main"), getattr(args, "save_as", None))
    if command == "pair":
        return _pair(args.target, args.draft)
    if command == "catalog":
        return _catalog(args.json)
    raise ValueError(f"unknown models command: {command}")


def _list(as_json: bool) -> int:
    found = scan_models()
    if as_json:
        print(json.dumps({"models_dir": str(paths.models_dir()), "models": [m.to_dict() for m in found]}, indent=2))
        return 0
    if not found:
        print(f"No models in {paths.models_dir()}.")
        print("Download one with: specchat models pull REPO FILE (curated pairs: specchat models catalog)")
        return 0
    rows = [("FILE", "ARCH", "PARAMS", "QUANT", "CONTEXT", "SIZE")]
    rows += [_row(m) for m in found]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
    for model in found:
        if model.error:
            print(f"! {model.path.name}: {model.error}")
    print(f"\n{len(found)} file(s) in {paths.models_dir()}")
    return 0


def _row(m: LocalModel) -> tuple[str, str, str, str, str, str]:
    if m.error:
        return (m.path.name, "unusable", "-", "-", "-", human_size(m.size_bytes))
    context = str(m.context_length) if m.context_length else "-"
    return (
        m.path.name,
        m.architecture,
        human_params(m.n_parameters),
        m.quantization,
        context,
        human_size(m.size_bytes),
    )


class ProgressLine:
    """One terminal line, rewritten in place: bytes, percent, speed, time left."""

    def __init__(self, stream: TextIO = sys.stderr) -> None:
        self.stream = stream
        self.tty = stream.isatty()
        self._last_phase = ""

    def __call__(self, p: DownloadProgress) -> None:
        total = human_size(p.total) if p.total else "?"
        percent = f"{p.fraction:4.0%}" if p.fraction is not None else "   ?"
        line = (
            f"{p.filename}  {percent}  {human_size(p.done)} / {total}  "
            f"{human_size(p.speed)}/s  {human_duration(p.eta_s)} left  [{p.phase}]"
        )
        if self.tty:
            self.stream.write("\r\x1b[K" + line)
        elif p.phase != self._last_phase or p.phase == "done":
            self.stream.write(line + "\n")  # logs and pipes: one line per phase, not per chunk
        self._last_phase = p.phase
        self.stream.flush()

    def finish(self) -> None:
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()


def _pull(repo: str, filename: str, revision: str, save_as: str | None = None) -> int:
    line = ProgressLine()
    try:
        result = download_file(repo, filename, revision=revision, progress=line, save_as=save_as)
    finally:
        line.finish()
    if result.already_present:
        print(f"{result.path.name} is already in the library", file=sys.stderr)
    elif result.verified:
        print(f"verified SHA-256 {result.sha256}", file=sys.stderr)
    else:
        print("the hub gave no SHA-256 for this file: downloaded unverified", file=sys.stderr)
    info = describe(result.path)
    if info.error:
        print(f"{'note' if info.architecture == 'clip' else 'warning'}: {info.error}", file=sys.stderr)
    print(result.path)
    return 0


def _pair(target: str, draft: str) -> int:
    t, d = describe(target), describe(draft)
    verdict, drafting = check_pair(target, draft)
    if verdict.compatible:
        print(f"compatible: {d.path.name} can draft for {t.path.name} (same vocabulary)")
        print(f"  drafting: {drafting.summary()}")
        if t.n_parameters and d.n_parameters:
            ratio = t.n_parameters / d.n_parameters
            print(
                f"  target {human_params(t.n_parameters)} params, draft {human_params(d.n_parameters)}: {ratio:.1f}x smaller"
            )
            if ratio < 3:
                print("  note: the draft is not much smaller than the target, so expect little speed-up")
        return COMPATIBLE
    print(f"not compatible: {d.path.name} cannot draft for {t.path.name}")
    for reason in verdict.reasons:
        print(f"  - {reason}")
    print(f"  drafting: {drafting.summary()}")
    return INCOMPATIBLE


def _catalog(as_json: bool) -> int:
    pairs = load_catalog()
    if as_json:
        print(
            json.dumps(
                [
                    {
                        "id": p.id,
                        "name": p.name,
                        "family": p.family,
                        "drafting": p.drafting,
                        "uses": list(p.uses),
                        "license": p.license,
                        "notes": p.notes,
                        "download_bytes": p.download_bytes,
                        "size_approx": p.size_approx,
                        "ram_gb": round(p.ram_gb, 2),
                        "context_tokens": p.context_tokens,
                        "kv_cache_gb": p.kv_cache_gb,
                        "target": vars(p.target),
                        "draft": vars(p.draft) if p.draft else None,
                        "projector": vars(p.projector) if p.projector else None,
                    }
                    for p in pairs
                ],
                indent=2,
            )
        )
        return 0
    for p in pairs:
        print(f"{p.id}  ({', '.join(p.uses)}; {p.license})\n  {p.name}")
        print(f"  drafting: {p.drafting} ({p.drafting_label})   download {p.download_text}   RAM/VRAM {p.ram_text}")
        for role, f in (("target", p.target), ("draft", p.draft), ("vision", p.projector)):
            if f is not None:
                save_as = f" --save-as {f.filename}" if f.filename != PurePosixPath(f.file).name else ""
                print(f"  {role:6} {f.size_text:>9}  specchat models pull {f.repo} {f.file}{save_as}")
        if p.notes:
            print(f"  {p.notes}")
    return 0
