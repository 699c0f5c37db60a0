"""Images in the engine: a vision model (the factory's text model and its projector, built by
tests/factory_vision.py) answers about an image through llama.cpp's mtmd; each image's positions
hold placeholder ids of their own, so two images never share a cached prefix or a saved prompt
state; speculation on such a prompt gives the plain answer; bad images and a model that cannot
see are refused in one line."""

from __future__ import annotations

import io
import shutil
import struct
import threading
import zlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from desktop_app.engine import Engine
from desktop_app.engine.api import DrafterKind, GenerateRequest, ModelOptions, SamplingParams, SpecMode
from desktop_app.engine.errors import EngineError, ModelLoadError
from desktop_app.engine.events import Finished, final_result
from desktop_app.engine.images import ImageError
from desktop_app.engine.messages import IMAGE_MARKER, Message
from desktop_app.engine_process.client import EngineLost, EngineProcess
from desktop_app.engine_process.protocol import AutoPlan, Done, EngineEvent, Failed, Load, Pieces
from tests.cli_run import specchat
from tests.factory_vision import IMAGE_TOKENS, VisionModel, write_mmproj

GREEDY = SamplingParams(temperature=0.0)
QUESTION = "Describe this picture in a few words."


def png(seed: int, size: tuple[int, int] = (40, 30)) -> bytes:
    """A PNG of seeded random pixels."""
    pixels = np.random.default_rng(seed).integers(0, 256, (size[1], size[0], 3), dtype=np.uint8)
    out = io.BytesIO()
    Image.fromarray(pixels).save(out, "PNG")
    return out.getvalue()


def png_bomb(width: int = 30_000, height: int = 30_000) -> bytes:
    """A few hundred bytes whose header claims 900 million pixels (a decompression bomb)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    rows = zlib.compress(b"\0" * 4096)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", rows) + chunk(b"IEND", b"")


def with_image(image: bytes, text: str = QUESTION, before: list[Message] | None = None) -> list[Message]:
    return [*(before or []), {"role": "user", "content": f"{text}\n{IMAGE_MARKER}", "images": [image]}]


def answer(engine: Engine, messages: list[Message], **kwargs: object) -> Finished:
    request = GenerateRequest(messages=messages, max_tokens=kwargs.pop("max_tokens", 16), sampling=GREEDY, **kwargs)  # type: ignore[arg-type]
    return final_result(engine.generate(request))


@pytest.fixture(scope="module")
def vision_engine(vision_model: VisionModel) -> Iterator[Engine]:
    engine = Engine()
    engine.load_target(vision_model.model, ModelOptions(n_batch=64))  # a small batch: the prompt cache's threshold
    yield engine
    engine.close()


def test_the_projector_beside_the_model_is_found_and_named(vision_engine: Engine) -> None:
    assert vision_engine.loaded().target.projector == "mmproj-vision-target.gguf"


def test_an_image_is_answered_and_two_images_are_told_apart(vision_engine: Engine) -> None:
    first = answer(vision_engine, with_image(png(1)))
    other = answer(vision_engine, with_image(png(2)))
    again = answer(vision_engine, with_image(png(1)))
    assert first.text and first.stats.finish_reason is not None
    assert other.token_ids != first.token_ids  # the model saw another image
    assert again.token_ids == first.token_ids  # and the first one again, not the second's cache
    # the prompt holds the image's positions; the second image's prompt kept the text before it
    # and read the image and what follows it again
    assert first.stats.prompt_tokens > IMAGE_TOKENS
    assert IMAGE_TOKENS <= other.stats.prompt_tokens_new < first.stats.prompt_tokens


def test_two_images_get_placeholders_of_their_own_that_are_never_vocabulary(vision_engine: Engine) -> None:
    prompts = []
    for seed in (1, 2):
        prompt, _ = vision_engine.build_prompt(GenerateRequest(messages=with_image(png(seed))))
        prompts.append(prompt)
    images = [[t for t in prompt if t < 0] for prompt in prompts]
    assert all(len(ids) == IMAGE_TOKENS for ids in images)
    assert set(images[0]).isdisjoint(images[1])  # another image, other ids
    assert [t for t in prompts[0] if t >= 0] == [t for t in prompts[1] if t >= 0]  # the same text around them


def test_the_prompt_cache_restores_each_image_s_own_state(vision_model: VisionModel) -> None:
    engine = Engine()
    engine.load_target(vision_model.model, ModelOptions(n_batch=32))
    try:

        def asking(seed: int) -> list[Message]:  # an image, then a question long enough to be worth a restore
            return [{"role": "user", "content": f"{IMAGE_MARKER}\n{QUESTION * 6}", "images": [png(seed)]}]

        fresh = {seed: answer(engine, asking(seed)) for seed in (3, 4)}
        store = engine.target.prompt_store  # type: ignore[union-attr]
        before = store.restored
        for seed in (3, 4, 3):
            again = answer(engine, asking(seed))
            assert again.token_ids == fresh[seed].token_ids
            assert again.stats.prompt_tokens_new < IMAGE_TOKENS  # its image came back from the store
        assert store.restored - before == 3
    finally:
        engine.close()


def test_count_includes_the_image_tokens(vision_engine: Engine) -> None:
    text_only = vision_engine.count_prompt(GenerateRequest(messages=[{"role": "user", "content": QUESTION + "\n"}]))
    seen = vision_engine.count_prompt(GenerateRequest(messages=with_image(png(5))))
    prompt, _ = vision_engine.build_prompt(GenerateRequest(messages=with_image(png(5))))
    assert seen.tokens == len(prompt)
    assert seen.tokens - text_only.tokens >= IMAGE_TOKENS


@pytest.mark.parametrize("drafter", [DrafterKind.MODEL, DrafterKind.NGRAM, None])
def test_speculation_on_a_prompt_with_an_image_gives_the_plain_answer(
    vision_model: VisionModel, models, drafter: DrafterKind | None
) -> None:
    engine = Engine()
    engine.load_target(vision_model.model)
    engine.load_draft(models.draft)  # the factory draft: the vision model's text half is the factory target
    try:
        # the question quotes a passage the answer may copy: prompt lookup finds drafts in the text
        passage = "the red fox jumps over the lazy dog and runs into the forest " * 3
        messages = with_image(png(6), text=f"Repeat: {passage}")
        plain = answer(engine, messages, max_tokens=40, spec=SpecMode.OFF)
        spec = SpecMode.AUTO if drafter is None else SpecMode.ON
        fast = answer(engine, messages, max_tokens=40, spec=spec, drafter=drafter)
        assert fast.token_ids == plain.token_ids
        if drafter is DrafterKind.MODEL:
            assert fast.stats.accepted > 0  # the draft model drafted from the text and was right
    finally:
        engine.close()


def test_a_draft_never_proposes_an_image_s_placeholder(vision_engine: Engine) -> None:
    # the answer goes on from the words the image follows in the question: prompt lookup's copy
    # of what followed them there runs into the image's placeholders
    words = "Look at the picture below, please"
    messages: list[Message] = [
        {"role": "user", "content": f"{words}{IMAGE_MARKER}", "images": [png(7)]},
        {"role": "assistant", "content": f"Sure. {words}"},
    ]
    result = answer(
        vision_engine, messages, max_tokens=8, spec=SpecMode.ON, drafter=DrafterKind.NGRAM, continue_answer=True
    )
    assert result.token_ids and all(t >= 0 for t in result.token_ids)


def test_a_model_without_a_projector_refuses_images_in_one_line(models) -> None:
    engine = Engine()
    engine.load_target(models.target)
    try:
        assert engine.loaded().target.projector == ""
        with pytest.raises(EngineError) as caught:
            answer(engine, with_image(png(1)))
        message = str(caught.value)
        assert "\n" not in message and message.startswith("target cannot see images: no vision projector (mmproj)")
        assert answer(engine, [{"role": "user", "content": "Hi"}], max_tokens=2).token_ids  # text still works
    finally:
        engine.close()


def test_a_decompression_bomb_is_refused_in_one_line(vision_engine: Engine) -> None:
    with pytest.raises(ImageError) as caught:
        answer(vision_engine, with_image(png_bomb()))
    message = str(caught.value)
    assert "\n" not in message and "image 1 of message 1" in message and "40,000,000 pixels allowed" in message


def test_markers_must_match_the_images(vision_engine: Engine) -> None:
    with pytest.raises(EngineError, match="1 image.* but 2 image marker"):
        answer(vision_engine, [{"role": "user", "content": f"{IMAGE_MARKER}{IMAGE_MARKER}", "images": [png(1)]}])


def test_the_projector_that_fits_is_chosen_and_one_can_be_named(vision_model: VisionModel, tmp_path: Path) -> None:
    folder = tmp_path / "models"
    folder.mkdir()
    model = Path(shutil.copy(vision_model.model, folder / "vision.gguf"))
    write_mmproj(folder / "mmproj-a-narrow.gguf", n_embd_out=32)  # first by name, but 32 wide: not this model's
    shutil.copy(vision_model.mmproj, folder / "mmproj-b.gguf")
    engine = Engine()
    try:
        assert engine.load_target(model).projector == "mmproj-b.gguf"
        elsewhere = tmp_path / "alone"
        elsewhere.mkdir()
        alone = Path(shutil.copy(vision_model.model, elsewhere / "vision.gguf"))
        assert engine.load_target(alone).projector == ""
        assert engine.load_target(alone, ModelOptions(mmproj=vision_model.mmproj)).projector == vision_model.mmproj.name
        with pytest.raises(ModelLoadError, match="could not load the vision projector mmproj-a-narrow.gguf"):
            engine.load_target(alone, ModelOptions(mmproj=folder / "mmproj-a-narrow.gguf"))
    finally:
        engine.close()


def test_the_projector_named_after_the_model_is_chosen_before_others_that_fit(
    vision_model: VisionModel, tmp_path: Path
) -> None:
    # a flat models folder where two vision models' projectors sit: both fit this model's width,
    # and the other one comes first by name; the catalog saves each as mmproj-<model stem>.gguf
    model = Path(shutil.copy(vision_model.model, tmp_path / "vision.gguf"))
    shutil.copy(vision_model.mmproj, tmp_path / "mmproj-another-model.gguf")
    write_mmproj(tmp_path / "mmproj-vision.gguf", seed=7)
    engine = Engine()
    try:
        assert engine.load_target(model).projector == "mmproj-vision.gguf"
    finally:
        engine.close()


def test_an_image_goes_through_the_engine_process(vision_model: VisionModel) -> None:
    engine = EngineProcess()
    try:
        loaded = engine.load_and_wait(Load(str(vision_model.model), plan=AutoPlan(measure=False)), timeout=300)
        assert loaded.target.projector == vision_model.mmproj.name
        results: list[EngineEvent | EngineLost] = []
        ended = threading.Event()
        texts: list[str] = []

        def sink(event: EngineEvent | EngineLost) -> None:
            if isinstance(event, Pieces):
                texts.extend(t for t, _ in event.pieces)
            if isinstance(event, Done | Failed | EngineLost):
                results.append(event)
                ended.set()

        request = GenerateRequest(messages=with_image(png(1)), max_tokens=8, sampling=GREEDY)
        engine.generate(request, sink)
        assert ended.wait(120)
        (done,) = results
        assert isinstance(done, Done) and done.text and "".join(texts) == done.text
        ended.clear()
        engine.generate(GenerateRequest(messages=with_image(png_bomb()), max_tokens=8), sink)
        assert ended.wait(120)
        bomb = results[-1]  # refused as the request's fault, in one line, and the engine lives on
        assert isinstance(bomb, Failed) and bomb.user_error and "40,000,000 pixels allowed" in bomb.message
        assert "\n" not in bomb.message
        local = Engine()
        local.load_target(vision_model.model)
        try:  # the image crossed the pipe whole: the same answer as in this process
            assert done.text == answer(local, with_image(png(1)), max_tokens=8).text
        finally:
            local.close()
    finally:
        engine.shutdown()


def test_the_command_line_names_a_projector(vision_model: VisionModel, tmp_path: Path) -> None:
    model = Path(shutil.copy(vision_model.model, tmp_path / "vision.gguf"))  # alone: no projector beside it
    narrow = write_mmproj(tmp_path / "narrow.gguf", n_embd_out=32)
    common = ("generate", "--target", str(model), "--prompt", "Hi", "--max-tokens", "2")
    wrong = specchat(*common, "--mmproj", str(narrow))
    assert wrong.returncode != 0 and "could not load the vision projector narrow.gguf" in wrong.stderr
    assert specchat(*common, "--mmproj", str(vision_model.mmproj)).returncode == 0


def test_an_image_read_in_tiles_is_read_slice_by_slice(vision_model: VisionModel, tmp_path: Path) -> None:
    model = Path(shutil.copy(vision_model.model, tmp_path / "vision.gguf"))
    write_mmproj(tmp_path / "mmproj-tiles.gguf", tiles=True)  # an overview and 2 x 2 tiles for a large image
    engine = Engine()
    engine.load_target(model, ModelOptions(n_batch=32))
    try:
        large = png(8, size=(80, 60))
        prompt, _ = engine.build_prompt(GenerateRequest(messages=with_image(large)))
        assert sum(1 for t in prompt if t < 0) == 5 * IMAGE_TOKENS
        first = answer(engine, with_image(large))
        answer(engine, with_image(png(9, size=(80, 60))))
        again = answer(engine, with_image(large))
        assert first.token_ids == again.token_ids and first.stats.prompt_tokens == len(prompt)
    finally:
        engine.close()
