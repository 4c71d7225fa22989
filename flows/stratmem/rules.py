"""stratmem's rules (StratMem-Bench, seed 002) and what enforces each at build time."""

from __future__ import annotations

from memsynth.generation.rules import EMOTION_RULES, SHARED_RULES, Rule

RULES = (
    Rule("fact-form", "a memory is one sentence of 4-20 words (8-40 characters in Chinese) that dates what it says: "
         "a day as YYYY-MM-DD (a month or a year alone may be written in words), never a time relative to the "
         "session ('yesterday', 'recently', 'in two weeks', 最近, 上周, 三天前) without a date, and 'yesterday' dated the day "
         "before the session", "seed 002 §3.2",
         checks=("extract.memory_facts", "merge.memory_facts", "extract.dated_facts", "merge.dated_facts",
                 "extract.yesterday_dated")),
    Rule("fact-one-fact", "a memory item holds one fact: two separate events, or facts about different things, "
         "are two items; an event told with its time, cause, circumstance or the person's lasting feeling about it "
         "is one fact ('Melanie painted a lake sunrise in 2022, and it is special to her'; '陈静一直想养猫，年初搬进了"
         "允许养宠物的新家')", "seed 002 §3.2",
         prompt_only="where one fact ends and another begins is a reading of the sentence ('Melanie painted a "
                     "lake sunrise in 2022, and it is special to her' is one); the audit judge reads it"),
    Rule("fact-names-person", "a memory names its person, never 'she' or 'I'", "seed 002 §3.2",
         checks=("extract.names_the_person", "merge.names_the_person")),
    Rule("fact-speakers", "a memory is about one of the two speakers: the one it names, when it names only one",
         "seed 002 §3.2",
         checks=("extract.known_speakers",)),
    Rule("fact-grounded", "a memory holds only what the session's turns or notes say; greetings and small talk are "
         "left out", "seed 002 §3.2",
         prompt_only="whether a fact follows from a session is a reading of the session; the audit judge reads "
                     "a sample"),
    Rule("merge-keeps-all", "merging loses, invents and duplicates no candidate: every candidate's fact is kept in "
         "substance by the item that lists it (shorter wording and a dropped minor qualifier are fine), no item "
         "adds an event, person, date, number or place no candidate states, and no two items are about the same "
         "fact (an item may repeat another's subject as the context that makes it clear on its own)", "seed 002 §3.2",
         checks=("merge.covers_candidates", "merge.same_facts_joined", "merge.states_only_candidate_numbers")),
    # What a check cannot read of a merge: which candidates are one fact, and what a clause adds.
    Rule("merge-faithful", "a merged item joins only candidates that state the same fact or one event and how the "
         "person feels about it (a project and the stress it brings may be one item; a race and a lesson drawn "
         "years later are two) and states no event, cause, time or circumstance ('during summer break', "
         "'her first cat', a day counted from 'rest two weeks') that its candidates do not; a person it refers "
         "to stays the one the candidates name", "prompt",
         prompt_only="whether two candidates are one fact, and whether a clause says more than they do, is a "
                     "reading of their meaning; the audit judge reads it (the checks catch a candidate of the "
                     "same fact left apart, and a day or number no candidate states)"),
    Rule("query-form", "the query is one finished message of 5-30 words (8-60 characters) aimed at listed memories, "
         "asking one question (or one and its follow-up: three at once is a list)",
         "seed 002 §3.3", checks=("query.a_question", "query.valid_targets", "query.one_question",
                                  "query.aims_at_its_targets")),
    Rule("query-natural", "the query follows the conversation (it answers what the character has just asked "
         "before asking its own), asks one thing (a follow-up on the same thing is fine) and could only be "
         "answered well by someone who remembers: not a question anyone could answer from the conversation "
         "alone", "prompt",
         prompt_only="whether a message answers the last turn and whether its question needs a memory are "
                     "readings of the conversation; the audit judge reads them"),
    Rule("query-to-character", "the query is the speaker's own message said to the character ('you'): never of the "
         "character in the third person by name, never naming its own speaker, never asking 'you' about the "
         "speaker's own life (targets all of the speaker, no 'I')", "prompt",
         checks=("query.speaks_to_the_character", "query.said_by_the_speaker", "query.asks_the_character")),
    Rule("query-no-quote", "the query does not quote a memory: it copies no memory's sentence or clause, and does not "
         "state the details its answer needs; naming what a memory is about (an event, plan or person), as a "
         "speaker would to ask about it, is how a query points at it, not a quote", "prompt", checks=("query.does_not_quote_memories",),
         prompt_only="the check sees a memory copied for eight words in a row or nearly whole; a shorter clause is "
                     "either the name of what the memory is about (32 of the 657 released queries share four content "
                     "words in a row with a memory: 'that charity race for mental health') or the detail its answer "
                     "needs ('an agency that helps LGBTQ+ people adopt'): a reading, which the audit judge reads"),
    Rule("query-given-type", "the query needs the memories its given type says (A must, B nice, C both)",
         "seed 002 §3.3", judges=("label.labels.role",)),
    Rule("roles", "every pool memory gets must, nice or irr by the majority of three labellers; a "
         "labeller's role is wrong when it contradicts the definitions (a memory the reply cannot be correct "
         "without, not must; an off-topic one, must), not where careful labellers could choose either of two "
         "neighbouring roles", "seed 002 §3.4",
         checks=("label.labels_every_memory",), judges=("label.labels.role",)),
    Rule("persona-form", "the character's name; a summary of 3-5 sentences; traits 6-12 (each a short phrase: at most "
         "8 words, 15 characters in Chinese), style 5-8, domains 4-10, values 5-8; the character described in the "
         "third person, never speaking as themselves ('I am …', 我是…) outside quotation marks", "seed 002 §3.3",
         checks=("persona.persona_fields", "persona.sentences_summary", "persona.persona_described",
                 "persona.short_traits")),
    Rule("label-rationale", "each label's rationale is one sentence", "prompt",
         checks=("label.sentences_labels_rationale",)),
    Rule("persona-from-sessions", "the persona states no name, place or number the sessions do not (a number in "
         "`style` measuring how the character writes, \"two or three short sentences\", is read off the sessions), "
         "and gives the character no domain that is the other speaker's (one the notes say only of them and the "
         "character's own lines barely touch)", "prompt",
         checks=("persona.persona_from_sessions", "persona.persona_places_from_sessions",
                 "persona.domains_of_the_character")),
    Rule("persona-true", "the persona gives the character only what the sessions say of them: another "
         "speaker's experience is not theirs, and a date or fact it states is the one the sessions give "
         "('yesterday' in a session of 2024-03-02 is 2024-03-01)", "prompt",
         prompt_only="who lived what, and which day 'yesterday' was, is a reading of the sessions; the audit "
                     "judge reads it (persona_from_sessions catches names, places and numbers never said)"),
    Rule("eval-in-character", "the evaluated model replies as the character, a person, in a few natural sentences",
         "seed 002 §4", prompt_only="the prompt of the model under evaluation: how it uses its memories is what "
                                    "the benchmark measures"),
    Rule("eval-detect", "the usage judge gives one verdict per memory and quotes the reply as evidence (none for "
         "an unused memory)", "seed 002 §4",
         checks=("eval_detect.judges_every_memory", "eval_detect.evidence_is_quoted",
                 "eval_detect.unused_has_no_evidence")),
    Rule("eval-detect-complete", "the usage judge marks used every memory whose concrete detail the reply states "
         "(its evidence found first: 'get back to ten kilometres' uses 'ran ten kilometres at most')", "prompt",
         prompt_only="whether a reply's words carry a memory's detail is a reading of both; the audit judge "
                     "reads it"),
    Rule("miq-consistent", "the MIQ score agrees with its failures: one listed scores at most 2, none at least 3",
         "prompt", checks=("eval_miq.miq_score_agrees",)),
    Rule("miq-analysis", "the MIQ judge's analysis is a sentence or two", "prompt",
         checks=("eval_miq.sentences_analysis",)),
    Rule("irrelevant-suppressed", "a reply draws on no irrelevant memory (what the benchmark measures)",
         "seed 002 §1, §4", judges=("eval_detect.verdicts.used", "eval_miq.failures")),
    Rule("eval-miq", "memory integration quality is scored 1-5 with the named failure kinds", "seed 002 §4",
         checks=("eval_miq.schema",), judges=("eval_miq.score",)),
    *SHARED_RULES,
    *EMOTION_RULES,
)
