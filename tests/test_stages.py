"""A stage or grade asked about by number must be named by the answer: "stage 4" is not answered by the disease's
overall figures, nor by a list of every stage."""

from cpqa.answer.intent import Addressing
from cpqa.rewrite.stages import roman_stages, stage_marks


def test_arabic_and_roman_numerals_and_sub_stages_name_one_stage():
    assert stage_marks("what does stage 3 bowel cancer mean") == {"stage3"}
    assert stage_marks("Stage III colon cancer is divided into stage IIIA, stage IIIB, and stage IIIC.") == {"stage3"}
    assert stage_marks("a grade 2 brain tumour and a grade 4 glioblastoma") == {"grade2", "grade4"}
    assert stage_marks("Stage IVB") == {"stage4"}


def test_a_list_of_stages_names_none_of_them():
    assert stage_marks("The following stages are used: Stage 0; Stage I; Stage II; Stage III; Stage IV") == set()


def test_a_stage_written_in_arabic_numerals_is_searched_as_the_pages_write_it():
    assert roman_stages("what does stage 3 bowel cancer mean, and grade 2?") == ["stage III", "grade II"]
    assert roman_stages("Stage IV pancreatic cancer") == []


def test_the_rule_asks_the_sentence_to_name_the_stage_asked_about():
    rule = Addressing.of("What is the 5-year survival rate for stage 4 pancreatic cancer?")
    assert rule.addresses("The 5-year survival rate for stage IV pancreatic cancer is 3%.")
    assert not rule.addresses("The 5-year survival rate for pancreatic cancer is 11%.")
    assert not rule.addresses("The 5-year survival rate for stage II pancreatic cancer is 30%.")
    # without a stage asked about, nothing changes
    assert Addressing.of("What is the 5-year survival rate for pancreatic cancer?").addresses(
        "The 5-year survival rate for stage IV pancreatic cancer is 3%."
    )
