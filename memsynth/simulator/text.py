"""Realistic-looking filler text: names, places, phrases and sentences that vary."""

from __future__ import annotations

import datetime as dt
import random

FIRST = ["Amara", "Lukas", "Mei", "Diego", "Priya", "Tomasz", "Aisha", "Kenji", "Sofia", "Oluwaseun",
         "Ingrid", "Rafael", "Hana", "Mateo", "Leila", "Callum", "Yuki", "Nadia", "Arjun", "Elena",
         "Kwame", "Chloe", "Ibrahim", "Freya", "Santiago", "Anika", "Jonas", "Zanele", "Marco", "Lin"]
LAST = ["Okafor", "Novak", "Chen", "Ramirez", "Sharma", "Kowalski", "Haddad", "Tanaka", "Rossi",
        "Adeyemi", "Lindqvist", "Costa", "Kim", "Fernandez", "Nasser", "MacLeod", "Sato", "Petrova",
        "Iyer", "Markovic", "Mensah", "Dubois", "Rahman", "Berg", "Alvarez", "Müller", "Moyo", "Bianchi"]
ZH_SURNAME = list("王李张刘陈杨黄赵周吴徐孙马朱胡郭何林罗高")
ZH_GIVEN = ["伟", "芳", "娜", "敏", "静", "磊", "洋", "婷", "杰", "欣怡", "子涵", "浩然", "雨桐", "思远",
            "佳琪", "晨曦", "文博", "梓萱", "俊熙", "诗涵"]
AREAS = ["career", "health", "family", "friendship", "learning", "community", "creativity", "finances",
         "travel", "sport", "home", "love"]
THEME_HEADS = ["Rebuilding", "Learning", "Caring for", "Training for", "Starting", "Leading",
               "Recovering from", "Exploring", "Saving for", "Reconnecting with", "Mastering",
               "Balancing", "Organising", "Changing"]
THEME_TAILS = ["a new role at work", "a parent's illness", "a first marathon", "an evening course",
               "a small business", "a neighbourhood project", "a back injury", "photography",
               "a first home", "old friends", "the piano", "night shifts and family", "a move abroad",
               "a volunteer team", "a career switch", "a long-distance relationship", "public speaking",
               "a community garden", "a new language", "a family budget", "a charity ride",
               "a mentoring circle", "a chronic condition", "a home renovation"]
ZH_THEMES = ["职业转型", "照顾父母", "马拉松训练", "夜校学习", "创业起步", "社区志愿", "康复之路",
             "摄影爱好", "买房计划", "重拾友情", "学习钢琴", "工作与家庭平衡", "海外生活", "公开演讲",
             "社区菜园", "学习外语", "家庭理财", "慈善骑行", "导师计划", "慢性病管理", "装修新家"]
SUBJECTS = ["I", "My sister", "My manager", "A close friend", "My partner", "Our team", "My coach",
            "My neighbour", "My mother", "A colleague"]
VERBS = ["finally finished", "kept working on", "started", "talked through", "struggled with",
         "celebrated", "planned", "gave up on", "returned to", "quietly enjoyed"]
OBJECTS = ["the weekend plan", "a difficult conversation", "the training schedule", "a new recipe",
           "the project deadline", "an old habit", "the monthly budget", "a short trip",
           "the presentation", "a long walk by the river", "the night shift rota", "a tricky exam"]
ENDINGS = ["and it felt like real progress", "even though it was exhausting", "which surprised everyone",
           "and I want to remember it", "after weeks of doubt", "with more patience than before",
           "and it changed how I see things", "though I still have mixed feelings about it"]
ZH_WHEN = ["最近", "上个月", "那段时间", "周末", "去年冬天", "每天早上", "下班后", "春节前后"]
ZH_WHO = ["我", "我和家人", "我和同事", "我和老朋友", "我的团队", "我和伴侣"]
ZH_DID = ["坚持晨跑", "学着做新菜", "整理工作计划", "准备一场重要的汇报", "照顾生病的母亲",
          "报名了夜校课程", "重新开始练琴", "去郊外徒步", "尝试早睡早起", "筹备社区活动"]
ZH_FELT = ["感到很充实", "压力不小但坚持了下来", "觉得很温暖", "有了新的认识", "心情慢慢好了起来",
           "收获了意外的惊喜", "还是有些焦虑", "对自己更有信心了"]


class TextMaker:
    """Deterministic fake text from one random generator."""

    def __init__(self, rng: random.Random, language: str = "en"):
        self.rng = rng
        self.language = language

    def person_name(self) -> str:
        if self.language == "zh":
            return self.rng.choice(ZH_SURNAME) + self.rng.choice(ZH_GIVEN)
        return f"{self.rng.choice(FIRST)} {self.rng.choice(LAST)}"

    def sentence(self) -> str:
        if self.language == "zh":
            r = self.rng
            return f"{r.choice(ZH_WHEN)}{r.choice(ZH_WHO)}{r.choice(ZH_DID)}，{r.choice(ZH_FELT)}。"
        return (f"{self.rng.choice(SUBJECTS)} {self.rng.choice(VERBS)} {self.rng.choice(OBJECTS)} "
                f"{self.rng.choice(ENDINGS)}.")

    def clause(self) -> str:
        """A sentence's first clause, short enough for a title."""
        if self.language == "zh":
            r = self.rng
            return f"{r.choice(ZH_WHEN)}{r.choice(ZH_WHO)}{r.choice(ZH_DID)}"
        return f"{self.rng.choice(SUBJECTS)} {self.rng.choice(VERBS)} {self.rng.choice(OBJECTS)}"

    def distinct_sentences(self, count: int) -> list[str]:
        out: list[str] = []
        while len(out) < count:
            sentence = self.sentence()
            if sentence.lower() not in (o.lower() for o in out):
                out.append(sentence)
        return out

    def paragraph(self, sentences: int = 2) -> str:
        joiner = "" if self.language == "zh" else " "
        return joiner.join(self.sentence() for _ in range(sentences))

    def phrase(self) -> str:
        if self.language == "zh":
            return self.rng.choice(ZH_THEMES)
        return f"{self.rng.choice(VERBS).split()[-1]} {self.rng.choice(OBJECTS)}"

    def theme_titles(self, count: int) -> list[str]:
        """`count` distinct theme titles."""
        if self.language == "zh":
            pool = list(ZH_THEMES)
            self.rng.shuffle(pool)
            return [pool[i % len(pool)] + ("" if i < len(pool) else f"（{i // len(pool) + 1}）")
                    for i in range(count)]
        titles: list[str] = []
        while len(titles) < count:
            title = f"{self.rng.choice(THEME_HEADS)} {self.rng.choice(THEME_TAILS)}"
            if title not in titles:
                titles.append(title)
        return titles

    def date_between(self, start: dt.date, end: dt.date) -> dt.date:
        span = max(0, (end - start).days)
        return start + dt.timedelta(days=self.rng.randint(0, span))
