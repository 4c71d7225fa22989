"""Text rules any recipe's checks can use: what code can see in a model's prose.

meaning: near-duplicates by meaning among short items (stems and synonyms; character pairs
in Chinese). clock: dates and clock times written in prose, placed on a span's days. people:
the forms a person is named by (full name, surname and title, given name, kinship term).
forms: one proposal, one question, a softened refusal, the user spoken of in the third
person. Each function is pure and parameterised; the recipes' checks word the repairs.
"""
