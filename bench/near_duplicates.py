"""Exact pairwise Jaccard vs datasketch MinHash LSH for near-duplicates among short items.

Run: python bench/near_duplicates.py. Our lists hold 4-30 items (preferences, requirement
types, candidates); MinHash pays a 128-permutation signature per item before any comparison.
"""

from __future__ import annotations

import random
import time

from memsynth.quality.textrules.meaning import meaning_units, same_meaning_pairs, similarity


def minhash_pairs(texts: list[str], threshold: float = 0.6) -> set[tuple[int, int]]:
    from datasketch import MinHash, MinHashLSH

    lsh, hashes = MinHashLSH(threshold=threshold, num_perm=128), []
    for i, t in enumerate(texts):
        m = MinHash(num_perm=128)
        for u in meaning_units(t):
            m.update(u.encode())
        hashes.append(m)
        lsh.insert(str(i), m)
    return {tuple(sorted((i, int(j)))) for i, m in enumerate(hashes) for j in lsh.query(m) if int(j) != i}


def main() -> None:
    rng = random.Random(0)
    words = "quiet spicy morning jazz walk tea garden river bike market book film swim coffee".split()
    same_meaning_pairs(["warm up"]), minhash_pairs(["warm up", "up warm"])  # imports and caches
    for n in (10, 30, 100, 1000):
        texts = [" ".join(rng.sample(words, 4)) for _ in range(n)]
        for name, fn in (("exact", same_meaning_pairs), ("minhash", minhash_pairs)):
            start = time.perf_counter()
            for _ in range(3):
                fn(texts)
            print(f"n={n:>5} {name:<8} {(time.perf_counter() - start) / 3 * 1000:9.2f} ms")
    assert similarity(frozenset("ab"), frozenset("ab")) == 1.0


if __name__ == "__main__":
    main()
