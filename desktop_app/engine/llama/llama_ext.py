"""The few libllama functions that llama-cpp-python does not bind: the MTP hidden-state hand-off.

llama.cpp declares these in ``src/llama-ext.h`` ("staging header ... C++ are allowed"), so
libllama exports them with C++ (mangled) names only, and llama-cpp-python 0.3.36 has no
binding for them. This module is the ONE place that reaches them: it looks the mangled names
up in the libllama that ``llama_cpp`` already loaded (``llama_cpp.llama_cpp._lib``), types
them, and wraps them. When an update renames or removes one, :func:`check` (and every wrapper)
raises :class:`LlamaExtError` naming the missing symbol and the installed version, instead of a
segfault or an AttributeError deep in a decode loop.

What each is for (see ``common/speculative.cpp``, ``common_speculative_impl_draft_mtp``):

- ``set_embeddings_nextn(ctx, value, masked)``: make a context output its "nextn" hidden rows
  (the trunk's final, output-normed hidden state that an MTP head consumes). The target uses
  ``masked=False`` (a row for EVERY batch token, whatever its logits flag, indexed by batch
  position); the MTP context uses ``masked=True`` (rows only for output tokens, indexed like
  logits).
- ``get_embeddings_nextn(ctx)`` / ``get_embeddings_nextn_ith(ctx, i)``: read those rows
  (``llama_model_n_embd_out`` floats each). Valid until the context's next decode.
- ``set_nextn_layer_offset(ctx, offset)``: choose which appended MTP block the MTP context runs
  (models with several chained heads; qwen35 has one).
- ``get_ctx_other(ctx)``: the context an MTP/assistant context was created against.

Symbol names were read with ``nm -D --defined-only libllama.so`` (llama-cpp-python 0.3.36).
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any

import llama_cpp
import numpy as np

from desktop_app.engine.errors import EngineError


class LlamaExtError(EngineError):
    """A libllama extension symbol the engine needs is missing from the installed build."""


@dataclass(frozen=True)
class _Symbol:
    name: str  # the C++ declaration, for messages
    mangled: str
    argtypes: tuple[Any, ...]
    restype: Any


_CTX = ctypes.c_void_p
_FLOAT_P = ctypes.POINTER(ctypes.c_float)

# Itanium C++ ABI names (GCC/Clang on Linux and macOS; macOS adds a leading underscore, which
# dlsym adds itself). MSVC builds mangle differently: there the lookup fails and check() says so.
SYMBOLS: dict[str, _Symbol] = {
    s.name.split("(")[0].split()[-1]: s
    for s in (
        _Symbol(
            "void llama_set_embeddings_nextn(llama_context *, bool value, bool masked)",
            "_Z26llama_set_embeddings_nextnP13llama_contextbb",
            (_CTX, ctypes.c_bool, ctypes.c_bool),
            None,
        ),
        _Symbol(
            "float * llama_get_embeddings_nextn(llama_context *)",
            "_Z26llama_get_embeddings_nextnP13llama_context",
            (_CTX,),
            _FLOAT_P,
        ),
        _Symbol(
            "float * llama_get_embeddings_nextn_ith(llama_context *, int32_t i)",
            "_Z30llama_get_embeddings_nextn_ithP13llama_contexti",
            (_CTX, ctypes.c_int32),
            _FLOAT_P,
        ),
        _Symbol(
            "void llama_set_nextn_layer_offset(llama_context *, int32_t offset)",
            "_Z28llama_set_nextn_layer_offsetP13llama_contexti",
            (_CTX, ctypes.c_int32),
            None,
        ),
        _Symbol(
            "llama_context * llama_get_ctx_other(llama_context *)",
            "_Z19llama_get_ctx_otherP13llama_context",
            (_CTX,),
            _CTX,
        ),
    )
}

# C-exported functions of the same feature that the bindings normally provide; checked too,
# so one call tells whether this llama-cpp-python can run MTP at all.
C_FUNCTIONS = (
    "llama_model_n_layer_nextn",
    "llama_model_n_embd_out",
    "llama_n_rs_seq",
    "llama_model_is_hybrid",
    "llama_model_is_recurrent",
)
C_PARAMS = {
    "llama_model_params": ("load_mtp",),
    "llama_context_params": ("n_rs_seq", "ctx_type", "ctx_other"),
}

_resolved: dict[str, Any] = {}


def _version() -> str:
    return str(getattr(llama_cpp, "__version__", "unknown"))


def library() -> ctypes.CDLL:
    """The libllama handle that ``llama_cpp`` loaded (the same process-wide copy)."""
    inner = getattr(llama_cpp, "llama_cpp", None)
    lib = getattr(inner, "_lib", None)
    if lib is None:
        raise LlamaExtError(
            f"cannot find the loaded libllama in llama-cpp-python {_version()} "
            "(expected llama_cpp.llama_cpp._lib); the MTP extension needs updating"
        )
    return lib


def _function(key: str) -> Any:
    fn = _resolved.get(key)
    if fn is not None:
        return fn
    sym = SYMBOLS[key]
    try:
        fn = getattr(library(), sym.mangled)
    except AttributeError:
        raise LlamaExtError(
            f"libllama in llama-cpp-python {_version()} does not export {key} "
            f"(looked for the C++ symbol {sym.mangled}, declared as `{sym.name}` in "
            "llama.cpp's src/llama-ext.h): MTP drafting is unavailable with this build"
        ) from None
    fn.argtypes = list(sym.argtypes)
    fn.restype = sym.restype
    _resolved[key] = fn
    return fn


def missing() -> list[str]:
    """Human-readable names of everything MTP needs that this llama-cpp-python lacks ([] = all there)."""
    out: list[str] = []
    for key in SYMBOLS:
        try:
            _function(key)
        except LlamaExtError:
            out.append(f"{key} ({SYMBOLS[key].mangled})")
    for name in C_FUNCTIONS:
        if not hasattr(llama_cpp, name):
            out.append(name)
    for struct, fields in C_PARAMS.items():
        cls = getattr(llama_cpp, struct, None)
        have = {f[0] for f in getattr(cls, "_fields_", [])}
        out.extend(f"{struct}.{f}" for f in fields if f not in have)
    if not hasattr(llama_cpp, "LLAMA_CONTEXT_TYPE_MTP"):
        out.append("LLAMA_CONTEXT_TYPE_MTP")
    return out


def check() -> None:
    """Raise LlamaExtError naming every missing piece (symbol, binding, struct field)."""
    gone = missing()
    if gone:
        raise LlamaExtError(f"llama-cpp-python {_version()} lacks what MTP drafting needs: " + ", ".join(gone))


def available() -> bool:
    return not missing()


# ------------------------------------------------------------------------ typed wrappers
def _ptr(ctx: Any) -> int | None:
    """A llama_context pointer from llama_cpp (c_void_p or int) as a plain address."""
    if isinstance(ctx, ctypes.c_void_p):
        return ctx.value
    return ctx


def set_embeddings_nextn(ctx: Any, value: bool, masked: bool) -> None:
    _function("llama_set_embeddings_nextn")(_ptr(ctx), bool(value), bool(masked))


def set_nextn_layer_offset(ctx: Any, offset: int) -> None:
    _function("llama_set_nextn_layer_offset")(_ptr(ctx), int(offset))


def get_ctx_other(ctx: Any) -> int | None:
    """Address of the context ``ctx`` was created against (None when it has none)."""
    return _function("llama_get_ctx_other")(_ptr(ctx))


def embeddings_nextn_ptr(ctx: Any) -> Any:
    """Raw float* to the nextn rows of the last decode (NULL pointer when there are none)."""
    return _function("llama_get_embeddings_nextn")(_ptr(ctx))


def embeddings_nextn_ith_ptr(ctx: Any, i: int) -> Any:
    return _function("llama_get_embeddings_nextn_ith")(_ptr(ctx), int(i))


def embeddings_nextn(ctx: Any, n_rows: int, n_embd: int) -> np.ndarray:
    """A COPY of the first ``n_rows`` nextn rows, shape (n_rows, n_embd).

    On a context set ``masked=False`` row i is batch token i (all tokens of the last decode);
    with ``masked=True`` rows are the output tokens in batch order.
    """
    p = embeddings_nextn_ptr(ctx)
    if not p:
        raise LlamaExtError(
            "the context produced no nextn embeddings (was set_embeddings_nextn called before decoding?)"
        )
    return np.ctypeslib.as_array(p, shape=(n_rows, n_embd)).copy()


def embeddings_nextn_ith(ctx: Any, i: int, n_embd: int) -> np.ndarray:
    """A COPY of nextn row ``i`` (batch index; negative counts from the end on masked contexts)."""
    p = embeddings_nextn_ith_ptr(ctx, i)
    if not p:
        raise LlamaExtError(f"no nextn embedding for batch index {i}")
    return np.ctypeslib.as_array(p, shape=(n_embd,)).copy()
