"""The lab's benchmarks: measurements behind the engine's choices and the dated pages in
docs/benchmarks/, run from a source checkout as ``python -m lab <bench> [options]``.

Not installed with the app (pyproject's package list names ``desktop_app`` only): the lab sits
above the app and may import any of it; nothing in ``desktop_app`` imports the lab."""
