"""What a stratmem release holds: its Hugging Face configs, plots, and StratMem-Bench's JSON."""

from __future__ import annotations

from flows.stratmem.seed_format import StratMemFormat
from memsynth.release.spec import Plot, ReleaseSpec, View


def _facts(where: str) -> str:
    return f"coalesce(list(m.fact ORDER BY m.memory_index) FILTER (WHERE {where}), [])"


INSTANCES = f"""
SELECT i.instance_id AS id, i.persona_id, i.ordinal, i.given_type, i.inferred_type, i.query, i.query_time,
    i.history, i.human, i.virtual_person, i.persona AS virtual_person_persona,
    {_facts("m.role = 'must'")} AS must, {_facts("m.role = 'nice'")} AS nice, {_facts("m.role = 'irr'")} AS irr,
    {_facts("m.role = 'nice' AND m.in_test_split")} AS nice_test,
    i.window_size, i.source_id, i.agreement
FROM stratmem_instances i JOIN stratmem_memories m USING (instance_id)
GROUP BY ALL
"""

MEMORIES = """
SELECT m.instance_id || '/' || m.memory_index AS memory_id, m.instance_id, m.persona_id, m.memory_index,
    m.fact, m.role, m.votes, m.rationale, m.in_test_split
FROM stratmem_memories m
"""

RELEASE = ReleaseSpec(
    pretty_name="StratMem-style strategic memory use: must / nice / irr memory pools per query",
    task_categories=("text-generation",),
    tags=("memory", "dialogue", "role-play", "synthetic"),
    views=(
        View("instances", INSTANCES, key="id", order="ordinal",
             description="one row per query: its history, time, roles, the virtual character's persona and "
                         "the pool split into must / nice / irr facts (nice_test: the test split's at most two)"),
        View("memories", MEMORIES, key="memory_id", order="instance_id, memory_index",
             description="one row per memory of a pool: its role, the three labellers' votes and a rationale"),
    ),
    plots=(
        Plot("types", "Instances by inferred type (A must-only, B nice-only, C must+nice)",
             "SELECT inferred_type, count(*) FROM stratmem_instances GROUP BY 1 ORDER BY 1", "type", "instances"),
        Plot("pool_sizes", "Memories per instance",
             "SELECT n::VARCHAR, count(*) FROM (SELECT instance_id, count(*) n FROM stratmem_memories GROUP BY 1) "
             "GROUP BY n ORDER BY n", "memories", "instances"),
        Plot("roles", "Facts by role", "SELECT role, count(*) FROM stratmem_memories GROUP BY 1 ORDER BY 1",
             "role", "facts"),
    ),
    intended_use=(
        "Evaluating whether a virtual character uses the memories a message needs (must), may use the ones "
        "that enrich the reply (nice) and leaves the rest (irr) alone: the seed's SMC, MIQ, PES and CIR "
        "metrics read the instances' roles. The roles are not to be shown to the model under test."),
    limitations=(
        "The roles are a language model's labels, three samples voted by majority; StratMem-Bench's were "
        "reviewed by human experts. Queries and personas are written by a language model from the sessions."),
    seed_format=StratMemFormat(),
    seed_split=("StratMem-Bench's evaluation set keeps at most two nice memories per instance, drawn once "
                "with a fixed seed: `nice_test` in the instances config, and `StratMemBench_test.json`."),
)
