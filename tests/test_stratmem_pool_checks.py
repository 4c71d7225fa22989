"""stratmem's pool checks (flows/stratmem/pool_checks.py): a merge that leaves two candidates of
one fact apart or states a day no candidate states, and a query whose targets name memories it
says nothing of, in English and Chinese."""

from __future__ import annotations

import re

from flows.stratmem.pool_checks import aims_at_its_targets, same_facts_joined, states_only_candidate_numbers
from schemas.stratmem import MergedMemories, UserQuery

EN = {"language": "en", "speakers": ["Caroline", "Melanie"], "candidates": [
    {"number": 1, "fact": "Caroline attended an LGBTQ support group on 2023-05-07.", "date": "2023-05-08"},
    {"number": 2, "fact": "Caroline went to the LGBTQ support group for the first time on 2023-05-07.",
     "date": "2023-05-08"},
    {"number": 3, "fact": "Melanie is swamped balancing her kids and her work.", "date": "2023-05-08"}]}
ZH = {"language": "zh", "speakers": ["许磊", "陈静"], "candidates": [
    {"number": 1, "fact": "陈静在2024-03-13跑步时扭伤了脚踝，医生让她休息两周。", "date": "2024-03-14"},
    {"number": 2, "fact": "陈静在2024-03-13扭伤了脚踝。", "date": "2024-03-14"},
    {"number": 3, "fact": "陈静的猫馒头不爱吃干粮。", "date": "2024-03-14"}]}


def _pool(*items: tuple[str, list[int]]) -> MergedMemories:
    return MergedMemories(memories=[{"fact": f, "sources": s} for f, s in items])


def test_candidates_of_one_fact_go_in_one_item():
    joined = _pool(("Caroline attended an LGBTQ support group for the first time on 2023-05-07.", [1, 2]),
                   ("As of 2023-05-08, Melanie is swamped balancing her kids and her work.", [3]))
    apart = _pool(("Caroline attended an LGBTQ support group on 2023-05-07.", [1]),
                  ("Caroline went to the LGBTQ support group for the first time on 2023-05-07.", [2]),
                  ("Melanie is swamped balancing her kids and her work.", [3]))
    assert list(same_facts_joined(joined, EN)) == []
    assert len(list(same_facts_joined(apart, EN))) == 1
    zh_joined = _pool(("陈静在2024-03-13跑步时扭伤了脚踝，医生让她休息两周。", [1, 2]), ("陈静的猫馒头不爱吃干粮。", [3]))
    zh_apart = _pool(("陈静在2024-03-13跑步时扭伤了脚踝，需休息两周。", [1]), ("陈静于2024-03-13扭伤脚踝。", [2]),
                     ("陈静的猫馒头不爱吃干粮。", [3]))
    assert list(same_facts_joined(zh_joined, ZH)) == []
    assert "候选 1 和 2" in next(iter(same_facts_joined(zh_apart, ZH)))


def test_a_day_or_number_no_candidate_states_is_invented():
    dated_by_session = _pool(("As of 2023-05-08, Melanie is swamped balancing her kids and her work.", [3]),
                             ("Caroline attended an LGBTQ support group for the first time on 2023-05-07.", [1, 2]))
    assert list(states_only_candidate_numbers(dated_by_session, EN)) == []
    counted = _pool(("陈静在2024-03-13扭伤了脚踝，需休息两周，2024-03-27可恢复跑步。", [1, 2]), ("陈静的猫馒头不爱吃干粮。", [3]))
    assert "2024-03-27" in next(iter(states_only_candidate_numbers(counted, ZH)))
    a_year = _pool(("Caroline attended an LGBTQ support group on 2023-05-07, her first since 2019.", [1, 2]),
                   ("Melanie is swamped balancing her kids and her work.", [3]))
    assert "2019" in next(iter(states_only_candidate_numbers(a_year, EN)))
    # held-out r16: a month a candidate names in words, written as its number
    june = {**EN, "candidates": [{"number": 1, "fact": "Melanie may go camping with her kids in June 2023.",
                                   "date": "2023-05-20"}]}
    assert list(states_only_candidate_numbers(_pool(("Melanie may go camping with her kids in 2023-06.", [1])),
                                              june)) == []
    assert list(states_only_candidate_numbers(_pool(("Melanie may go camping with her kids in 2023-07.", [1])), june))


QUERY_EN = {"language": "en", "human": "Caroline", "virtual_person": "Melanie",
            "history": ["Melanie: What motivates you?"], "memories": [
                {"number": 1, "fact": "Caroline is grateful for the support of her friends and mentors."},
                {"number": 2, "fact": "Melanie sets aside me-time each day for running, reading or playing her violin."},
                {"number": 3, "fact": "Melanie and her kids are thinking about going camping in June 2023."}]}
QUERY_ZH = {"language": "zh", "human": "许磊", "virtual_person": "陈静", "history": ["陈静: 馒头在阳台上晒太阳呢。"],
            "memories": [{"number": 1, "fact": "陈静的猫馒头很黏她，每晚睡在她枕头边。"},
                         {"number": 2, "fact": "陈静的猫馒头不爱吃干粮，试了三种猫粮都只舔两口。"}]}


def test_targets_name_the_memories_the_query_is_about():
    camping = "Mostly my friends and mentors. Did you and the kids ever get that camping trip on the calendar?"
    assert list(aims_at_its_targets(UserQuery(query=camping, targets=[3]), QUERY_EN)) == []
    assert "memory 3" in next(iter(aims_at_its_targets(UserQuery(query=camping, targets=[2]), QUERY_EN)))
    # Words only the speaker's own memory says ("friends and mentors") point at no target of theirs.
    routine = "My friends and mentors, mostly. How's that daily routine of yours holding up?"
    assert list(aims_at_its_targets(UserQuery(query=routine, targets=[2]), QUERY_EN)) == []
    food = "它现在肯好好吃干粮了吗？"
    assert list(aims_at_its_targets(UserQuery(query=food, targets=[2]), QUERY_ZH)) == []
    assert "第 2 条" in next(iter(aims_at_its_targets(UserQuery(query=food, targets=[1]), {**QUERY_ZH,
                                                                                            "language": "zh"})))


def test_a_query_that_shares_two_words_with_another_memory_and_none_with_its_targets_is_off():
    """Words two memories share are no memory's own: a query put in such words still points at
    the memories it shares them with when its targets share none."""
    pool = {**QUERY_EN, "memories": [
        {"number": 1, "fact": "Melanie painted a lake sunrise last year, and it is special to her."},
        {"number": 2, "fact": "Melanie walks the dog every morning before the kids wake up."},
        {"number": 3, "fact": "Melanie's dog chases a ball in the park every morning."}]}
    dog = "Does the dog still get you out of the house every morning?"
    assert list(aims_at_its_targets(UserQuery(query=dog, targets=[2]), pool)) == []
    assert re.search(r"memory [23]\b", next(iter(aims_at_its_targets(UserQuery(query=dog, targets=[1]), pool))))
    # One word in common with other memories is not enough to say where the query points.
    vague = "How is the dog these days?"
    assert list(aims_at_its_targets(UserQuery(query=vague, targets=[1]), pool)) == []


def test_what_only_the_targets_say_counts_for_them_together():
    """a31's acceptable query: 脚踝 is in both target memories and in no other, so the query speaks
    of its targets, though it also draws on the weekend runs (a memory it does not aim at)."""
    pool = {"language": "zh", "human": "许磊", "virtual_person": "陈静", "history": ["陈静: 这周天气好。"], "memories": [
        {"number": 8, "fact": "许磊约定周末陪陈静跑步，也想借此重新开始跑步。"},
        {"number": 9, "fact": "陈静在2024-03-13跑步时扭伤了脚踝，医生让她休息两周。"},
        {"number": 10, "fact": "因脚踝扭伤，陈静的半马训练计划被迫推迟，她有点着急。"},
        {"number": 15, "fact": "陈静的猫馒头不爱吃干粮，试了三种猫粮都只舔两口。"}]}
    ankle = "你脚踝养得怎么样了？能重新开始跑了吗？要是可以，这周末我陪你去慢慢跑一圈。"
    assert list(aims_at_its_targets(UserQuery(query=ankle, targets=[9, 10]), pool)) == []
    assert "第 8 条" in next(iter(aims_at_its_targets(UserQuery(query=ankle, targets=[15]), pool)))
