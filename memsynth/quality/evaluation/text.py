"""Text metrics for PAL-Bench (seed 004 §5): BLEU exactly as the authors' evaluation code
computes it, and the solution-selection S-Score."""

from __future__ import annotations

import re
import warnings
from collections.abc import Mapping, Sequence

from memsynth.core.textmatch import jieba_module

_LATIN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def tokens(text: str, language: str) -> list[str]:
    """Words: jieba's segmentation for zh (punctuation and spaces dropped), lower-cased
    alphanumeric runs for en."""
    if language == "zh":
        return [t for t in jieba_module().lcut(text) if t.strip() and not _is_punct(t)]
    return _LATIN.findall(text.lower())


def _is_punct(token: str) -> bool:
    return all(not ch.isalnum() for ch in token)


# The authors' cumulative weights, as written there (BLEU-3 is 0.33 each, not a third).
BLEU_WEIGHTS = {1: (1, 0, 0, 0), 2: (0.5, 0.5, 0, 0), 3: (0.33, 0.33, 0.33, 0), 4: (0.25, 0.25, 0.25, 0.25)}


def bleu_tokens(text: str) -> list[str]:
    """What the authors' BLEU counts: every token `jieba.cut` returns, in any language,
    punctuation and spaces included."""
    return list(jieba_module().cut(text))


def bleu(references: Sequence[str], hypothesis: str, n: int, language: str = "zh") -> float:
    """BLEU-n of `hypothesis` against the references in 0–100, as PAL-Bench's code scores it:
    jieba tokens (`bleu_tokens`), NLTK's `sentence_bleu` with `SmoothingFunction().method1` and
    the cumulative weights `BLEU_WEIGHTS[n]`. `language` is accepted for symmetry: the authors
    tokenise every language the same way."""
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    refs = [bleu_tokens(r) for r in references]
    hyp = bleu_tokens(hypothesis)
    if not hyp or not any(refs):
        return 0.0
    with warnings.catch_warnings():  # NLTK warns when an order has no n-grams at all
        warnings.simplefilter("ignore")
        return 100.0 * float(sentence_bleu(refs, hyp, weights=BLEU_WEIGHTS[n],
                                           smoothing_function=SmoothingFunction().method1))


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
