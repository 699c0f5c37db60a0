"""Answer presets: named bundles of a system prompt, sampling and speculation, and a
conversation's own answer settings. Qt-free.

A preset is saved in ``presets.json`` in the settings folder (:func:`desktop_app.paths.config_dir`).
Every number is checked with the range the engine declares once (engine/api.py), so a preset
holds nothing an answer would refuse. Nothing in the file is lost: a file that cannot be read, or
holds an entry that cannot be used, is set aside whole (``presets.json.broken-<time>``) and said
once in :attr:`Presets.problem`; the usable presets in it are kept and written to a new file.

A conversation's own settings are stored with it in the history as its ``answer_settings``
option (:func:`own_settings` reads it, :meth:`AnswerPreset.option` writes it); its system prompt
stays its ``system_prompt`` option (ui/composer/system_prompt.py).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from desktop_app.engine.api import MAX_TOKENS, TEMPERATURE, TOP_K, TOP_P, SpecMode
from desktop_app.paths import config_dir
from desktop_app.store.errors import DataDirError, set_aside

PRESETS_FILE = "presets.json"
OPTION = "answer_settings"  # a conversation's own settings, in the history
MAX_NAME_CHARS = 80
MAX_PRESETS = 1_000
MAX_PROMPT_CHARS = 1_000_000  # as a setting's text (store/settings.py: MAX_TEXT_CHARS)
NUMBERS = {r.name: r for r in (TEMPERATURE, TOP_P, TOP_K, MAX_TOKENS)}


@dataclass(frozen=True)
class AnswerPreset:
    """How answers are made: sampling, length and speculation, with a system prompt (None: the
    default one from Preferences). ``name`` is the preset it came from ("": none)."""

    temperature: float
    top_p: float
    top_k: int
    max_tokens: int
    spec_mode: SpecMode
    system_prompt: str | None = None
    name: str = ""

    @classmethod
    def from_dict(cls, data: object, name: str = "") -> AnswerPreset:
        """The preset in ``data`` (a preset's JSON object); ValueError saying what is wrong."""
        if not isinstance(data, dict):
            raise ValueError("it is not an object")
        values: dict[str, Any] = {}
        for field, number in NUMBERS.items():
            if field not in data:
                raise ValueError(f"{field} is missing")
            values[field] = number.check(data[field])
        try:
            spec = SpecMode(str(data.get("spec_mode")))
        except ValueError:
            words = ", ".join(m.value for m in SpecMode)
            raise ValueError(f"spec_mode must be one of {words}, not {data.get('spec_mode')!r}") from None
        prompt = data.get("system_prompt")
        if prompt is not None and (not isinstance(prompt, str) or len(prompt) > MAX_PROMPT_CHARS):
            raise ValueError(f"system_prompt must be text of at most {MAX_PROMPT_CHARS:,} characters, or null")
        return cls(spec_mode=spec, system_prompt=prompt, name=name, **values)

    def to_dict(self) -> dict[str, Any]:
        """The preset's JSON object (its name is its key in the file)."""
        return {
            "temperature": self.temperature,
            "top_p": self.top_p,
            "top_k": self.top_k,
            "max_tokens": self.max_tokens,
            "spec_mode": self.spec_mode.value,
            "system_prompt": self.system_prompt,
        }

    def option(self) -> dict[str, Any]:
        """What a conversation stores as its own settings (its prompt is stored apart)."""
        data = self.to_dict()
        del data["system_prompt"]
        return data | {"preset": self.name}


def own_settings(value: object) -> AnswerPreset | None:
    """A conversation's stored own settings; None when it has none (or they cannot be used: the
    defaults then apply). Its system prompt is not in them."""
    if not isinstance(value, dict):
        return None
    try:
        preset = AnswerPreset.from_dict({**value, "system_prompt": None})
    except ValueError:
        return None
    name = value.get("preset")
    return replace(preset, name=name) if isinstance(name, str) else preset


def check_name(name: str, taken: dict[str, AnswerPreset]) -> str:
    """``name`` stripped, or ValueError saying why it cannot name a new preset."""
    name = name.strip()
    if not name:
        raise ValueError("A preset needs a name")
    if len(name) > MAX_NAME_CHARS:
        raise ValueError(f"A preset's name is at most {MAX_NAME_CHARS} characters")
    if name in taken:
        raise ValueError(f"There is a preset named {name!r} already")
    return name


class Presets:
    """The saved presets by name; every change is written at once (:meth:`save`)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or config_dir() / PRESETS_FILE
        self.presets: dict[str, AnswerPreset] = {}
        self.problem: str | None = None  # what to tell the user once: the file was set aside

    @classmethod
    def load(cls, path: Path | None = None) -> Presets:
        """The presets in the file (none when there is no file); a bad file is set aside."""
        presets = cls(path)
        try:
            text = presets.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return presets
        except (OSError, UnicodeDecodeError) as exc:
            presets._set_aside(f"it could not be read ({exc})")
            return presets
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as exc:
            presets._set_aside(f"it is not JSON ({exc})")
            return presets
        if not isinstance(data, dict):
            presets._set_aside("it does not hold an object of presets")
            return presets
        bad = presets._use(data)
        if bad:
            presets._set_aside("; ".join(bad[:3]) + (f" (and {len(bad) - 3} more)" if len(bad) > 3 else ""))
        return presets

    def _use(self, data: dict[str, Any]) -> list[str]:
        bad: list[str] = []
        for name, value in data.items():
            try:
                check_name(name, self.presets)
                if len(self.presets) >= MAX_PRESETS:
                    raise ValueError(f"past the {MAX_PRESETS} presets kept")
                self.presets[name] = AnswerPreset.from_dict(value, name)
            except ValueError as exc:
                bad.append(f"{str(name)[:MAX_NAME_CHARS]!r}: {exc}")
        return bad

    def _set_aside(self, why: str) -> None:
        try:
            kept = set_aside(self.path)
        except OSError as exc:
            self.problem = f"Your presets file {self.path} was not used: {why}; it could not be set aside ({exc})"
            return
        usable = f"; the {len(self.presets)} usable presets in it are kept" if self.presets else ""
        self.problem = f"Your presets file had a problem: {why}{usable}. The file is kept as {kept.name}"
        if self.presets:
            try:
                self.save()
            except DataDirError:
                pass  # kept in memory until the next change tries again

    def names(self) -> list[str]:
        return sorted(self.presets, key=str.casefold)

    def add(self, name: str, preset: AnswerPreset) -> str:
        """Save ``preset`` as ``name`` (a new name: ValueError otherwise); the name used."""
        name = check_name(name, self.presets)
        self.presets[name] = replace(preset, name=name)
        self.save()
        return name

    def rename(self, old: str, new: str) -> str:
        new = check_name(new, {k: v for k, v in self.presets.items() if k != old})
        self.presets = {
            (new if k == old else k): replace(v, name=new) if k == old else v for k, v in self.presets.items()
        }
        self.save()
        return new

    def delete(self, name: str) -> None:
        self.presets.pop(name, None)
        self.save()

    def save(self) -> None:
        """Write atomically; DataDirError with the reason when the folder cannot be written."""
        tmp = self.path.with_suffix(".json.tmp")
        data = {name: preset.to_dict() for name, preset in self.presets.items()}
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(json.dumps(data, indent=2, sort_keys=True), encoding="utf-8")
            os.replace(tmp, self.path)
        except OSError as exc:
            raise DataDirError(
                f"SpecChat cannot save its presets in {self.path.parent}: {exc.strerror or exc}"
            ) from exc
