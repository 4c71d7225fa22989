"""pal's rules (PAL-Bench, seed 004, and the authors' synthesis code) and what enforces each."""

from __future__ import annotations

from memsynth.generation.rules import EMOTION_RULES, SHARED_RULES, Rule

# Why a rule of an evaluation prompt is left to it: the model answering is the one evaluated.
EVALUATED = "the prompt of the model under evaluation: how well it follows it is what the benchmark measures"

RULES = (
    Rule("profiles", "profiles of 1-3 sentences a field calling the person \"the user\", no students or retirees, "
         "Big Five levels that vary across a batch", "seed 004 Step 1", checks=("profile.batch_size", "profile.profile_fields", "profile.varied_batch"),
         accepts_less="the seed asks 2-3 sentences a field; released PAL-Set profiles often write one long sentence, "
                      "so the check accepts 1-3 and the prompt asks for 1-3; it also accepts an occupation that opens with "
                      "the user's name, as 10 of PAL-Set's 100 released profiles do (none names its user in another "
                      "field, and the check rejects that), and the prompt now says the occupation may open so"),
    Rule("profile-example", "a profile differs from the prompt's example in every respect: what code compares is the "
         "name and each text field (not the example's nearly word for word)",
         "seed 004 Step 1", checks=("profile.unlike_the_example",)),
    Rule("profile-example-substance", "a profile is not the example's person in other words (the same job, "
         "household or health told again) and does not carry all five of the example's Big Five levels", "seed 004 Step 1",
         prompt_only="a life told again is a reading, and the five levels alone a strong model's acceptable profiles "
                     "in the shared corpus carry (so no check may reject them); the audit judge reads a sample"),
    Rule("the-user", "the user is called \"the user\" (in a dialogue \"you\"), never by full name, surname and "
         "title or given name", "seed 004 Steps 2-6",
         checks=("timeline.user_not_named", "preferences.user_not_named", "situations.user_not_named",
                 "experience.user_not_named", "requirements.user_not_named", "dialogue.user_not_named")),
    Rule("timeline", "one entry per month in order, at least 5 sentences of objective events touching more than one "
         "of work, health, family and leisure, with no word of the user's personality (a trait word: 向来, 一向, "
         "性格, 'has always been', 'by nature') or preferences", "seed 004 Step 2-1",
         checks=("timeline.months_in_order", "timeline.month_sentences", "timeline.no_traits",
                 "timeline.months_span_aspects")),
    Rule("requirement-types", "4-5 distinct requirement types per aspect, each a short (at most 20 characters, 10 "
         "English words) lasting kind of help (no one-off task: no date, month or single occasion such as 本次, "
         "年终, this year's)", "seed 004 Step 2-2",
         checks=("requirement_types.schema", "requirement_types.distinct_requirement_types",
                 "requirement_types.lasting_requirement_types", "requirement_types.short_requirement_types")),
    # distinct_requirement_types also rejects a type said again in other words (textrules.meaning).
    Rule("requirement-types-apart", "no requirement type is another said in other words, in its aspect or another "
         "(\"合理安排加班与休息\" beside \"平衡工作与休息\", \"避免伏案久坐伤腰\" beside \"减少久坐久站的伤害\")",
         "seed 004 Step 2-2", checks=("requirement_types.distinct_requirement_types",),
         prompt_only="the check sees types that share their words; two that say one need in few shared words (PAL-Set's "
                     "own distinct types share up to half of theirs) are a reading: the audit judge reads a sample"),
    Rule("preference-form", "one pos/neg entry per requirement type, 3-5 statements each (sentences or ；-joined "
         "clauses)", "seed 004 Step 2-3",
         checks=("preferences.covers_requirement_types", "preferences.preference_sentences"),
         accepts_less="the seed asks 4-5 statements; of PAL-Set's 3,520 released pos/neg texts 2,249 hold 4-5, 1,180 "
                      "hold 3 and 91 hold 2 (540 write them as one sentence of ；-joined clauses), so the check "
                      "accepts 3-5 (97.4 %) and the prompt asks for 3-5"),
    Rule("preference-analysis", "the analysis reasons mainly from the user's background and personality, the "
         "recent events only to avoid contradiction", "seed 004 Step 2-3",
         prompt_only="the analysis is the model's reasoning before its answer, kept in no benchmark table"),
    Rule("preferences-personal", "each requirement's pos and neg descriptions, each read as a whole, are this user's own "
         "(drawn from their identity, experiences or personality), not what nearly anyone would accept (effective, "
         "affordable, safe) or reject (harmful, useless); one sentence many people would share, inside a "
         "description that is otherwise this user's, does not break it",
         "seed 004 Step 2-3", judges=("preferences_review.items.personal",)),
    Rule("situations", "4-6 back-to-back spans a month, 2-3 valid requirement ids, at least 5 sentences",
         "seed 004 Step 3, situation.py",
         checks=("situations.situation_count", "situations.spans_consecutive", "situations.valid_requirement_ids",
                 "situations.situation_sentences", "situations.user_not_named")),
    Rule("situations-from-month", "situations unfold the month's summary (no event it does not hold or imply, such "
         "as a relative's stay in hospital the month never mentions), and each tells what in its span causes every "
         "need it lists", "seed 004 Step 3",
         prompt_only="whether an event follows from the month and a listed need is caused are readings; the audit "
                     "judge reads a sample"),
    Rule("personality-out-of-situations", "situations and experiences do not dwell on the user's personality",
         "seed 004 situation.py", built_in="flows/pal/chain.py sends the situations and experience prompts the "
         "profile without its personality (as the authors' code does), so there is none to dwell on"),
    Rule("experience-objective", "an experience tells objective events (what, where, with whom) and does not dwell on "
         "the user's personality, preferences or inner life; a brief plain reaction to an event ('was relieved') "
         "is an event's part, not a violation", "seed 004 Step 4",
         prompt_only="objectivity is a reading of the whole text; the audit judge reads a sample"),
    Rule("experience-calendar", "a day the experience names with its weekday falls on that weekday in the span's "
         "year ('11月10日周六' when the 10th is a Sunday tells two days at once)", "seed 004 Step 4",
         checks=("experience.weekdays_agree",)),
    Rule("experience-ends", "the experience describes nothing from the span's end on (the dialogue starts then): no "
         "later ISO date, prose date (11月12日, 'the next day'), and no clock time on the last day at or after the end "
         "('20:00' when the span ends at 20:00, '17:15', '5:30 pm', '下午五点半'); a day named as a deadline "
         "('11月15日前交') or a time the text stays before ('晚上八点前', 'before 8 pm') is not reached",
         "seed 004 Step 4",
         checks=("experience.ends_before_session", "experience.stays_in_span")),
    Rule("speaks-to-user", "the assistant speaks to the user as 'you', never 'the user' / 用户", "prompt",
         checks=("dialogue.speaks_to_the_user",)),
    Rule("one-question", "an opening query and a topic inquiry ask one question", "seed 004 Step 5-1, Table 5",
         checks=("requirements.one_question_query", "dialogue.one_question_inquiry")),
    Rule("logs", "at least 20 logs, strictly increasing minutes inside the span, each in its type's format",
         "seed 004 Step 6-1, Tables 6-7", checks=("logs.enough_logs", "logs.log_times", "logs.log_format")),
    Rule("log-fields", "a log has a minute timestamp, the event it reflects in a sentence, its type and one "
         "operation", "seed 004 Step 6-1", checks=("logs.schema",)),
    Rule("log-one-operation", "a log's content records one operation (not a search, a comparison and a purchase; "
         "not an e-mail sent and its reply)", "seed 004 Step 6-1",
         prompt_only="what counts as one operation is a reading: PAL-Set's released logs join a search and a view "
                     "with 并 in 564 of 4,960, and strong writers' acceptable logs call 'saved, then shut down' one; the "
                     "audit judge reads a sample"),
    Rule("log-realism", "logs reflect events directly or indirectly, on devices the user operates that match the "
         "setting (their own, or at work the employer's equipment they use: a company computer, a meeting-room "
         "projector or tablet; never a public one such as a self-service kiosk), with concrete times and places, no "
         "placeholders, nothing about the background", "seed 004 Step 6-1",
         accepts_less="Step 6-1 asks for the user's personal devices only; 27 of the 4,368 logs of the five released "
                      "PAL-Set users (reference-data/pal/users_zh) run on workplace equipment the user operates (19 "
                      "on meeting-room projectors, tablets or speakers, 8 on company or office computers), so the "
                      "judge accepts those and the prompt asks for them; a public device stays a violation",
         prompt_only="whether a log fits its event is a reading of the experience beside it; log_format checks "
                     "each type's form. A check of the device against the prompt's public ones (self-service kiosk, "
                     "自助机) would reject 18 of PAL-Set's 139 released session windows (supermarket self-checkout, "
                     "library and hospital self-service machines: 87 %, under the 97 % the release must pass), so "
                     "it is the audit judge's until the prompt and the release agree"),
    Rule("frameworks", "one framework per topic in order, two different implicit needs (in wording and meaning)",
         "seed 004 Step 5-1",
         checks=("requirements.one_framework_per_topic", "requirements.distinct_needs")),
    Rule("topics-apart", "the topics of a session do not overlap: no implicit need of one topic is another topic's "
         "need (a health topic's need to finish the work data by Wednesday)", "seed 004 Step 5-1",
         prompt_only="whether two needs are one is a reading; the audit judge reads a sample"),
    Rule("evidences", "each implicit need has 1-5 evidences, facts from the background, the situation or the "
         "experiences, without dates: no calendar day in any form (2024-11-11, 11月7日, Nov 7), year and month, named "
         "single weekday (周三, last Wednesday) or day counted from another (昨天, 第二天, the next day); a deadline "
         "('周三前交', 'due by Friday'), a habit's weekday (每周三, 周一到周五, every Wednesday) and a clock time or part "
         "of a day alone (晚上十点) are not dates; and without analysis: no conclusion drawn from the fact ('说明…', "
         "'which shows…')", "seed 004 Step 5-1",
         checks=("requirements.schema", "requirements.undated_evidences", "requirements.evidences_are_facts")),
    Rule("vague-query", "the opening query is brief and vague, without background details: what code sees of them is "
         "a day or date in any form (a deadline's too: 周三前, by Friday), a figure in digits, a person by surname and "
         "title (王经理, Dr Patel); the rest is the audit judge's", "seed 004 Step 5-1",
         checks=("requirements.brief_query", "requirements.query_without_details"),
         prompt_only="other background details (what happened, who asked what: '被经理退回了，要补验证数据') are a "
                     "reading: PAL-Set's released queries name people and doings freely ('让客户减少对设计方案的反复修改'); "
                     "the audit judge reads a sample"),
    Rule("needs-on-topic", "both implicit needs revolve around the topic's requirement type", "seed 004 Step 5-1",
         judges=("requirements_review.topics.needs_on_topic",)),
    Rule("candidates", "8 different candidate solutions per topic (none the same in other words), each one sentence "
         "and one solution "
         "(not two different courses of action offered as alternatives, 'or alternatively' / 或者 / 也可以, nor a "
         "list of them, '1. … 2. …', '方案一：…', '一是…二是…', three ；-joined clauses; one course of action that names "
         "interchangeable means for the same step is one solution)", "seed 004 Step 5-2",
         checks=("candidates.candidates_per_topic", "candidates.distinct_candidates", "candidates.one_solution_each",
                 "candidates.one_sentence_solutions")),
    # What code sees of a fit is a deadline moved; the rest is a reading (the audit judge's).
    Rule("candidates-fit", "each candidate is a reasonable answer to the requirement as stated, within the facts it "
         "fixes (a deadline, a place, a budget: a candidate that moves them answers another need), and the 8 differ "
         "in substance (a phone alarm and a wristband reminder to stand up are one course of action); a candidate "
         "that costs more time, money or effort than this user would like is one of those a user of other tastes "
         "would choose, as the prompt asks, not a violation", "seed 004 Step 5-2",
         checks=("candidates.keeps_the_deadline",),
         prompt_only="whether a candidate answers the need, and whether two differ in substance, are readings; the "
                     "check sees a deadline moved, the audit judge reads a sample"),
    Rule("choices-verbatim", "2 liked and 2 disliked candidates, copied verbatim, one-sentence reasons from the user's "
         "point of view (a reason that calls the user he, she, 'the user' / 用户, 他, 她 and never says I / 我 is the "
         "narrator's)", "seed 004 Step 5-3",
         checks=("solution_preferences.verbatim_choices", "solution_preferences.one_sentence_reasons",
                 "solution_preferences.reasons_in_users_voice")),
    Rule("choices-follow-preferences", "a liked solution fits the user's preferences; a disliked one meets what they "
         "reject", "seed 004 Step 5-3", judges=("solution_preferences_review.liked_fit",
                                                "solution_preferences_review.disliked_clash")),
    Rule("dialogue-skeleton", "the dialogue follows the drawn action skeleton turn by turn; a user's solution "
         "discussion asks or argues and neither accepts nor turns the solution down (that is the feedback turn's)",
         "seed 004 Step 6-2", checks=("dialogue.follows_skeleton", "dialogue.discussion_takes_no_side")),
    Rule("dialogue-flow", "turns move smoothly between utterances and topics", "seed 004 Step 6-2",
         prompt_only="smoothness is wording only a reader can judge; the audit judge reads a sample"),
    # The check sees less than the rule, and the prompt still asks for all of it: PAL-Set's released
    # users open a feedback turn with an appraisal turned by 但/不过 ("这个方法听起来不错，但…",
    # "听起来是个好主意，但…") in 17 of 139 sessions, so a check over that form (any appraisal, no
    # negation, then a concessive) would pass 122/139 (87.8 %, under the 97 % the release must pass).
    # It rejects the forms the release never writes (dialogue_checks._SOFTENED, textrules.forms.softened);
    # the dialogue's audit judge (audits.py) reads the rest.
    Rule("direct-rejection", "negative feedback is direct, never 'sounds good, but', 'I see the logic, but', "
         "'我理解你的意思，但'", "seed 004 Step 6-2 rule 6",
         checks=("dialogue.direct_rejection",)),
    Rule("response-adds-nothing", "a feedback response to a rejection proposes no new solution",
         "seed 004 Table 5, Step 6-2 rule 8", checks=("dialogue.response_offers_nothing_new",)),
    Rule("preferences-hidden", "the assistant does not presume the user's preferences before the user states them",
         "seed 004 Step 6-2 rule 2", checks=("dialogue.preferences_not_presumed",)),
    Rule("eval-assistant", "the evaluated assistant answers from what it knows of the user: a restatement reads the "
         "need through the user's life (no fact the records lack, not the query reworded), a proposal fits their "
         "preferences, a selection weighs every candidate against their likes and dislikes", "seed 004 §5",
         prompt_only=EVALUATED),
    Rule("eval-restatement", "a restated requirement is one sentence, not a list", "seed 004 §5",
         checks=("eval_restate.one_sentence_requirement",)),
    Rule("eval-proposal", "a proposed solution is one solution in one sentence (no second one joined by 'or "
         "alternatively' / 或者 / 也可以, no list of them: '1. … 2. …', '方案一：…', '一是…二是…', 'first, … second, …', "
         "three clauses joined by ；; the steps of one plan, '第一步', 'first … then', are one solution)", "seed 004 §5",
         checks=("eval_propose.one_solution",)),
    Rule("eval-selection", "two different listed candidates are selected, among those the analysis concludes on",
         "seed 004 §5", checks=("eval_select.two_listed_candidates", "eval_select.choice_as_concluded")),
    Rule("eval-restatement-grade", "the restatement is graded 0-2 against the two implicit needs", "seed 004 §5",
         checks=("eval_judge_restatement.schema",), judges=("eval_judge_restatement.score",)),
    *SHARED_RULES,
    *EMOTION_RULES,
)
