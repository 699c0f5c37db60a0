"""Broken and incompatible files give clear errors and leave the engine usable."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop_app.engine import (
    Engine,
    IncompatibleDraftError,
    ModelLoadError,
    ModelNotFoundError,
    TemplateError,
)
from desktop_app.engine.llama import model as model_module
from desktop_app.engine.llama.chat_template import ChatTemplate
from tests.helpers import run, user


def test_incompatible_draft_is_refused_naming_the_difference(pair_engine: Engine, models) -> None:
    with pytest.raises(IncompatibleDraftError) as info:
        pair_engine.load_draft(models.draft_other_vocab)
    assert "token 300 differs" in str(info.value)
    assert info.value.reasons
    result, _ = run(pair_engine, messages=user("Hi"), max_tokens=6, spec="on", drafter="model")
    assert result.stats.drafted > 0  # the previous draft is still in place


@pytest.mark.parametrize(
    "name,message",
    [
        ("not_gguf", "not a GGUF model file"),
        ("truncated", "is truncated"),
        ("unknown_arch", "unknown model architecture: 'zebra'"),
    ],
)
def test_broken_target_files_raise_clear_errors(models, name: str, message: str) -> None:
    engine = Engine()
    engine.load_target(models.target)
    with pytest.raises(ModelLoadError, match=message):
        engine.load_target(getattr(models, name))
    result, _ = run(engine, messages=user("Hi"), max_tokens=3, spec="off")  # old target still works
    assert len(result.token_ids) == 3


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ModelNotFoundError, match="not found"):
        Engine().load_target(tmp_path / "absent.gguf")


@pytest.mark.parametrize("gpu_layers", [0, -1])
def test_model_too_large_for_memory(models, monkeypatch: pytest.MonkeyPatch, gpu_layers: int) -> None:
    # The real check, fed a machine with 1 MB free (no way to run out of 24 GB here honestly).
    # With the default "every layer on the GPU" too: this machine has none (the build's RPC
    # backend says it "supports offload", which once skipped the check on every CPU machine).
    monkeypatch.setattr(model_module, "available_memory", lambda: 1_000_000)
    with pytest.raises(ModelLoadError, match="needs about .* GiB of memory but only"):
        Engine().load_target(models.target, model_module.ModelOptions(n_gpu_layers=gpu_layers))


HOSTILE = [
    "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "{{ cycler.__init__.__globals__.os.system('touch {marker}') }}",
    "{% for m in messages %}{{ m.update({'role': 'x'}) }}{% endfor %}",
    "{{ self._TemplateReference__context.cycler.__init__.__globals__.os.popen('touch {marker}').read() }}",
]


@pytest.mark.parametrize("source", HOSTILE)
def test_hostile_chat_template_runs_nothing(tmp_path: Path, source: str) -> None:
    marker = tmp_path / "pwned"
    with pytest.raises(TemplateError):
        ChatTemplate(source.replace("{marker}", str(marker))).render(user("hi"))
    assert not marker.exists()


def test_hostile_template_in_engine_gives_error_and_engine_recovers(models, tmp_path: Path) -> None:
    engine = Engine()
    engine.load_target(models.target)
    good = engine.prompts.template
    marker = tmp_path / "pwned"
    engine.prompts.template = ChatTemplate(HOSTILE[1].replace("{marker}", str(marker)))
    with pytest.raises(TemplateError, match="unsafe"):
        run(engine, messages=user("Hi"), max_tokens=3)
    assert not marker.exists()
    engine.prompts.template = good
    result, _ = run(engine, messages=user("Hi"), max_tokens=3)
    assert len(result.token_ids) == 3


def test_model_without_template_gets_chatml() -> None:
    text = ChatTemplate(None).render(user("hi"))
    assert text == "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"


@pytest.mark.parametrize(
    "messages,error",
    [([], "non-empty"), ([{"role": "robot", "content": "x"}], "role 'robot'"), ([{"role": "user"}], "no text")],
)
def test_bad_messages_are_rejected(pair_engine: Engine, messages: list, error: str) -> None:
    with pytest.raises(ValueError, match=error):
        run(pair_engine, messages=messages, max_tokens=2)


def test_an_empty_raw_prompt_is_refused_in_one_line(default_engine: Engine) -> None:
    """A raw prompt with no tokens (no BOS on this model) has nothing to continue from."""
    from desktop_app.engine.api import GenerateRequest
    from desktop_app.engine.errors import EmptyPromptError

    with pytest.raises(EmptyPromptError, match="empty"):
        list(default_engine.generate(GenerateRequest(prompt="", max_tokens=4)))
    finished, _ = run(default_engine, max_tokens=2)
    assert finished.stats.generated_tokens == 2  # still usable
