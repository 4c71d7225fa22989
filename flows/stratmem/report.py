"""stratmem's figures for `memsynth report`, and the text its diversity section reads."""

from memsynth.generation.offers import Figure

FIGURES = (
    Figure("Memory roles", "SELECT role, count(*) AS memories FROM stratmem_memories GROUP BY 1 ORDER BY 1"),
    Figure("Instances per type", "SELECT given_type, count(*) AS instances FROM stratmem_instances "
           "GROUP BY 1 ORDER BY 1"),
    Figure("Pool size per instance", "SELECT count(*) FROM stratmem_memories GROUP BY instance_id", "hist", "memories"),
    Figure("Labellers' agreement per instance", "SELECT agreement FROM stratmem_instances "
           "WHERE agreement IS NOT NULL", "hist", "share of the pool agreed on"),
)
TEXTS = ("SELECT persona_id, query FROM stratmem_instances UNION ALL "
         "SELECT persona_id, fact FROM stratmem_memories")
