"""Checks count sentences from many threads at once (shard threads, the simulator's): the count
of a text never depends on what another thread is counting."""

from __future__ import annotations

import threading

from memsynth.core.textmatch import sentences


def test_sentences_counted_in_eight_threads_at_once_are_counted_as_alone():
    texts = [" ".join(f"Sentence number {i} of text {t} is here." for i in range(1 + t % 7)) for t in range(200)]
    texts += [f"第{t}段。她说：“好！”然后走了。" * (1 + t % 3) for t in range(50)]
    alone = [len(sentences(t)) for t in texts]
    wrong: list[int] = []

    def count(k: int) -> None:
        for j in range(300):
            t = (j * 7 + k) % len(texts)
            if len(sentences(texts[t])) != alone[t]:
                wrong.append(t)

    threads = [threading.Thread(target=count, args=(k,)) for k in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert wrong == []  # before: ~185 of 2,400 counts were another text's (one shared pysbd segmenter)
