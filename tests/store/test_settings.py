"""Settings: declared once, saved as JSON under SPECCHAT_HOME, never broken by a bad file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from desktop_app.engine.api import DRAFT_K
from desktop_app.store.settings import BY_NAME, FONT_SIZE, MAX_RECENT_FILES, MAX_TEXT_CHARS, SETTINGS, Settings
from desktop_app.store.settings_file import MAX_SETTINGS_BYTES


@pytest.fixture()
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SPECCHAT_HOME", str(tmp_path))
    return tmp_path


def test_every_setting_is_declared_with_a_valid_default_and_description() -> None:
    names = [s.name for s in SETTINGS]
    assert len(names) == len(set(names))
    for setting in SETTINGS:
        assert setting.description
        assert setting.accepts(setting.default), setting.name


def test_first_run_gives_the_defaults(home: Path) -> None:
    settings = Settings.load()
    assert settings.path == home / "config" / "settings.json"
    assert settings["spec_mode"] == "auto"
    assert settings["draft_max"] == DRAFT_K.default
    assert settings["n_gpu_layers"] == -1
    assert settings["temperature"] == 0.0
    assert settings["max_tokens"] == 512
    assert settings["highlight_drafts"] is False
    assert settings["recent_files"] == []


def test_values_survive_a_save_and_load(home: Path) -> None:
    settings = Settings.load()
    settings.set("spec_mode", "on")
    settings.set("target_path", "/models/big.gguf")
    settings.set("temperature", 1)  # an int is fine for a float setting
    settings.save()
    again = Settings.load()
    assert again["spec_mode"] == "on"
    assert again["target_path"] == "/models/big.gguf"
    assert again["temperature"] == 1.0 and isinstance(again["temperature"], float)
    assert json.loads((home / "config" / "settings.json").read_text())["spec_mode"] == "on"


def test_unknown_keys_and_bad_values_fall_back_to_defaults(home: Path) -> None:
    path = home / "config" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps(
            {
                "spec_mode": "sometimes",
                "draft_max": "4",
                "max_tokens": True,
                "colour": "blue",
                "recent_files": ["a.gguf", 3],
                "temperature": 0.5,
            }
        )
    )
    settings = Settings.load()
    assert settings["spec_mode"] == "auto"
    assert settings["draft_max"] == DRAFT_K.default
    assert settings["max_tokens"] == 512
    assert settings["recent_files"] == []
    assert settings["temperature"] == 0.5  # the good value is kept
    assert set(settings.ignored) == {"spec_mode", "draft_max", "max_tokens", "colour", "recent_files"}


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", ""])
def test_a_broken_file_gives_defaults(home: Path, content: str) -> None:
    path = home / "config" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content)
    assert Settings.load().as_dict() == Settings().as_dict()


def test_setting_a_bad_value_is_refused(home: Path) -> None:
    settings = Settings.load()
    with pytest.raises(ValueError):
        settings.set("drafter", "telepathy")
    with pytest.raises(KeyError):
        settings.set("no_such_setting", 1)
    assert settings["drafter"] == "best"


def test_recent_files_are_newest_first_without_duplicates(home: Path) -> None:
    settings = Settings.load()
    for i in range(MAX_RECENT_FILES + 3):
        settings.add_recent_file(f"/m/{i}.gguf")
    settings.add_recent_file("/m/5.gguf")
    recent = settings["recent_files"]
    assert recent[0] == "/m/5.gguf"
    assert len(recent) == MAX_RECENT_FILES
    assert len(set(recent)) == len(recent)


def test_a_settings_file_with_a_typo_is_kept_and_its_readable_keys_are_used(home: Path) -> None:
    path = home / "config" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    broken = '{"spec_mode": "on", "temperature": 0.7, "draft_max": 3, "recent_files": ["a.gguf"],}'
    path.write_text(broken)
    settings = Settings.load()
    assert settings["spec_mode"] == "on" and settings["temperature"] == 0.7 and settings["draft_max"] == 3
    kept = [p for p in path.parent.iterdir() if p.name.startswith("settings.json.broken-")]
    assert len(kept) == 1 and kept[0].read_text() == broken  # byte for byte
    assert settings.problem is not None and kept[0].name in settings.problem and "4 settings" in settings.problem
    settings.save()  # the new file sits next to the kept one
    assert json.loads(path.read_text())["spec_mode"] == "on" and kept[0].read_text() == broken


def test_an_unreadable_settings_file_is_kept_too(home: Path) -> None:
    path = home / "config" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\xff\xfe garbage")
    settings = Settings.load()
    assert settings["spec_mode"] == "auto" and settings.problem and "could not be read" in settings.problem
    assert [p.read_bytes() for p in path.parent.iterdir() if ".broken-" in p.name] == [b"\xff\xfe garbage"]


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_numbers_in_the_file_fall_back_to_the_default(home: Path, value: str) -> None:
    path = home / "config" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'{{"temperature": {value}, "max_tokens": 100}}')
    settings = Settings.load()
    assert settings["temperature"] == 0.0 and settings["max_tokens"] == 100
    assert settings.ignored == ["temperature"]
    with pytest.raises(ValueError, match="temperature"):
        settings.set("temperature", float(value.replace("Infinity", "inf")))


def test_sampling_settings_take_range_and_default_from_the_engine(home: Path) -> None:
    from desktop_app.engine.api import MIN_P, REPEAT_PENALTY, SEED, TOP_K, TOP_P

    settings = Settings.load()
    for name, number in (("top_p", TOP_P), ("top_k", TOP_K), ("min_p", MIN_P), ("repeat_penalty", REPEAT_PENALTY)):
        assert BY_NAME[name].number is number and settings[name] == number.default
        with pytest.raises(ValueError):
            settings.set(name, number.high + 1)
    assert BY_NAME["seed"].number is SEED and settings["random_seed"] is False
    with pytest.raises(ValueError):
        settings.set("top_p", 0.0)  # TOP_P's open lower bound


def test_system_prompt_presets_and_font_size_survive_a_save(home: Path) -> None:
    settings = Settings.load()
    assert settings["system_prompt"] == "" and settings["prompt_presets"] == {}
    assert settings["font_size"] == FONT_SIZE.default
    settings.set("system_prompt", "Be brief.")
    settings.set("prompt_presets", {"Terse": "Be brief.", "Pirate": "Talk like a pirate."})
    settings.set("font_size", 14)
    settings.save()
    again = Settings.load()
    assert again["prompt_presets"] == {"Terse": "Be brief.", "Pirate": "Talk like a pirate."}
    assert (again["system_prompt"], again["font_size"]) == ("Be brief.", 14)
    presets = again["prompt_presets"]
    presets["Other"] = "x"  # a copy: the settings change only through set()
    assert "Other" not in again["prompt_presets"]
    for bad in ({"Terse": 3}, ["Be brief."], {"": "x", 1: "y"}):
        with pytest.raises(ValueError):
            settings.set("prompt_presets", bad)
    with pytest.raises(ValueError):
        settings.set("font_size", FONT_SIZE.high + 1)


# Issue 46, point 5: settings never lose data; whatever the file holds, the app starts.
def _file(home: Path, text: str) -> Path:
    path = home / "config" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _copies(path: Path, kind: str) -> list[Path]:
    return sorted(p for p in path.parent.iterdir() if p.name.startswith(f"settings.json.{kind}-"))


def test_unusable_values_are_reported_kept_in_a_copy_and_unknown_keys_survive_a_save(home: Path) -> None:
    original = json.dumps(
        {"draft_max": "4", "top_k": -3, "a_later_setting": {"x": [1, 2]}, "temperature": 0.5, "repeat_penalty": 1e-300}
    )
    path = _file(home, original)
    settings = Settings.load()
    assert (settings["draft_max"], settings["top_k"], settings["repeat_penalty"]) == (DRAFT_K.default, 0, 1.0)
    assert settings["temperature"] == 0.5
    (copy,) = _copies(path, "bad")
    assert copy.read_text() == original  # byte for byte, before anything rewrites the file
    problem = settings.problem or ""
    assert problem.count("\n") == 0 and copy.name in problem
    # in words (issue 49, item 10), the parameter's name kept in brackets for the expert
    assert "(repeat_penalty): a number from 0.1 to 10, not 1e-300" in problem and "must be" not in problem
    assert (
        "(draft_max): a whole number from 1 to 64, not '4'" in problem and "(top_k): a whole number from 0" in problem
    )
    assert "a_later_setting" not in problem  # a later version's key is not a problem
    settings.set("spec_mode", "on")
    settings.save()
    saved = json.loads(path.read_text())
    assert saved["a_later_setting"] == {"x": [1, 2]} and saved["spec_mode"] == "on" and saved["temperature"] == 0.5
    assert Settings.load().problem is None  # the defaults now written; the old values are in the copy
    assert _copies(path, "bad") == [copy]


def test_the_same_unusable_file_read_twice_is_copied_once(home: Path) -> None:
    path = _file(home, '{"max_tokens": "lots"}')
    first, second = Settings.load(), Settings.load()
    assert first.problem == second.problem and len(_copies(path, "bad")) == 1


@pytest.mark.parametrize(
    ("text", "used"),
    [
        ('{"temperature": 0.5, "max_tokens": 1' + "0" * 5000 + ', "top_k": 7}', {"temperature": 0.5, "top_k": 7}),
        ('{"temperature": 0.5, "recent_files": ' + "[" * 100_000 + "]" * 100_000 + "}", {"temperature": 0.5}),
        ('{"temperature": 0.5, "top_k": 3, "recent_files": ' + "[" * 100_000, {"temperature": 0.5, "top_k": 3}),
    ],
    ids=["a 5,000-digit integer", "100k-deep nesting", "deep and cut short"],
)
def test_huge_numbers_and_deep_nesting_never_stop_the_app(home: Path, text: str, used: dict[str, object]) -> None:
    path = _file(home, text)
    settings = Settings.load()
    assert {name: settings[name] for name in used} == used
    assert settings["max_tokens"] == 512 and settings.problem
    kept = _copies(path, "bad") + _copies(path, "broken")
    assert [p.read_text() for p in kept] == [text]  # nothing lost
    settings.save()
    assert Settings.load().problem is None


def test_a_long_number_is_said_in_a_few_words(home: Path) -> None:
    _file(home, '{"max_tokens": 1' + "0" * 5000 + "}")
    problem = Settings.load().problem or ""
    assert "(max_tokens): a whole number from 1 to 1,048,576, not" in problem and len(problem) < 400


def test_text_settings_have_a_size_limit(home: Path) -> None:
    huge = "x" * (MAX_TEXT_CHARS + 1)
    path = _file(home, json.dumps({"system_prompt": huge, "prompt_presets": {"Big": huge, "Small": "y"}}))
    settings = Settings.load()
    assert settings["system_prompt"] == "" and settings["prompt_presets"] == {}
    assert f"system_prompt holds text longer than {MAX_TEXT_CHARS:,} characters" in (settings.problem or "")
    assert json.loads(_copies(path, "bad")[0].read_text())["system_prompt"] == huge
    with pytest.raises(ValueError, match="longer than"):
        settings.set("system_prompt", huge)
    settings.set("system_prompt", "x" * MAX_TEXT_CHARS)


def test_a_settings_file_past_its_size_limit_is_set_aside(home: Path) -> None:
    path = _file(home, '{"temperature": 0.5, "pad": "' + "x" * MAX_SETTINGS_BYTES + '"}')
    settings = Settings.load()
    assert settings["temperature"] == 0.0 and "more than a settings file holds" in (settings.problem or "")
    assert len(_copies(path, "broken")) == 1 and not path.exists()


def test_without_a_copy_the_unusable_values_are_written_back(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from desktop_app.store import settings_file

    def no_room(_path: Path) -> Path:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(settings_file, "copy_aside", no_room)
    path = _file(home, '{"top_k": -3, "temperature": 0.5}')
    settings = Settings.load()
    assert "No space left" in (settings.problem or "")
    settings.save()
    assert json.loads(path.read_text())["top_k"] == -3  # kept where it was: nothing lost


def test_list_settings_have_a_length_limit(home: Path) -> None:
    from desktop_app.store.settings import MAX_ITEMS

    _file(home, json.dumps({"recent_files": [f"/m/{i}.gguf" for i in range(100_000)], "top_k": 5}))
    settings = Settings.load()
    assert settings["recent_files"] == [] and settings["top_k"] == 5
    assert f"recent_files holds 100,000 entries; the most is {MAX_ITEMS:,}" in (settings.problem or "")
