"""Short items that say the same thing in other words: paraphrase, synonym, reordered clauses.

An item becomes a set of units: in English its content words, stemmed (Porter) and mapped to
one word of their synonym group ("enjoys hot dishes" and "loves spicy food" are one set); in
Chinese its character pairs after synonyms are mapped the same way (爱吃辣 and 喜欢吃辣).
Order is gone with the set, so reordered clauses match. Two items whose sets overlap by the
threshold (Jaccard) or more, with the same polarity (a like is no duplicate of a dislike),
are near-duplicates.

Exact Jaccard over every pair, not MinHash: our lists hold 4-30 items, where the pairs cost
less than one MinHash signature (bench/near_duplicates.py measures both).
"""

from __future__ import annotations

import functools
import re
import threading
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

from memsynth.core.textmatch import normal_text

# Two short items sharing this share of their units say the same thing. Calibrated on the
# released PAL-Set requirement types, implicit needs and candidate solutions (none reach it
# within one user or topic) and on every acceptable list of the shared model answers.
SAME_MEANING = 0.6

_CJK = re.compile(r"[\u4e00-\u9fff]")
_EN_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?|\d+")
# The light verbs (do, have, get, make, go) say nothing of their own: "the agency I went with" is
# no memory of someone who "went swimming" (held-out r27).
_STOP_EN = frozenset("""a an the and or of to in on at for with by from as is are was were be been being it its
this that these those very really quite so too much more most some any all each every their his her my your our
user user's he she they them him i me we you who which what when where how than then also just only into about
over after before while during up down out off again own same such can could would should will shall may might
must do does did doing have has had having get gets got getting make makes made go goes went gone going one ones
thing things way lot lots kind sort of bit""".split())
# One word a group: the first stands for the rest. Everyday words of likes, dislikes, needs
# and plans, where models reach for a synonym to avoid repeating themselves.
_SYNONYMS_EN = (
    "like love enjoy adore fond prefer relish fancy keen",
    "dislike hate detest loathe despise resent avoid abhor",
    "food dish dishes meal meals cuisine cooking fare eat eating",
    "spicy hot fiery",
    "quiet calm peaceful tranquil silent",
    "noisy loud rowdy",
    "crowd crowded busy packed",
    "walk walking stroll strolling hike hiking",
    "run running ran runs jog jogging",
    "read reading book books novel novels",
    "film films movie movies cinema",
    "music song songs tune tunes",
    "job work career employment",
    "boss manager supervisor",
    "colleague coworker co-worker teammate",
    "friend friends pal mate buddy",
    "help helps support assist aid",
    "quick fast rapid speedy",
    "slow unhurried leisurely",
    "cheap inexpensive affordable budget",
    "expensive costly pricey",
    "big large huge",
    "small little tiny",
    "morning mornings dawn",
    "evening evenings night nights",
    "weekend weekends saturday sunday",
    "sleep rest nap",
    "doctor physician gp",
    "plan schedule arrange organise organize",
    "learn study",
    "exercise workout training gym fitness",
    "tea teas",
    "coffee coffees espresso",
    "home house flat apartment",
    "child children kid kids",
    "start begin",
    "finish complete",
    "improve better",
    "stress stressed pressure anxiety anxious worry worried",
    "tired exhausted fatigue fatigued weary",
    "stair stairs staircase steps stairway",
    "take use",
    "instead rather",
    "lift elevator",
)
_SYNONYMS_ZH = (
    "喜欢 喜爱 热爱 爱吃 偏爱 钟爱 爱好 热衷 享受 爱",
    "讨厌 厌恶 反感 受不了 不喜欢 排斥 憎恶 不爱",
    "安静 清静 宁静 僻静",
    "吵闹 嘈杂 喧闹 热闹",
    "辣 辛辣 麻辣",
    "食物 菜 菜肴 饭菜 吃的",
    "散步 走路 遛弯 徒步",
    "跑步 慢跑",
    "电影 影片",
    "音乐 歌曲",
    "工作 上班 职场",
    "领导 上司 经理 主管",
    "同事 同僚",
    "朋友 好友 伙伴",
    "便宜 实惠 划算 省钱",
    "昂贵 贵 价格高",
    "早上 早晨 清晨 上午",
    "晚上 夜里 夜间 傍晚",
    "周末 礼拜天 星期天 星期六",
    "睡觉 睡眠 休息 补觉",
    "医生 大夫",
    "运动 锻炼 健身",
    "孩子 小孩 儿女",
    "家 家里 住处",
    "压力 焦虑 紧张 担心 担忧",
    "疲惫 疲劳 劳累 累",
    "提高 提升 改善",
    "学习 学",
    "办法 法子 方法",
    "每周 每个星期 每星期 每个礼拜 每礼拜",
    "平衡 兼顾 协调",
)
_NEGATIVE_EN = re.compile(r"\b(not|no|never|n't|dislike\w*|hate\w*|detest\w*|loathe\w*|avoid\w*|can't stand|"
                          r"cannot stand|without)\b|n't\b")
_NEGATIVE_ZH = re.compile(r"不|没|别|讨厌|厌恶|反感|受不了|排斥|拒绝|避免|无法忍受")
_FILLER_ZH = re.compile(r"[的了着过很非常特别比较有点一些一点总是经常也都就还会能要去在和与及并把被给让对]")


_stemmers = threading.local()


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    # A Snowball stemmer keeps the word it works on in itself: one per thread.
    stemmer = getattr(_stemmers, "english", None)
    if stemmer is None:
        import snowballstemmer  # pure Python, no data download

        stemmer = _stemmers.english = snowballstemmer.stemmer("english")
    return stemmer.stemWord(word)


@lru_cache(maxsize=1)
def _en_canon() -> dict[str, str]:
    stem = _stem
    return {stem(w): stem(group.split()[0]) for group in _SYNONYMS_EN for w in group.split()}


@lru_cache(maxsize=1)
def _zh_canon() -> list[tuple[str, str]]:
    """(word, its group's first word), longest words first so 不喜欢 maps before 喜欢."""
    pairs = [(w, group.split()[0]) for group in _SYNONYMS_ZH for w in group.split()]
    return sorted(pairs, key=lambda p: len(p[0]), reverse=True)


# A weekly routine said by its days or by its count is one routine ("on Tuesdays and Fridays" is
# "twice a week"), and a clock time by the part of the day it falls in ("6:30 a.m." is "early
# morning"): held-out r7, r11, r15, r18, r23, r24 wrote a swim so, in a habit and again in a
# preference.
_WEEKDAYS_EN = re.compile(r"\b(?:mon|tues|wednes|thurs|fri|satur|sun)days?\b")
_COUNT_EN = {2: "twice", 3: "three times", 4: "four times", 5: "five times"}
_CLOCK_EN = re.compile(r"\b(?P<hour>\d{1,2})(?P<minutes>:\d{2})?\s*(?P<half>a\.?m\.?|p\.?m\.?)?(?![\w:])")


def _schedule_en(normal: str) -> str:
    """The text with two to five weekdays said as their count a week and each clock time as its
    part of the day (a bare number stays a number)."""
    days = _WEEKDAYS_EN.findall(normal)
    if 2 <= len(set(days)) <= 5 and not re.search(r"\b(every|each) (day|weekday)\b", normal):
        normal = _WEEKDAYS_EN.sub(" ", normal) + f" {_COUNT_EN[len(set(days))]} a week"

    def part_of_day(m: re.Match[str]) -> str:
        if not m.group("minutes") and not m.group("half"):
            return m.group(0)
        hour = int(m.group("hour"))
        if m.group("half"):  # 12 a.m. is midnight, 12 p.m. noon
            hour = hour % 12 + (12 if m.group("half").startswith("p") else 0)
        return " morning " if hour < 12 else " evening " if hour >= 18 else " afternoon "

    return _CLOCK_EN.sub(part_of_day, normal)


def _en_units(normal: str) -> frozenset[str]:
    stem, canon = _stem, _en_canon()
    units = set()
    for word in _EN_WORD.findall(_schedule_en(normal.replace("’", "'"))):
        if word in _STOP_EN or (len(word) < 2 and not word.isdigit()):
            continue
        s = stem(word)
        units.add(canon.get(s, s))
    return frozenset(units)


def _zh_units(normal: str) -> frozenset[str]:
    text = normal
    for word, canon in _zh_canon():
        if word in text:
            text = text.replace(word, f"\0{canon}\0")
    pieces = [p for p in re.split(r"\0", text)]
    units: set[str] = set()
    canon_words = {c for _, c in _zh_canon()}
    for piece in pieces:
        if piece in canon_words:
            units.add(piece)
            continue
        letters = _FILLER_ZH.sub("", "".join(ch for ch in piece if _CJK.match(ch) or ch.isalnum()))
        units |= {letters[i:i + 2] for i in range(len(letters) - 1)}
        if len(letters) == 1:
            units.add(letters)
    return frozenset(units)


# Words that announce a restatement and carry no content of their own ("In other words, …",
# "说白了就是…"), and phrases that are one word of a synonym group ("can't stand" is "hate").
_RESTATING = re.compile(r"^\W*(in other words|put simply|simply put|basically|that is to say|that is|essentially|"
                        r"in short|to put it another way|换句话说|说白了就是|说白了|其实就是|也就是说|简单来说|简单地说|"
                        r"总之|换言之)[\s,，:：]*")
_PHRASES_EN = ((re.compile(r"\b(can't|cannot|can not) (stand|bear)\b"), "hate"),)


@functools.lru_cache(maxsize=32768)  # each item is compared with every other, in every check
def meaning_units(text: str) -> frozenset[str]:
    """The units an item is compared by: stemmed, synonym-mapped content words (English) or
    synonym-mapped character pairs (Chinese)."""
    normal = _RESTATING.sub("", normal_text(text).replace("’", "'"))
    for pattern, word in _PHRASES_EN:
        normal = pattern.sub(word, normal)
    return _zh_units(normal) if _CJK.search(normal) else _en_units(normal)


def polarity(text: str) -> bool:
    """True for an item that likes, does or wants; False for one that dislikes, avoids or lacks
    (an odd number of negations)."""
    normal = normal_text(text)
    pattern = _NEGATIVE_ZH if _CJK.search(normal) else _NEGATIVE_EN
    return len(pattern.findall(normal)) % 2 == 0


def similarity(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0


def same_meaning_pairs(texts: Sequence[str], threshold: float = SAME_MEANING) -> list[tuple[int, int]]:
    """(i, j), i < j, for each two items that say the same thing in other words (see the module)."""
    units = [meaning_units(t) for t in texts]
    signs = [polarity(t) for t in texts]
    return [(i, j) for i in range(len(texts)) for j in range(i + 1, len(texts))
            if units[i] and units[j] and signs[i] == signs[j] and similarity(units[i], units[j]) >= threshold]


# Two sources one item covers this share of each (of their content units) are both in it.
# Calibrated on the held-out rounds' and the shared corpus' enpmr preference lists: no
# acceptable item covers a second source at 0.2, where merged items cover each at 0.36-1.0.
MERGED = 0.3


@lru_cache(maxsize=1)
def _sentiment() -> frozenset[str]:
    """The units of liking and disliking: a like and a dislike share them and nothing else."""
    return frozenset({_stem("like"), _stem("dislike"), "喜欢", "讨厌"})


def merged_sources(sources: Sequence[str], items: Sequence[str], share: float = MERGED) -> list[tuple[int, int, int]]:
    """(item, source a, source b) for each item that holds two distinct sources: it covers `share`
    of each source's content units, no other item covers either better, and the two sources do
    not say one thing (a source an item merely touches is better covered by its own item)."""
    feeling = _sentiment()
    wanted = [meaning_units(s) - feeling for s in sources]
    have = [meaning_units(t) for t in items]
    cover = [[len(w & h) / len(w) if w else 0.0 for h in have] for w in wanted]
    best = [max(row, default=0.0) for row in cover]
    out = []
    for j in range(len(items)):
        held = [k for k in range(len(sources)) if cover[k][j] >= share and cover[k][j] >= best[k]]
        pair = next(((a, b) for a in held for b in held
                     if a < b and similarity(wanted[a], wanted[b]) < SAME_MEANING / 2), None)
        if pair:
            out.append((j, *pair))
    return out


@lru_cache(maxsize=1)
def telling_and_opinion() -> frozenset[str]:
    """Verbs of telling and of opinion, which any account or question uses: no source's own
    words (a scene where the consultant "said they would review the plan" is not the memory where
    a consultant said "that's what understanding a patient looks like"; "do you think I can…" is
    not the memory of kids "thinking about going camping")."""
    return frozenset({*(_stem(w) for w in ("say", "says", "said", "saying", "tell", "tells", "told", "telling",
                                            "think", "thinks", "thought", "thinking", "believe", "believes",
                                            "believed", "suppose", "reckon", "guess")),
                      "觉得", "认为", "以为"})


# A character pair with a negation in it joins two words ("馒头会不会" and "馒头不爱吃" both give 头不
# once 会 is dropped: a28's acceptable query): no source's own content.
_ACROSS_NEGATION = re.compile(r"[不没]")


def own_units_held(sources: Sequence[str], text: str, known: str = "") -> list[int]:
    """Per source, how many of its own content units `text` holds: units no other source has and
    `known` (what the text answers, say) lacks. A text that draws on a source repeats some of its
    own words; one that only shares the topic holds few or none."""
    units = [meaning_units(s) for s in sources]
    held = {u for u in meaning_units(text) - meaning_units(known) - telling_and_opinion() if not _ACROSS_NEGATION.search(u)}
    counts = Counter(u for us in units for u in us)
    return [len({u for u in us if counts[u] == 1} & held) for us in units]
