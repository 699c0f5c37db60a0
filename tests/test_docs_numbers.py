"""The numbers the docs quote for constants in the code are the code's (issue 47, point 5).

One row per quote: the page, a pattern whose groups capture the number(s) as the page writes
them, and the constant(s) they stand for. A changed constant or a changed page fails here with
the page's line; a pattern that no longer matches fails too (the sentence was reworded: update
its row). Every match counts, so a number quoted twice with one pattern is checked twice.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from desktop_app.bench.race import RACE_ROUNDS
from desktop_app.documents import attribution, passages, reading
from desktop_app.engine import images
from desktop_app.engine.api import (
    API_HOST,
    API_PORT,
    DRAFT_K,
    LOGIT_BIAS,
    MAX_TOKENS,
    MIN_P,
    N_CTX,
    N_THREADS,
    NGPU_LAYERS,
    PROMPT_CACHE_MB,
    REPEAT_LAST_N,
    REPEAT_PENALTY,
    SEED,
    TEMPERATURE,
    TOP_K,
    TOP_P,
    NumberRange,
)
from desktop_app.engine.auto.cost_model import GPU_ROW
from desktop_app.engine.auto.tunables import DEFAULT_TUNABLES, AutoTunables
from desktop_app.engine.drafters import ngram_store, recent_text
from desktop_app.engine.grammar_limits import MAX_CHARS as GRAMMAR_MAX_CHARS
from desktop_app.engine.grammar_limits import MAX_NESTING as GRAMMAR_MAX_NESTING
from desktop_app.engine.llama.embeddings import EMBEDDING_CTX, MAX_REQUEST_TOKENS
from desktop_app.engine.llama.model import ROLLBACK_TOKENS
from desktop_app.engine.llama.template_limits import RENDER_BUDGET_S
from desktop_app.engine.loop.prompt_fit import FIT_BUDGET_S
from desktop_app.engine_process.protocol import STREAM_FLUSH_S
from desktop_app.engine_process.service import CHUNK_FLUSH_S, LIVE_STATS_S
from desktop_app.server import schema_prep
from desktop_app.server.backend import MAX_WAITING
from desktop_app.server.embeddings_api import MAX_INPUTS
from desktop_app.server.grammar_worker import MEMORY_BUDGET, TIME_BUDGET_S
from desktop_app.server.limits import DEFAULT_LIMITS
from desktop_app.store.conversation_import import MAX_IMPORT_BYTES, MAX_MESSAGE_CHARS, MAX_MESSAGES, MAX_STATS_CHARS
from desktop_app.store.history import MAX_TITLE_CHARS
from desktop_app.store.settings import MAX_ITEMS, MAX_TEXT_CHARS
from desktop_app.store.settings_file import MAX_SETTINGS_BYTES
from desktop_app.ui.transcript.chat_view import MAX_RENDER_MS, RENDER_MS, RENDER_SHARE, SHOWN_AT_ONCE
from desktop_app.ui.transcript.lazy_render import SLICE_MS
from desktop_app.ui.transcript.render_budget import RENDER_BUDGET_MS
from tests.test_codebase_shape import MAX_CLASS_LINES, MAX_FUNCTION_LINES, MAX_MODULE_LINES

ROOT = Path(__file__).resolve().parents[1]
MIB = 2**20
NUM = r"-?\d[\d,.]*(?:\^\d+(?:-1)?)?"  # 4,096  0.999999  -1  2^20  2^63-1
LARGEST_VERIFY_PASS = DRAFT_K.high + 1  # the last token and the largest draft
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
LLAMA_PIN = next(d for d in PYPROJECT["project"]["dependencies"] if d.startswith("llama-cpp-python=="))
MIN_PYTHON = PYPROJECT["project"]["requires-python"].removeprefix(">=")


@dataclass(frozen=True)
class Quote:
    doc: str  # the page, from the repository's root
    pattern: str  # a regex (whitespace in it matches any run of whitespace, line breaks too)
    code: Callable[[], tuple[object, ...]]  # the constant(s), one per group, as the page writes them
    name: str  # what the code calls it, for the message


def _row(doc: str, name: str, rng: NumberRange) -> Quote:
    """A row of architecture.md's ranges table: | `NAME` ... | low-high | default ..."""
    pattern = rf"\| `{name}`[^|\n]* \| ({NUM})-({NUM}) \| ({NUM})"
    return Quote(doc, pattern, lambda: (rng.low, rng.high, rng.default), f"{name} (low, high, default)")


DOCUMENTS = "docs/documents.md"
ARCH, NOTES, API, AUTO, DRAFTING, SPEED, README = (
    "docs/architecture.md",
    "docs/engine-notes.md",
    "docs/api.md",
    "docs/auto.md",
    "docs/drafting.md",
    "docs/window-speed.md",
    "README.md",
)

QUOTES: list[Quote] = [
    # --- docs/architecture.md: the ranges table (engine/api.py, engine/model_options.py)
    *(
        _row(ARCH, name, rng)
        for name, rng in [
            ("DRAFT_K", DRAFT_K),
            ("MAX_TOKENS", MAX_TOKENS),
            ("TEMPERATURE", TEMPERATURE),
            ("TOP_K", TOP_K),
            ("MIN_P", MIN_P),
            ("REPEAT_PENALTY", REPEAT_PENALTY),
            ("REPEAT_LAST_N", REPEAT_LAST_N),
            ("LOGIT_BIAS", LOGIT_BIAS),
            ("SEED", SEED),
            ("N_CTX", N_CTX),
            ("NGPU_LAYERS", NGPU_LAYERS),
            ("N_THREADS", N_THREADS),
            ("PROMPT_CACHE_MB", PROMPT_CACHE_MB),
            ("API_PORT", API_PORT),
        ]
    ),
    Quote(
        ARCH, rf"\| `TOP_P` \| \(({NUM}), ({NUM})\] \| ({NUM})", lambda: (TOP_P.low, TOP_P.high, TOP_P.default), "TOP_P"
    ),
    Quote(ARCH, r"`API_HOST` = ([\d.]+)\)", lambda: (API_HOST,), "API_HOST"),
    # --- architecture.md: the engine's host, the shape test, bad inputs, data safety
    Quote(ARCH, r"Past `MAX_WAITING` \((\d+)\) queued", lambda: (MAX_WAITING,), "server/backend.py MAX_WAITING"),
    Quote(ARCH, r"`CHUNK_FLUSH_S` \(([\d.]+) s", lambda: (CHUNK_FLUSH_S,), "engine_process/service.py CHUNK_FLUSH_S"),
    Quote(
        ARCH, r"`STREAM_FLUSH_S` \(([\d.]+) s", lambda: (STREAM_FLUSH_S,), "engine_process/protocol.py STREAM_FLUSH_S"
    ),
    Quote(
        ARCH,
        r"every module under `desktop_app/` to (\d+) lines, every class to (\d+) and every function to (\d+)",
        lambda: (MAX_MODULE_LINES, MAX_CLASS_LINES, MAX_FUNCTION_LINES),
        "tests/test_codebase_shape.py MAX_MODULE_LINES, MAX_CLASS_LINES, MAX_FUNCTION_LINES",
    ),
    Quote(
        ARCH,
        r"`n_rs_seq`, up to (\d+) drafted tokens",
        lambda: (ROLLBACK_TOKENS,),
        "engine/llama/model.py ROLLBACK_TOKENS",
    ),
    Quote(
        ARCH, r"render under a (\d+) s time budget", lambda: (RENDER_BUDGET_S,), "template_limits.py RENDER_BUDGET_S"
    ),
    Quote(
        ARCH, r"past (\d+) MB\) is kept", lambda: (MAX_SETTINGS_BYTES // MIB,), "settings_file.py MAX_SETTINGS_BYTES"
    ),
    Quote(
        ARCH,
        rf"a text past ({NUM}) characters, a list of more than ({NUM}) entries",
        lambda: (MAX_TEXT_CHARS, MAX_ITEMS),
        "store/settings.py MAX_TEXT_CHARS, MAX_ITEMS",
    ),
    Quote(ARCH, rf"`repeat_penalty` from ({NUM}):", lambda: (REPEAT_PENALTY.low,), "REPEAT_PENALTY.low"),
    Quote(ARCH, r"\| the file \| (\d+) MB \|", lambda: (MAX_IMPORT_BYTES // 10**6,), "MAX_IMPORT_BYTES"),
    Quote(ARCH, rf"\| messages \| ({NUM}) \|", lambda: (MAX_MESSAGES,), "conversation_import.py MAX_MESSAGES"),
    Quote(ARCH, rf"\| one message \| ({NUM}) characters", lambda: (MAX_MESSAGE_CHARS,), "MAX_MESSAGE_CHARS"),
    Quote(ARCH, rf"\| the title \| ({NUM}) characters", lambda: (MAX_TITLE_CHARS,), "store/history.py MAX_TITLE_CHARS"),
    Quote(ARCH, rf"\| one message's stats \| ({NUM}) characters", lambda: (MAX_STATS_CHARS,), "MAX_STATS_CHARS"),
    Quote(
        ARCH, rf"\| the system prompt \| ({NUM}) characters", lambda: (MAX_TEXT_CHARS,), "settings.py MAX_TEXT_CHARS"
    ),
    # --- docs/engine-notes.md: the largest verify pass, DRAFT_K.high + 1
    Quote(NOTES, r"every batch size from (\d+) to (\d+) \(", lambda: (2, LARGEST_VERIFY_PASS), "DRAFT_K.high + 1"),
    Quote(NOTES, r"batch sizes (\d+)-(\d+) on", lambda: (2, LARGEST_VERIFY_PASS), "DRAFT_K.high + 1"),
    Quote(
        NOTES,
        r"a batch of up to (\d+) rows \(a verify pass: the last token and the largest draft the app allows, (\d+)\)",
        lambda: (LARGEST_VERIFY_PASS, DRAFT_K.high),
        "DRAFT_K.high + 1, DRAFT_K.high",
    ),
    Quote(NOTES, r"`SPECCHAT_EXACT_ROWS` = (\d+)", lambda: (LARGEST_VERIFY_PASS,), "DRAFT_K.high + 1"),
    Quote(NOTES, r"`SPECCHAT_PREFILL_GEMM = (\d+)`", lambda: (LARGEST_VERIFY_PASS,), "DRAFT_K.high + 1"),
    Quote(NOTES, r"chunks of more than (\d+) tokens", lambda: (LARGEST_VERIFY_PASS,), "DRAFT_K.high + 1"),
    Quote(NOTES, r"its last row is\s+up to (\d+) tokens further on", lambda: (DRAFT_K.high,), "DRAFT_K.high"),
    Quote(NOTES, r"\(`(llama-cpp-python==[\d.]+)`\)", lambda: (LLAMA_PIN,), "pyproject.toml's llama-cpp-python pin"),
    # --- docs/api.md: server/limits.py, the queue, embeddings, schemas, ranges
    Quote(
        API,
        rf"up to ({NUM}) texts and ({NUM}) tokens a request",
        lambda: (MAX_INPUTS, MAX_REQUEST_TOKENS),
        "embeddings_api.py MAX_INPUTS, llama/embeddings.py MAX_REQUEST_TOKENS",
    ),
    Quote(
        API, rf"a text longer than ({NUM}) tokens is refused", lambda: (EMBEDDING_CTX,), "embeddings.py EMBEDDING_CTX"
    ),
    Quote(
        API,
        rf"an embeddings request ({NUM}) texts and ({NUM}) tokens",
        lambda: (MAX_INPUTS, MAX_REQUEST_TOKENS),
        "MAX_INPUTS, MAX_REQUEST_TOKENS",
    ),
    Quote(API, r"`Retry-After` past (\d+) waiting", lambda: (MAX_WAITING,), "server/backend.py MAX_WAITING"),
    Quote(
        API,
        r"a body of at most (\d+) MiB, JSON nested at most (\d+) deep, numbers of at most (\d+) characters",
        lambda: (
            DEFAULT_LIMITS.max_body_bytes // MIB,
            DEFAULT_LIMITS.max_depth,
            DEFAULT_LIMITS.max_number_chars,
        ),
        "server/limits.py max_body_bytes, max_depth, max_number_chars",
    ),
    Quote(
        API,
        rf"unzips to more than ({NUM}) MB \(a zip bomb\), a file over ({NUM}) MB, more than ({NUM})\s+characters of "
        rf"text or more than ({NUM}) PDF pages",
        lambda: (
            reading.MAX_UNZIPPED_BYTES // MIB,
            reading.MAX_FILE_BYTES // MIB,
            reading.MAX_TEXT_CHARS,
            reading.MAX_PDF_PAGES,
        ),
        "documents/reading.py MAX_UNZIPPED_BYTES, MAX_FILE_BYTES, MAX_TEXT_CHARS, MAX_PDF_PAGES",
    ),
    Quote(
        API,
        rf"of at most ({NUM}) MB and ({NUM}) pixels",
        lambda: (images.MAX_IMAGE_BYTES // MIB, images.MAX_IMAGE_PIXELS),
        "engine/images.py MAX_IMAGE_BYTES, MAX_IMAGE_PIXELS",
    ),
    Quote(
        DOCUMENTS,
        rf"unzips to more than ({NUM}) MB is refused[\s\S]*?a file of at most ({NUM}) MB, at most ({NUM}) characters "
        rf"of text[\s\S]*?at most ({NUM}) PDF pages",
        lambda: (
            reading.MAX_UNZIPPED_BYTES // MIB,
            reading.MAX_FILE_BYTES // MIB,
            reading.MAX_TEXT_CHARS,
            reading.MAX_PDF_PAGES,
        ),
        "documents/reading.py MAX_UNZIPPED_BYTES, MAX_FILE_BYTES, MAX_TEXT_CHARS, MAX_PDF_PAGES",
    ),
    Quote(
        DOCUMENTS,
        rf"passages of about ({NUM}) tokens \(`PASSAGE_TOKENS`\)[\s\S]*?~({NUM}) tokens \(`OVERLAP_TOKENS`\)"
        rf"[\s\S]*?batches of ({NUM}) passages",
        lambda: (passages.PASSAGE_TOKENS, passages.OVERLAP_TOKENS, passages.EMBED_BATCH),
        "documents/passages.py PASSAGE_TOKENS, OVERLAP_TOKENS, EMBED_BATCH",
    ),
    Quote(
        DOCUMENTS,
        rf"runs of at least ({NUM}) characters \(`MIN_COPIED_CHARS`",
        lambda: (attribution.MIN_COPIED_CHARS,),
        "documents/attribution.py MIN_COPIED_CHARS",
    ),
    Quote(
        API, r"The whole body is at most (\d+) MiB", lambda: (DEFAULT_LIMITS.max_body_bytes // MIB,), "max_body_bytes"
    ),
    Quote(API, r"refused past (\d+) s\.", lambda: (FIT_BUDGET_S,), "engine/loop/prompt_fit.py FIT_BUDGET_S"),
    Quote(API, r"or after (\d+) s when the request waits", lambda: (DEFAULT_LIMITS.stream_start_s,), "stream_start_s"),
    Quote(API, r"a stream with nothing to send for (\d+) s", lambda: (DEFAULT_LIMITS.stream_ping_s,), "stream_ping_s"),
    Quote(API, rf"token id → ({NUM})\.\.({NUM})", lambda: (LOGIT_BIAS.low, LOGIT_BIAS.high), "LOGIT_BIAS"),
    Quote(API, rf"bias from ({NUM}) to ({NUM})\)", lambda: (LOGIT_BIAS.low, LOGIT_BIAS.high), "LOGIT_BIAS"),
    Quote(API, rf"counts at most ({NUM});", lambda: (schema_prep.MAX_COUNT,), "schema_prep.py MAX_COUNT"),
    Quote(
        API,
        rf"nested in counts at most ({NUM}) multiplied",
        lambda: (schema_prep.MAX_NESTED_COUNT,),
        "MAX_NESTED_COUNT",
    ),
    Quote(API, rf"above ({NUM}) is dropped", lambda: (schema_prep.MAX_COUNT,), "schema_prep.py MAX_COUNT"),
    Quote(API, rf"an enum at most ({NUM}) values", lambda: (schema_prep.MAX_ENUM,), "schema_prep.py MAX_ENUM"),
    Quote(API, rf"at most ({NUM}) alternatives open", lambda: (schema_prep.MAX_ALTERNATIVES,), "MAX_ALTERNATIVES"),
    Quote(
        API,
        r"nesting at most (\d+) \((\d+) through `\$ref`\)",
        lambda: (schema_prep.MAX_DEPTH, 2 * schema_prep.MAX_DEPTH),
        "schema_prep.py MAX_DEPTH (twice through $ref)",
    ),
    Quote(API, rf"({NUM}) sub-schemas;", lambda: (schema_prep.MAX_NODES,), "schema_prep.py MAX_NODES"),
    Quote(
        API,
        rf"a grammar of at most ({NUM}) characters with groups nested at most (\d+) deep",
        lambda: (GRAMMAR_MAX_CHARS, GRAMMAR_MAX_NESTING),
        "engine/grammar_limits.py MAX_CHARS, MAX_NESTING",
    ),
    Quote(
        API,
        r"within (\d+) s and (\d+) MB\.",
        lambda: (TIME_BUDGET_S, MEMORY_BUDGET // MIB),
        "server/grammar_worker.py TIME_BUDGET_S, MEMORY_BUDGET",
    ),
    Quote(API, rf"min_p must be between ({NUM}) and ({NUM}),", lambda: (MIN_P.low, MIN_P.high), "MIN_P"),
    Quote(
        API,
        rf"`top_k` ({NUM}) and `min_p` ({NUM}): off, `top_p` ({NUM}), `repeat_penalty` ({NUM})\)",
        lambda: (TOP_K.default, MIN_P.default, TOP_P.default, REPEAT_PENALTY.default),
        "the defaults of TOP_K, MIN_P, TOP_P, REPEAT_PENALTY",
    ),
    Quote(API, r"http://([\d.]+):(\d+)/v1", lambda: (API_HOST, API_PORT.default), "API_HOST, API_PORT.default"),
    # --- docs/auto.md: AutoTunables and the range of k
    *(
        Quote(
            AUTO,
            rf"^\| `{field}` \| ({NUM}) \|",
            lambda field=field: (getattr(DEFAULT_TUNABLES, field),),
            f"engine/auto/tunables.py AutoTunables.{field}",
        )
        for field in AutoTunables.__dataclass_fields__
    ),
    Quote(AUTO, r"`GPU_ROW` = 1/(\d+)", lambda: (round(1 / GPU_ROW),), "engine/auto/cost_model.py GPU_ROW"),
    Quote(AUTO, r"`DRAFT_K`: default (\d+), copies up to (\d+)", lambda: (DRAFT_K.default, DRAFT_K.high), "DRAFT_K"),
    # --- docs/drafting.md: the n-gram cache's bounds and the recent text's key
    Quote(
        DRAFTING,
        r"It is bounded: (\d+)k n-grams, the newest (\d+)k tokens of history",
        lambda: (ngram_store.MAX_ENTRIES // 1000, ngram_store.MAX_TOKENS // 1000),
        "drafters/ngram_store.py MAX_ENTRIES, MAX_TOKENS",
    ),
    Quote(DRAFTING, r"last (\d+) tokens \(`KEY`", lambda: (recent_text.KEY,), "drafters/recent_text.py KEY"),
    # --- docs/window-speed.md: the window's render budget and the engine's message rate
    Quote(SPEED, r"`RENDER_SHARE` \((\d+)%\)", lambda: (round(RENDER_SHARE * 100),), "chat_view.py RENDER_SHARE"),
    Quote(SPEED, r"`RENDER_MS` \((\d+) ms", lambda: (RENDER_MS,), "chat_view.py RENDER_MS"),
    Quote(SPEED, r"`MAX_RENDER_MS`\s+\((\d+) s\)", lambda: (MAX_RENDER_MS / 1000,), "chat_view.py MAX_RENDER_MS"),
    Quote(SPEED, r"`RENDER_BUDGET_MS` \((\d+) ms\)", lambda: (RENDER_BUDGET_MS,), "render_budget.py RENDER_BUDGET_MS"),
    Quote(SPEED, r"`SLICE_MS` \((\d+) ms", lambda: (SLICE_MS,), "lazy_render.py SLICE_MS"),
    Quote(
        SPEED, r"newest (\d+) messages made into widgets \(`SHOWN_AT_ONCE`", lambda: (SHOWN_AT_ONCE,), "SHOWN_AT_ONCE"
    ),
    Quote(
        SPEED,
        r"sends text at most (\d+) times a second",
        lambda: (round(1 / CHUNK_FLUSH_S),),
        "engine_process/service.py CHUNK_FLUSH_S (1 / it)",
    ),
    Quote(
        SPEED,
        r"live figures (\w+) a second",
        lambda: ({1: "once", 2: "twice"}.get(round(1 / LIVE_STATS_S), f"{1 / LIVE_STATS_S:g} times"),),
        "engine_process/service.py LIVE_STATS_S (1 / it)",
    ),
    # --- README.md: the user's manual quotes a few defaults and limits
    Quote(README, r"Auto drafts copied text up to (\d+) at a time", lambda: (DRAFT_K.high,), "DRAFT_K.high"),
    Quote(README, r"alternating them (\d+) times", lambda: (RACE_ROUNDS,), "bench/race.py RACE_ROUNDS"),
    Quote(
        README,
        r"kept for recent conversations; (\d+), 0 off",
        lambda: (PROMPT_CACHE_MB.default,),
        "PROMPT_CACHE_MB.default",
    ),
    Quote(README, r"`--spec auto`, (\d+) tokens", lambda: (MAX_TOKENS.default,), "MAX_TOKENS.default"),
    Quote(README, r"Serve API on localhost:(\d+)", lambda: (API_PORT.default,), "API_PORT.default"),
    Quote(README, r"\[--port (\d+)\]", lambda: (API_PORT.default,), "API_PORT.default"),
    Quote(README, r"Python (3\.\d+)\+", lambda: (as_number(MIN_PYTHON),), "pyproject.toml requires-python"),
]


def as_number(text: str) -> object:
    """A number as the docs write it: 4,096, 0.999999, -1, 2^20, 2^63-1 (other text stays text)."""
    plain = text.replace(",", "")
    power = re.fullmatch(r"(\d+)\^(\d+)(-1)?", plain)
    if power:
        return int(power.group(1)) ** int(power.group(2)) - (1 if power.group(3) else 0)
    if re.fullmatch(r"-?\d+", plain):
        return int(plain)
    if re.fullmatch(r"-?\d+\.\d+", plain):
        return float(plain)
    return text


def _line(text: str, at: int) -> int:
    return text.count("\n", 0, at) + 1


@pytest.mark.parametrize("quote", QUOTES, ids=lambda q: f"{q.doc}:{q.name}")
def test_a_number_the_docs_quote_is_the_code_s(quote: Quote) -> None:
    text = (ROOT / quote.doc).read_text()
    pattern = re.compile(re.sub(r"(?<!\\) ", r"\\s+", quote.pattern), re.MULTILINE)
    matches = list(pattern.finditer(text))
    assert matches, f"{quote.doc} no longer says /{quote.pattern}/ (reworded? update its row in {Path(__file__).name})"
    expected = quote.code()
    for match in matches:
        said = tuple(as_number(group) for group in match.groups())
        assert len(said) == len(expected), f"{quote.pattern} captures {len(said)} numbers for {len(expected)} constants"
        assert said == expected, (
            f"{quote.doc}:{_line(text, match.start())} says {', '.join(match.groups())} for {quote.name}; "
            f"the code has {', '.join(str(v) for v in expected)}: {match.group(0)!r}"
        )


def test_the_number_reader() -> None:
    assert [as_number(t) for t in ("4,096", "0.999999", "-1", "2^20", "2^63-1", "3.11", "127.0.0.1")] == [
        4096,
        0.999999,
        -1,
        2**20,
        2**63 - 1,
        3.11,
        "127.0.0.1",
    ]
