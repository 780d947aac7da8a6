"""Text the trail stores and hashes: any string UTF-8 can hold.

Apart from models.py so that the trail's api (which other domains, the log among them, import)
does not load the models, which import the log's api: the two domains would wait on each other.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, StrictStr


def _encodable(text: str) -> str:
    """Lone UTF-16 surrogates cannot be stored or hashed as UTF-8 (the stdio transport already
    refuses them; another transport may not)."""
    try:
        text.encode()
    except UnicodeEncodeError as exc:
        raise ValueError(
            f"text contains an unpaired surrogate at position {exc.start}; send valid Unicode text"
        ) from None
    return text


Text = Annotated[StrictStr, AfterValidator(_encodable)]
