"""Which of the Big Five dimensions a personality description leaves out, as far as words show.

A dimension counts as covered when its name, or a word that only it is read by, appears: the
adjectives of the lexical tradition the model (Goldberg's markers, the NEO facets) is built from.
Words that two dimensions share ("warm": extraversion's facet, agreeableness' sense) are left out,
so one dimension's line never covers another. A miss is a dimension none of whose words occur.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

DIMENSIONS = ("openness", "conscientiousness", "extraversion", "agreeableness", "neuroticism")
# Each dimension's name as the prompts write it, by language.
NAMES = {"en": ("Openness", "Conscientiousness", "Extraversion", "Agreeableness", "Neuroticism"),
         "zh": ("开放性", "尽责性", "外向性", "宜人性", "神经质")}

_EN = {
    "openness": r"open(ness|-minded)?|curio(us|sity)|imaginati(ve|on)|creativ(e|ity)|inventive|adventurous"
                r"|intellectual|unconventional|conventional|traditional",
    "conscientiousness": r"conscientious(ness)?|organi[sz]ed|disorgani[sz]ed|disciplined|diligent|meticulous|methodical"
                         r"|dutiful|thorough|reliable|dependable|orderly|careless|punctual|self-discipline",
    "extraversion": r"extr[ao]ver(t|ted|sion)|introver(t|ted|sion)|outgoing|sociable|reserved|talkative|shy|gregarious"
                    r"|quiet|assertive|withdrawn",
    "agreeableness": r"agreeable(ness)?|disagreeable|cooperative|compassionate|trusting|accommodating|considerate"
                     r"|kind(-hearted|ness)?|altruis(m|tic)|modest|forgiving|people-pleas(er|ing)|say no",
    "neuroticism": r"neurotic(ism)?|emotional(ly)? stab(le|ility)|anxi(ous|ety)|worr(y|ies|ied|ier|ying)|nervous"
                   r"|moody|insecure|stress(ed|es)?|tense|calm|even-tempered|self-doubt|second-guess(es|ing)?"
                   r"|overthink(s|ing)?|lies awake|sensitive to criticism",
}
_ZH = {
    "openness": "开放|好奇|想象力|创造力|创新|求新|保守|守旧|爱尝试|新鲜事物",
    "conscientiousness": "尽责|责任心|责任感|自律|严谨|条理|细致|仔细|一丝不苟|有计划|拖延|靠谱|认真",
    "extraversion": "外向|内向|健谈|话多|话少|社交|合群|不爱说话|腼腆|开朗|安静",
    "agreeableness": "宜人|随和|友善|合作|体贴|心软|亲和|好说话|不会拒绝|不太会拒绝|很难拒绝|替别人着想|照顾别人",
    "neuroticism": "神经质|情绪稳定|情绪不稳|焦虑|紧张|担忧|忧虑|敏感|多虑|心事重|反复琢磨|想太多|沉稳|冷静",
}
_PATTERNS = {
    "en": {d: re.compile(rf"\b({p})\b", re.IGNORECASE) for d, p in _EN.items()},
    "zh": {d: re.compile(p) for d, p in _ZH.items()},
}


# A trait labelled with its dimension ("开放性较高：喜欢新方法，但会先仔细验证再用", "Openness: …")
# covers that dimension alone: its 仔细 describes how she is open, not her conscientiousness (a32).
_LABEL = re.compile(r"^\W*(?P<name>" + "|".join(NAMES["en"] + NAMES["zh"]) + r")[^:：]{0,8}[:：]", re.IGNORECASE)


def _covers(trait: str, langs: tuple[str, ...]) -> set[str]:
    if m := _LABEL.match(trait):
        name = m.group("name")
        return {DIMENSIONS[(NAMES["zh"].index(name) if name in NAMES["zh"]
                            else [n.lower() for n in NAMES["en"]].index(name.lower()))]}
    return {d for d in DIMENSIONS if any(_PATTERNS[lang][d].search(trait) for lang in langs)}


def missing_dimensions(traits: Iterable[str], language: str) -> list[str]:
    """The Big Five dimensions no trait names or describes with a word of its own, in order.
    English words count in a Chinese answer too (a trait labelled "Openness：…")."""
    langs = ("en", "zh") if language == "zh" else ("en",)
    covered = set().union(*(_covers(t, langs) for t in traits))
    return [d for d in DIMENSIONS if d not in covered]
