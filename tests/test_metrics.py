"""Every metric function against values computed by hand (in the comments)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from memsynth.quality.evaluation.emotional import cosine_distance, emotion_distance_at, euclidean, rank
from memsynth.quality.evaluation.ranking import (
    mean,
    ndcg_at,
    precision_at,
    ranking_scores,
    recall_at,
    type_match,
)
from memsynth.quality.evaluation.strategic import (
    cir,
    majority,
    must_pass,
    pes,
    ratios,
    scenario,
    smc,
    smc_table,
)
from memsynth.quality.evaluation.text import best_bleu, bleu, bleu_tokens, scaled, selection_score, tokens


def test_ranking_metrics_with_one_golden_memory():
    ranked = ["a", "b", "c", "d"]
    assert recall_at(ranked, {"c"}, 1) == 0 and recall_at(ranked, {"c"}, 3) == 1
    assert precision_at(ranked, {"c"}, 3) == pytest.approx(1 / 3)
    assert ndcg_at(ranked, {"c"}, 3) == pytest.approx(0.5)  # 1 / log2(3 + 1)
    assert ndcg_at(ranked, {"c"}, 1) == 0
    # Table 2's shape: with one golden memory, R@1 = P@1 = nDCG@1 and P@k = R@k / k.
    scores = ranking_scores(["g", "x"], {"g"}, (1, 10))
    assert scores["recall@1"] == scores["precision@1"] == scores["ndcg@1"] == 1
    assert scores["precision@10"] == pytest.approx(0.1)


def test_ndcg_with_two_relevant_and_an_empty_pool():
    # (1 + 1/log2 5) / (1 + 1/log2 3) = 1.430677 / 1.630930
    assert ndcg_at(["a", "b", "c", "d"], {"a", "d"}, 4) == pytest.approx(0.877215, abs=1e-6)
    assert recall_at([], {"a"}, 5) == precision_at([], {"a"}, 5) == ndcg_at([], {"a"}, 5) == 0
    assert recall_at(["a"], set(), 1) == 0 and ndcg_at(["a"], set(), 1) == 0
    assert mean([]) is None and mean([1, 0, 0, 1]) == 0.5


def test_type_match_rate():
    fits = lambda category, need: (need, category) in {("PN", "preference"), ("SA", "goal")}  # noqa: E731
    assert type_match("goal", "SA", fits) == 1 and type_match("goal", "PN", fits) == 0
    assert type_match(None, "SA", fits) == 0


def test_emotional_distances():
    assert euclidean([0, 0], np.array([[3, 4]])).tolist() == [5.0]
    got = cosine_distance([1, 0], np.array([[1, 0], [0, 1], [1, 1], [0, 0]]))
    assert got == pytest.approx([0.0, 1.0, 1 - 1 / math.sqrt(2), 1.0])


def test_the_four_emotional_rag_strategies_and_their_ties():
    semantic, emotion = [2, 5, 1, 4], [3, 0, 6, 1]
    assert rank("semantic", semantic, emotion) == [2, 0, 3, 1]
    assert rank("emotion", semantic, emotion) == [1, 3, 0, 2]
    assert rank("C-A", semantic, emotion) == [0, 1, 3, 2]  # sums 5, 5, 7, 5: ties keep bank order
    assert rank("C-M", semantic, emotion) == [1, 3, 0, 2]  # products 6, 0, 6, 4
    # Semantic first: the 2 closest by meaning (2, 0), re-ranked by emotion (3 < 6).
    assert rank("S-S", semantic, emotion, first_k=2) == [0, 2]
    # Emotion first: the 2 closest by emotion (1, 3), re-ranked by meaning (4 < 5).
    assert rank("S-E", semantic, emotion, first_k=2) == [3, 1]
    assert rank("C-A", [], []) == []
    with pytest.raises(ValueError):
        rank("X-Y", semantic, emotion)


def test_smc_follows_each_scenarios_rule():
    assert scenario({"must": [True], "irr": [False]}) == "A"
    assert smc({"must": [True, True], "irr": [False, False]}) == 1
    assert smc({"must": [True, False], "irr": [False]}) == 0  # a must memory left out
    assert smc({"must": [True], "irr": [True]}) == 0  # an irrelevant one brought in
    assert smc({"nice": [False, True], "irr": [False]}) == 1
    assert smc({"nice": [False, False], "irr": [False]}) == 0
    assert smc({"must": [True], "nice": [False, True], "irr": [False]}) == 1
    assert smc({"must": [True], "nice": [False, False], "irr": [False]}) == 0
    assert smc({"must": [True], "nice": [True]}) == 1  # no irr in the pool
    assert ratios({"must": [True, False], "nice": []}) == {"must": 0.5, "nice": None, "irr": None}
    with pytest.raises(ValueError):
        scenario({"irr": [True]})


def test_smc_table_pes_and_cir():
    a1 = {"must": [True], "irr": [False]}  # SMC 1
    a2 = {"must": [False], "irr": [False]}  # SMC 0
    b1 = {"nice": [False, True], "irr": [False]}  # SMC 1, enriched, no irr
    b2 = {"nice": [False, False], "irr": [True]}  # SMC 0, not enriched, irr used
    c1 = {"must": [True], "nice": [True, False], "irr": [False]}  # SMC 1, enriched
    c2 = {"must": [True], "nice": [False, False], "irr": [False]}  # SMC 0, must passed, not enriched
    c3 = {"must": [False], "nice": [True], "irr": [True]}  # SMC 0, must failed: outside PES
    every = [a1, a2, b1, b2, c1, c2, c3]
    table = smc_table(every)
    assert table["must-only"] == 0.5 and table["nice-only"] == 0.5
    assert table["must+nice"] == pytest.approx(1 / 3)
    # Overall: 3 passes of 7 = (2·0.5 + 2·0.5 + 3·1/3) / 7, the scenario figures weighted.
    assert table["all"] == pytest.approx(3 / 7)
    assert [must_pass(u) for u in every] == [False, False, True, True, True, True, False]
    assert pes(every) == 0.5  # b1 and c1 of b1, b2, c1, c2
    assert cir(every) == 0.4  # b2 and c3 of the five pools with a nice memory
    assert pes([a1]) is None and cir([a1]) is None
    assert smc_table([]) == {"must-only": None, "nice-only": None, "must+nice": None, "all": None}


def test_majority_of_three_judge_runs():
    assert majority([True, False, True]) and not majority([True, False, False])
    assert majority([True, True, True]) and not majority([])


def test_bleu_by_hand_as_the_seeds_code_computes_it_in_english():
    # jieba keeps the spaces and the full stop: The, ' ', cat, ' ', ran, '.' against The, ' ', cat, ' ', sat, '.'.
    ref, hyp = "The cat sat.", "The cat ran."
    assert bleu_tokens(hyp) == ["The", " ", "cat", " ", "ran", "."]
    # unigrams 5/6 (the two spaces and the stop count), bigrams 3/5, trigrams 2/4, 4-grams 1/3; same length.
    assert bleu([ref], hyp, 1, "en") == pytest.approx(100 * 5 / 6)
    assert bleu([ref], hyp, 2, "en") == pytest.approx(100 * math.sqrt(5 / 6 * 3 / 5))
    assert bleu([ref], hyp, 3, "en") == pytest.approx(100 * math.exp(0.33 * math.log(5 / 6 * 3 / 5 * 2 / 4)))
    assert bleu([ref], hyp, 4, "en") == pytest.approx(100 * (5 / 6 * 3 / 5 * 2 / 4 * 1 / 3) ** 0.25)
    assert bleu(["a b"], "", 1, "en") == 0
    assert best_bleu(["dogs run", "the cat sat"], "the cat sat", 3, "en") == pytest.approx(100)


def test_bleu_by_hand_as_the_seeds_code_computes_it_in_chinese():
    ref, hyp = "我喜欢猫。", "我喜欢狗。"
    assert bleu_tokens(hyp) == ["我", "喜欢", "狗", "。"]
    assert bleu([ref], hyp, 1, "zh") == pytest.approx(75)  # 我, 喜欢, 。 of 4
    assert bleu([ref], hyp, 2, "zh") == pytest.approx(100 * math.sqrt(3 / 4 * 1 / 3))
    # No trigram matches: method1 counts it as 0.1 of the 2 trigrams.
    assert bleu([ref], hyp, 3, "zh") == pytest.approx(100 * math.exp(0.33 * math.log(3 / 4 * 1 / 3 * 0.1 / 2)))
    # A shorter hypothesis pays the brevity penalty exp(1 - 4/2): 我, 喜欢 both match.
    assert bleu([ref], "我喜欢", 1, "zh") == pytest.approx(100 * math.exp(1 - 4 / 2))


def test_retrieval_still_reads_words_without_punctuation():
    assert tokens("我今天很开心。", "zh") == ["我", "今天", "很", "开心"]


def test_selection_score_and_scaling():
    feedback = {0: "pos", 1: "pos", 2: "neg", 3: "neg", 4: "neu"}
    assert selection_score([0, 1], feedback) == 2
    assert selection_score([0, 3], feedback) == 0
    assert selection_score([2, 2], feedback) == -1  # one candidate counts once
    assert selection_score([4, 7], feedback) == 0
    assert scaled([2, 0, -2, -1], 2) == -12.5  # mean -0.25 of a best of 2
    assert scaled([2, 1.5, 0.5], 2) == pytest.approx(200 / 3)
    assert scaled([], 2) is None


def test_emotion_distance_at_k_is_the_mean_cosine_distance_of_the_first_k():
    query = [1, 0, 0, 0, 0, 0, 0, 0]
    ranked = [[2, 0, 0, 0, 0, 0, 0, 0], [0, 3, 0, 0, 0, 0, 0, 0], [1, 1, 0, 0, 0, 0, 0, 0]]
    assert emotion_distance_at(query, ranked, 1) == pytest.approx(0.0)
    assert emotion_distance_at(query, ranked, 2) == pytest.approx(0.5)  # (0 + 1) / 2
    assert emotion_distance_at(query, ranked, 10) == pytest.approx((0 + 1 + (1 - 1 / math.sqrt(2))) / 3)
    assert emotion_distance_at(query, [], 3) is None
