"""pal's checks on a dialogue: it follows its skeleton, the user turns a disliked solution
down directly, the assistant then proposes nothing new and never presumes the user's
preferences. Calibrated on PAL-Set's released sessions (tests/test_calibration.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from memsynth.generation.stage import check, say
from schemas.pal import Dialogue


@check("follows_skeleton")
def follows_skeleton(out: Dialogue, v: Mapping[str, Any]) -> Iterator[str]:
    skeleton = v["skeleton"]
    if len(out.turns) != len(skeleton):
        yield say(v, f"write exactly {len(skeleton)} turns, one per skeleton line, got {len(out.turns)}",
                  f"请恰好写 {len(skeleton)} 轮，模板每行一轮；实际写了 {len(out.turns)} 轮")
        return
    for i, (turn, slot) in enumerate(zip(out.turns, skeleton), start=1):
        for speaker in ("user", "assistant"):
            said = getattr(turn, speaker)
            action, reference = slot[f"{speaker}_action"], slot[f"{speaker}_reference"]
            if (said.action, said.reference) != (action, reference):
                yield say(v, f"turn {i} {speaker}: expected {action} [{reference}], got {said.action} [{said.reference}]",
                          f"第 {i} 轮 {speaker}：应为 {action} [{reference}]，实际为 {said.action} [{said.reference}]")


def _disliked(v: Mapping[str, Any]) -> set[str]:
    """The framework's solutions the user turns down (their labels)."""
    return {e["label"] for e in v["framework"] if e.get("kind") == "solution" and e.get("feedback") == "neg"}


def _actions(v: Mapping[str, Any], *names: str) -> set[str]:
    """An action's names in either language (skeletons carry the build language's labels)."""
    from flows.pal.plan import ACTION_LABELS

    return {labels[n] for labels in ACTION_LABELS.values() for n in names}


# "Sounds good, but…": a rejection softened into praise (the seed wants it direct).
# PAL-Set's own users open a rejection with praise ("听起来不错，但") in 21 of
# its 139 sessions (the release must still pass at 97 %): what the check sees beyond the bare
# "不错，但" that opens a turn is agreement with the speaker ("你说的有道理，可是") and praise
# hedged with 只是 / 就是 ("这个建议其实不错，就是"), which the release never writes. A clause
# that says no ("我觉得不太好，但是") praises nothing.
_NO_NEGATION = r"(?![^，,。！？!?]*?[不没别非难](?!错))"
_SOFTENED = re.compile(
    r"^\W*((听起来|看起来|感觉|这个|这主意|这个主意|主意|想法)?(还)?(挺|很|蛮|确实|倒是)?(不错|好|有道理|可以|合理)(的|啊|呀)?"
    r"[，,、…\s]*(但是?|不过|可是|只是))"
    rf"|^\W*{_NO_NEGATION}[^，,。！？!?]{{0,10}}(有道理|说得对|说的对|没错)[的啊呀吧]?[，,…\s]*(但是?|不过|可是|只是|就是)"
    rf"|^\W*{_NO_NEGATION}[^，,。！？!?]{{0,10}}(不错|挺好|很好|合理|可以|有意思)[的啊呀吧]?[，,…\s]*(只是|就是)"
    # the grudging "not that it won't do, it's just…" (这法子倒也不是不行，就是……): held-out r19
    r"|^\W*[^，,。！？!?]{0,10}?不是不行[的啊呀吧]?[，,…\s]*(但是?|不过|可是|只是|就是)"
    # granted as a way first, then turned down ("听起来也算个办法，不过……"): held-out r20
    r"|^\W*[^，,。！？!?]{0,10}?(也算是|也算|也是|算是|倒是|倒也是)(一种|一个|个)?(办法|法子|主意|思路|选择|路子)"
    r"[的啊呀吧]?[，,…\s]*(但是?|不过|可是|只是|就是)"
    r"|^\W*((i suppose|i guess) (that|it) (could|might|would) work|(that's|it's|that is|it is) "
    r"(one way|an option|a way|one option))[^.?!]{0,40}\bbut\b"
    r"|^\W*((that |it |this )?(sounds|seems|looks) (good|great|nice|reasonable|interesting|like a good idea)"
    r"|(good|great|nice|interesting) (idea|point|suggestion))[^.?!]{0,40}\bbut\b", re.IGNORECASE)


def _on_disliked(out: Dialogue, v: Mapping[str, Any], speaker: str, action: str) -> Iterator[tuple[int, Any]]:
    """(turn number, utterance) of `speaker`'s `action` turns about a solution the user turns down."""
    disliked, actions = _disliked(v), _actions(v, action)
    for i, turn in enumerate(out.turns, start=1):
        said = getattr(turn, speaker)
        if said.action in actions and said.reference in disliked:
            yield i, said


@check("direct_rejection")
def direct_rejection(out: Dialogue, v: Mapping[str, Any]) -> Iterator[str]:
    from memsynth.quality.textrules.forms import softened

    for i, said in _on_disliked(out, v, "user", "solution_feedback"):
        if _SOFTENED.search(said.content) or softened(said.content):
            yield say(v, f"turn {i} user: the rejection of {said.reference} is softened into praise "
                         f"({said.content[:40]!r}); turn it down directly",
                      f"第 {i} 轮 user：对 {said.reference} 的拒绝被说成了先夸后转（“{said.content[:40]}”）；请直接拒绝")


# A user's solution discussion asks or argues about the solution and saves the verdict for the
# feedback turn: "行，腰靠我能接受" or "我不想靠药撑着" there is the feedback said early. Of PAL-Set's
# 340 released discussion turns one says "应该没问题" (a hedge the check lets pass) and none the rest.
_TAKES_SIDE = re.compile(
    r"(?:我|这个|那)?(?:能|可以)接受|接受不了|就这么(?:办|定)|就用这个|我不想|不想(?:用|靠|要|试)|算了吧?[，,。！]"
    r"|^\W*(?:行|好的?|可以)[，,。！]\s*(?:那|就|我)"
    r"|\b(?:i'll take it|i'll go with|i can live with|works for me|i'm (?:fine|happy|ok|okay) with (?:that|it|this)"
    r"|i don't want|i won't|not for me|no way)\b", re.IGNORECASE)


@check("discussion_takes_no_side")
def discussion_takes_no_side(out: Dialogue, v: Mapping[str, Any]) -> Iterator[str]:
    actions = _actions(v, "solution_discussion")
    for i, turn in enumerate(out.turns, start=1):
        if turn.user.action in actions and (m := _TAKES_SIDE.search(turn.user.content)):
            yield say(v, f"turn {i} user: the solution discussion already accepts or turns down {turn.user.reference} "
                         f"({m.group(0)!r}); ask or argue about it, and say yes or no in the feedback turn",
                      f"第 {i} 轮 user：方案讨论里已经表示了接受或拒绝 {turn.user.reference}（“{m.group(0)}”）；"
                      "这一轮只就方案提问或争论，接受与否留到方案反馈")


# A feedback response after a rejection apologises or moves on; it proposes nothing new. None of
# PAL-Set's 343 feedback responses after a rejection asks whether a new plan will do or tells a
# routine, nor does any acceptable dialogue of the corpus or the held-out rounds.
_PROPOSES = re.compile(r"可以试试|不妨|建议你|你(?:也|还|其实|倒是|同样)?可以(?!随时|再来|再找|告诉|跟我|和我)|要不要试|推荐你|或者试|可以考虑"
                       r"|(?<![有么])可以(?:在|用|把|试着|买|换成?|垫|戴|穿|做|去|改|先|每天|尝试)"
                       r"|那[^。！？]{2,30}?也(?:行|不错|好|可以(?!随时|再|告诉|跟我|和我|找我))"
                       r"|那不如|倒不如|不如试试|不如改成|那要不(?!然)|要不(?:每天|试试|先|就|换)|\bwhat about\b|\binstead,? (?:you|we) (?:could|can)\b"
                       r"|\byou (could|can|might|should) (try|consider|also)|\bwhy not\b|\bhow about\b|\btry\b"
                       # or one put as a question for approval ("…做几组小燕飞，你看行吗？")
                       r"|你看(?:行|可以|怎么样|如何)|(?:这样|这个|那样)(?:行|可以|好)(?:吗|不)|怎么样[？?]"
                       r"|\bwould that work\b|\bdoes that (?:sound|work)\b|\bhow does that sound\b"
                       # or one told as a routine ("其实每天睡前在床上做几组小燕飞，十来分钟就够")
                       r"|(?:每天|每晚|每周|睡前|每隔|每次|每坐)[^。！？]{0,12}?(?:做|练|走|吃|喝|用|去|泡|拉伸|活动)"
                       r"|\b(?:each|every) (?:day|night|morning|evening|hour)\b[^.!?]{0,30}\b(?:do|try|take|walk|stretch)\b"
                       r"|\bI'?d (suggest|recommend)|\bI (suggest|recommend)", re.IGNORECASE)


@check("response_offers_nothing_new")
def response_offers_nothing_new(out: Dialogue, v: Mapping[str, Any]) -> Iterator[str]:
    """Nor one joined on as an alternative ("…, or alternatively …", "…；也可以…")."""
    from memsynth.quality.textrules.forms import second_proposal

    for i, said in _on_disliked(out, v, "assistant", "feedback_response"):
        if _PROPOSES.search(said.content) or second_proposal(said.content):
            yield say(v, f"turn {i} assistant: after {said.reference} is turned down the feedback response proposes "
                         "something new; only acknowledge it (new solutions come from the framework)",
                      f"第 {i} 轮 assistant：{said.reference} 被拒绝后的反馈回应又提出了新方案；只需回应，不要提出框架外的方案")


# The user's likes and dislikes are revealed in the dialogue, never presumed by the assistant: "I
# know you…", "you always…", "考虑到你不太想…", "你做事讲究…，不喜欢…", "since you prefer…"; the verbs
# are those of liking, trusting, valuing and refusing (我知道你更信得过表格). Held to
# the shared corpus and eight held-out rounds: every labelled presumption matches, no acceptable turn.
_LIKES_ZH = r"喜欢|爱|讨厌|习惯|愿意|不想|信得过|信任|偏好|偏爱|倾向|看重|在意|中意|青睐|排斥|反感|抵触"
_PRESUMES = re.compile(rf"我知道你.{{0,8}}?({_LIKES_ZH})"
                       r"|(?:(?<![没未])考虑到|既然)你(?!刚|说|提)(平时)?不?太?(喜欢|想|愿意|习惯|讨厌|在意|信得过|偏好|看重)"
                       r"|你(做事|平时|一般|本身|向来|一向|一直|总是|平时就|本来就)+[^。！？，]{0,6}?不?太?"
                       r"(喜欢|爱|讨厌|愿意|想|习惯|讲究|在意|信得过|偏好|看重)"
                       r"|(?<!问)你并?不太?(愿意|想|喜欢)(?![^。！？?]*[？?])"
                       # said as a certainty (你肯定不想……: held-out r19)
                       r"|你(?:肯定|一定|应该|估计|多半)不?太?(?:喜欢|想|愿意|习惯|讨厌|在意)(?![^。！？?]*[？?])"
                       r"|\byou (?:probably|surely|must) (?:don't|do not) (?:want|like)\b"
                       r"|\bI know you (don't |do not |really )?(like|love|enjoy|hate|prefer|trust|value|favou?r|rely on)"
                       r"|\byou('ve)? (always|never) (like|liked|enjoy|enjoyed|hate|hated)"
                       r"|\b(since|as|knowing|given that) you (prefer|like|don't like|dislike|hate|enjoy|would rather"
                       r"|'d rather|don't want)", re.IGNORECASE)
# Hedged, in a turn that proposes or answers a solution ("你应该也不想为这点事改变工作习惯，那…":
# held-out r23). A need inference guesses at needs by its nature ("我猜你也不想再来回改了" is how
# r10's, r21's and r22's acceptable dialogues infer one): there they are the turn's job.
_PRESUMES_HEDGED = re.compile(
    r"你(?:应该|大概|估计|多半|想必)(?:也|都)(?:不?太?)(?:喜欢|想|愿意|习惯|讨厌|在意)(?![^。！？?]*[？?])"
    r"|(?:我猜|想必)你(?:也|都)?不?太?(?:喜欢|想|愿意|习惯|讨厌|在意)(?![^。！？?]*[？?])"
    r"|\bI'm sure you (?:don't|do not|wouldn't|would not) (?:want|like)\b", re.IGNORECASE)
# What the user has said is theirs to recall: a match whose next words the user already said
# ("既然你不想吃药" after "我不想靠吃药") is the assistant listening, not presuming.
_WHAT = re.compile(r"[\u4e00-\u9fff]{2}|[a-z]{3,}", re.IGNORECASE)


@check("preferences_not_presumed")
def preferences_not_presumed(out: Dialogue, v: Mapping[str, Any]) -> Iterator[str]:
    said_by_user = ""
    inferring = _actions(v, "requirement_prediction")
    for i, turn in enumerate(out.turns, start=1):
        said_by_user += turn.user.content
        hedged = [] if turn.assistant.action in inferring else list(_PRESUMES_HEDGED.finditer(turn.assistant.content))
        for m in [*_PRESUMES.finditer(turn.assistant.content), *hedged]:
            what = _WHAT.search(turn.assistant.content[m.end():m.end() + 12])
            if what and what.group(0).lower() in said_by_user.lower():
                continue
            yield say(v, f"turn {i} assistant: presumes the user's preferences ({m.group(0)!r}); the assistant does "
                         "not know them until the user says so",
                      f"第 {i} 轮 assistant：预设了用户的喜好（“{m.group(0)}”）；用户说出之前，助手并不知道")
            break
    for i, label, reason in _foretold(out, v):
        yield say(v, f"turn {i} assistant: tells the user's own reason about {label} ({reason!r}) before the user "
                     "gives it; the assistant does not know the user's preferences until the user says them",
                  f"第 {i} 轮 assistant：用户还没说，助手就说出了用户对 {label} 的理由（“{reason}”）；"
                  "用户说出之前，助手并不知道这些偏好")


# The framework's reasons are the user's to reveal: an assistant turn before the feedback that
# holds three of a reason's own units (none of the framework's public text, nothing the user has
# said) tells the preference for them ("先从最省事、不用改变你工作习惯的办法入手" before "加个腰靠就
# 能用，不用改变我的工作习惯": held-out r24). Eleven labelled presumptions of r2-r24 hold three; no
# acceptable dialogue of the corpus or r1-r24 holds more than two. Words any turn uses are no unit.
_FORETOLD_UNITS = 3
_COMMON_ZH = frozenset("这个 那个 一个 可以 听起 起来 我们 你们 就是 还是 一下 一点 不是 没有 什么 怎么 这样 那样 "
                       "自己 时候 我的 你的 的话 因为 所以 但是 不过 如果 真的 其实".split())


_CLAUSE = re.compile(r"[，。；！？,.;!?]")


def _own_reason_units(reason: str, public: frozenset[str]) -> frozenset[str]:
    """The units of a reason's clauses that say more than the solution: a clause half of whose
    units the framework's text holds restates the solution ("把纠正措施、责任人和时间列成表格" of
    "…列出纠正措施、责任人和完成时间，用表格形式…"), and an assistant proposing it in other words
    tells no reason (a27's acceptable dialogue: "…分别列成表，…看的人一眼就清楚")."""
    from memsynth.quality.textrules.meaning import meaning_units

    own: set[str] = set()
    for clause in _CLAUSE.split(reason):
        units = meaning_units(clause)
        if units and len(units & public) * 2 < len(units):
            own |= units
    return frozenset(own)


def _foretold(out: Dialogue, v: Mapping[str, Any]) -> Iterator[tuple[int, str, str]]:
    """(turn, solution label, the user's reason) for each assistant turn that tells a reason early."""
    from memsynth.quality.textrules.meaning import meaning_units, telling_and_opinion

    framework = list(v.get("framework") or [])
    reasons = {f["label"]: str(f["reason"]) for f in framework if f.get("kind") == "solution" and f.get("reason")}
    public = frozenset(meaning_units(" ".join(" ".join([str(f.get("text", "")), *map(str, f.get("evidences") or [])])
                                              for f in framework)) | telling_and_opinion() | _COMMON_ZH)
    feedback = _actions(v, "solution_feedback")
    said = ""
    for i, turn in enumerate(out.turns, start=1):
        said += " " + turn.user.content
        known = public | meaning_units(said)
        for label, reason in reasons.items():
            later = any(t.user.action in feedback and t.user.reference == label for t in out.turns[i:])
            held = sorted((_own_reason_units(reason, public) - known) & meaning_units(turn.assistant.content))
            if later and len(held) >= _FORETOLD_UNITS:
                yield i, label, reason
                break
