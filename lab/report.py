"""Where a benchmark's results go: ``NAME.json`` (everything) and ``NAME.md`` (the table) in the
output folder, and the table on stdout."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def write_report(out: Path, name: str, report: dict[str, Any], table: str) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.json").write_text(json.dumps(report, indent=2), encoding="utf-8")
    (out / f"{name}.md").write_text(table + "\n", encoding="utf-8")
    print(table)
    print(f"\nwrote {out / f'{name}.json'} and {out / f'{name}.md'}")


def markdown_table(caption: str, headers: list[str], rows: list[list[str]]) -> str:
    """A caption line, then a Markdown table of ``rows`` under ``headers``."""
    lines = [caption, "", "| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)
