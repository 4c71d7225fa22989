"""stratmem in `memsynth review`: the annotator labels each memory of a query's pool
must / nice / irr, without seeing the labellers' roles (which `agreement` compares after)."""

from __future__ import annotations

from memsynth.generation.offers import Item, Query, Question, ReviewTask, Text, Turns

ROLES = ("must", "nice", "irr")
WORDS = {
    "en": {"query": "Query ({time}) — {human} asks {person}", "history": "History before the query",
           "memory": "{index}. {fact}  — must (needed to answer well) · nice (helps) · irr (irrelevant)"},
    "zh": {"query": "提问（{time}）——{human} 问 {person}", "history": "提问之前的对话",
           "memory": "{index}. {fact}  —— must（回答必需）· nice（有帮助）· irr（无关）"},
}


def show_pool(query: Query, instance_id: str, language: str = "en") -> Item:
    """The query with its time and history, and one question per memory of the pool."""
    i = query("SELECT * FROM stratmem_instances WHERE instance_id = ?", instance_id)[0]
    pool = query("SELECT memory_index, fact FROM stratmem_memories WHERE instance_id = ? ORDER BY memory_index",
                 instance_id)
    w = WORDS.get(language, WORDS["en"])
    history = tuple((line.partition(": ")[0], line.partition(": ")[2] or line) for line in i["history"])
    return Item(
        item_id=instance_id, stratum=i["given_type"],
        sections=(
            Text(w["query"].format(time=i["query_time"], human=i["human"], person=i["virtual_person"]), i["query"]),
            Turns(w["history"], history),
        ),
        questions=tuple(Question(f"{instance_id}#{m['memory_index']}", "role",
                                 w["memory"].format(index=m["memory_index"], fact=m["fact"]), ROLES) for m in pool),
    )


TASKS = (
    ReviewTask("pools", "query pools, stratified by instance type",
               "SELECT instance_id AS item_id, given_type AS stratum FROM stratmem_instances", show_pool,
               criteria=("role",)),
)
