"""enpmr `scene.fits_no_other_memory`: "while none of the other memories listed (same theme and
category) would fit" (scene[.zh].j2), held to what a strong model wrote: every acceptable scene
passes, every held-out scene labelled as set where another listed memory fits is rejected, and so
is an acceptable scene that turns to a listed negative."""

from __future__ import annotations

import pytest

from flows.enpmr.overlap_checks import fits_no_other_memory
from schemas.enpmr import Scene
from tests.answer_sets import MODEL_ANSWERS, label_says, stage_answers

CORPUS = MODEL_ANSWERS / "enpmr"
# The labels' quotes of the prompt's line.
RULE = ("none of the other memories listed", "其他记忆")
OTHER = ("other", "Other", "其他", "另一", "另外", "别的", "更适合", "更贴合", "fits", "better")


def _problems(scene: str, variables: dict) -> list[str]:
    return list(fits_no_other_memory(Scene.model_construct(scene=scene), variables))


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"the shared corpus is not at {CORPUS}")
def test_acceptable_scenes_pass_and_scenes_another_memory_fits_fail():
    labelled = []
    for where, data, answer in stage_answers("enpmr", "scene"):
        if answer["label"] == "acceptable":
            assert _problems(answer["answer"]["scene"], data["variables"]) == [], (where, answer["id"])
        # The label quotes the line, and the writer's own words say another memory fits (a whole line
        # quoted also holds "not the target's details", a mistake of its own: r11 scene-en-v1).
        elif any(r in answer["rule"] for r in RULE) and label_says(answer["rule"], OTHER):
            labelled.append(f"{where}/{answer['id']}")
            assert _problems(answer["answer"]["scene"], data["variables"]), (where, answer["id"], answer["rule"])
    assert len(labelled) >= 14, labelled


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"the shared corpus is not at {CORPUS}")
def test_an_acceptable_scene_that_turns_to_a_negative_is_rejected_in_the_build_s_language():
    made = 0
    for where, data, answer in stage_answers("enpmr", "scene"):
        v = data["variables"]
        if answer["label"] != "acceptable":
            continue
        for negative in v["negatives"]:
            account = negative.split("：" if v["language"] == "zh" else ": ", 1)[-1]
            found = _problems(f"{answer['answer']['scene']} {account}", v)
            made += 1
            assert found, (where, answer["id"], account)
            assert ("场景发生在另一条" in found[0]) == (v["language"] == "zh"), found
    assert made >= 30


def test_a_scene_that_only_shares_the_theme_passes():
    v = {"language": "en", "profile_summary": "", "theme_name": "Neurorehabilitation secondment",
         "need_description": "the user feels inferior",
         "target": {"text": "During 'Neurorehabilitation secondment', the user had the highlight 'Mr Bennett walks "
                            "to the ward door': after six weeks of treadmill sessions he walked to the door."},
         "negatives": ["During 'Neurorehabilitation secondment', the user had the highlight 'Praised by the "
                       "consultant in case review': she analysed a knee hyperextension frame by frame."]}
    assert _problems("A patient's son told her in the gym that she is too young to treat his father.", v) == []
    assert _problems("At the case review the consultant questioned her frame-by-frame knee analysis.", v)
