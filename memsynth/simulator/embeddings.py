"""The simulator's embeddings: deterministic vectors in which texts sharing words lie close."""

from __future__ import annotations

import hashlib
import re

EMBEDDING_DIMENSIONS = 256
_WORD = re.compile(r"[a-z0-9']+")


def embedding_of(text: str) -> list[float]:
    """A unit vector of hashed features: lower-cased words, and each CJK character and
    character pair, so texts that share words (or characters) are close in cosine and
    Euclidean distance, as a real embedding model's would tend to be."""
    lowered = text.lower()
    features = _WORD.findall(lowered)
    han = [ch for ch in lowered if "\u4e00" <= ch <= "\u9fff"]
    features += han + [a + b for a, b in zip(han, han[1:])]
    vector = [0.0] * EMBEDDING_DIMENSIONS
    for feature in features or [text]:
        digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
        slot = int.from_bytes(digest[:4], "big") % EMBEDDING_DIMENSIONS
        vector[slot] += 1.0 if digest[4] & 1 else -1.0
    norm = sum(x * x for x in vector) ** 0.5 or 1.0
    return [round(x / norm, 6) for x in vector]
