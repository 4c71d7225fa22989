"""enpmr's mutants: each rule of rules.py broken on purpose in good answers
(memsynth.quality.mutants; `python -m memsynth.quality.mutants` prints the table)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from flows.enpmr.checks import TITLE_QUOTED
from flows.enpmr.content_mutants import AIMS as CONTENT_AIMS
from flows.enpmr.evaluation import STAGES as EVAL_STAGES
from flows.enpmr.form_checks import FACT_LIMIT, MONTHS_AND_DAYS, NAME_LIMIT, PLACE_EN
from flows.enpmr.options import NEEDS, REPLY_LIMIT
from flows.enpmr.stages import STAGES
from memsynth.core.textmatch import length_in_words
from memsynth.quality.mutants import (
    SCHEMA_RULE,
    Aim,
    Append,
    Count,
    DropOne,
    Duplicate,
    Fields,
    InsertPerson,
    InsertText,
    Longer,
    Merged,
    Moved,
    PairDuplicate,
    Replace,
    Rewrite,
    Sentences,
    Set,
    Values,
    Voice,
)
from memsynth.quality.mutants.ages import AgeOutside
from memsynth.quality.mutants.grouping import Grouped, Unbalanced
from memsynth.quality.mutants.text import names_in, split_sentences
from memsynth.quality.textrules.ages import without_ages
from memsynth.quality.textrules.people import KIN_EN, KIN_ZH, kin_named

MEMORIES = ("relationship", "power", "goal", "highlight")
# The stages whose fields a rule of their own names (`<stage>-fields`, `profile-fields`): their
# schema's mutants are that rule's; the other stages' are the table's `schema` row.
FIELDS = ("profile", "life_themes", *MEMORIES, "preferences")
# A memory's people, as memory_text (flows/enpmr/plan.py) writes them.
_RELATION = {"en": re.compile(r"^During '.*?', (.+?) \(the user's (.+?), "),
             "zh": re.compile(r"期间，(.+?)（用户的(.+?)，")}
_RECOGNISED = {"en": re.compile(r"recognised by (.+?): "), "zh": re.compile(r"得到(.+?)的认可")}


def people_of(text: str, language: str) -> list[tuple[str, str]]:
    """(name, relation to the user) of the people a memory's text names."""
    if m := _RELATION[language].search(text):
        return [(m.group(1), m.group(2))]
    if m := _RECOGNISED[language].search(text):
        return [(name, "") for name in names_in(m.group(1), language)]
    return []


def _target_people(v: Mapping[str, Any], language: str) -> list[tuple[str, str]]:
    return people_of(str(v["target"]["text"]), language)


def _negative_people(v: Mapping[str, Any], language: str) -> list[tuple[str, str]]:
    return [p for n in v.get("negatives", []) for p in people_of(str(n), language)]


def _turns(role: str, before_memory_turn: bool = False):
    def where(answer: Any, v: Mapping[str, Any]) -> list[tuple[Any, ...]]:
        end = answer.get("memory_turn", 1) - 1 if before_memory_turn else len(answer.get("turns", []))
        return [("turns", i, "content") for i, t in enumerate(answer.get("turns", [])[:end]) if t["role"] == role]
    return where


def _memory_turn(answer: Any, v: Mapping[str, Any]) -> list[tuple[Any, ...]]:
    k = answer.get("memory_turn", 0)
    return [("turns", k - 1, "content")] if 1 <= k <= len(answer.get("turns", [])) else []


def _first_person(answer: Any, v: Mapping[str, Any], language: str) -> list[tuple[str, dict[str, str]]]:
    """A described person made the speaker: "she"/"he" → "I", 她/他 → 我."""
    if language == "zh":
        return [("first_person", {"她": "我", "他": "我"})]
    return [("first_person", {"She": "I", "she": "I", "He": "I", "he": "I", "her": "my", "his": "my",
                              "him": "me", "She's": "I'm", "He's": "I'm", "she's": "I'm", "he's": "I'm"})]


def _form(v: Mapping[str, Any], language: str) -> list[str]:
    """The persona's attributes as a form rather than prose."""
    if language == "zh":
        return [f"职业：{v['occupation']}。年龄：{v['age_band']}。地区：{v['region']}。"]
    return [f"Occupation: {v['occupation']}. Age: {v['age_band']}. Region: {v['region']}."]


def _quoted_title(key: str):
    """The memory's title said word for word, when it is long enough to be a title, not a phrase
    (a relationship's title is a person's name: saying it is no quote)."""
    def texts(v: Mapping[str, Any], language: str) -> list[str]:
        name = str(v[key]["name"])
        if v.get("category") == "relationship" or length_in_words(name) < TITLE_QUOTED[language]:
            return []
        return [f"就是那次“{name}”。"] if language == "zh" else [f'That was "{name}".']
    return texts


def _across_fields(answer: Any, v: Mapping[str, Any]) -> list[tuple[tuple[Any, ...], tuple[Any, ...]]]:
    """A profile's fact said again, reworded, in another field (a habit as a preference, a
    social fact as a habit, an emotional pattern as a way of talking)."""
    pairs = (("habits", "preferences"), ("social", "habits"), ("emotional_pattern", "communication_style"))
    return [((source, 0), (target, len(answer[target]) - 1)) for source, target in pairs
            if answer.get(source) and answer.get(target)]


def _neighbour(answer: Any, v: Mapping[str, Any]) -> int:
    """The number next to the memory the reply names: the slip of a model counting down a list."""
    n = int(answer.get("memory", 1))
    return n + 1 if n < len(v["memories"]) else n - 1


def _second_memory(answer: Any, v: Mapping[str, Any], language: str) -> list[str]:
    """Another listed memory's account (after its lead-in), brought into the reply beside its own."""
    others = [m for m in v["memories"] if m["number"] != answer.get("memory")]
    if not others:
        return []
    account = re.split(r"[:：]", str(others[len(others) // 2]["text"]), maxsplit=1)[-1].strip()
    return [f"还有，{account}"] if language == "zh" else [f"And remember: {account}"]


def _without_region(answer: Any, v: Mapping[str, Any]) -> str:
    """The description with the sampled region taken out, as a writer who forgot it would leave it."""
    text, region = str(answer.get("description", "")), str(v.get("region", ""))
    if re.search(r"[\u4e00-\u9fff]", region):
        return re.sub(f"(?:在|来自|住在)?{re.escape(region)}市?", "", text)
    words = "|".join(re.escape(w) for w in re.findall(r"[^\W\d_]+", region) if w[:1].isupper()) or re.escape(region)
    text = re.sub(rf",?\s*(?:(?:in|from|near|outside|around) )?(?:the |a )?(?:{words})(?:\s+(?:{words}))*\b", "", text)
    # and any other place it puts the person in ("in Stockport"), which names where they live too
    return PLACE_EN.sub(lambda m: m.group(0) if m.group(1).casefold() in MONTHS_AND_DAYS else "", text)


def _without_age(answer: Any, v: Mapping[str, Any]) -> str:
    """The description with every age it states taken out (persona-attributes: "roughly the age")."""
    return without_ages(str(answer.get("description", "")))


def _relative_again(answer: Any, v: Mapping[str, Any]) -> list[Any]:
    """The themes with one more about a relative another title already names: the same part of life twice."""
    themes = list(answer.get("themes", []))
    for theme in themes:
        if kin := kin_named(str(theme.get("theme", ""))):
            words = (KIN_ZH if v.get("language") == "zh" else KIN_EN)[kin[0]]
            title = f"照顾{words[0]}的日常" if v.get("language") == "zh" else f"Looking after {words[0]} at home"
            return [*themes, {**theme, "theme": title}]
    return themes


def _who_not_name(answer: Any, v: Mapping[str, Any]) -> list[Any]:
    """The people with the last one named by who they are to another ("Mr Bennett's daughter")."""
    items = [dict(i) for i in answer.get("items", [])]
    if len(items) >= 2:
        other = items[0].get("name", "")
        items[-1]["name"] = f"{other}的女儿" if v.get("language") == "zh" else f"{other}'s daughter"
    return items


def _high_score(answer: Any, v: Mapping[str, Any]) -> bool:
    return answer.get("score", 0) > 3


_GENERIC = {"en": ("Whatever happens, you'll get through this, you always do.",),
            "zh": ("不管怎样，你一定能撑过去的，你一直都可以。",)}

# A user who talks the whole session and never says what happened (session-reveals).
_VAGUE = {"en": ("Something happened recently and I keep thinking about it.", "I don't know, it's hard to put into words.",
                 "Nothing special really, I just wanted to talk.", "Yes, maybe. I'll think about it some more."),
          "zh": ("最近发生了一件事，我一直在想。", "说不上来，就是心里有点乱。", "也没什么特别的，就是想找人聊聊。",
                 "嗯，也许吧，我再想想。")}
# Facts no memory holds, told by the user as part of it (session-invents-nothing).
_INVENTED = {"en": ("Oh, and a week later I got a pay rise because of it.",
                    "My whole family even flew in from abroad to celebrate it with me."),
             "zh": ("对了，一个星期后我还因为这件事涨了工资。", "我全家人还专门从外地赶来给我庆祝。")}
# A scene per need, naming nobody: the scene of another need than the one asked (scene-need).
_SCENES = {
    "en": {"PN": "After two night shifts in a row and a skipped lunch, the user aches all over and feels sick with "
                 "hunger. At home they collapse on the sofa, too exhausted even to order food.",
           "LB": "The user's weekend plans fell through again: their friends are all busy and nobody answered in the "
                 "group chat. They spend Saturday evening alone, feeling that no one has time for them.",
           "EN": "In a team meeting the user's manager dismissed their proposal in front of everyone and praised a "
                 "younger colleague's instead. Afterwards the user sits at their desk feeling useless.",
           "SA": "The user has repeated the same routine for months and no longer knows what it is all for. Tonight "
                 "they scroll through old plans and feel they have lost every sense of direction."},
    "zh": {"PN": "用户连着值了两个夜班，中午也没顾上吃饭，浑身酸痛、胃里发空。回到家瘫在沙发上，累得连外卖都懒得点。",
           "LB": "用户周末的约又一次被取消了，朋友们都各忙各的，群里也没人回话。周六晚上用户一个人待在家里，觉得谁都顾不上自己。",
           "EN": "部门例会上，领导当着所有人的面否定了用户的方案，转而表扬了一位更年轻的同事。散会后用户坐在工位上，觉得自己一无是处。",
           "SA": "这几个月用户每天都在重复同样的事情，已经不知道这样做是为了什么。今晚翻看以前写下的计划，用户觉得自己完全失去了方向。"},
}
_TITLE = {"en": re.compile(r"'([^']+)'"), "zh": re.compile(r"“([^”]+)”")}


def _other_needs(v: Mapping[str, Any], language: str) -> list[str]:
    asked = {code for code, (name, _) in NEEDS[language].items() if name == v.get("need_name")}
    return [scene for code, scene in _SCENES[language].items() if code not in asked]


def _negative_echo(v: Mapping[str, Any], language: str) -> list[str]:
    """A sentence that turns the scene toward a negative: recalling it would then fit (scene-fits-target)."""
    out = []
    for text in v.get("negatives", [])[:2]:
        quoted = _TITLE[language].findall(str(text))
        title = quoted[1] if len(quoted) > 1 else next(iter(p for p, _ in people_of(str(text), language)), "")
        if title:
            out.append(f"整个晚上，用户脑子里反复想着“{title}”那件事。" if language == "zh"
                       else f"All evening the user keeps thinking back to '{title}'.")
    return out


def _short_scene(answer: Any, v: Mapping[str, Any]) -> list[tuple[Any, ...]]:
    """The scene, when one sentence more keeps it within scene-form's four."""
    return [("scene",)] if len(split_sentences(str(answer.get("scene", "")))) <= 3 else []


AIMS = (
    Aim("persona-prose", ("persona",), InsertText("description", _form, "attribute_form")),
    Aim("persona-prose", ("persona",), Sentences("description", low=2, high=3)),
    Aim("persona-prose", ("persona",), Voice("description", _first_person)),
    Aim("persona-attributes", ("persona",), AgeOutside("description")),
    Aim("relationship-fields", ("relationship",), Set("items", None, "who_not_name", from_answer=_who_not_name)),
    Aim("themes-spread", ("life_themes",), Set("themes", None, "relative_again", from_answer=_relative_again)),
    Aim("persona-attributes", ("persona",), Set("description", None, "region_dropped", from_answer=_without_region)),
    Aim("persona-attributes", ("persona",), Set("description", None, "age_dropped", from_answer=_without_age)),
    Aim("memory-counts", ("power",), Grouped("items", "performance")),
    Aim("memory-counts", ("relationship",), Unbalanced("items", "relationship_quality")),
    Aim("distinct-memories", ("profile",), Duplicate("preferences")),
    Aim("distinct-memories", ("profile",), PairDuplicate(_across_fields)),
    Aim("life-themes", ("life_themes",), Count("themes", low=lambda v: v["min_themes"])),
    Aim("life-themes", ("life_themes",), Moved("themes[*].start_date", after=lambda v: v["reference_date"],
                                               before=lambda v: v["window_start"])),
    Aim("life-themes", ("life_themes",), Duplicate("themes", keys=("theme", "description"))),
    # Judge work: a description's length is left to the prompt (rules.py says why).
    Aim("theme-description", ("life_themes",), Sentences("themes[*].description", low=1, high=3, places=2)),
    Aim("memory-counts", MEMORIES, Count("items", low=lambda v: v["min_items"])),
    Aim("memory-dates", MEMORIES, Moved("items[*].date", after=lambda v: v["reference_date"],
                                        before=lambda v: str(v["theme"]["start_date"]))),
    Aim("distinct-memories", ("power", "goal", "highlight", "preferences"),
        Duplicate("items", keys=("name", "description"))),
    Aim("distinct-memories", ("relationship",), Duplicate("items", keys=("characteristic",), times=1)),
    Aim("highlight-fields", ("highlight",), Longer("items[*].name", lambda v: NAME_LIMIT[v["language"]])),
    Aim("preferences-fields", ("preferences",), Longer("items[*].name", lambda v: NAME_LIMIT[v["language"]])),
    Aim("preferences-fields", ("preferences",), Sentences("items[*].description", low=1, high=2, places=2)),
    Aim("profile-facts", ("profile",), Longer("emotional_pattern[*]", lambda v: FACT_LIMIT[v["language"]])),
    Aim("preferences", ("preferences",), Count("items", low=lambda v: v["min_items"])),
    Aim("preferences", ("preferences",), Merged("items", ("name", "description"))),
    Aim("preferences", ("preferences",), Moved("items[*].date", after=lambda v: v["reference_date"],
                                               before=lambda v: v["window_start"])),
    Aim("session-form", ("memory_session",), Count("turns", low=lambda v: v["min_turns"],
                                                   high=lambda v: v["max_turns"])),
    Aim("session-reveals", ("memory_session",), Rewrite(_turns("user"), lambda v, lang: _VAGUE[lang],
                                                        "vague_user", every=True)),
    # Judge work (no check, by design): the audit judges are measured on these.
    Aim("session-invents-nothing", ("memory_session",), InsertText(_turns("user"), lambda v, lang: _INVENTED[lang],
                                                                   "invent_fact")),
    Aim("scene-need", ("scene",), Rewrite("scene", _other_needs, "other_need")),
    Aim("scene-fits-target", ("scene",), InsertText(_short_scene, _negative_echo, "echo_negative")),
    Aim("session-quotes-no-title", ("memory_session",), InsertText(_turns("user"), _quoted_title("memory"),
                                                                            "quote_title")),
    Aim("scene-form", ("scene",), Sentences("scene", low=2, high=4)),
    Aim("scene-form", ("scene",), InsertPerson("scene", _target_people, voice="narrator")),
    Aim("dialogue-form", ("support_dialogue",), Count("turns", low=lambda v: v["min_turns"],
                                                      high=lambda v: v["max_turns"])),
    Aim("user-never-mentions", ("support_dialogue",), InsertPerson(_turns("user"), _target_people, voice="user")),
    Aim("no-early-recall", ("support_dialogue",), InsertPerson(_turns("ai", True), _target_people, voice="ai")),
    Aim("recall-grounded", ("support_dialogue",), Replace(_memory_turn, {"en": r"^[\s\S]+$", "zh": r"^[\s\S]+$"},
                                                          _GENERIC, "generic_recall")),
    Aim("recall-no-title", ("support_dialogue",), InsertText(_memory_turn, _quoted_title("target"), "quote_title")),
    Aim("recall-length", ("support_dialogue",), Longer(_memory_turn, lambda v: v["recall_limit"])),
    Aim("no-negatives", ("support_dialogue",), InsertPerson(_memory_turn, _negative_people, voice="ai")),
    Aim("judges-consistent", ("faithfulness",), Set("uses_negatives", True, "flag_against_score", _high_score)),
    Aim("judges-consistent", ("faithfulness",), Set("grounded_in_target", False, "flag_against_score", _high_score)),
    Aim("judges-consistent", ("scenario_consistency",), Set("fits_a_negative", True, "flag_against_score",
                                                            _high_score)),
    Aim("judges-consistent", ("scenario_consistency",), Set("expresses_need", False, "flag_against_score",
                                                            _high_score)),
    Aim("blri", ("blri",), Count("scores", low=12, high=12)),
    Aim("blri", ("blri",), Set("scores[0]", 0, "off_scale")),
    Aim("eval-reply", ("eval_respond",), Longer("response", lambda v: REPLY_LIMIT[v["language"]])),
    Aim("eval-reply", ("eval_respond",), Set("memory", lambda v: len(v["memories"]) + 1, "unlisted_memory")),
    Aim("eval-reply", ("eval_respond",), Set("memory", None, "neighbouring_memory", from_answer=_neighbour)),
    Aim("eval-reply", ("eval_respond",), Append("response", _second_memory, "second_memory")),
    Aim("eval-reply", ("eval_respond",), Set("reasoning", "The user is tired; memory 1 fits.", "reasoning_without_cot",
                                             lambda a, v: v.get("mode") != "cot")),
    Aim("eval-reply", ("eval_respond",), Set("reasoning", "", "no_reasoning_in_cot", lambda a, v: v.get("mode") == "cot")),
    Aim("eval-grades", ("eval_judge",), Set("empathy", 6, "off_scale")),
    *(a for stage in FIELDS for a in (Aim(f"{stage.replace('_', '-')}-fields", (stage,), Fields(every=True)),
                                      Aim(f"{stage.replace('_', '-')}-fields", (stage,), Values()))),
    # A Big Five dimension left out (the corpus's profiles give one trait a dimension).
    Aim("profile-fields", ("profile",), DropOne("personality")),
    Aim("profile-preferences", ("profile",), Count("preferences", low=10)),
    Aim("profile-preferences", ("profile",), Duplicate("preferences", times=1)),
    Aim(SCHEMA_RULE, tuple(s.name for s in (*STAGES, *EVAL_STAGES) if s.name not in FIELDS), Fields()),
    *CONTENT_AIMS,
)
