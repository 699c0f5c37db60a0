"""User settings, each declared once (name, type, default, description) and saved as JSON.

The file lives in :func:`desktop_app.paths.config_dir` (``SPECCHAT_HOME`` relocates it). Nothing
in it stops the app, and nothing in it is lost: a value that cannot be used (wrong type, out of
range, past :data:`MAX_TEXT_CHARS`) falls back to the declared default and is reported once, the
file being copied aside first (``settings.json.bad-<time>``) since the next save rewrites it;
keys this version does not know (a later version's) are written back as they were; a file that
is not JSON at all is set aside (:mod:`desktop_app.store.settings_file` reads it).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from desktop_app.engine.api import (
    API_PORT,
    DEFAULT_OVERFLOW,
    DEFAULT_SPEC_MODE,
    DRAFT_K,
    MAX_TOKENS,
    MIN_P,
    N_CTX,
    N_THREADS,
    NGPU_LAYERS,
    NO_DRAFTER,
    PROMPT_CACHE_MB,
    REPEAT_PENALTY,
    SEED,
    TEMPERATURE,
    TOP_K,
    TOP_P,
    DrafterKind,
    LayerSplit,
    NumberRange,
    OverflowPolicy,
    SpecMode,
    parse_workers,
)
from desktop_app.engine.ranges import shown
from desktop_app.paths import config_dir
from desktop_app.store import settings_file
from desktop_app.store.errors import DataDirError, set_aside
from desktop_app.store.tool_servers import valid_servers

SETTINGS_FILE = "settings.json"
MAX_RECENT_FILES = 8
# The longest text a setting holds (a system prompt, a preset, a path): a million characters is
# far more than any model's context; a longer one is refused as a value.
MAX_TEXT_CHARS = 1_000_000
MAX_ITEMS = 1_000  # the most entries a list or mapping setting holds (recent files, presets, MCP servers)
# The window's own number (the engine's are in engine/api.py): the transcript's and input's text size.
THEMES = ("system", "light", "dark")  # the window's colours: the desktop's (the default), or one of its own
FONT_SIZE = NumberRange("font_size", int, 6, 40, 10, "Text size of the conversation and the message box, in points")


@dataclass(frozen=True)
class Setting:
    """One option: its type, default, description and (optionally) allowed values; a numeric
    one declared by the engine keeps its :class:`NumberRange` (``number``) for the window's fields."""

    name: str
    type: type
    default: Any
    description: str
    choices: tuple[Any, ...] | None = None
    check: Callable[[Any], bool] | None = None
    number: NumberRange[int] | NumberRange[float] | None = None

    def accepts(self, value: Any) -> bool:
        return self.problem(value) is None

    def problem(self, value: Any) -> str | None:
        """Why ``value`` cannot be this setting's value (in words for the user); None when it can."""
        if self.number is not None:
            if not self.number.accepts(value):  # in words, the parameter's name kept for the expert
                return f"{self.description} ({self.name}): {self.number.in_words()}, not {shown(value)}"
        elif self.type is not bool and isinstance(value, bool) or not isinstance(value, self.type):
            return f"{self.name} must be {_KINDS[self.type]}, not {shown(value)}"
        elif isinstance(value, (list, dict)) and len(value) > MAX_ITEMS:
            return f"{self.name} holds {len(value):,} entries; the most is {MAX_ITEMS:,}"
        elif _too_long(value):
            return f"{self.name} holds text longer than {MAX_TEXT_CHARS:,} characters"
        if isinstance(value, list) and self.check is None and not all(isinstance(item, str) for item in value):
            return f"{self.name} must be a list of texts"  # unless its own check says what it holds
        if isinstance(value, dict) and not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
            return f"{self.name} must map names to texts"
        if self.choices is not None and value not in self.choices:
            return f"{self.name} must be one of {', '.join(map(str, self.choices))}, not {shown(value)}"
        if self.number is None and self.check is not None and not self.check(value):
            return f"{self.name} cannot be {shown(value)}"
        return None

    def coerce(self, value: Any) -> Any:
        """``value`` in the declared type (ints become floats for float settings)."""
        if self.number is not None:
            return self.number.check(value)
        if self.type is float:
            return float(value)
        if self.type is list:
            return list(value)
        if self.type is dict:
            return dict(value)
        return value


_KINDS = {str: "a text", bool: "true or false", int: "a whole number", list: "a list", dict: "an object"}


def _too_long(value: Any) -> bool:
    """A text (or a list's or mapping's text) past MAX_TEXT_CHARS."""
    if isinstance(value, str):
        return len(value) > MAX_TEXT_CHARS
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    return any(isinstance(item, str) and len(item) > MAX_TEXT_CHARS for item in items)


# The drafter setting's extra choices: NO_DRAFTER (speculation off; engine/api.py's word for an answer
# nobody drafted for) or the best drafter the loaded models offer (DRAFTER_PREFERENCE).
BEST_DRAFTER = "best"


def _parses(parse: Callable[[str], Any]) -> Callable[[Any], bool]:
    def check(value: Any) -> bool:
        try:
            parse(value)
        except ValueError:
            return False
        return True

    return check


def _number(name: str, number: NumberRange[int] | NumberRange[float], description: str | None = None) -> Setting:
    """A setting for one of the engine's declared numeric parameters (range and default from there)."""
    return Setting(
        name, number.kind, number.default, description or number.description, check=number.accepts, number=number
    )


SETTINGS: tuple[Setting, ...] = (
    Setting("target_path", str, "", "Target GGUF file; empty means the embedded default model"),
    Setting("draft_path", str, "", "Draft GGUF file sharing the target's vocabulary; empty: none"),
    Setting(
        "drafter",
        str,
        BEST_DRAFTER,
        "Who proposes tokens: "
        + ", ".join(
            [
                NO_DRAFTER.value,
                f"{BEST_DRAFTER} (the best the models offer)",
                *(f"{k.value} ({k.label})" for k in DrafterKind),
            ]
        ),
        choices=(NO_DRAFTER.value, BEST_DRAFTER, *(k.value for k in DrafterKind)),
    ),
    Setting(
        "spec_mode",
        str,
        DEFAULT_SPEC_MODE.value,
        "Speculation: " + ", ".join(f"{m.value} ({m.description})" for m in SpecMode),
        choices=tuple(m.value for m in SpecMode),
    ),
    _number("draft_max", DRAFT_K),
    _number("n_gpu_layers", NGPU_LAYERS, "Target layers offloaded to the GPU (-1 all, 0 none)"),
    _number("draft_n_gpu_layers", NGPU_LAYERS, "Draft layers offloaded to the GPU (-1 all, 0 none)"),
    _number("n_threads", N_THREADS),
    Setting(
        "workers",
        str,
        "",
        "Other computers running `specchat worker` that hold part of the target "
        "(host:port, comma-separated); empty: this computer only",
        check=_parses(parse_workers),
    ),
    Setting(
        "worker_split",
        str,
        "",
        "Share of the target's layers per computer, this one first, then each worker (e.g. 1,2,2); empty: equal shares",
        check=_parses(LayerSplit.parse),
    ),
    _number("n_ctx", N_CTX),
    _number("prompt_cache_mb", PROMPT_CACHE_MB),
    Setting(
        "context_overflow",
        str,
        DEFAULT_OVERFLOW.value,
        "When a conversation outgrows the context: "
        + ", ".join(f"{p.value} ({p.description})" for p in OverflowPolicy),
        choices=tuple(p.value for p in OverflowPolicy),
    ),
    _number("temperature", TEMPERATURE),
    _number("top_p", TOP_P),
    _number("top_k", TOP_K),
    _number("min_p", MIN_P),
    _number("repeat_penalty", REPEAT_PENALTY),
    _number("seed", SEED),
    Setting("random_seed", bool, False, "A new random seed for every answer (the seed setting is then not used)"),
    _number("max_tokens", MAX_TOKENS),
    Setting("system_prompt", str, "", "The system prompt of conversations that have none of their own; empty: none"),
    Setting("prompt_presets", dict, {}, "Saved system prompts, by name"),
    _number("font_size", FONT_SIZE),
    Setting("highlight_drafts", bool, False, "Tint text that came from accepted draft tokens"),
    Setting(
        "theme",
        str,
        THEMES[0],
        "The window's colours: system (the desktop's, light or dark, followed as it changes), light or dark",
        choices=THEMES,
    ),
    _number("api_port", API_PORT),
    Setting("api_key", str, "", "Key API clients must send as 'Authorization: Bearer KEY'; empty: none"),
    Setting("recent_files", list, [], "Recently opened GGUF files, newest first"),
    Setting(
        "mcp_servers",
        list,
        [],
        "MCP servers whose tools conversations may use: {name, command, args, env, enabled, always_allow}; "
        "none runs until one is added",
        check=valid_servers,
    ),
    Setting(
        "side_panel",
        str,
        "auto",
        "The speed panel on the right: shown, hidden, or auto (hidden on narrow screens)",
        choices=("auto", "shown", "hidden"),
    ),
    Setting("last_conversation", int, 0, "The conversation open when the app was closed (0: none)"),
    Setting("welcome_dismissed", bool, False, "The first-run card suggesting a better model was dismissed"),
    Setting(
        "window_geometry",
        str,
        "",
        "The main window's size and position when it was closed (Qt saveGeometry() in base64); empty: the default size",
    ),
)
BY_NAME: dict[str, Setting] = {s.name: s for s in SETTINGS}


class Settings:
    """The current values of :data:`SETTINGS`, read and written by name."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or config_dir() / SETTINGS_FILE
        self._values: dict[str, Any] = {s.name: s.coerce(s.default) for s in SETTINGS}
        self._kept: dict[str, Any] = {}  # entries of the file written back as they were (unknown keys)
        self.ignored: list[str] = []  # what the loaded file held that could not be used
        self.problem: str | None = None  # what to tell the user once (a file set aside, a failed save)

    @classmethod
    def load(cls, path: Path | None = None) -> Settings:
        """The saved settings; never raises for what the file holds. A file that is not valid
        JSON is never overwritten: it is kept as ``settings.json.broken-<time>``, the entries still
        readable in it are used, and :attr:`problem` says what happened. A value that cannot be
        used is said in :attr:`problem` and kept in a copy, ``settings.json.bad-<time>``, made
        before the next save rewrites the file without it."""
        settings = cls(path)
        try:
            text = settings_file.read(settings.path)
        except FileNotFoundError:
            return settings
        except (OSError, ValueError) as exc:  # UnicodeDecodeError is a ValueError
            settings._set_aside(f"it could not be read ({exc})")
            return settings
        data, why = settings_file.parse(text)
        if why is not None:
            kept = len(data) if isinstance(data, dict) else 0
            settings._set_aside(why + (f"; the {kept} settings readable in it are used" if kept else ""))
        if not isinstance(data, dict):
            if settings.problem is None:
                settings._set_aside("it does not hold a settings object")
            return settings
        settings._use(data, copy=why is None)
        return settings

    def _use(self, data: dict[str, Any], copy: bool) -> None:
        """Take the usable values of ``data``; keep unknown keys; report and copy aside the rest."""
        unusable: dict[str, str] = {}
        for name, value in data.items():
            setting = BY_NAME.get(name)
            if setting is None:
                self.ignored.append(name)
                self._kept[name] = value
            elif (problem := setting.problem(value)) is not None:
                self.ignored.append(name)
                unusable[name] = problem
            else:
                self._values[name] = setting.coerce(value)
        if not unusable:
            return
        said = "; ".join(unusable.values())
        if len(said) > 600:
            said = said[:600] + "…"
        if not copy:
            self.problem = f"{self.problem} Not used either: {said}"  # the file was set aside whole
            return
        try:
            kept = settings_file.copy_aside(self.path)
        except OSError as exc:
            self._kept.update((name, data[name]) for name in unusable)  # no copy: written back as they were
            self.problem = f"Settings not used, the defaults instead: {said} (kept in {self.path.name}; {exc})"
            return
        self.problem = f"Settings not used, the defaults instead: {said}. The file as it was is kept as {kept.name}"

    def __getitem__(self, name: str) -> Any:
        value = self._values[name]
        return list(value) if isinstance(value, list) else dict(value) if isinstance(value, dict) else value

    def set(self, name: str, value: Any) -> None:
        """Set one value; raises KeyError for unknown names and ValueError for bad values."""
        setting = BY_NAME[name]
        if (problem := setting.problem(value)) is not None:
            raise ValueError(f"{problem} ({setting.description})")
        self._values[name] = setting.coerce(value)
        self._kept.pop(name, None)

    def as_dict(self) -> dict[str, Any]:
        return {name: self[name] for name in self._values}

    def add_recent_file(self, path: str) -> None:
        recent = [p for p in self["recent_files"] if p != path]
        self.set("recent_files", [path, *recent][:MAX_RECENT_FILES])

    def forget_recent_file(self, path: str) -> None:
        self.set("recent_files", [p for p in self["recent_files"] if p != path])

    def _set_aside(self, why: str) -> None:
        try:
            kept = set_aside(self.path)
        except OSError as exc:
            self.problem = f"Your settings file {self.path} was not used: {why}; it could not be set aside ({exc})"
            return
        self.problem = f"Your settings file had a problem: {why}. The file is kept as {kept.name} next to the new one."

    def save(self) -> None:
        """Write atomically (a crash mid-write leaves the previous file), with the entries kept
        from the file (keys of a later version); raises DataDirError with the reason when the
        config folder cannot be written."""
        tmp = self.path.with_suffix(".json.tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(json.dumps({**self.as_dict(), **self._kept}, indent=2, sort_keys=True), encoding="utf-8")
            os.replace(tmp, self.path)
        except OSError as exc:
            raise DataDirError(
                f"SpecChat cannot save its settings in {self.path.parent}: {exc.strerror or exc}"
            ) from exc
