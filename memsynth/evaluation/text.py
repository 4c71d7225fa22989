"""Text metrics for PAL-Bench (seed 004 §5): BLEU after jieba segmentation for Chinese
(NLTK's `sentence_bleu`, as the authors did), and the solution-selection S-Score."""

from __future__ import annotations

import logging
import re
import warnings
from collections.abc import Mapping, Sequence

_LATIN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def tokens(text: str, language: str) -> list[str]:
    """Words: jieba's segmentation for zh (punctuation and spaces dropped), lower-cased
    alphanumeric runs for en."""
    if language == "zh":
        import jieba

        jieba.setLogLevel(logging.WARNING)
        return [t for t in jieba.lcut(text) if t.strip() and not _is_punct(t)]
    return _LATIN.findall(text.lower())


def _is_punct(token: str) -> bool:
    return all(not ch.isalnum() for ch in token)


def bleu(references: Sequence[str], hypothesis: str, n: int, language: str) -> float:
    """Cumulative BLEU-n (uniform weights over 1..n grams) of `hypothesis` against the
    references, in 0–100; NLTK's default (no smoothing), so a missing n-gram order is 0."""
    from nltk.translate.bleu_score import sentence_bleu

    refs = [tokens(r, language) for r in references]
    hyp = tokens(hypothesis, language)
    if not hyp or not any(refs):
        return 0.0
    with warnings.catch_warnings():  # NLTK warns on every zero-count order
        warnings.simplefilter("ignore")
        return 100.0 * float(sentence_bleu(refs, hyp, weights=tuple([1.0 / n] * n)))


def best_bleu(references: Sequence[str], hypothesis: str, n: int, language: str) -> float:
    """The higher BLEU-n against each reference alone (solution generation: the two liked
    solutions, max of the two)."""
    return max((bleu([r], hypothesis, n, language) for r in references), default=0.0)


def selection_score(selected: Sequence[int], feedback: Mapping[int, str]) -> int:
    """S-Score of one pick: +1 per liked (pos), −1 per disliked (neg), 0 otherwise; each
    candidate counts once, however often it is named."""
    return sum({"pos": 1, "neg": -1}.get(feedback.get(i, ""), 0) for i in dict.fromkeys(selected))


def scaled(values: Sequence[float], maximum: float) -> float | None:
    """The mean of per-item scores whose best is `maximum`, as a share of it × 100: the
    restatement judge's 0–2 becomes 0–100, the S-Score's −2…2 becomes −100…100."""
    return 100.0 * sum(values) / len(values) / maximum if values else None
