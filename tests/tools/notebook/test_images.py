"""Image outputs as API image blocks: the count, the bytes, the size and the types the API takes."""

from __future__ import annotations

import base64
import io

from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from nbagent.tools.notebook.images import LONG_SIDE, ImageBudget, fit


def png(width: int, height: int, noise: bool = False) -> bytes:
    image = Image.effect_noise((width, height), 64) if noise else Image.new("RGB", (width, height))
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()


def bundle(raw: bytes, mime: str = "image/png") -> dict[str, str]:
    return {"text/plain": "<Figure>", mime: base64.b64encode(raw).decode()}


def test_a_small_figure_goes_as_it_is() -> None:
    raw = png(640, 480)
    budget = ImageBudget(count=4, image_bytes=3_750_000)
    assert budget.take(bundle(raw), "cell a, output 1") == "[image 1: image/png, 640×480]"
    assert budget.blocks == [
        {
            "type": "image",
            "source": {
                "type": "base64",
                "media_type": "image/png",
                "data": bundle(raw)["image/png"],
            },
        }
    ]


def test_a_figure_of_8000_by_8000_is_downscaled_to_what_the_model_sees() -> None:
    budget = ImageBudget(count=4, image_bytes=3_750_000)
    said = budget.take(bundle(png(8000, 8000)), "cell a, output 1")
    assert said == f"[image 1: image/png, 8000×8000, downscaled to {LONG_SIDE}×{LONG_SIDE}]"
    sent = base64.b64decode(budget.blocks[0]["source"]["data"])
    assert Image.open(io.BytesIO(sent)).size == (LONG_SIDE, LONG_SIDE)


def test_an_image_over_the_byte_cap_is_re_encoded_or_left_out() -> None:
    noisy = png(1500, 1500, noise=True)
    assert len(noisy) > 2_000_000
    raw, mime, size, note = fit(noisy, "image/png", 2_000_000)
    assert raw is not None and len(raw) <= 2_000_000 and mime == "image/jpeg"
    assert (size, note) == ("1500×1500", "re-encoded as image/jpeg")
    assert fit(noisy, "image/png", 1_000)[0] is None


def test_what_the_api_cannot_take_is_named_not_sent() -> None:
    budget = ImageBudget(count=1, image_bytes=3_750_000)
    svg = {"image/svg+xml": "<svg/>", "text/plain": "<Figure>"}
    assert budget.take(svg, "cell a, output 1") == (
        "[image/svg+xml output not sent: the API takes PNG, JPEG, GIF, WebP]"
    )
    assert budget.take({"application/pdf": "JVBERi0="}, "x") == (
        "[application/pdf output not sent: the API takes PNG, JPEG, GIF, WebP]"
    )
    assert budget.take({"text/plain": "42"}, "x") is None
    assert budget.take(bundle(b"not an image"), "cell b, output 2") == (
        "[image not sent: it does not decode as image/png]"
    )
    assert budget.take(bundle(png(10, 10)), "x") == "[image 1: image/png, 10×10]"
    assert budget.take(bundle(png(10, 10)), "x") == (
        "[image/png output not sent: one result carries 1 image at most]"
    )
    assert len(budget.blocks) == 1 and len(budget.notes) == 4


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 5000), st.integers(1, 5000))
def test_whatever_the_size_what_is_sent_fits(width: int, height: int) -> None:
    raw, _, _, _ = fit(png(width, height), "image/png", 3_750_000)
    assert raw is not None and len(raw) <= 3_750_000
    assert max(Image.open(io.BytesIO(raw)).size) <= max(LONG_SIDE, 1)


def test_a_png_beside_an_svg_is_sent_and_a_truncated_one_named() -> None:
    budget = ImageBudget(count=4, image_bytes=3_750_000)
    both = {**bundle(png(40, 30)), "image/svg+xml": "<svg/>"}
    assert budget.take(both, "x") == "[image 1: image/png, 40×30]"
    truncated = png(2000, 2000, noise=True)[:5000]
    assert budget.take(bundle(truncated), "cell c, output 1") == (
        "[image not sent: it does not decode as image/png]"
    )
