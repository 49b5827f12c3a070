"""Cell outputs' images as API image blocks: bounded in count and bytes, large ones downscaled.

The Messages API takes PNG, JPEG, GIF and WebP images, and scales any image whose long side
is over 1568 px down to that before the model sees it; sending it larger only costs bytes.
So a larger image is downscaled here first (with Pillow), and an image still over the byte
cap, of a type the API cannot take (SVG, PDF) or past the count is left out with a note.
"""

from __future__ import annotations

import base64
import binascii
import io
from dataclasses import dataclass, field
from typing import Any

from nbagent.core.tool import ToolResult

API_IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
"""The image media types the Messages API accepts."""

LONG_SIDE = 1568
"""Pixels of an image's long side beyond which the API scales it down anyway."""


@dataclass
class ImageBudget:
    """How many images, and how many bytes of them, one tool result may still carry."""

    count: int
    """Images one result carries at most."""
    image_bytes: int
    """The largest image sent, in bytes (before base64)."""
    blocks: list[dict[str, Any]] = field(default_factory=list)
    """The image blocks taken so far."""
    notes: list[str] = field(default_factory=list)
    """What was left out, and why."""

    def take(self, data: dict[str, Any], where: str) -> str | None:
        """Take the image of an output's data, if it has one.

        Args:
            data: The output's mime bundle.
            where: How the output is named in notes (e.g. ``cell ab12, output 2``).

        Returns:
            The line that stands in the text for the image (``[image 1: image/png, 640×480]``,
            or why it was left out), or None when the output has no image.
        """
        mime = next((m for m in API_IMAGE_TYPES if m in data), None)
        if mime is None:
            mime = next((m for m in data if m.startswith("image/") or m == "application/pdf"), None)
        if mime is None:
            return None
        if mime not in API_IMAGE_TYPES:
            return self._leave_out(f"{mime} output not sent: the API takes PNG, JPEG, GIF, WebP")
        if self.count <= len(self.blocks):
            most = f"{self.count} image{'s' if self.count != 1 else ''}"
            return self._leave_out(f"{mime} output not sent: one result carries {most} at most")
        try:
            raw = base64.b64decode(_joined(data[mime]), validate=False)
        except (binascii.Error, ValueError):
            return self._leave_out(f"{mime} output not sent: its data is not base64", where)
        raw, mime, size, note = fit(raw, mime, self.image_bytes)
        if raw is None:
            return self._leave_out(f"image not sent: {note}", where)
        self.blocks.append(
            {
                "type": "image",
                "source": {
                    "type": "base64",
                    "media_type": mime,
                    "data": base64.b64encode(raw).decode("ascii"),
                },
            }
        )
        return f"[image {len(self.blocks)}: {mime}, {size}{f', {note}' if note else ''}]"

    def _leave_out(self, reason: str, where: str = "") -> str:
        self.notes.append(f"{where}: {reason}" if where else reason)
        return f"[{reason}]"


def fit(raw: bytes, mime: str, max_bytes: int) -> tuple[bytes | None, str, str, str]:
    """Make an image fit what the API takes: its long side at most :data:`LONG_SIDE` pixels,
    its bytes at most ``max_bytes``.

    Args:
        raw: The image's bytes.
        mime: Its media type.
        max_bytes: The most bytes it may have.

    Returns:
        The bytes (None when it cannot be made to fit), their media type, the size as
        ``W×H`` (or ``N bytes`` without Pillow) and a note of what was done or went wrong.
    """
    try:
        from PIL import Image, UnidentifiedImageError
    except ImportError:
        size = f"{len(raw):,} bytes"
        if len(raw) > max_bytes:
            return None, mime, size, f"{size}, over {max_bytes:,}, and Pillow is not installed"
        return raw, mime, size, ""
    try:
        image = Image.open(io.BytesIO(raw))
        image.load()  # decode now: a truncated image fails here, not in the resize below
        width, height = image.size
    except Image.DecompressionBombError:
        return None, mime, "", "it has too many pixels to decode safely"
    except (UnidentifiedImageError, OSError, ValueError):
        return None, mime, "", f"it does not decode as {mime}"
    size = f"{width}×{height}"
    if max(width, height) <= LONG_SIDE and len(raw) <= max_bytes:
        return raw, mime, size, ""
    scale = min(1.0, LONG_SIDE / max(width, height))
    small = image.convert("RGBA" if image.mode in ("RGBA", "LA", "P") else "RGB")
    if scale < 1.0:
        small = small.resize((max(1, round(width * scale)), max(1, round(height * scale))))
    note = f"downscaled to {small.width}×{small.height}" if scale < 1.0 else ""
    for kind, options in (("PNG", {"optimize": True}), ("JPEG", {"quality": 85})):
        buffer = io.BytesIO()
        (small.convert("RGB") if kind == "JPEG" else small).save(buffer, kind, **options)
        if buffer.tell() <= max_bytes:
            mime = f"image/{kind.lower()}"
            return buffer.getvalue(), mime, size, note or f"re-encoded as {mime}"
    return None, mime, size, f"{size} does not fit in {max_bytes:,} bytes"


def _joined(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def with_images(text: str, images: ImageBudget) -> str | ToolResult:
    """A tool's text, followed by the images it took as image blocks (the text alone without).

    Args:
        text: The text, naming each image where it belongs (``[image 1: ...]``).
        images: The images taken.
    """
    if not images.blocks:
        return text
    return ToolResult(content=[{"type": "text", "text": text}, *images.blocks])
