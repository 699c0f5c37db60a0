"""Images a message carries, decoded safely: the one place their limits are declared.

An image arrives as an encoded file (PNG, JPEG, WebP, GIF, BMP). Its header is read first and
one larger than :data:`MAX_IMAGE_PIXELS` is refused before any pixel is decoded, so a small file
that would decode to gigabytes (a decompression bomb) costs nothing. A vision model sees images
at a few hundred pixels a side, so a decoded image is scaled to at most :data:`MAX_IMAGE_SIDE`
before it reaches the model. Used by the engine (the last guard) and by the window and the API,
which refuse a bad image in one line before it is sent (:mod:`desktop_app.documents`).
"""

from __future__ import annotations

import io
import warnings
from dataclasses import dataclass

from desktop_app.engine.errors import EngineError

MAX_IMAGE_BYTES = 20 * 2**20  # an encoded image file (OpenAI's own limit for an image part)
MAX_IMAGE_PIXELS = 40_000_000  # width x height, read from the header before decoding (8,000 x 5,000)
MAX_IMAGE_SIDE = 2048  # the longest side handed to the model's projector, after scaling
IMAGE_FORMATS = {"PNG": "image/png", "JPEG": "image/jpeg", "WEBP": "image/webp", "GIF": "image/gif", "BMP": "image/bmp"}


class ImageError(EngineError):
    """An image that cannot be used; its message says why in one line."""


@dataclass(frozen=True)
class ImageHeader:
    mime: str
    width: int
    height: int


@dataclass(frozen=True)
class RgbImage:
    width: int
    height: int
    pixels: bytes  # width x height x 3, row by row


def read_header(data: bytes) -> ImageHeader:
    """The image's format and size from its header alone; ImageError for a file that is too
    large, not an image, of another format, or of more than MAX_IMAGE_PIXELS."""
    from PIL import Image, UnidentifiedImageError

    if len(data) > MAX_IMAGE_BYTES:
        raise ImageError(
            f"the image is {len(data) / 2**20:,.1f} MB, more than the {MAX_IMAGE_BYTES // 2**20} MB allowed"
        )
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with Image.open(io.BytesIO(data)) as im:
                fmt, (width, height) = im.format or "", im.size
    except Image.DecompressionBombError:  # Pillow's own guard, far above ours
        raise ImageError(f"the image has more than the {MAX_IMAGE_PIXELS:,} pixels allowed: scale it down") from None
    except (UnidentifiedImageError, OSError, ValueError):
        raise ImageError("it is not an image SpecChat can read (PNG, JPEG, WebP, GIF or BMP)") from None
    if fmt not in IMAGE_FORMATS:
        raise ImageError(f"{fmt or 'this'} images are not supported: use PNG, JPEG, WebP, GIF or BMP")
    if width * height > MAX_IMAGE_PIXELS:
        raise ImageError(
            f"the image is {width:,} x {height:,} pixels, more than the {MAX_IMAGE_PIXELS:,} allowed: scale it down"
        )
    return ImageHeader(IMAGE_FORMATS[fmt], width, height)


def decode_rgb(data: bytes) -> RgbImage:
    """The image's pixels as RGB, its longest side scaled to at most MAX_IMAGE_SIDE (the header
    checked first: :func:`read_header`)."""
    from PIL import Image

    read_header(data)
    try:
        with Image.open(io.BytesIO(data)) as im:
            im.draft("RGB", (MAX_IMAGE_SIDE, MAX_IMAGE_SIDE))  # JPEG: decode at a reduced scale
            rgb = im.convert("RGB")
    except (OSError, ValueError, Image.DecompressionBombError) as e:
        raise ImageError(f"the image could not be decoded ({e})") from None
    if max(rgb.size) > MAX_IMAGE_SIDE:
        rgb.thumbnail((MAX_IMAGE_SIDE, MAX_IMAGE_SIDE))
    return RgbImage(rgb.width, rgb.height, rgb.tobytes())
