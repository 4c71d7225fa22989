"""The forms a person is named by: full name, surname with a title, given name, kinship term.

张立新 is also 张老师, 老张, 小张, 立新, 阿新, 新新 and 小新 (a pet form that is
no common word: 张天 is not 天天); Dr Alan Reeves is also Alan and
Reeves; the user's mother is 妈妈, 母亲, 老妈, mum, mom, mother. A form is what a check
looks for in a turn where that person must not be named.
"""

from __future__ import annotations

import functools
import re

from memsynth.core.textmatch import normal_text

_CJK = re.compile(r"[\u4e00-\u9fff]")
# Titles a Chinese speaker puts after a surname, or 老/小 before it.
ZH_TITLES = ("老师", "大爷", "大妈", "阿姨", "叔叔", "叔", "姐", "哥", "总", "工", "经理", "医生", "大夫", "主任",
             "师傅", "老板", "教练", "教授", "奶奶", "爷爷", "婆婆", "伯", "护士", "队长", "科长", "处长", "律师",
             "同学", "姨", "婶")
# Two-character surnames: 欧阳大爷 is 老欧阳, not 老欧.
ZH_COMPOUND_SURNAMES = ("欧阳", "司马", "上官", "诸葛", "东方", "皇甫", "尉迟", "公孙", "慕容", "令狐", "司徒", "夏侯",
                        "长孙", "宇文", "轩辕", "端木", "独孤", "南宫", "西门", "百里", "呼延", "澹台", "万俟")
_ZH_GROUPS = ("组", "会", "中心", "部", "科", "院", "队", "团", "班", "处", "局", "公司", "小组", "委员会", "学校", "医院")
_EN_TITLES = frozenset({"mr", "mrs", "ms", "miss", "dr", "prof", "professor", "sir", "madam", "coach", "uncle",
                        "aunt", "auntie", "grandma", "grandpa", "the", "a", "an", "his", "her", "their", "my", "nurse",
                        "father", "mother", "sister", "brother"})
_GENERIC = re.compile(r"\b(his|her|their|my|the user's)\b|他的|她的|用户的|他们|她们")

# One kin, the words for it. A relationship whose type is one of these is named by any of them.
KIN_ZH = (("父亲", "爸爸", "老爸", "爸", "爹"), ("母亲", "妈妈", "老妈", "妈", "娘"), ("丈夫", "老公"),
          ("妻子", "老婆", "媳妇"), ("哥哥", "哥", "大哥", "兄长"), ("姐姐", "姐", "大姐"),
          ("弟弟", "弟"), ("妹妹", "妹"), ("儿子",), ("女儿", "闺女"), ("外婆", "姥姥"), ("外公", "姥爷"),
          ("奶奶", "祖母"), ("爷爷", "祖父"), ("舅舅", "舅"), ("姑姑", "姑妈"), ("叔叔", "叔"), ("阿姨", "姨妈", "小姨"),
          ("表哥", "表姐", "表弟", "表妹", "堂哥", "堂姐", "堂弟", "堂妹"), ("男朋友", "男友"), ("女朋友", "女友"),
          ("婆婆",), ("岳母", "丈母娘"), ("公公",), ("岳父", "丈人"))
KIN_EN = (("father", "dad", "daddy", "pa"), ("mother", "mum", "mom", "mam", "mummy", "mommy", "ma"),
          ("husband",), ("wife",), ("brother",), ("sister",), ("son",), ("daughter",),
          ("grandmother", "grandma", "gran", "granny", "nan", "nana"), ("grandfather", "grandpa", "grandad", "granddad"),
          ("uncle",), ("aunt", "auntie", "aunty"), ("cousin",), ("boyfriend",), ("girlfriend",), ("partner",),
          ("mother-in-law",), ("father-in-law",), ("stepmother", "stepmom", "stepmum"), ("stepfather", "stepdad"))


def kin_words(relation: str) -> set[str]:
    """The words for the kin `relation` names ("父亲", "the user's mum", "younger sister"), or none."""
    text = normal_text(relation)
    if _CJK.search(text):
        for group in KIN_ZH:
            if any(text.endswith(w) for w in group if len(w) >= 2) or text in group:
                return set(group)
        return set()
    words = re.findall(r"[a-z][a-z-]*", text)
    for group in KIN_EN:
        if words and words[-1] in group:
            return set(group)
    return set()


_ROLES = ("patient|client|friend|colleague|neighbour|neighbor|boss|student|customer|child|kid|son|daughter|someone|"
          "somebody|everyone|nobody|man|woman|boy|girl|family|partner|teacher|doctor|nurse|coach|manager|stranger|"
          "classmate|roommate|flatmate|other|another|one|team|user")


def kin_pattern(words: set[str], owners: tuple[str, ...] = ()) -> re.Pattern[str] | None:
    """Where a text names the user's kin by one of `words`. Chinese: the word (a one-character
    one only after 我/你/她/他: 我妈, not 妈祖); English: after a possessive (her mum, Megan's
    mum, my dad), as "a patient's mother" is someone else's."""
    if not words:
        return None
    if any(_CJK.search(w) for w in words):
        long = sorted((w for w in words if len(w) >= 2), key=len, reverse=True)
        short = sorted(w for w in words if len(w) == 1)
        parts = [*map(re.escape, long)] + ([f"[我你她他]({'|'.join(map(re.escape, short))})"] if short else [])
        return re.compile("|".join(parts))
    # A name's possessive (Tom's gran) is the user's; a role's (a patient's mother) is someone else's.
    possessive = "|".join(["her", "his", "their", "my", "your", *(re.escape(o.lower()) + "'s" for o in owners if o),
                           rf"(?!(?:{_ROLES})'s)[a-z]+'s"])
    kin = "|".join(sorted(map(re.escape, words), key=len, reverse=True))
    return re.compile(rf"\b({possessive})\s+(?:\w+\s+)?({kin})\b", re.IGNORECASE)


def _common_word(word: str) -> bool:
    """A word of jieba's dictionary: 小时 (hour), 天天 (every day) and 小心 are no pet names of
    张天 or 王心, while 小婧 and 芳芳 are not in it."""
    from memsynth.core.textmatch import jieba_module

    jieba = jieba_module()
    jieba.dt.check_initialized()
    return bool(jieba.dt.FREQ.get(word))


def person_forms(name: str) -> set[str]:
    """The ways a person is named: the whole name, surname with a title, or the given name (and
    in Chinese its pet forms: 阿新, 新新, 小新)."""
    return set(_person_forms(name))


@functools.lru_cache(maxsize=8192)  # the same few people are looked for in every turn
def _person_forms(name: str) -> frozenset[str]:
    return frozenset(_forms(name))


def _forms(name: str) -> set[str]:
    original = name.strip()
    name = normal_text(name).strip()
    if not name or _GENERIC.search(name):
        return set()
    if _CJK.search(name):
        if name.endswith(_ZH_GROUPS):  # 进修中心考核组: a body, not a person
            return set()
        core = name[-3:] if len(name) > 4 else name  # 科室主任刘卫东: the name ends a role
        name = core
        for title in ZH_TITLES:
            if core.endswith(title) and len(core) > len(title):
                core = core[: -len(title)]
                break
        forms = {name}
        if 1 <= len(core) <= 4 and all(_CJK.match(c) for c in core):
            surname = core[:2] if core.startswith(ZH_COMPOUND_SURNAMES) and len(core) >= 2 else core[0]
            forms |= {surname + t for t in ZH_TITLES if len(t) >= 2} | {"老" + surname, "小" + surname}
            given = core[len(surname):]
            if len(core) >= 3 and given:
                forms.add(given)
            elif core != name:
                forms.add(core)
            if given and core == name:  # a real name, not 陈大爷: its given name's pet forms
                last = given[-1]
                forms |= {f for f in ("阿" + last, last + last, "小" + last) if not _common_word(f)}
        return {f for f in forms if len(f) >= 2}
    # English names are capitalised: "the centre's assessment panel" names nobody.
    words = (re.sub(r"['’]s$", "", w) for w in re.findall(r"[A-Z][a-zA-Z'’-]+", original))
    return {w.lower() for w in words if len(w) >= 3 and w.lower() not in _EN_TITLES}


def named_in(text: str, forms: set[str]) -> list[str]:
    """The forms of `forms` that `text` holds: Chinese ones as substrings, others as whole words."""
    normal = normal_text(text)
    words = set(re.findall(r"[a-z][a-z'-]*", normal.replace("’", "'")))
    words |= {w[:-2] for w in words if w.endswith("'s")}
    return sorted(f for f in forms if (f in normal if _CJK.search(f) else f in words))


def kin_named(text: str) -> list[int]:
    """The kin (indexes of KIN_EN or KIN_ZH, by the text's script) a text names: "Dad's hip
    replacement" names father; "陪父亲练习走路" names 父亲. Single Chinese characters that are parts of
    other words (娘 in 姑娘, 姐 in 小姐) are left out; 爸 and 妈 stand alone."""
    normal = normal_text(text)
    if _CJK.search(normal):
        return [i for i, group in enumerate(KIN_ZH)
                if any(w in normal for w in group if len(w) >= 2 or w in ("爸", "妈"))]
    words = set(re.findall(r"[a-z][a-z-]*", normal.replace("'s", " ")))
    return [i for i, group in enumerate(KIN_EN) if words & set(group)]
