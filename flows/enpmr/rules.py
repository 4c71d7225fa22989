"""enpmr's rules (ENPMR-Bench, seed 000) and what enforces each at build time."""

from __future__ import annotations

from memsynth.generation.rules import EMOTION_RULES, SHARED_RULES, Rule

# Why a rule of the memory bank is left to the prompt: no judge reads the bank's memories.
BANK = ("no check: whether a memory belongs, or builds on another, is a reading of its meaning; the audit judge "
        "reads a sample of each memory stage (a judge on every memory, about 300 a persona, would double a build)")
# Why a rule of an evaluation prompt is: the model answering it is the one under evaluation.
EVALUATED = "the prompt of the model under evaluation: how well it follows it is what the benchmark measures"
# Why a rule of meaning is left to the audit judge, which reads every rule its stage's prompt lines name.
AUDITED = ("a reading of the answer's meaning against its prompt (no wording lists it); the stage's audit judge reads "
           "it on a sample, from the prompt line that names it")
# The same, for a rule whose check reads one wording of it: what the check sees, the rest the judge's.
PARTLY = "what the check cannot see is a reading of meaning; the stage's audit judge reads it on a sample"


def _fields(stage: str, what: str, *checks: str) -> Rule:
    return Rule(f"{stage.replace('_', '-')}-fields", what, "seed 000 Figs. 7-10",
                checks=(f"{stage}.schema", *(f"{stage}.{c}" for c in checks)))


RULES = (
    Rule("profile-fields", "a profile has the seed's fields: basic facts, Big Five personality, habits, social "
         "circle, emotional pattern, goals, communication style, preferences", "seed 000 §3.1",
         checks=("profile.schema", "profile.big_five_covered")),
    Rule("profile-preferences", "a profile lists at least 10 distinct preferences", "seed 000 §3.1",
         checks=("profile.schema", "profile.distinct_preferences")),
    Rule("profile-facts", "every list item of a profile is one short, specific fact (at most 30 English words, 50 "
         "characters in Chinese), not a paragraph, inferred from the persona where it is silent", "prompt",
         checks=("profile.short_facts",)),
    Rule("profile-keeps-persona", "a profile keeps the persona's facts (its people, their events, its numbers): "
         "what it infers fills the persona's silences and never changes what it says (code sees the age the persona "
         "gives and a weekly routine's count)", "prompt",
         checks=("profile.keeps_persona_age", "profile.keeps_persona_routines"), prompt_only=PARTLY),
    Rule("profile-preference-kinds", "a profile's preferences cover food, exercise, rest, hobbies and comfort",
         "prompt", prompt_only=AUDITED),
    Rule("life-themes", "at least 10 distinct life themes, each starting in the five years before the reference date",
         "seed 000 §3.1, Fig. 7",
         checks=("life_themes.enough_themes", "life_themes.distinct_themes", "life_themes.theme_dates_in_window")),
    _fields("life_themes", "a life theme has a short title, a description and a start date"),
    Rule("theme-description", "a theme's description is one to three sentences on what happened and why it mattered",
         "seed 000 Fig. 7", checks=("life_themes.description_sentences",),
         accepts_less="the seed's prompt asks two or three sentences; one passes, as in a strong model's acceptable "
                      "answers (../shared/model-answers), and the prompt asks one to three: a description is context "
                      "for the memory prompts, never benchmark text. Longer is a re-ask (a held-out answer wrote five)"),
    Rule("themes-spread", "themes spread across parts of life and overlap as little as possible: what code sees is "
         "two titles naming the same relative (\"Dad's hip replacement\", \"Caring for Dad after his operation\"); "
         "how far other themes overlap in meaning is the audit judge's", "prompt",
         checks=("life_themes.one_theme_per_relative",), prompt_only=PARTLY),
    Rule("theme-spans-time", "a life theme is an area of life that mattered over a stretch of time, not a one-day "
         "event (a wedding, a conference poster, a first day)", "seed 000 Fig. 7", prompt_only=AUDITED),
    Rule("memory-counts", "per theme: ≥ 4 relationships (good and bad, roughly balanced: each kind at least a third), "
         "≥ 6 powers (4 proficient, 2 not, the kinds mixed through the timeline, not grouped), ≥ 3 goals "
         "(2 achieved, the last not), ≥ 6 highlights; powers and goals in date order",
         "seed 000 §3.1, Figs. 8-10",
         checks=("relationship.enough_items", "relationship.quality_mix", "relationship.quality_balanced",
                 "power.enough_items", "power.proficiency_mix", "power.kinds_mixed", "power.chronological", "goal.enough_items", "goal.goal_status", "goal.chronological",
                 "highlight.enough_items")),
    Rule("memory-dates", "a memory falls between its theme's start and the reference date (a person who mattered "
         "before the theme is dated when the theme made them important)", "seed 000 §3.1",
         checks=("relationship.dates_in_theme", "power.dates_in_theme", "goal.dates_in_theme",
                 "highlight.dates_in_theme")),
    Rule("memory-in-theme", "every memory belongs to its life theme and fits the profile: it happens in the part of "
         "life the theme covers (the pursuit, role, setting or people its description names, from its start on), "
         "not only in the theme's headline event; a memory of another part of life (family in a work theme, another "
         "job) does not belong", "seed 000 §3.1",
         prompt_only=BANK),
    _fields("relationship", "a relationship has the person's name (a name, not who they are: \"Mr Bennett's "
                            "daughter\" is no name), who they are to the user, good or bad, their job, what they are "
                            "like, and a date", "named_people"),
    Rule("relationship-behaviour", "a relationship's characteristic shows the person by what they do: a concrete "
         "behaviour towards the user (what, when, how it helps or strains), not general praise or blame alone "
         "(\"cheerful, very capable, helped her a lot\")", "seed 000 Fig. 8", prompt_only=AUDITED),
    _fields("power", "a power is a specific skill with a description, proficient or not, how it was learned, and a "
                     "date"),
    _fields("goal", "a goal is a measurable milestone with what it takes, achieved or not, and a date"),
    _fields("highlight", "a highlight is a moment of recognition or breakthrough: a short title (at most 20 "
                         "characters, a Latin word such as 'Fugl-Meyer' counting as one; 12 English words), what happened, who recognised it, and a date", "short_names"),
    Rule("power-specific", "a power's name is one concrete sub-skill, not a whole field or a general ability "
         "(\"gait training\", \"research skills\", 科研能力)", "seed 000 Fig. 8", prompt_only=AUDITED),
    Rule("power-performance-fits", "a power's performance agrees with its own account: a proficient skill is not one "
         "its description or acquisition says the user still cannot do without help (code sees the stock words of "
         "that: \"still needs\", \"can't yet\", 仍需, 还离不开)", "seed 000 Fig. 8",
         checks=("power.proficiency_fits_account",), prompt_only=PARTLY),
    Rule("goal-measurable", "a goal's name is a measurable milestone (a count, a score, an approval, a deadline), not "
         "a feeling or an open-ended improvement (\"get more confident\", 做得更专业); its description says what it "
         "takes and how the user knows it is done (code sees a name of improvement words with no measure)",
         "seed 000 Fig. 9", checks=("goal.measurable_names",), prompt_only=PARTLY),
    Rule("highlight-moment", "every highlight is a moment the user was recognised or broke through a difficulty, "
         "not an ordinary event (a first or last day) or a setback; recognized_by is who noticed or acknowledged it, "
         "then or afterwards (a lead who heard of it later counts), and not someone other than the one the "
         "description credits; the description says why the moment mattered to the user, not only what happened",
         "seed 000 Fig. 10", prompt_only=AUDITED),
    Rule("powers-progress", "a theme's powers, read in date order, show the user growing more capable (later "
         "ones harder, broader or built on earlier ones); a list of unrelated skills with no growth breaks it", "seed 000 Fig. 8", prompt_only=BANK),
    Rule("goals-build", "a theme's goals, read in date order, build on one another: each later goal follows from or "
         "goes beyond an earlier one; unrelated goals side by side break it", "seed 000 Fig. 9", prompt_only=BANK),
    Rule("distinct-memories", "no memory or preference repeats another, word for word or in other words (stems, "
         "synonyms, reordered; character pairs in Chinese), and no item of a profile repeats a fact of another of "
         "its fields", "prompt",
         checks=("relationship.distinct_names", "power.distinct_names", "goal.distinct_names",
                 "highlight.distinct_names", "preferences.distinct_names", "profile.distinct_preferences",
                 "profile.facts_not_repeated"),
         prompt_only="a repeat reworded past any word overlap is a reading of meaning; the audit judge reads it "
                     "(audits.py adds it to every memory stage's audit)"),
    Rule("preferences", "at least 10 preferences, one item per like or dislike of the profile (an item that holds "
         "two of them is two memories written as one), first mentioned within the five years", "seed 000 §3.1",
         checks=("preferences.enough_items", "preferences.dates_in_window", "preferences.one_preference_each")),
    Rule("preferences-as-profile", "each preference memory is one of the profile's likes or dislikes as the profile "
         "states it: none invented, none changed (tea made coffee, iced made hot, oat milk made semi-skimmed) and no "
         "dislike made a liking (code sees an item named after a thing the profile avoids, with no negation)",
         "seed 000 §3.1", checks=("preferences.dislikes_kept",), prompt_only=PARTLY),
    _fields("preferences", "a preference has a short label (at most 20 characters, 12 English words), one or two "
                           "sentences with a concrete detail, and the date it was first mentioned", "short_names",
            "preference_sentences"),
    Rule("persona-prose", "a written persona is two or three sentences about someone in the third person, not a list "
         "of attributes", "prompt",
         checks=("persona.persona_is_prose", "persona.third_person", "persona.persona_sentences", "persona.schema")),
    Rule("persona-specific", "a written persona is specific: a concrete situation, worry or hope of this person, "
         "not the sampled attributes restated one by one with generic cares (family, health, work)", "prompt",
         prompt_only=AUDITED),
    Rule("persona-attributes", "a written persona names the occupation, an age within its band (roughly), where the "
         "person lives, and what is going on in their life now: an age is stated and lies in the band, the sampled region "
         "is named (a Chinese region is a city; of a broad English one, a capitalised word of it)", "prompt",
         checks=("persona.age_in_band", "persona.names_the_region")),
    Rule("session-form", "a memory session is 10-20 utterances alternating user / AI, the user first", "seed 000 §3.2",
         checks=("memory_session.schema", "memory_session.session_alternates")),
    Rule("session-at-memory-date", "a memory session takes place around the memory's date: the user tells it as "
         "something that has just happened, not as a memory of years before (\"two years ago\", \"the year "
         "before last\", 前年, 两年前)", "seed 000 §3.2", checks=("memory_session.told_near_its_date",)),
    Rule("session-reveals", "the user's turns in a memory session draw on the memory's details", "seed 000 §3.2",
         checks=("memory_session.user_reveals_memory",)),
    Rule("session-quotes-no-title", "a memory session tells the memory in the speaker's words, not by quoting its "
         "title: the title recited as a label or pasted as the whole sentence breaks it; the event's own people, "
         "place and action recurring inside the user's own telling do not", "prompt", checks=("memory_session.does_not_recite_title",)),
    Rule("session-ai-warm", "the AI of a memory session replies warmly, in context, and asks follow-up questions",
         "seed 000 §3.2", prompt_only="warmth is a reading of the whole session; the audit judge reads a sample (see session-invents-nothing)"),
    Rule("session-invents-nothing", "a memory session invents no facts that change or go beyond the memory (another event, person, "
         "outcome, date or place; the AI stating facts about the user that the memory and profile do not give); the "
         "colour a person adds when retelling their own moment (what was said, how it felt, small circumstances of "
         "the same scene) is the telling, not an invention", "prompt",
         prompt_only="no check can tell an invention from the telling; the audit judge reads a sample (one on each "
                     "of a persona's ~300 sessions would double a build), and the faithfulness judge reviews the "
                     "dialogues the benchmark keeps"),
    Rule("need-targets", "the target memory's category can meet the need (PN preference; LB relationship; EN "
         "highlight or good relationship; SA goal, power, highlight)", "seed 000 Table 1",
         built_in="flows/enpmr/plan.py draws targets by NEED_TARGETS"),
    Rule("negatives", "2-3 negatives of the target's theme and category", "seed 000 §3.2",
         built_in="flows/enpmr/plan.py samples negatives"),
    Rule("scene-need", "the scene leaves the user with the stated unmet need", "seed 000 Fig. 11",
         judges=("scenario_consistency.expresses_need",)),
    Rule("scene-fits-target", "recalling the target is the natural support in the scene, and no listed negative would "
         "support the user there as well as the target does (a negative that shares the theme, or could add some "
         "comfort, does not fit it by that alone); what code sees: a scene set where a negative happened repeats "
         "that negative's own words",
         "seed 000 Fig. 11, A.1", checks=("scene.fits_no_other_memory",),
         judges=("scenario_consistency.fits_target", "scenario_consistency.fits_a_negative")),
    Rule("scene-form", "the scene is 2-4 sentences and names none of the target's people in any form: full name, "
         "surname and title, given name, kinship term (the user would)",
         "prompt", checks=("scene.scene_form",)),
    Rule("dialogue-form", "a support dialogue is 2-6 utterances alternating user / AI, the user first",
         "seed 000 Fig. 11", checks=("support_dialogue.schema", "support_dialogue.dialogue_alternates")),
    Rule("user-never-mentions", "the user never states the recalled memory, its people or details, in any words, at any "
         "turn; after the AI recalls it, a user reply that only acknowledges the recall (thanks, 'yes, I'd forgotten "
         "that') and adds none of its content does not state it",
         "seed 000 Fig. 11", checks=("support_dialogue.user_never_states_memory",),
         judges=("faithfulness.user_reveals_target",)),
    Rule("no-early-recall", "no AI turn brings the memory up before the memory turn", "seed 000 Fig. 11",
         checks=("support_dialogue.no_recall_before_memory_turn",), judges=("faithfulness.recalled_early",)),
    Rule("recall-grounded", "the AI's memory turn draws on the target memory's details", "seed 000 Fig. 11",
         checks=("support_dialogue.memory_turn_recalls_target",), judges=("faithfulness.grounded_in_target",)),
    Rule("recall-natural", "the recall is woven into what the AI says as a close friend would, without a stock "
         "phrase", "seed 000 Fig. 11",
         prompt_only="a stock phrase is wording no check can list; the BLRI judge rates how the whole dialogue "
                     "feels to the user"),
    Rule("recall-no-title", "the AI recalls the memory without quoting its title (a title of five words or more, "
         "eight characters in Chinese, said word for word; a relationship's title is a person's name, and naming "
         "them is no quote)", "seed 000 Fig. 11", checks=("support_dialogue.recall_does_not_quote_title",)),
    Rule("recall-length", "the whole memory turn is at most 50 words; in Chinese 80 characters (our reading of the "
         "translated prompt's 50 words)", "seed 000 Fig. 11",
         checks=("support_dialogue.recall_length",)),
    Rule("no-negatives", "the dialogue uses no detail that belongs only to a negative", "seed 000 A.2",
         checks=("support_dialogue.recall_avoids_negatives",), judges=("faithfulness.uses_negatives",)),
    Rule("judges-consistent", "a judge's flags have grounds in the dialogue and agree with its score; its reason is "
         "one sentence", "prompt",
         checks=("faithfulness.verdict_has_grounds", "faithfulness.faithfulness_score_agrees",
                 "faithfulness.one_sentence_reason", "scenario_consistency.scenario_score_agrees",
                 "scenario_consistency.one_sentence_reason")),
    Rule("blri", "12 BLRI items on the inventory's −3…+3 scale without 0; a mean below the threshold drops the "
         "dialogue; each item scored as worded (code reverses the negative ones)", "seed 000 A.2, Fig. 4",
         checks=("blri.schema", "blri.blri_in_scale", "blri.blri_literal"), judges=("blri.scores",)),
    Rule("eval-companion", "the evaluated model answers as a close friend who remembers the user's life (w/CoT: "
         "reasoning first about the unmet need)", "seed 000 Figs. 13-15", prompt_only=EVALUATED),
    Rule("eval-reply", "an evaluation reply names a listed memory, brings in that memory and no second one (a "
         "turn holding another memory's own words names the wrong number or mixes two), and stays within its "
         "length; it reasons in `reasoning` in the CoT setting only", "seed 000 Figs. 13-15",
         checks=("eval_respond.names_a_listed_memory", "eval_respond.reply_length", "eval_respond.reasoning_by_mode",
                 "eval_respond.draws_on_its_memory")),
    Rule("eval-chooses-memory", "the evaluated model brings in the memory that best meets the user's unmet need "
         "(in the golden setting, the one it is given): which memory it picks is what the benchmark scores against "
         "the gold memory", "seed 000 Figs. 13-15", prompt_only=EVALUATED),
    Rule("eval-grades", "the reply judge grades four dimensions, whole numbers 1-5, strictly: a 5 only where the "
         "reply is clearly excellent on that dimension (an empathy 5 for a reply that passes over a feeling the user "
         "voiced is lenient, not strict)", "seed 000 Fig. 12", checks=("eval_judge.schema",),
         judges=("eval_judge.empathy",)),
    *SHARED_RULES,
    *EMOTION_RULES,
)
