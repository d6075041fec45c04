"""The asker's story is told, not asked: its everyday words are not things an answer must name."""

from cpqa.answer.intent import Addressing
from cpqa.rewrite.concepts import process_question
from cpqa.rewrite.narrative import narrative_spans, story_word, written_as_name
from cpqa.rewrite.vocabulary import BUILTIN, Vocabulary


def told(question: str) -> list[str]:
    return [question[a:b].strip(" ,") for a, b in narrative_spans(question)]


def test_a_clause_opened_by_a_pronoun_or_a_family_word_is_told():
    assert told("what does stage 3 bowel cancer mean? they told my dad its in the lymph nodes") == [
        "they told my dad its in the lymph nodes"
    ]
    assert told(
        "survival rate for CLL in older people, my grandad is 78 and they are just going to watch and wait"
    ) == ["my grandad is 78 and they are just going to watch and wait"]
    assert told("Mum has just been diagnosed with AML at 72. Will they still give her chemo?") == [
        "Mum has just been diagnosed with AML at 72."
    ]


def test_what_asks_is_never_told():
    assert told("can men get breast cancer? how rare is it") == []  # a question word opens it: asked
    assert told("my mum had breast cancer, should i get tested for the brca gene") == ["my mum had breast cancer"]
    assert told("Is it hereditary? My mum had it?") == []
    assert told("My dad has bowel cancer.") == []  # nothing else asked: the story is the question


def test_scientific_context_and_initials_are_not_a_story():
    assert (
        told("Histone acetyltransferases transfer acetyl groups to histones. What is the purpose of this transfer?")
        == []
    )
    assert told("In prokaryotes, functionally related genes are sometimes adjacent. What are these called?") == []
    assert told("Is stomach cancer caused by H. pylori infection? They said so") == ["They said so"]


def test_a_name_is_written_in_capitals_or_capitalised_mid_sentence():
    assert written_as_name("aml", "Mum has AML")
    assert written_as_name("keytruda", "my dad is on Keytruda")
    assert not written_as_name("mum", "Mum has AML")  # a sentence starts there
    assert not written_as_name("40s", "in their 40s")


def test_only_the_story_s_everyday_words_turn_weak():
    question = "my son has neuroblastoma and his grandad said its high risk, what does high risk mean? Mum said AML"
    weak = {c.text: c.weak for c in process_question(question, Vocabulary(BUILTIN)).concepts}
    assert weak["said"] and weak["grandad"] and weak["son"]
    assert not weak["neuroblastoma"]  # general English rarely uses it: a condition the vocabulary may not hold
    assert not weak["high"]  # the asked part names it too
    assert not weak["aml"]  # written as a name


def test_the_rule_does_not_ask_an_answer_to_name_the_story():
    subjects = Addressing.of("what does stage 3 bowel cancer mean? they told my dad its in the lymph nodes").subjects
    named = {stem for s in subjects for name in s.names for stem in name}
    assert "stage" in named and "bowel" in named
    assert not {"told", "dad"} & named


def test_a_story_word_is_told_only_not_a_name_and_common_or_family():
    question = "survival rate for CLL in older people, my grandad is 78 and they are just going to watch and wait"
    assert story_word("grandad", question) and story_word("watch", question)
    assert not story_word("CLL", question) and not story_word("older", question)  # asked
    assert not story_word("AML", "how is it treated? Mum has AML")  # a name
    assert not story_word("grandad", "can a grandad get breast cancer?")  # nothing told
