"""enpmr's checks: the seed's rules a JSON schema cannot express."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from flows.enpmr.leaks import GIVEAWAY_DETAILS, Giveaway
from flows.enpmr.options import (
    MIN_ACHIEVED,
    MIN_NOT_ACHIEVED,
    MIN_NOT_PROFICIENT,
    MIN_PREFERENCES,
    MIN_PROFICIENT,
)
from memsynth.core.textmatch import length_in_words, mentions_exactly, near_duplicates, refers_to, sentences
from memsynth.generation import checklib as lib
from memsynth.generation.stage import check, say
from schemas.enpmr import (
    BlriScores,
    Faithfulness,
    Goals,
    LifeThemes,
    MemorySession,
    PersonaDescription,
    Powers,
    Profile,
    Relationships,
    ScenarioCheck,
    Scene,
    SupportDialogue,
)


@check("distinct_preferences")
def distinct_preferences(out: Profile, v: Mapping[str, Any]) -> Iterator[str]:
    """At least the minimum of items that differ in wording and in meaning ("loves spicy food" and
    "enjoys hot dishes" are one)."""
    from memsynth.quality.textrules.meaning import same_meaning_pairs

    unique = list(dict.fromkeys(p.strip().lower() for p in out.preferences))
    pairs = same_meaning_pairs(unique)
    repeats = {j for _, j in pairs}
    if (n := len(unique) - len(repeats)) < MIN_PREFERENCES:
        yield say(v, f"preferences must hold at least {MIN_PREFERENCES} distinct items (none the same as another in "
                     f"other words), found {n}",
                  f"preferences 至少要有 {MIN_PREFERENCES} 条互不相同的内容（换个说法的同一件事也算重复），实际只有 {n} 条")
    # Past the minimum too, no item says another again (the rule: no preference repeats another).
    for i, j in pairs[:3]:
        yield say(v, f"preference {unique[j]!r} says {unique[i]!r} again in other words; make every item different",
                  f"偏好“{unique[j]}”和“{unique[i]}”换了说法说的是同一件事；每一项都要不同")


def _repeats(v: Mapping[str, Any], label: str, names: Sequence[str]) -> Iterator[str]:
    """One problem per name that repeats an earlier one (case and spacing ignored)."""
    seen: set[str] = set()
    for i, name in enumerate(names):
        key = name.strip().lower()
        if key in seen:
            yield say(v, f"{label}[{i}] {name!r} repeats an earlier one", f"{label}[{i}]“{name}”与前面的重复")
        seen.add(key)


# The library's checks (memsynth.generation.checklib), declared under the names the rules use.
theme_dates_in_window = lib.dates_within("themes[].start_date", start=lib.var("window_start"),
                                         end=lib.var("reference_date"), name="theme_dates_in_window")
# Every memory falls between its theme's start and the reference date.
dates_in_theme = lib.dates_within("items[].date", start=lib.var("theme.start_date"), end=lib.var("reference_date"),
                                  name="dates_in_theme")
dates_in_window = lib.dates_within("items[].date", start=lib.var("window_start"), end=lib.var("reference_date"),
                                   name="dates_in_window")
enough_items = lib.items("items", min=lib.var("min_items"), name="enough_items")
chronological = lib.chronological("items[].date", name="chronological")


@check("distinct_themes")
def distinct_themes(out: LifeThemes, v: Mapping[str, Any]) -> Iterator[str]:
    """No theme repeats another, under its title or another one."""
    yield from _repeats(v, "themes", [t.theme for t in out.themes])
    titles = {t.theme.strip().lower() for t in out.themes}
    if len(titles) == len(out.themes):  # exact repeats are said above
        for i, j in near_duplicates([f"{t.theme} {t.description}" for t in out.themes]):
            yield say(v, f"themes[{j}] {out.themes[j].theme!r} is themes[{i}] {out.themes[i].theme!r} again in other "
                         "words; make every theme a different part of life",
                      f"themes[{j}]“{out.themes[j].theme}”与 themes[{i}]“{out.themes[i].theme}”是同一件事换了说法；"
                      "每个主题要是生活中不同的部分")


@check("enough_themes")
def enough_themes(out: LifeThemes, v: Mapping[str, Any]) -> Iterator[str]:
    if len(out.themes) < v["min_themes"]:
        yield say(v, f"give at least {v['min_themes']} themes, got {len(out.themes)}",
                  f"请至少给出 {v['min_themes']} 个主题，实际给了 {len(out.themes)} 个")


@check("quality_mix")
def quality_mix(out: Relationships, v: Mapping[str, Any]) -> Iterator[str]:
    kinds = {r.relationship_quality for r in out.items}
    for missing in sorted({"good", "bad"} - kinds):
        yield say(v, f"include at least one relationship of quality {missing!r}",
                  f"至少要有一个 relationship_quality 为 \"{missing}\" 的人")


@check("proficiency_mix")
def proficiency_mix(out: Powers, v: Mapping[str, Any]) -> Iterator[str]:
    good = sum(p.performance == "proficient" for p in out.items)
    if good < MIN_PROFICIENT:
        yield say(v, f"at least {MIN_PROFICIENT} sub-skills must be 'proficient', found {good}",
                  f"至少 {MIN_PROFICIENT} 项技能必须是 \"proficient\"，实际 {good} 项")
    if len(out.items) - good < MIN_NOT_PROFICIENT:
        yield say(v, f"at least {MIN_NOT_PROFICIENT} sub-skills must be 'not proficient', found {len(out.items) - good}",
                  f"至少 {MIN_NOT_PROFICIENT} 项技能必须是 \"not proficient\"，实际 {len(out.items) - good} 项")


@check("goal_status")
def goal_status(out: Goals, v: Mapping[str, Any]) -> Iterator[str]:
    done = sum(g.status == "achieved" for g in out.items)
    if done < MIN_ACHIEVED:
        yield say(v, f"at least {MIN_ACHIEVED} goals must be 'achieved', found {done}",
                  f"至少 {MIN_ACHIEVED} 个目标必须是 \"achieved\"，实际 {done} 个")
    if len(out.items) - done < MIN_NOT_ACHIEVED:
        yield say(v, f"at least {MIN_NOT_ACHIEVED} goal must be 'not achieved'",
                  f"至少 {MIN_NOT_ACHIEVED} 个目标必须是 \"not achieved\"")
    if out.items and out.items[-1].status != "not achieved":
        yield say(v, "the last goal must be the one not achieved yet", "最后一个目标必须是尚未实现的那个")


@check("distinct_names")
def distinct_names(out: Any, v: Mapping[str, Any]) -> Iterator[str]:
    """No item repeats another, word for word or in other words (a relationship's name is a
    person's: only the same name repeats it)."""
    from memsynth.quality.textrules.meaning import same_meaning_pairs

    names = [i.name for i in out.items]
    yield from _repeats(v, "items", names)
    if isinstance(out, Relationships) or len({n.strip().lower() for n in names}) < len(names):
        return
    for i, j in same_meaning_pairs(names):
        yield say(v, f"items[{j}] {names[j]!r} is items[{i}] {names[i]!r} again in other words; make every item "
                     "a different one",
                  f"items[{j}]“{names[j]}”与 items[{i}]“{names[i]}”换了说法说的是同一件事；每一项都要不同")


def _alternation(v: Mapping[str, Any], turns: Sequence[Any]) -> Iterator[str]:
    for i, turn in enumerate(turns):
        expected = "user" if i % 2 == 0 else "ai"
        if turn.role != expected:
            yield say(v, f"turns[{i}].role is {turn.role!r}; turns alternate user/ai starting with the user",
                      f"turns[{i}].role 是 \"{turn.role}\"；各轮必须由 user 开始、user 与 ai 交替")
            return


@check("session_alternates")
def session_alternates(out: MemorySession, v: Mapping[str, Any]) -> Iterator[str]:
    yield from _alternation(v, out.turns)


@check("user_reveals_memory")
def user_reveals_memory(out: MemorySession, v: Mapping[str, Any]) -> Iterator[str]:
    """The user's words draw on the memory's details — not necessarily its name."""
    said = " ".join(t.content for t in out.turns if t.role == "user")
    if not refers_to(said, v["memory"]["details"]):
        yield say(v, "no user turn brings up this memory; let the user talk about its concrete details",
                  "没有哪一轮用户发言谈到这段记忆；请让用户说出它的具体细节")


# A title this long said word for word is quoted, not mentioned: short ones ("学游泳") are how
# anyone would say it.
TITLE_QUOTED = {"zh": 8, "en": 5}  # characters in Chinese, words in English


def _quoted_title(v: Mapping[str, Any], memory: Mapping[str, Any], texts: Sequence[str]) -> Iterator[str]:
    """The first text that says the memory's title word for word, unless the title is a person's name."""
    if v.get("category") == "relationship":
        return  # its title is the person's name, and naming them is how anyone tells it
    name = str(memory.get("name", ""))
    if length_in_words(name) < TITLE_QUOTED["zh" if v.get("language") == "zh" else "en"]:
        return
    for i, text in enumerate(texts):
        if mentions_exactly(text, name):
            yield say(v, f"turns[{i}] quotes the memory's title {name!r}; tell it in the speaker's own words",
                      f"turns[{i}] 照搬了记忆的标题“{name}”；请用说话人自己的话讲出来")
            return


@check("does_not_recite_title")
def does_not_recite_title(out: MemorySession, v: Mapping[str, Any]) -> Iterator[str]:
    yield from _quoted_title(v, v["memory"], [t.content for t in out.turns])


@check("recall_does_not_quote_title")
def recall_does_not_quote_title(out: SupportDialogue, v: Mapping[str, Any]) -> Iterator[str]:
    """"without quoting the memory's title" (support_dialogue.j2): the AI recalls, it does not cite."""
    yield from _quoted_title(v, v["target"], [t.content if t.role == "ai" else "" for t in out.turns])


@check("dialogue_alternates")
def dialogue_alternates(out: SupportDialogue, v: Mapping[str, Any]) -> Iterator[str]:
    yield from _alternation(v, out.turns)


def _memory_turn(out: SupportDialogue) -> Any | None:
    if 1 <= out.memory_turn <= len(out.turns):
        return out.turns[out.memory_turn - 1]
    return None


def _recalls(text: str, v: Mapping[str, Any]) -> bool:
    """Does the turn draw on what only the target holds? Words the scene or profile share with it
    (the user's own name is in most memories) show nothing: an AI turn that only says "Oh Megan"
    recalls no memory, and a memory_turn counted among the AI's turns alone points at one."""
    giveaway = target_giveaway(v)
    if giveaway.recognisable():
        return bool(giveaway.in_text(text))
    return refers_to(text, v["target"]["details"])  # too little of the target is its own to ask for


@check("memory_turn_recalls_target")
def memory_turn_recalls_target(out: SupportDialogue, v: Mapping[str, Any]) -> Iterator[str]:
    turn = _memory_turn(out)
    if turn is None:
        yield say(v, f"memory_turn {out.memory_turn} is not a turn of this {len(out.turns)}-turn dialogue",
                  f"memory_turn {out.memory_turn} 不是这段 {len(out.turns)} 轮对话中的一轮")
    elif turn.role != "ai":
        yield say(v, f"memory_turn {out.memory_turn} is a {turn.role} turn; it must be the AI's",
                  f"memory_turn {out.memory_turn} 是 {turn.role} 的发言；它必须是 ai 的发言")
    elif not _recalls(turn.content, v):
        yield say(v, f"the AI turn at memory_turn {out.memory_turn} does not draw on the target memory's details",
                  f"memory_turn {out.memory_turn} 这一轮 AI 发言没有用到目标记忆的具体细节")


@check("recall_length")
def recall_length(out: SupportDialogue, v: Mapping[str, Any]) -> Iterator[str]:
    turn = _memory_turn(out)
    limit = v["recall_limit"]
    if turn is not None and (n := length_in_words(turn.content)) > limit:
        yield say(v, f"the AI turn at memory_turn {out.memory_turn} has {n} words; the whole turn may have at most "
                     f"{limit}",
                  f"memory_turn {out.memory_turn} 这条 AI 发言有 {n} 个字；整条发言不能超过 {limit} 个字")


def _background(v: Mapping[str, Any]) -> list[str]:
    """What the dialogue may draw on freely: the scene, the profile, the need and the theme."""
    return [str(v.get(k) or "") for k in ("scene", "profile_summary", "need_description", "theme_name")]


def target_giveaway(v: Mapping[str, Any]) -> Giveaway:
    """The target's people and the details only it holds (not the scene's, the profile's or a negative's)."""
    return Giveaway.of(v["target"], _background(v), v.get("category"), v["negatives"])


def negative_giveaways(v: Mapping[str, Any]) -> list[Giveaway]:
    """Each negative's people and the details only it holds (not the target's, nor the scene's)."""
    target = f"{v['target']['details']} {v['target']['text']}"
    return [Giveaway.of(n, [*_background(v), target], others=[o for o in v["negatives"] if o is not n])
            for n in v["negatives"]]


@check("user_never_states_memory")
def user_never_states_memory(out: SupportDialogue, v: Mapping[str, Any]) -> Iterator[str]:
    """The user never brings up the memory: not its title, its people (张老师 for 张立新) or its details."""
    name = v["target"]["name"]
    giveaway = target_giveaway(v)
    for i, turn in enumerate(out.turns):
        if turn.role != "user":
            continue
        if mentions_exactly(turn.content, name):
            yield say(v, f"turns[{i}]: the user names the memory {name!r}; only the AI may bring it up",
                      f"turns[{i}]：用户说出了记忆“{name}”；只有 AI 可以提起它")
        elif found := giveaway.in_text(turn.content):
            yield say(v, f"turns[{i}]: the user brings up the memory the AI is to recall ({', '.join(found)}), "
                         "even in other words; leave it to the AI",
                      f"turns[{i}]：用户提到了 AI 要回想起的那段记忆（{'、'.join(found)}），换个说法也不行；留给 AI 去提")


@check("no_recall_before_memory_turn")
def no_recall_before_memory_turn(out: SupportDialogue, v: Mapping[str, Any]) -> Iterator[str]:
    giveaway = target_giveaway(v)
    for i, turn in enumerate(out.turns[: max(0, out.memory_turn - 1)]):
        if turn.role == "ai" and (found := giveaway.in_text(turn.content)):
            yield say(v, f"turns[{i}]: the AI already brings up the memory ({', '.join(found)}) before "
                         f"memory_turn {out.memory_turn}; recall it in that turn only",
                      f"turns[{i}]：AI 在 memory_turn {out.memory_turn} 之前就提到了那段记忆（{'、'.join(found)}）；"
                      "只能在那一轮提起")


@check("recall_avoids_negatives")
def recall_avoids_negatives(out: SupportDialogue, v: Mapping[str, Any]) -> Iterator[str]:
    turn = _memory_turn(out)
    if turn is None:
        return
    for k, giveaway in enumerate(negative_giveaways(v), start=1):
        if found := giveaway.in_text(turn.content):
            yield say(v, f"the recall at memory_turn {out.memory_turn} uses another memory (other memory {k}: "
                         f"{', '.join(found)}); use only the target",
                      f"memory_turn {out.memory_turn} 的回忆用到了其他记忆（第 {k} 条：{'、'.join(found)}）；只能用目标记忆")


@check("blri_in_scale")
def blri_in_scale(out: BlriScores, v: Mapping[str, Any]) -> Iterator[str]:
    points = v["points"]
    for i, score in enumerate(out.scores):
        if score not in points:
            yield say(v, f"scores[{i}] = {score} is not a point of the scale ({', '.join(map(str, points))})",
                      f"scores[{i}] = {score} 不是量表上的取值（{'、'.join(map(str, points))}）")


@check("verdict_has_grounds")
def verdict_has_grounds(out: Faithfulness, v: Mapping[str, Any]) -> Iterator[str]:
    """A leak the judge reports is there to see: a turn holds the memory's people or details."""
    turns = v["turns"]
    target = target_giveaway(v)
    if out.user_reveals_target and not any(
            t["role"] == "user" and target.in_text(t["content"]) for t in turns):
        yield say(v, "user_reveals_target is true, but no user turn names the target memory's people or holds "
                     f"{GIVEAWAY_DETAILS} of its details; re-check the user turns",
                  f"user_reveals_target 为 true，但没有哪一轮用户发言提到目标记忆中的人或其中 {GIVEAWAY_DETAILS} 处细节；"
                  "请重新核对用户的发言")
    if out.recalled_early and not any(
            t["role"] == "ai" and target.in_text(t["content"]) for t in turns[: max(0, v["memory_turn"] - 1)]):
        yield say(v, f"recalled_early is true, but no AI turn before turn {v['memory_turn']} names the target "
                     f"memory's people or holds {GIVEAWAY_DETAILS} of its details; re-check those turns",
                  f"recalled_early 为 true，但第 {v['memory_turn']} 轮之前没有哪一轮 AI 发言提到目标记忆中的人或其中 "
                  f"{GIVEAWAY_DETAILS} 处细节；请重新核对这些发言")
    negatives = negative_giveaways(v)
    if out.uses_negatives and not any(g.in_text(t["content"]) for g in negatives for t in turns):
        yield say(v, "uses_negatives is true, but no turn names another memory's people or holds "
                     f"{GIVEAWAY_DETAILS} details found only in another memory; a detail the target also holds is "
                     "the target's",
                  f"uses_negatives 为 true，但没有哪一轮提到其他记忆中的人，或含有 {GIVEAWAY_DETAILS} 处只属于其他记忆的细节；"
                  "目标记忆里也有的细节属于目标记忆")


# A judge's flags and its score say the same thing: a failed criterion scores at most 3 (a
# scene another memory fits as well is not a 5). A low score with every flag clean stands: the
# judge may find the whole weak without naming one criterion.
FLAGGED_MAX_SCORE = 3


def _score_agrees(v: Mapping[str, Any], score: int, failed: list[str]) -> Iterator[str]:
    if failed and score > FLAGGED_MAX_SCORE:
        yield say(v, f"score {score} contradicts the verdict ({', '.join(failed)}): a failed criterion scores at "
                     f"most {FLAGGED_MAX_SCORE}",
                  f"score {score} 与判断（{'、'.join(failed)}）矛盾：有一项不合格时，最多给 {FLAGGED_MAX_SCORE} 分")


@check("faithfulness_score_agrees")
def faithfulness_score_agrees(out: Faithfulness, v: Mapping[str, Any]) -> Iterator[str]:
    failed = [name for name, bad in (("grounded_in_target=false", not out.grounded_in_target),
                                     ("uses_negatives=true", out.uses_negatives),
                                     ("user_reveals_target=true", out.user_reveals_target),
                                     ("recalled_early=true", out.recalled_early)) if bad]
    yield from _score_agrees(v, out.score, failed)


@check("scenario_score_agrees")
def scenario_score_agrees(out: ScenarioCheck, v: Mapping[str, Any]) -> Iterator[str]:
    failed = [name for name, bad in (("fits_target=false", not out.fits_target),
                                     ("expresses_need=false", not out.expresses_need),
                                     ("fits_a_negative=true", out.fits_a_negative)) if bad]
    yield from _score_agrees(v, out.score, failed)


# The scene is told in two to four sentences (the prompt asks for as many).
SCENE_SENTENCES = (2, 4)


@check("scene_form")
def scene_form(out: Scene, v: Mapping[str, Any]) -> Iterator[str]:
    """Two to four sentences, and none of the target's people: whoever the scene names, the user will."""
    low, high = SCENE_SENTENCES
    n = len(sentences(out.scene))
    if not low <= n <= high:
        yield say(v, f"the scene has {n} sentences; tell it in {low} to {high}",
                  f"scene 有 {n} 句；请用 {low} 到 {high} 句话写")
    people = Giveaway.of(v["target"], [str(v.get("profile_summary") or "")], v.get("category"), v["negatives"]).people
    if named := sorted(p.removeprefix("kin:") for p in people
                       if Giveaway(frozenset({p}), frozenset()).in_text(out.scene)):
        yield say(v, f"the scene names the target memory's people ({', '.join(named)}); the user would then "
                     "bring them up: set the scene around other people",
                  f"scene 提到了目标记忆中的人（{'、'.join(named)}），用户就会说起他们；请让场景里是别的人")


# A PersonaHub persona is prose about someone, not a form: "Occupation: …. Age: …".
_FIELD_LABEL = re.compile(r"(^|[.;。；\n])\s*[A-Za-z\u4e00-\u9fff][\w\u4e00-\u9fff ]{0,20}[:：]")


@check("persona_is_prose")
def persona_is_prose(out: PersonaDescription, v: Mapping[str, Any]) -> Iterator[str]:
    labels = len(_FIELD_LABEL.findall(out.description))
    if labels >= 2:
        yield say(v, f"the description lists attributes ({labels} 'label:' fields); write sentences about the "
                     "person and what they are living through",
                  f"description 在罗列属性（{labels} 处“名称：”）；请用完整的句子写这个人和他/她正在经历的事")


# A judge that reverses the negatively worded items itself agrees with them as it agrees with the
# positive ones (code reverses them afterwards, and would reverse them twice): both groups' means
# on the same side, each at least this far from the middle.
SELF_REVERSED = 1.0


@check("blri_literal")
def blri_literal(out: BlriScores, v: Mapping[str, Any]) -> Iterator[str]:
    negative = [bool(item["negative"]) for item in v["items"]]
    pos = [s for s, n in zip(out.scores, negative) if not n]
    neg = [s for s, n in zip(out.scores, negative) if n]
    if not pos or not neg:
        return
    mean_pos, mean_neg = sum(pos) / len(pos), sum(neg) / len(neg)
    if min(abs(mean_pos), abs(mean_neg)) >= SELF_REVERSED and (mean_pos > 0) == (mean_neg > 0):
        numbers = ", ".join(str(i + 1) for i, n in enumerate(negative) if n)
        yield say(v, f"the negatively worded statements ({numbers}) are scored like the others (means "
                     f"{mean_neg:+.1f} and {mean_pos:+.1f}): score each as worded, disagreeing with a negative "
                     "statement when the AI did well; do not reverse them yourself",
                  f"反向表述的条目（{numbers}）和其他条目打分方向一致（平均 {mean_neg:+.1f} 与 {mean_pos:+.1f}）："
                  "请按字面意思打分，AI 做得好时就不同意反向条目；不要自行反转")
