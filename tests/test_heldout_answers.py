"""Our held-out answers (tests/data/heldout/README.md): a strong model's acceptable answers to
every stage prompt pass, and no violation the checks once rejected is let through again (a
check that loosens shows here as the answer it now misses). The third round, written after the
audits covered every stage, keeps its measured figures: the checks' and, with a strong judge's
recorded verdicts, the audits'."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memsynth.quality.answer_check import check_paths
from memsynth.quality.audit_check import audit_cases, judge_figures, read_verdicts
from memsynth.quality.label_quotes import claimed_by_checks
from tests.answer_sets import LEFT_REJECTED

HELDOUT = Path(__file__).resolve().parent / "data" / "heldout"


# Answers their writer labelled acceptable that the checks reject and the round's fresh audit judge
# flags for the same fault: the writer's slip, not the checks'. r15's candidate "…改成站着做，比如把
# 笔记本电脑架到高台面上，或者先用语音输入口述初稿" offers standing and dictation, two solutions.
# Once listed here and mended since (fifteenth session): r25's query "Has that race you ran last
# month changed how you make time for yourself?" with targets [11, 12] (the race's lesson and the
# me-time), read as aimed at the race because "ran" was no form of "run"; r10's writer labelled the
# same question with the same targets a mistake, r25's and a29's writers wrote such a query as
# acceptable and r25's judge passed it, so r10's mistake is let through as the contested label it
# is. r26's candidate "把办公椅换成带腰托的人体工学椅，或者在现有椅子上加一个可调节高度的腰靠" names two
# means of one step, which one_solution_each now reads as one solution (both halves name what the
# step acts on: textrules.forms); r26's mistake that kept the same candidate beside its real slip
# (two candidates of one plan: rising every hour, every 50 minutes) is let through with it.
DISPUTED = {"r15": ["pal/zh/candidates/candidates-zh-a1"]}


@pytest.mark.parametrize("round_", ["r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "r16",
                                    "r17", "r18", "r19", "r20", "r21", "r22", "r23", "r24", "r25", "r26", "r27", "r28", "r29"])
def test_acceptable_answers_pass_and_rejected_violations_stay_rejected(round_):
    verdicts = check_paths([HELDOUT / round_])
    acceptable = [v for v in verdicts if v.label == "acceptable"]
    assert len(acceptable) == 67
    assert [f"{v.recipe}/{v.language}/{v.stage}/{v.id}" for v in acceptable if not v.passed] == DISPUTED.get(round_, [])
    rejected = {f"{v.recipe}/{v.language}/{v.stage}/{v.id}" for v in verdicts
                if v.label == "violation" and not v.passed}
    pinned = set(json.loads((HELDOUT / "rejected.json").read_text(encoding="utf-8"))[round_])
    assert sorted(pinned - rejected) == []


# Acceptable-only rounds (fifteenth session on): three acceptable answers to every prompt, written
# to differ (other content, one toward each end of the lengths asked), for the false rejections one
# acceptable answer a prompt is too few to show. a27, at `a91ae6a`: 194 of 201 passed; the seven
# were mended (a dislike said in an idiom, "抽检当天", "老周一起" read as Monday, a plan's next day
# talked over, a solution proposed in other words than the user's reason).
# a28, at `a91ae6a` with a27's mends: 197 of 201; mended since: a dislike said as what it does
# ("running wrecks her knees") and a character pair across a negation (馒头会不会 / 馒头不爱吃: 头不)
# read as a memory's own words, and "Melanie plays the violin" kept apart from the me-time "for
# running, reading or playing her violin" it is one part of, read as one fact split (same_facts_joined
# now asks the two to share half their units). One is the writer's slip: an analysis of four
# sentences where the prompt asks 一两句话.
# a29, at `6327db7` (a27's and a28's mends in): 196 of 201; mended since: a plan's next day said of
# the plan ("确定了从第二天开始的全检安排"), two means of one step in a candidate ("按摩腰部，或者用
# 按摩枪"), "ran" as a form of "run" (a race "you ran" read as not the memory where she "ran" it).
# Two are left as the writer's: an analysis of three sentences where the prompt asks 一两句话, and
# the requirement type "准备年终质量汇报", a task of one year's end (lasting_requirement_types, from a
# labelled mistake of r5's).
# a30, at `cca9f19` (a29's mends in): 198 of 201; mended since: a year a session's "last year" names
# ("a lake sunrise she painted in 2022", the session of May 2023) read as one no session states.
# Two are the writer's slips: an analysis of three sentences ("in a sentence or two"), and an
# opening query of two questions ("怎么老是被退回来？该怎么办？" where the prompt asks 一句).
# a31, at `fd0521e` (a30's mends in): 197 of 201; mended since: the question an analysis says she
# answers ("Asked 'What now?', she lays out her plans") read as scoring the other speaker's words,
# and a query about the ankle two target memories share (脚踝) read as saying nothing of its targets.
# Left: a fact of 7 characters where the prompt asks 8 to 40 (the writer's slip), and a candidate
# naming two means of one step that share one word of what they act on ("买一个带腰托的人体工学椅，或者
# 先用卷起来的毛巾垫在腰后"): the check's false rejection, kept because one shared character would
# let two plans of one topic through as one (every health candidate there names 腰).
# a32, at `db60045` (a31's mends in): 196 of 201; mended since: a plan's next day "确认了从第二天起…"
# (确认 a verb of planning), and, found by test_bigfive's mutants of its profiles, a trait labelled
# with its dimension ("开放性较高：…仔细验证…") read as covering conscientiousness too. Left: a query about the cat's nights ("晚上睡觉还那么黏你吗？") read as
# aimed at the ankle memory, whose "休息" the synonym table reads as sleep (the check's false
# rejection); two themes of one father, his stroke and the daily care (one_theme_per_relative,
# from labelled mistakes of r8: contested); a candidate asking the client to move the need's
# deadline (keeps_the_deadline: the writer's call); "完成审核整改与客户投诉处理" as a lasting
# requirement type (the writer's call, as a29's).
ACCEPTABLE_ONLY = {"a27": 201, "a28": 201, "a29": 201, "a30": 201, "a31": 201, "a32": 201}


@pytest.mark.parametrize("round_", sorted(ACCEPTABLE_ONLY))
def test_every_answer_of_an_acceptable_only_round_passes(round_):
    verdicts = check_paths([HELDOUT / round_])
    assert {v.label for v in verdicts} == {"acceptable"} and len(verdicts) == ACCEPTABLE_ONLY[round_]
    assert sorted(f"{v.recipe}/{v.language}/{v.stage}/{v.id}" for v in verdicts if not v.passed) == \
        LEFT_REJECTED.get(round_, [])


# Rounds 3 and 4 (2026-11-28, fresh writers, then fresh judges on `--render-audits` prompts
# alone): of 134 mistakes the checks reject `checked`; with the audit judge's verdicts, `caught`
# are rejected or flagged. Acceptable answers all pass the checks; the judge flags `wrongly` of
# those audited.
# r3, measured fresh before the checks its misses led to (ages, CoT reasoning, strict ids, theme
# descriptions, dated requirement types): 63 and 114.
# r4 was written after all of those, and measured fresh at 54 and 115, when the replies of the
# model under evaluation were not audited yet and a month in a requirement type was not checked.
# With those audits (their 21 prompts judged by a fresh session per round): r3 124, r4 126.
# Checks added since from r4's misses (a Big Five dimension left out, a requirement type that is
# no short phrase, a persona's number in words its sessions lack, ids chosen that the analysis
# did not conclude on) reject one more of r3 and four more of r4; the judge had flagged all five.
# r5 was written after those, by four fresh writers, and judged by four fresh judges, and
# measured fresh at 53 and 116. Checks added since from r5's misses (a recall that quotes the
# memory's title, a highlight's name that retells the event, `gender: "male"` in a Chinese
# profile) reject three more; the judge had flagged two of them. A profile's fact repeated in
# another field (profile.facts_not_repeated) rejects one more of r3, two of r4, one of r5; a
# candidate solution of two sentences (candidates.one_sentence_solutions), one more of r3; a
# requirement type naming one occasion ("年终", "本次": lasting_requirement_types), one of r5.
# r6 was written after the first four of those (by four fresh writers, judged by four fresh
# judges) and measured fresh at 61 and 117; the last two reject two more of it, and a day said
# with the wrong weekday (experience.weekdays_agree) one more, which the judge had let through.
# A preference memory holding two of the profile's preferences (preferences.one_preference_each,
# written after r6 was scored) rejects two more of r3, r4, r5 and r6; the judge had flagged all
# but one of r4. A month of a timeline that describes the user's character (timeline.no_traits:
# 向来, 一向, 性格) rejects one more of each; the judge had flagged all four. An emotion score whose
# evidence quotes the other speaker's words (score.speaker_own_words) one more of each, which no
# audit reads (emotion scores are measured against annotators).
# r7 was written after all of those (four fresh writers, four fresh judges) and measured fresh at
# 69 and 125 (93 %), the judge flagging no acceptable answer. Checks added since from its misses
# (a list item of a profile written as a paragraph: profile.short_facts; a graduate student
# as a worker; "2号和6号" read as the ids an analysis chose; "你也可以…" after a rejection)
# reject four more of it, two more of r3 and one of r6; the judge had flagged every one. A fact
# whose `about` names the other speaker than the one it names (extract.known_speakers) one more of
# r4 and of r7.
# Written before r8 (ninth session): an evaluation turn that names the wrong memory or brings in a
# second one (eval_respond.draws_on_its_memory) rejects two or three more of r3-r7.
# r8 was written after that (four fresh writers, four fresh judges) and measured fresh at `a86a4f1`:
# 74 and 118 (88 %), the judge flagging no acceptable answer; two acceptable answers were rejected
# (a 49-word turn counted as 52: contractions; a style's "two or three sentences" read as a number
# the sessions lack), both fixed. Checks added since from its misses (an age one year past the
# band; a region the persona drops: persona.names_the_region; three questions at once:
# query.one_question; the speaker's own life asked of "you": query.asks_the_character) reject
# three more of it, and one or two of r3, r4, r5 and r7. A scene set where a listed negative
# happened (scene.fits_no_other_memory) and two themes of one relative's story
# (life_themes.one_theme_per_relative), classes every round wrote, reject one or two more of each.
# A persona's domain that is the other speaker's topic (persona.domains_of_the_character) and a
# trait written as a sentence (persona.short_traits) one more of r3, r6 and two of r8, all four
# of which the judge had let through. An assistant presuming a preference in more of its forms
# ("你做事讲究…，不喜欢…", "考虑到你不太想…": dialogue.preferences_not_presumed) one more of r3-r6.
# r9 was written after all of those (four fresh writers, four fresh judges) and measured fresh at
# `eceb201`: 83 (62 %) and 122 (91 %), the judge flagging 4 of 65 acceptable answers; the checks
# rejected one acceptable answer (a deadline "11月15日（星期五）前" read as a day reached), fixed.
# Checks mended after it (a conclusion that says only 综合来看; a scene holding 4 of a negative's
# character pairs; 一丝不苟 and 容易紧张 as traits) reject three more of it; "那不如…" after a
# rejection (dialogue.response_offers_nothing_new) and a relationship named by who the person is
# ("Ward sister on Ward 4", "Mr Bennett's daughter": relationship.named_people) one more of r8, two of r9.
# From r10's misses (written after r9's checks, measured fresh at `378eecf` before these): "At 37,"
# read as an age; "那要不…" after a rejection; "第6个方案" read as id 6; "你表姐" of "许磊的表姐"
# as the speaker reversed. They reject one more of r4 and of r6.
# r10 (four fresh writers, four fresh judges) was measured fresh at `378eecf`: 78 (58 %) and 125
# (93 %), the judge flagging 2 of 65 acceptable answers, the checks none; the four mended
# readers above reject four more of it. A month of a timeline that tells of work alone
# (timeline.months_span_aspects, textrules.aspects) one more of r4, r5, r6, r9 and r10; an
# evidence that draws a conclusion ("…，说明…": requirements.evidences_are_facts) one more of r3,
# r4, r8 and r10.
# Tenth session, from the let-through mistakes of r3-r10 (before r11 was read): checks for a profile
# that names its person past the occupation, a candidate that moves the need's deadline, a user's
# solution discussion that already says yes or no, a feedback response proposing with its subject
# left out ("…的时候，可以在脚下垫…"), a goal named as a feeling, a proficient skill the text says
# is still dependent, a preference named after what the profile avoids, a session recalling its
# memory as years gone, a merge splitting one fact or stating a day no candidate states, a query
# that speaks of a non-target and none of its targets: r3 91, r4 85, r5 78, r6 86, r7 86, r8 89,
# r9 91, r10 88.
# r11 (four fresh writers, four fresh judges) was written while those were being made, by
# sessions that saw none of them, and measured fresh at `4c848d5`: 81 (60 %) and 126 (94 %), the
# judge flagging 7 of 65 acceptable answers (11 %: five on rules added that session, whose texts were
# then mended), the checks none; of its mistakes claimed by checks alone 37 of 40. "那…也行" after a
# rejection and an emotion analysis quoting the other speaker in straight single quotes ('Wow'),
# both read from r11 after it was measured, reject two more.
# Left: an emotion score in each (a single word overread), the rest judge misses.
# r12 (eleventh session: four fresh writers, four fresh judges, rendered at `318fc8c`) was measured
# fresh there: 93 (69 %) and 130 (97 %), the judge flagging 5 of 65 acceptable answers (7.7 %),
# the checks one (an emotion analysis where the speaker "领了许磊“先养好”的好意": the other's
# words as what she takes in, now read as hers); of its mistakes claimed by checks alone 36 of 40.
# Read from it after: a preference description of three sentences (preferences.preference_sentences)
# rejects one more; the emotion fix lets one through that had been rejected only for that quote.
# A pal profile whose occupation opens with the user's name is no longer a mistake: the prompt now
# says what the check always accepted (PAL-Set), so labels quoting the old line count as claimed
# no more (r7, r11 and r12 one fewer each).
# r13 (four fresh writers, four fresh judges, rendered at `68e58bc`, after all of the above) was
# measured fresh there: 94 (70 %) and 131 (98 %), the judge flagging 6 of 65 acceptable answers
# (9 %), the checks one (a scene where the consultant "said they would review the plan", read as
# the negative memory of a consultant's praise at a case review: verbs of telling are no memory's
# own words now, textrules.meaning.own_units_held); of its mistakes claimed by checks alone 37 of
# 38. That fix lets one mistake through that had been rejected only for those words.
# The choice of memory in an evaluation reply became a judge rule (eval-chooses-memory), so
# mistakes quoting that line count as claimed by checks no more (r3-r12 one to four fewer).
# r14 (twelfth session: four fresh writers, four fresh judges, rendered at `c0ed01f`, after all of
# the above) was measured fresh there: 85 (63 %) and 127 (95 %), the judge flagging 5 of 65
# acceptable answers (7.7 %), the checks none; of its mistakes claimed by checks alone 32 of 35.
# Read from it after: a month telling how the user goes about things ("不善言辞，做事又追求稳妥":
# textrules.forms.traits) rejects one more; a Chinese reason with two English words in it
# ("grounded", "negatives": generation.language, now two words where it was three) one more.
# r15 (four fresh writers at the prompts of r14, four fresh judges with highlight-moment mended)
# was measured fresh at `9df83b9`: the checks rejected 81 (60 %) of its mistakes and 3 of its 67
# acceptable answers; of its mistakes claimed by checks alone 31 of 36. Its judges flagged 3 of 65
# acceptable answers (4.6 %); with today's checks 129 mistakes (96 %) are rejected or flagged.
# Of the three it rejected, two were the checks' misreadings, mended since: "do you think" read as
# another memory's "thinking about" (verbs of opinion are no memory's own words now) and a
# deadline written "星期三（11月13日）前" read as a day the text reaches. The third is DISPUTED above.
# The mending lets through one mistake that had been rejected only for such a reading. Read from
# r15 after: an assistant that presumes the user trusts or values something ("我知道你更信得过表格":
# the verbs of liking, trusting, valuing and refusing in dialogue.preferences_not_presumed) one more;
# two requirement types that differ by 平衡 / 兼顾 alone ("平衡工作与休息", "兼顾工作与休息时间": a
# synonym group of textrules.meaning) one more. r13's "平衡加班与家庭时间" / "兼顾工作与家庭陪伴" differ
# in more than that and are still let through. One lower-case English word in Chinese ("pace",
# "leak"; generation.language: a unit or a file's extension is not one) one more, of r2 one more.
# r16 (four fresh writers at the same prompts, the files split differently; four fresh judges) was
# measured fresh at `6d5f3d6`: the checks rejected 84 (63 %) of its mistakes and 1 of its 67
# acceptable answers (a merge writing "June 2023" as "2023-06", read as a number no candidate
# states: mended, with two mistakes rejected only for that reading let through); of its mistakes
# claimed by checks alone 32 of 39. Its judges flagged 2 of 65 acceptable answers (3.1 %). The
# one-word language bound rejects two more of it. A persona description that never says how old
# the person is (persona.age_in_band now asks for an age, as the prompt does: every acceptable
# description of the corpus and r1-r16 states one) one more of r13, r14 and r16.
# Read from r16 after: a memory_turn counted among the AI's turns alone, pointing at an AI turn
# that shares only the user's name with the memory (memory_turn_recalls_target now asks for what
# only the target holds, as the leak checks read it: every acceptable memory turn of the corpus and
# r1-r16 holds it) one more.
# r17 (four fresh writers at the same prompts, the files split differently again; four fresh
# judges) was measured fresh at `39c87cd`, after the memory_turn check above: the checks rejected
# 88 (66 %) of its mistakes and none of its 67 acceptable answers; of its mistakes claimed by
# checks alone 31 of 36. Its judges flagged 2 of 65 acceptable answers (3.1 %); with the checks,
# 132 of 134 mistakes are rejected or flagged. Read from it after: a new plan put to the user as
# a question after a rejection ("…做几组小燕飞，你看行吗？": response_offers_nothing_new) one more;
# a requirement type naming an occasion that comes once, with before or after it ("处理年会后脚趾
# 红肿": lasting_requirement_types) one more, and one of r15; an AI turn placing the memory years
# back ("隔了快两年再看到这面锦旗": told_near_its_date reads both speakers) one more.
# A highlight's "why it mattered to the user" had no rule (its line named highlight-fields alone,
# whose checks read the fields and the title's length): it is highlight-moment's, which the audit
# judge reads, so r17's description that says only what happened is no longer claimed by checks.
# "No repeats" of requirement types is a line of its own (requirement_types[.zh].j2) naming
# requirement-types-apart beside the check: a type said again in few shared words ("避免伏案久坐伤腰"
# beside "减少久坐久站的伤害") is a reading, which the audit judge now reads. Labels that quote that
# line alone (one each of r3, r5, r6, r8, r14) are no longer claimed by checks; those quoting the
# whole paragraph still are (r16's and r17's, let through).
# A preference name that gives its reason ("早上一定要喝一杯热豆浆，不然一上午都没精神":
# short_names) one more of r16.
# r18 (four fresh writers at the prompts of `f77a599`, whose requirement types' "no repeats" is a
# line of its own; four fresh judges) was measured fresh at `5eb9884`: the checks rejected 83
# (62 %) of its mistakes and none of its 67 acceptable answers; of its mistakes claimed by checks
# alone 33 of 37. Its judges flagged 8 of 65 acceptable answers (12 %): two logs that save and
# then shut down (two operations, as every round's judges read it), two profiles whose "lives
# alone" contradicts a persona who looks after her father at home, a proposal of three measures,
# an analysis that names the user, a memory counted as used on a detail the question gives, and
# a highlight whose description says what happened and not why it mattered (the clause added to
# highlight-moment above; another judge of the same round passed its twin). With the checks, 126
# of 134 mistakes are rejected or flagged. Read from it after: a liking held all along in a
# timeline ("本就不喜欢人多热闹的场合": no_traits) and an occasion that comes once a few characters
# before its "after" ("处理年会饮酒后的脚趾红肿": lasting_requirement_types), two more; a new plan
# told as a routine after a rejection ("其实每天睡前在床上做几组小燕飞": response_offers_nothing_new)
# one more.
# r19 (four fresh writers at the prompts of `0e8cbd3`, whose logs line says that saving and then
# shutting down are two operations; four fresh judges) was measured fresh at `bd77b07`: the checks
# rejected 92 (69 %) of its mistakes and none of its 67 acceptable answers; of its mistakes
# claimed by checks alone 33 of 35. Its judges flagged 4 of 65 acceptable answers (6.2 %); with
# the checks, 131 of 134 mistakes are rejected or flagged. Read from it after: a grudging
# rejection ("这法子倒也不是不行，就是……": direct_rejection) and a preference presumed as a
# certainty ("你肯定不想……": preferences_not_presumed), two more; an emotion analysis that quotes
# the other speaker with an apostrophe inside the quote ("Melanie's 'you've got guts'":
# score.speaker_own_words) one more, which the judge had let through.
# r20 (four fresh writers at the same prompts, split as r19's; four fresh judges) was measured
# fresh at `79a07eb`: the checks rejected 90 (67 %) of its mistakes and 1 of its 67 acceptable
# answers (a requirement type "按期完成客户审核整改", a lasting need of a user whose clients audit
# often, read as a deadline by 按期: lasting_requirement_types now reads 按期 only with a hand-in,
# "按期提交", and two mistakes rejected only for that reading are let through); of its mistakes
# claimed by checks alone 33 of 36. Its judges flagged 8 of 65 acceptable answers (12 %): two logs
# that unlock or sign in and then open (the logs line now names both as two operations), two
# memories counted as used on a detail the question gives, a merge of two facts, a persona domain
# taken from the other speaker, a restatement naming an illness the records do not, a highlight
# that says what happened and not why it mattered. With the checks, 128 of 134 mistakes were
# rejected or flagged. Read from it after: a query put in words another memory shares and its
# targets do not ("carve out time for yourself each day" aimed at the charity race:
# aims_at_its_targets) and a rejection that first grants the plan as a way ("听起来也算个办法，
# 不过……": direct_rejection), two more. The vague-query rule says the rest of a query's background
# is the judge's: labels that quote its line are no longer claimed by checks (one each of r3-r5,
# r7, r8, r10-r19; r20's "被经理退回了，要补验证数据" among them).
# r21 (four fresh writers at the prompts of `caddac6`, whose logs line names unlocking and then
# opening as two operations and whose eval_detect and stratmem persona lines say what is not use
# and not the character's; four fresh judges) was measured fresh at `caddac6`: the checks
# rejected 87 (65 %) of its mistakes and 1 of its 67 acceptable answers (a log naming the
# account "sunliwei", read as an English word: an account's name is now a name); of its
# mistakes claimed by checks alone 31 of 32. Its judges flagged 5 of 65 acceptable answers
# (7.7 %): a highlight that says what happened and not why it mattered, a proposal of several
# measures, a restatement naming an illness the records do not, a used memory marked unused, a
# merge of two facts. With the checks, 128 of 134 mistakes were rejected or flagged. Read from
# it after: a requirement type with a deadline as a span ("两周内提交审核整改报告":
# lasting_requirement_types) one more; one rejected only for the account's name is let through.
# r22 (four fresh writers at the same prompts; four fresh judges) was measured fresh at
# `502af3b`: the checks rejected 90 (67 %) of its mistakes and none of its 67 acceptable answers;
# of its mistakes claimed by checks alone 32 of 34. Its judges flagged 4 of 65 acceptable answers
# (6.2 %): a candidate that moves the need to another occasion, two evaluation answers stating
# what only the profile says (a diagnosis, "内向、不爱尝新": the writers saw that persona's other
# prompts, the model under evaluation never does), a persona domain taken from the other
# speaker. With the checks, 130 of 134 mistakes were rejected or flagged. Read from it after: a
# requirement type that opens with a deliverable to be done ("完成卡钳异响问题的8D分析", as r16 and
# r20 wrote too: lasting_requirement_types) one more, and one of r20. query-no-quote says what the
# check sees (a memory copied for eight words, or nearly whole) and leaves a shorter clause to
# the audit judge: 32 of the 657 released queries share four content words in a row with a
# memory, naming what it is about; labels that quote its line are no longer claimed by checks
# (r22's "an agency that helps LGBTQ+ people adopt" among them).
# r23 (four fresh writers at the same prompts, the pal evaluation prompts all given to one writer
# who saw no other prompt of that persona, as the model under evaluation sees none; four fresh
# judges) was measured fresh at `6e43eaa`: the checks rejected 84 (63 %) of its mistakes and 1 of
# its 67 acceptable answers ("livehouse" in a hobby, a loanword Chinese writing keeps in lower
# case: generation.language now lets a few such pass); of its mistakes claimed by checks alone
# 28 of 29. Its judges flagged 5 of 65 acceptable answers (7.7 %): two highlights whose items say
# what happened and not why it mattered (the prompt now asks for it in every item), a log that
# signs in and then selects, a situation adding what its month does not say, a merge of two
# facts. With the checks, 129 of 134 mistakes were rejected or flagged. Read from it after: a
# preference presumed with a hedge ("你应该也不想为这点事改变工作习惯": preferences_not_presumed)
# one more; one rejected only for "livehouse" is let through.
# r24 (four fresh writers at the prompts of `739578b`, whose highlight line asks why it mattered
# in every item; split as r23's; four fresh judges) was measured fresh at `739578b`: the checks
# rejected 90 (67 %) of its mistakes and none of its 67 acceptable answers; of its mistakes
# claimed by checks alone 33 of 34. Its judges flagged 1 of 65 acceptable answers (1.5 %: a
# memory counted as used on a detail the message and the persona give); with the checks, 131 of
# 134 mistakes were rejected or flagged. Read from it after: an assistant telling the user's own
# reason for a solution before the user gives it ("不用改变你工作习惯的办法" before "加个腰靠就能用，
# 不用改变我的工作习惯": preferences_not_presumed) one more; a weekly swim named by its days in
# the habits and counted in the preferences ("on Tuesdays and Fridays at 6:30 a.m." / "early-morning
# swims twice a week": textrules.meaning reads a routine's days as its count and a clock time as its
# part of the day) one more, and one each of r7, r15, r18 and r23 (r11's English was rejected already).
# r25 (four fresh writers at the prompts of `62bcb16`, split as r23's; four fresh judges) was
# measured fresh at `62bcb16`: the checks rejected 92 (69 %) of its mistakes and 1 of its 67
# acceptable answers (a query about "that race you ran" whose targets leave the race out, which
# aims_at_its_targets reads as aimed at the race; r10's writer labelled the same query with the
# same targets a mistake: a debatable label, left as it is); of its mistakes claimed by checks
# alone 32 of 32. Its judges flagged 1 of 65 acceptable answers (1.5 %: a log that opens a file
# and edits it); with the checks, 129 of 134 mistakes were rejected or flagged.
# r26 (four fresh writers at the same prompts, split as r23's; four fresh judges) was measured
# fresh at `9d88c84`, whose checks are r25's: the checks rejected 89 (66 %) of its mistakes and 2
# of its 67 acceptable answers (97 %: the candidate above; an experience where the user arranges,
# on the last day, sampling "从第二天起", read as the text reaching the next day: mended, a plan's
# start is no day the text reaches, and one mistake rejected only for that reading is let
# through); of its mistakes claimed by checks alone 31 of 32. Its judges flagged 3 of 65
# acceptable answers (4.6 %); with the checks, 127 of 134 mistakes were rejected or flagged.
# r27 (fifteenth session: four fresh writers, split as r23's, four fresh judges) was measured fresh
# at `a91ae6a`: the checks rejected 85 (63 %) of its mistakes and 2 of its 67 acceptable answers
# (97 %: "和生产班长商定，从下周一起…" read as the text reaching Monday; "the agency I went with" read
# as the memory of someone who "went swimming"; both mended, and one mistake rejected only for the
# first reading is let through); of its mistakes claimed by checks alone 28 of 29. Its judges
# flagged 2 of 65 acceptable answers (3.1 %); with the checks, 130 of 134 mistakes were rejected
# or flagged. A weekly routine's count the profile changes from the persona's
# (profile.keeps_persona_routines: "每周一、三、五" of "每周挤出两个早上"), read from r26 and r27,
# rejects one more of r5, r26 and r27.
# r28 (fifteenth session, four fresh writers split as r23's, four fresh judges) was measured fresh
# at `cca9f19`, after r27's and a27-a29's mends: the checks rejected 83 (62 %) of its mistakes and
# none of its 67 acceptable answers; of its mistakes claimed by checks alone 30 of 30. Its judges
# flagged 2 of 65 acceptable answers (3.1 %); with the checks, 124 of 134 mistakes (92.5 %) were
# rejected or flagged.
# r29 (the same way) was measured fresh at `fd0521e`, after a30's mends: the checks rejected 87
# (65 %) of its mistakes and none of its 67 acceptable answers; of its mistakes claimed by checks
# alone 31 of 32 (let through: a rejection softened as "嗯，药膏听着是挺方便的，不过…", a form 13 of
# PAL-Set's 139 released sessions would fail under the reading that catches it). Its judges flagged
# 1 of 65 acceptable answers (1.5 %); with the checks, 128 of 134 mistakes (95.5 %) were rejected
# or flagged.
FIGURES = {"r3": {"checked": 91, "caught": 126, "violations": 134, "acceptable_audited": 65, "wrongly": 2},
           "r4": {"checked": 85, "caught": 128, "violations": 134, "acceptable_audited": 65, "wrongly": 5},
           "r5": {"checked": 79, "caught": 120, "violations": 134, "acceptable_audited": 65, "wrongly": 4},
           "r6": {"checked": 86, "caught": 122, "violations": 134, "acceptable_audited": 65, "wrongly": 1},
           "r7": {"checked": 87, "caught": 125, "violations": 134, "acceptable_audited": 65, "wrongly": 0},
           "r8": {"checked": 89, "caught": 120, "violations": 134, "acceptable_audited": 65, "wrongly": 0},
           "r9": {"checked": 91, "caught": 122, "violations": 134, "acceptable_audited": 65, "wrongly": 4},
           "r10": {"checked": 87, "caught": 126, "violations": 134, "acceptable_audited": 65, "wrongly": 2},
           "r11": {"checked": 83, "caught": 127, "violations": 134, "acceptable_audited": 65, "wrongly": 7},
           "r12": {"checked": 93, "caught": 129, "violations": 134, "acceptable_audited": 65, "wrongly": 5},
           "r13": {"checked": 94, "caught": 131, "violations": 134, "acceptable_audited": 65, "wrongly": 6},
           "r14": {"checked": 88, "caught": 128, "violations": 134, "acceptable_audited": 65, "wrongly": 5},
           "r15": {"checked": 85, "caught": 130, "violations": 134, "acceptable_audited": 65, "wrongly": 3},
           "r16": {"checked": 87, "caught": 128, "violations": 134, "acceptable_audited": 65, "wrongly": 2},
           "r17": {"checked": 91, "caught": 132, "violations": 134, "acceptable_audited": 65, "wrongly": 2},
           "r18": {"checked": 87, "caught": 126, "violations": 134, "acceptable_audited": 65, "wrongly": 8},
           "r19": {"checked": 95, "caught": 132, "violations": 134, "acceptable_audited": 65, "wrongly": 4},
           "r20": {"checked": 91, "caught": 127, "violations": 134, "acceptable_audited": 65, "wrongly": 8},
           "r21": {"checked": 87, "caught": 128, "violations": 134, "acceptable_audited": 65, "wrongly": 5},
           "r22": {"checked": 91, "caught": 130, "violations": 134, "acceptable_audited": 65, "wrongly": 4},
           "r23": {"checked": 85, "caught": 129, "violations": 134, "acceptable_audited": 65, "wrongly": 5},
           "r24": {"checked": 92, "caught": 131, "violations": 134, "acceptable_audited": 65, "wrongly": 1},
           "r25": {"checked": 92, "caught": 129, "violations": 134, "acceptable_audited": 65, "wrongly": 1},
           "r26": {"checked": 88, "caught": 127, "violations": 134, "acceptable_audited": 65, "wrongly": 3},
           "r27": {"checked": 85, "caught": 129, "violations": 134, "acceptable_audited": 65, "wrongly": 2},
           "r28": {"checked": 83, "caught": 124, "violations": 134, "acceptable_audited": 65, "wrongly": 2},
           "r29": {"checked": 87, "caught": 128, "violations": 134, "acceptable_audited": 65, "wrongly": 1}}


# Of each round's mistakes whose label quotes a prompt line whose rules only checks enforce:
# (how many, how many the checks reject). r7 fresh (at 4894936): 42 of 74 (57 %); r6 fresh was
# about half by a rougher count of the same. The target is 95 %: what is let through is a check
# that enforces part of its line (a merged, reworded or invented item; a number off by one).
# Tenth session: the semantic half of many bundled lines became rules of their own that the audit
# judge reads (eval replies' grounding, candidates-fit, situations-from-month, log-one-operation,
# persona-specific, highlight-moment, merge-faithful, …), so fewer mistakes count as claimed by
# checks alone (r3 73 → 41 … r10 61 → 32); the checks above reject more of what is left.
CLAIMED = {"r3": (35, 34), "r4": (32, 32), "r5": (29, 29), "r6": (23, 23), "r7": (32, 31), "r8": (30, 30), "r9": (27, 26),
           "r10": (28, 28), "r11": (33, 32), "r12": (33, 31), "r13": (35, 34), "r14": (31, 31), "r15": (33, 33), "r16": (35, 33),
           "r17": (32, 31), "r18": (34, 34), "r19": (31, 31), "r20": (32, 32), "r21": (30, 30), "r22": (32, 32),
           "r23": (29, 29), "r24": (34, 34), "r25": (32, 32), "r26": (32, 32), "r27": (29, 29), "r28": (30, 30), "r29": (32, 31)}


@pytest.mark.parametrize("round_", sorted(FIGURES))
def test_a_late_round_s_checks_and_audits_give_their_recorded_figures(round_):
    paths = [HELDOUT / round_]
    checked = check_paths(paths)
    cases = audit_cases(paths)
    verdicts = read_verdicts(HELDOUT / f"{round_}.verdicts.json", cases)
    assert {c.key for c in cases} == set(verdicts)  # every audited answer was judged
    flagged = {f"{c.recipe}/{c.language}/{c.stage}/{c.id}" for c in cases
               if any(v == "violation" for v, _ in verdicts[c.key].values())}
    audited = {f"{c.recipe}/{c.language}/{c.stage}/{c.id}" for c in cases}
    name = {id(v): f"{v.recipe}/{v.language}/{v.stage}/{v.id}" for v in checked}
    violations = [v for v in checked if v.label == "violation"]
    acceptable = [name[id(v)] for v in checked if v.label == "acceptable"]
    figures = {"checked": sum(not v.passed for v in violations),
               "caught": sum(not v.passed or name[id(v)] in flagged for v in violations),
               "violations": len(violations),
               "acceptable_audited": sum(a in audited for a in acceptable),
               "wrongly": sum(a in flagged for a in acceptable)}
    assert figures == FIGURES[round_]
    # The mistakes whose label quotes prompt lines naming only check-enforced rules
    # (memsynth.quality.label_quotes), and how many of them the checks reject.
    claimed = claimed_by_checks(checked)
    assert (claimed["claimed"], claimed["rejected"]) == CLAIMED[round_], claimed["let_through"]
    # `check-answers --judge` says the same of every violation, and which stages no audit reads.
    said = judge_figures(cases, verdicts, checked)
    assert (said["all_rejected"], said["all_caught"], said["all_violations"]) == (
        figures["checked"], figures["caught"], figures["violations"])
    assert said["all_unaudited"] == sum(name[id(v)] not in audited for v in violations)


# The audit rule `highlight-moment` read the recogniser as someone there "in that moment", where the
# prompt asks who "noticed or acknowledged it": r13's and r14's judges flagged three acceptable
# highlights whose lead heard of the moment later. The rule now says the prompt's words ("then or
# afterwards", and not someone other than the one the description credits). One fresh judge session
# re-read every highlight answer of r11-r14 from prompts rendered with the mended rule
# (`rejudged/highlight-rN.verdicts.json`): it flagged every mistake and no acceptable answer.
@pytest.mark.parametrize("round_", ["r11", "r12", "r13", "r14"])
def test_highlights_rejudged_under_the_mended_rule_flag_every_mistake_and_no_acceptable_answer(round_):
    from flows.enpmr.rules import RULES

    # The verdicts were written under this wording: a rule read otherwise needs judging again.
    assert "then or afterwards" in next(r.rule for r in RULES if r.id == "highlight-moment")
    paths = [HELDOUT / round_ / "enpmr" / language / "highlight.json" for language in ("en", "zh")]
    checked = check_paths(paths)
    cases = audit_cases(paths)
    verdicts = read_verdicts(HELDOUT / "rejudged" / f"highlight-{round_}.verdicts.json", cases)
    assert {c.key for c in cases} == set(verdicts) and len(cases) == 6
    flagged = {c.id for c in cases if any(v == "violation" for v, _ in verdicts[c.key].values())}
    assert sorted(v.id for v in checked if v.label == "acceptable" and v.id in flagged) == []
    assert sorted(v.id for v in checked if v.label == "violation" and v.id not in flagged) == []
