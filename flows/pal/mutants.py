"""pal's mutants: each rule of rules.py broken on purpose in good answers
(memsynth.quality.mutants; `python -m memsynth.quality.mutants` prints the table)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from flows.pal.candidate_checks import fixes_a_deadline
from flows.pal.checks import (
    PREFERENCE_SENTENCES,
    PROFILE_FIELDS,
    PROFILE_SENTENCES,
    QUERY_LIMIT,
    profile_example,
)
from flows.pal.evaluation import STAGES as EVAL_STAGES
from flows.pal.evaluation import concluded_choice
from flows.pal.plan import ACTION_LABELS
from flows.pal.prose_checks import TYPE_LIMIT
from flows.pal.stages import STAGES
from memsynth.quality.mutants import (
    SCHEMA_RULE,
    Aim,
    Count,
    Dated,
    DropOne,
    Duplicate,
    Fields,
    InsertPerson,
    InsertText,
    Join,
    Listed,
    Longer,
    Moved,
    PairDuplicate,
    ProseMoment,
    Replace,
    Reword,
    Rewrite,
    Sentences,
    Set,
    Soften,
    Swap,
    Values,
    Voice,
)
from memsynth.quality.mutants.moments import WrongWeekday
from memsynth.quality.mutants.text import split_sentences
from memsynth.quality.textrules.aspects import aspects_of
from schemas.pal import ASPECTS

MINUTE = "%Y-%m-%d %H:%M"


def _profile_fields(answer: Any, v: Mapping[str, Any]) -> list[tuple[Any, ...]]:
    return [("profiles", i, f) for i, p in enumerate(answer.get("profiles", [])) for f in PROFILE_FIELDS if f in p]


def _named(answer: Any, v: Mapping[str, Any], language: str) -> list[tuple[str, dict[str, str]]]:
    """"the user" (用户) replaced by the user's name: the prompt says to call them "the user"."""
    profile = v.get("profile") or next(iter(answer.get("profiles", [])), {})
    name = str(profile.get("name", "")).strip()
    if not name:
        return []
    if language == "zh":
        return [("named_user", {"用户": name})]
    return [("named_user", {"the user": name, "The user": name})]


_POSTPONE = {
    "zh": ("向经理申请把提交期限延后一周，留出时间把材料做扎实。", "先和对方商量把截止日期推迟几天，争取更充裕的准备时间。"),
    "en": ("Ask the manager to push the deadline back a week so there is time to do it properly.",
           "Request an extension of a few days so the work is not rushed."),
}


_SIDE_TAKEN = {"zh": ("行，这个我能接受。", "算了，我不想用这个。"),
               "en": ("Works for me, I'll take it.", "I don't want to go down that road."), }


# The prompt's example person (flows/pal/checks.profile_example) told again in other words.
_EXAMPLE_RETOLD = {
    "zh": {"occupation": "用户在城市边上的物流站管夜里的分拣，带着十来个工人，每晚要安排几十辆卡车按先后装货。",
           "health_status": "常年上夜班，用户总是睡不踏实，量血压也快到高压的线了。他向来是疼得扛不住了才去医院。"},
    "en": {"occupation": "The user supervises overnight work at a delivery hub on the edge of town, with a dozen staff "
                         "and a few dozen lorries to load in order each night.",
           "health_status": "After years of overnight work the user rarely sleeps well and his blood pressure is close "
                            "to high. He avoids doctors until the pain is too much."},
}
_ONE_MORE_OPERATION = {"zh": ("，随后又在微信上把截图转发给了同事。",), "en": (", then forwarded the screenshot to a colleague.",)}
_EVENT_NOT_IN_MONTH = {
    "zh": ("同一周，用户的父亲因心脏不适住院观察了三天，用户每晚下班后去病房陪护。",),
    "en": ("That same week the user's father was kept in hospital for three days, and the user sat with him every "
           "evening after work.",),
}
# A need said again in other words with few words shared (the distinct checks read shared words).
_OTHER_WORDS = {
    "zh": {"提升": "增强", "提高": "增强", "缓解": "减轻", "减轻": "缓解", "平衡": "兼顾", "兼顾": "平衡", "改善": "优化",
           "管理": "安排", "能力": "本领", "压力": "负担", "关系": "相处", "家庭": "家里", "工作": "职场", "疼痛": "不适",
           "时间": "时段", "效率": "速度"},
    "en": {"improve": "boost", "improving": "boosting", "manage": "handle", "managing": "handling", "reduce": "ease",
           "reducing": "easing", "balance": "juggle", "balancing": "juggling", "stress": "pressure",
           "relationship": "bond", "relationships": "bonds", "work": "job", "skills": "abilities", "time": "hours",
           "pain": "aches", "better": "stronger"},
}


def _in_other_words(text: str, language: str) -> str:
    import re

    table = _OTHER_WORDS["zh" if language == "zh" else "en"]
    if language == "zh":
        return re.sub("|".join(sorted(table, key=len, reverse=True)), lambda m: table[m.group(0)], text)
    return re.sub(r"[A-Za-z]+", lambda m: table.get(m.group(0).lower(), m.group(0)), text)


def _need_again(answer: Any, v: Mapping[str, Any]) -> str | None:
    """The first topic's first need in other words (set as the second topic's second need)."""
    topics = answer.get("topics") or []
    if len(topics) < 2:
        return None
    return _in_other_words(topics[0]["implicit_needs"][0]["need"], str(v.get("language", "en")))


def _deadline_solutions(answer: Any, v: Mapping[str, Any]) -> list[tuple[Any, ...]]:
    """The solutions of the topics whose need fixes a deadline."""
    lang = str(v.get("language", "en"))
    fixed = {str(t.get("requirement_id")) for t in v.get("topics", []) if fixes_a_deadline(str(t.get("requirement", "")), lang)}
    return [("topics", i, "solutions", k) for i, t in enumerate(answer.get("topics", []))
            if str(t.get("requirement_id")) in fixed for k in range(len(t.get("solutions", [])))]


def _user(v: Mapping[str, Any], language: str) -> list[tuple[str, str]]:
    """The user, by the name of their profile (full name, surname + title, given name)."""
    name = str((v.get("profile") or {}).get("name", "")).strip()
    return [(name, "")] if name else []


def _of_the_user(answer: Any, v: Mapping[str, Any], language: str) -> list[tuple[str, dict[str, str]]]:
    """The assistant speaking of "the user" (用户) instead of to "you"."""
    if language == "zh":
        return [("third_user", {"你们": "用户们", "你": "用户"})]
    return [("third_user", {"you": "the user", "You": "The user", "your": "the user's", "Your": "The user's"})]


def _narrated(answer: Any, v: Mapping[str, Any], language: str) -> list[tuple[str, dict[str, str]]]:
    """A reason the user gives ("I'd rather…", "我宁可…") told by a narrator ("He'd rather…")."""
    if language == "zh":
        return [("narrated_reason", {"我们": "他们", "我": "他", "咱": "他"})]
    return [("narrated_reason", {"I'd": "He'd", "I'm": "He's", "I'll": "He'll", "I've": "He's", "I": "he", "me": "him",
                                 "my": "his", "My": "His", "myself": "himself", "mine": "his"})]


# A second question after the one a query or an inquiry asks.
_SECOND_QUESTION = {"en": ("And how much should I expect it to cost?", "Also, is there anything I should avoid?"),
                    "zh": ("另外，大概要花多少钱？", "还有，有什么需要注意避免的吗？")}


def _said(action: str, feedback: str | None = None, speaker: str = "user"):
    """Paths of `speaker`'s utterances with `action`, on a framework solution with that feedback."""
    def where(answer: Any, v: Mapping[str, Any]) -> list[tuple[Any, ...]]:
        labels = {labels[action] for labels in ACTION_LABELS.values()}
        refs = {e["label"] for e in v.get("framework", []) if e.get("kind") == "solution"
                and (feedback is None or e.get("feedback") == feedback)}
        return [("turns", i, speaker, "content") for i, t in enumerate(answer.get("turns", []))
                if t[speaker]["action"] in labels and (feedback is None or t[speaker]["reference"] in refs)]
    return where


def _before_feedback(answer: Any, v: Mapping[str, Any]) -> list[tuple[Any, ...]]:
    """The assistant's utterances up to the first feedback the user gives (preferences unknown)."""
    feedback = {labels["solution_feedback"] for labels in ACTION_LABELS.values()}
    out = []
    for i, t in enumerate(answer.get("turns", [])):
        out.append(("turns", i, "assistant", "content"))
        if t["user"]["action"] in feedback:
            break
    return out[:-1] if len(out) > 1 else out


def _first_reason_told(v: Mapping[str, Any], language: str) -> tuple[str, ...]:
    """The reason the user gives for the first solution, said back by the assistant before the user
    gives it (the user's "I" made "you")."""
    reason = next((str(f["reason"]) for f in v.get("framework") or [] if f.get("kind") == "solution"
                   and f.get("reason")), "")
    if not reason:
        return ()
    if language == "zh":
        return (reason.replace("我", "你"),)
    return (re.sub(r"\b(I|me)\b", "you", re.sub(r"\bmy\b", "your", reason)),)


_PRESUMING = {
    "en": ("I know you like plans you can reuse every year.", "You've always hated paying for apps, so let's avoid that.",
           "Since you never enjoy group classes, I'll skip those.", "I'm sure you don't want to spend evenings on this."),
    "zh": ("我知道你一向喜欢能反复用的办法。", "你平时就不太愿意花钱买课，这个我们先不考虑。", "我知道你不喜欢跟一群人一起练。",
           "我知道你更信得过表格这种一目了然的东西。", "想必你也不愿意在这上面多花钱。"),
}
# A new plan after a rejection, put as a question for approval or told as a routine (held-out
# r17, r18), in words the held-out rounds did not use.
_NEW_PLAN = {
    "en": ("A short walk after lunch might suit you better, would that work?",
           "Every evening you could do ten minutes of gentle stretching at home instead.",
           "How does a standing desk sound?"),
    "zh": ("那午饭后出去散步十分钟，你看可以吗？", "其实每晚泡个脚再拉伸一会儿，也能放松不少。",
           "那换成在家跟着视频练二十分钟，这样行不行？"),
}
_RETIRED = {"en": ("The user retired last year after thirty years as a bus driver. ",
                   "The user is a university student in her final year. "),
            "zh": ("用户去年从公交公司退休，之前开了三十年车。", "用户是一名在读的大学本科生。")}


def _needs(answer: Any, v: Mapping[str, Any]) -> list[tuple[tuple[Any, ...], tuple[Any, ...]]]:
    return [(("topics", i, "implicit_needs", 0, "need"), ("topics", i, "implicit_needs", 1, "need"))
            for i, t in enumerate(answer.get("topics", [])) if len(t.get("implicit_needs", [])) >= 2]


# Judge work (rules no check can see): what the judges and the audits are measured on.
_FIRST_SENTENCE = {"en": r"^[^.!?]*[.!?]", "zh": r"^[^。！？]*[。！？]"}
_ANYONE = {"pos": {"en": ("The user likes solutions that work well and are good value.",),
                   "zh": ("用户喜欢效果好、性价比高的办法。",)},
           "neg": {"en": ("The user dislikes solutions that waste time or money.",),
                   "zh": ("用户不喜欢浪费时间和金钱的办法。",)}}
_PERSONALITY = {"en": ("Being highly conscientious and rather introverted, the user handles all of this quietly and "
                       "by the book.",),
                "zh": ("用户尽责性高、性格内向，遇事总是一个人默默按部就班地处理。",)}
# Who the user is, said in a month's events: a trait word, or how the user goes about things or
# with people, in three wordings a language.
_CHARACTER = {"en": ("The user has always been a perfectionist and rarely asks anyone for help.",
                     "By nature the user is a stubborn person who keeps worries to themselves.",
                     "The user tends to be quiet in meetings and keeps to a careful plan."),
              "zh": ("用户做事一向追求完美，很少开口求人帮忙。", "用户性格要强，遇到难处总想一个人扛。",
                     "用户平时不善言辞，待人随和，做事讲究稳妥。", "用户本来就讨厌排队，这个月去银行都是挑人少的时候。")}
_OFF_TOPIC = {"en": ("Find a phone case in a nicer colour", "Learn to bake sourdough bread at weekends"),
              "zh": ("给手机换一个颜色更好看的手机壳", "学会在周末烤酸面包")}


def _liked_disliked(answer: Any, v: Mapping[str, Any]) -> list[tuple[tuple[Any, ...], tuple[Any, ...]]]:
    n = min(len(answer.get("liked", [])), len(answer.get("disliked", [])))
    return [(("liked", i), ("disliked", i)) for i in range(n)]



def _concluded(answer: Any, v: Mapping[str, Any]) -> set[int]:
    return concluded_choice(str(answer.get("analysis", "")), {int(c["id"]) for c in v.get("candidates", [])})


def _not_concluded(v: Mapping[str, Any]) -> list[int]:
    """The last two listed ids (Set's value is read from the variables alone)."""
    ids = sorted(int(c["id"]) for c in v.get("candidates", []))
    return ids[-2:]


def _off_conclusion(answer: Any, v: Mapping[str, Any]) -> bool:
    """The analysis concludes on two or more ids, and the last two are not among them."""
    named = _concluded(answer, v)
    return len(named) >= 2 and not set(_not_concluded(v)) <= named

def _work_only(answer: Any, v: Mapping[str, Any]) -> list[Any]:
    """The months with the last one cut to its sentences of work alone: a month of one part of life."""
    months = [dict(m) for m in answer.get("months", [])]
    if not months:
        return months
    work = [s for s in split_sentences(str(months[-1].get("summary", "")))
            if aspects_of(s) == ["work"]]
    if len(work) >= 2:
        joiner = "" if v.get("language") == "zh" else " "
        months[-1]["summary"] = joiner.join(work)
    return months


# A conclusion tacked onto an evidence: the analysis the prompt keeps out of them.
_ANALYSIS = {"zh": ("，说明用户需要一个不占时间的办法",), "en": (", which shows the user needs a quick fix",)}


AIMS = (
    # profile: the sentences a field the check accepts (1-3, as released PAL-Set; a profile may
    # name its user, as 10 of its 100 do: rules.py, accepts_less), nobody retired or studying.
    Aim("profiles", ("profile",), Sentences(_profile_fields, low=PROFILE_SENTENCES[0], high=PROFILE_SENTENCES[1],
                                            places=2)),
    Aim("profiles", ("profile",), Replace("profiles[*].occupation", {"en": r"^", "zh": r"^"}, _RETIRED,
                                          "student_or_retired")),
    Aim("profiles", ("profile",), Count("profiles", low=lambda v: v["batch_size"], high=lambda v: v["batch_size"])),
    *(Aim("profile-example", ("profile",), Rewrite(f"profiles[*].{field}", lambda v, lang, f=field: [
        str(profile_example(lang)[f])], "copied_example")) for field in ("name", "occupation", "hobbies")),
    Aim("timeline", ("timeline",), Sentences("months[*].summary", low=5)),
    Aim("timeline", ("timeline",), Set("months", None, "work_only", from_answer=_work_only)),
    Aim("timeline", ("timeline",), Count("months", low=lambda v: len(v["months"]), high=lambda v: len(v["months"]))),
    *(Aim("requirement-types", ("requirement_types",), Count(aspect, low=4, high=5)) for aspect in ASPECTS[:2]),
    Aim("requirement-types-apart", ("requirement_types",), Duplicate(lambda a, v: [(x,) for x in ASPECTS if x in a],
                                                                    times=1)),
    # the statements the check accepts (3-5; the seed's 4-5 is wider than released PAL-Set: rules.py)
    *(Aim("preference-form", ("preferences",), Sentences(f"items[*].{side}", low=PREFERENCE_SENTENCES[0],
                                                         high=PREFERENCE_SENTENCES[1], clauses=True))
      for side in ("pos", "neg")),
    Aim("preference-form", ("preferences",), Count("items", low=lambda v: len(v["requirements"]),
                                                   high=lambda v: len(v["requirements"]))),
    Aim("situations", ("situations",), Count("situations", low=lambda v: v["min_situations"],
                                             high=lambda v: v["max_situations"])),
    Aim("situations", ("situations",), Sentences("situations[*].situation", low=5, places=2)),
    Aim("situations", ("situations",), Voice("situations[*].situation", _named, places=2)),
    Aim("situations", ("situations",), Replace("situations[*].requirement_ids[*]", {"en": r"^.+$", "zh": r"^.+$"},
                                               {"en": ("work-9",), "zh": ("work-9",)}, "unknown_requirement")),
    Aim("experience-ends", ("experience",), ProseMoment("experience", lambda v: v["span_end"], at_end=True)),
    Aim("logs", ("logs",), Count("logs", low=lambda v: v["min_logs"])),
    Aim("logs", ("logs",), Moved("logs[*].timestamp", after=lambda v: v["span_end"], before=lambda v: v["span_start"],
                                 fmt=MINUTE)),
    Aim("frameworks", ("requirements",), PairDuplicate(_needs)),
    Aim("frameworks", ("requirements",), DropOne("topics")),
    Aim("vague-query", ("requirements",), Longer("topics[*].user_query",
                                                 lambda v: QUERY_LIMIT["zh" if v.get("language") == "zh" else "en"])),
    # a fact with its date (any day will do: none is allowed); a query with a day or deadline in it
    Aim("evidences", ("requirements",), InsertText("topics[*].implicit_needs[*].evidences[*]",
                                                   lambda v, lang: _ANALYSIS[lang], "analysis")),
    Aim("evidences", ("requirements",), Dated("topics[*].implicit_needs[*].evidences[*]", lambda v: v["reference_date"],
                                              places=2)),
    Aim("vague-query", ("requirements",), Dated("topics[*].user_query", lambda v: v["reference_date"])),
    Aim("requirement-types", ("requirement_types",), Dated("work[*]", lambda v: v["reference_date"])),
    Aim("experience-calendar", ("experience",), WrongWeekday("experience", lambda v: str(v.get("span_start") or v["time_span"]))),
    # one occasion named without a date (held-out rounds: "准备年终质量数据汇报", "按期提交本次审核的整改报告")
    Aim("requirement-types", ("requirement_types",), Replace("family[*]", {"zh": r"^", "en": r"^"},
                                                              {"zh": ("本次", "婚礼前", "三天内", "交付"), "en": ("This year's ", "Within two weeks, ", "Deliver ")},
                                                              "one_off")),
    Aim("requirement-types", ("requirement_types",),
        Longer("health[*]", lambda v: TYPE_LIMIT["zh" if v.get("language") == "zh" else "en"])),
    Aim("candidates", ("candidates",), Count("topics[*].solutions", low=8, high=8)),
    *(Aim("profile-example-substance", ("profile",), Set(f"profiles[0].{field}", lambda v, f=field: _EXAMPLE_RETOLD[
        "zh" if v.get("language") == "zh" else "en"][f], "example_retold")) for field in ("occupation", "health_status")),
    Aim("profile-example-substance", ("profile",), Set("profiles[0].personality", lambda v: profile_example(
        str(v.get("language", "en")))["personality"], "example_personality")),
    Aim("log-one-operation", ("logs",), InsertText("logs[*].content", lambda v, lang: _ONE_MORE_OPERATION[lang],
                                                   "second_operation")),
    Aim("situations-from-month", ("situations",), InsertText("situations[*].situation",
                                                             lambda v, lang: _EVENT_NOT_IN_MONTH[lang], "event_not_in_month")),
    Aim("topics-apart", ("requirements",), Set("topics[1].implicit_needs[1].need", None, "need_of_another_topic",
                                               from_answer=_need_again)),
    Aim("candidates-fit", ("candidates",), Rewrite(_deadline_solutions, lambda v, lang: _POSTPONE[lang], "moves_deadline")),
    # the person named past the occupation (released PAL-Set names them only where the occupation opens)
    *(Aim("profiles", ("profile",), Voice(f"profiles[0].{field}", _named)) for field in PROFILE_FIELDS[1:]),
    Aim("candidates", ("candidates",), Duplicate("topics[*].solutions")),
    Aim("choices-verbatim", ("solution_preferences",), Reword("liked[*].solution", places=1)),
    Aim("choices-verbatim", ("solution_preferences",), Reword("disliked[*].solution", places=1)),
    *(Aim("choices-verbatim", ("solution_preferences",), Voice(f"{side}[*].reason", _narrated, places=2))
      for side in ("liked", "disliked")),
    Aim("choices-verbatim", ("solution_preferences",), Sentences("liked[*].reason", high=1)),
    Aim("candidates", ("candidates",), Sentences("topics[*].solutions[*]", high=1)),
    Aim("choices-verbatim", ("solution_preferences",), Sentences("disliked[*].reason", high=1)),
    Aim("dialogue-skeleton", ("dialogue",), DropOne("turns")),
    Aim("direct-rejection", ("dialogue",), Soften(_said("solution_feedback", "neg"))),
    # the verdict said early, in the user's solution discussion (held-out r3, r5)
    Aim("dialogue-skeleton", ("dialogue",), InsertText(_said("solution_discussion"), lambda v, lang: _SIDE_TAKEN[lang],
                                                       "verdict_in_discussion")),
    Aim("response-adds-nothing", ("dialogue",), Join(_said("feedback_response", "neg", "assistant"))),
    Aim("response-adds-nothing", ("dialogue",), InsertText(_said("feedback_response", "neg", "assistant"),
                                                           lambda v, lang: _NEW_PLAN[lang], "new_plan")),
    Aim("preferences-hidden", ("dialogue",), InsertText(_before_feedback, lambda v, lang: _PRESUMING[lang],
                                                        "presume_preference")),
    Aim("preferences-hidden", ("dialogue",), InsertText(_before_feedback, _first_reason_told, "reason_told")),
    Aim("eval-restatement", ("eval_restate",), Sentences("requirement", high=1)),
    Aim("eval-proposal", ("eval_propose",), Join("solution")),
    Aim("eval-proposal", ("eval_propose",), Listed("solution")),
    Aim("eval-restatement", ("eval_restate",), Listed("requirement")),
    Aim("candidates", ("candidates",), Listed("topics[*].solutions[*]")),
    Aim("eval-proposal", ("eval_propose",), Sentences("solution", high=1)),
    Aim("eval-selection", ("eval_select",), Count("selected_solutions", low=2, high=2)),
    # A chosen id the analysis's conclusion does not name (held-out r2, r4: [1, 5] for "2 和 6").
    Aim("eval-selection", ("eval_select",), Set("selected_solutions", _not_concluded, "not_as_concluded",
                                                _off_conclusion)),
    Aim("eval-restatement-grade", ("eval_judge_restatement",), Set("score", 3, "off_scale")),
    Aim("preferences-personal", ("preferences",), Replace("items[*].pos", _FIRST_SENTENCE, _ANYONE["pos"],
                                                          "anyone_would", places=2)),
    Aim("preferences-personal", ("preferences",), Replace("items[*].neg", _FIRST_SENTENCE, _ANYONE["neg"],
                                                          "anyone_would", places=2)),
    Aim("personality-out-of-situations", ("situations",), InsertText("situations[*].situation",
                                                                     lambda v, lang: _PERSONALITY[lang], "personality")),
    Aim("personality-out-of-situations", ("experience",), InsertText("experience", lambda v, lang: _PERSONALITY[lang],
                                                                     "personality")),
    Aim("needs-on-topic", ("requirements",), Rewrite("topics[*].implicit_needs[1].need",
                                                     lambda v, lang: _OFF_TOPIC[lang], "off_topic_need")),
    Aim("choices-follow-preferences", ("solution_preferences",), Swap(_liked_disliked, "liked_disliked_swapped")),
    # the user as "the user" / "you", never by name; one question a query or inquiry.
    Aim("timeline", ("timeline",), InsertText("months[*].summary", lambda v, lang: _CHARACTER[lang], "character")),
    Aim("the-user", ("timeline",), InsertPerson("months[*].summary", _user, voice="narrator")),
    Aim("the-user", ("preferences",), Voice("items[*].pos", _named)),
    Aim("the-user", ("experience",), Voice("experience", _named)),
    Aim("the-user", ("experience",), InsertPerson("experience", _user, voice="narrator")),
    Aim("the-user", ("requirements",), InsertPerson("topics[*].requirement", _user, voice="narrator")),
    Aim("the-user", ("dialogue",), InsertPerson("turns[*].assistant.content", _user, voice="ai")),
    Aim("speaks-to-user", ("dialogue",), Voice("turns[*].assistant.content", _of_the_user, places=2)),
    Aim("one-question", ("requirements",), InsertText("topics[*].user_query", lambda v, lang: _SECOND_QUESTION[lang],
                                                      "second_question")),
    Aim("one-question", ("dialogue",), InsertText(_said("topic_inquiry"), lambda v, lang: _SECOND_QUESTION[lang],
                                                  "second_question")),
    # a log's fields are a rule of their own (log-fields): the schema's mutants of logs are its.
    Aim("log-fields", ("logs",), Fields(every=True)),
    Aim("log-fields", ("logs",), Values()),
    Aim(SCHEMA_RULE, tuple(s.name for s in (*STAGES, *EVAL_STAGES) if s.name != "logs"), Fields()),
)
