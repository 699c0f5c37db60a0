"""The app says once when it runs on a llama.cpp build that is not SpecChat's own."""

from __future__ import annotations

import re

from desktop_app.engine.llama.backend import BackendInfo, backend_info, build_gaps


def test_specchat_s_build_has_no_gaps() -> None:
    info = backend_info()
    assert info.build_gaps == ()
    assert info.build_warning() is None


def test_a_stock_build_is_named_with_what_it_lacks() -> None:
    system = backend_info().system_info
    ours = re.sub(r"(SPECCHAT_BATCH_ROWS|SPECCHAT_PREFILL_GEMM|LLAMAFILE) = \d+ \| ", "", system)
    stock = ours + "LLAMAFILE = 1 | "
    if "AVX2 = 1" not in stock:
        stock += " | AVX2 = 1"
    gaps = build_gaps(stock)
    assert any("batch-row" in gap for gap in gaps)
    assert any("llamafile" in gap for gap in gaps)
    warning = BackendInfo("CPU", False, [], stock, gaps).build_warning()
    assert warning is not None and "make setup" in warning and "batch-row" in warning
