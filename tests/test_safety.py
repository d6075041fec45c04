"""Question screening (input hygiene, language, personal details, urgent triage, personal dosing) and keeping
keys out of logs, errors and JSON."""

from __future__ import annotations

import json
from pathlib import Path
import logging
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from cpqa.options import SafetyOptions
from cpqa.safety.screening import ENGLISH_ONLY, InvalidQuestion, Screened, check_question, scrub_phi
from cpqa.safety.secrets import install_log_redaction

MAX_QUESTION_CHARS = SafetyOptions().max_question_chars
KEY = "sk-ant-api03-TESTKEY-do-not-leak-0123456789"
NCBI_KEY = "ncbi0123456789abcdef0123456789abcd"


# ---------------------------------------------------------------- input hygiene
@pytest.mark.parametrize("text", ["", "   ", "\n\t  \r\n", None, "\x00\x01\u200b\u200e"])
def test_empty_questions_are_rejected_with_a_clear_message(text):
    with pytest.raises(InvalidQuestion, match="Please type a question"):
        check_question(text)


def test_control_and_invisible_characters_are_removed():
    screened = check_question("What is\x00 HER2\u200b-positive\x1b breast\tcancer?\r\n")
    assert screened.question == "What is HER2-positive breast cancer?"
    assert all(ch.isprintable() for ch in screened.question)


def test_a_long_paste_keeps_its_question_with_a_notice_and_late_red_flags_still_count():
    letter = (
        "Dear Dr. Smith, thank you for seeing my mother last week at the clinic about her results. "
        * 60
        + "Also she has had chest pain since this morning. Does letrozole work better than tamoxifen after "
        "menopause?"
    )
    assert len(letter) > 5000
    screened = check_question(letter)
    assert len(screened.question) <= MAX_QUESTION_CHARS
    assert screened.question.endswith("Does letrozole work better than tamoxifen after menopause?")  # kept whole
    assert screened.question.startswith("Thank you for seeing")  # the start, as much as fits (the name removed)
    assert any("longer than 2,000 characters" in n and "question was kept" in n for n in screened.notices)
    assert screened.urgent and "chest pain" in screened.urgent  # triaged on the whole text


def test_a_long_paste_without_a_question_mark_keeps_its_last_sentence():
    text = "I was treated for breast cancer years ago and I want to understand my options now. " * 40 + (
        "Tell me what is known about hormone therapy after ten years"
    )
    question = check_question(text).question
    assert len(question) <= MAX_QUESTION_CHARS and question.endswith("hormone therapy after ten years")


def test_short_questions_are_not_truncated():
    screened = check_question("Does tamoxifen cause hot flashes?")
    assert screened.question == "Does tamoxifen cause hot flashes?"
    assert screened.notices == [] and screened.urgent is None and screened.language_ok


def test_boolean_and_quoting_characters_stay_text_that_quote_term_makes_one_phrase():
    boolean = pytest.importorskip("cpqa.sources.boolean")
    screened = check_question('“breast cancer” OR (tamoxifen[mh]) AND NOT "aspirin*" ) [pdat]')
    assert "“" not in screened.question and "”" not in screened.question
    phrase = boolean.quote_term(screened.question)
    node = boolean.parse(phrase)
    assert isinstance(node, boolean.Term)  # one phrase, whatever the user typed
    assert "tamoxifen" in node.text and "OR" in node.text


# ---------------------------------------------------------------- language
@pytest.mark.parametrize(
    "text",
    [
        "¿Cuáles son los efectos secundarios del tamoxifeno para el cáncer de mama?",
        "Quels sont les effets secondaires de la chimiothérapie pour le cancer du sein?",
        "Was sind die Nebenwirkungen der Chemotherapie und wie lange dauern sie?",
        "乳腺癌的治疗方法是什么？",
        "Какие побочные эффекты у химиотерапии?",
        "Czy tamoksyfen zmniejsza ryzyko nawrotu raka piersi?",
        "Minskar tamoxifen risken för återfall av bröstcancer?",
        "Tamoksifen meme kanseri nüksünü azaltır mı?",
        "Tamoxifen có làm giảm nguy cơ tái phát ung thư vú không?",
        "Vermindert tamoxifen het risico op terugkeer van borstkanker?",
        "Hilft Tamoxifen in der Nachsorge?",
    ],
)
def test_non_english_questions_are_told_only_english_is_supported(text):
    screened = check_question(text)
    assert not screened.language_ok and screened.refusal in screened.notices
    assert screened.refusal.endswith(ENGLISH_ONLY)  # in the asker's language first where the table has it
    assert check_question(text, translated=True).notices == []  # a language model will translate it


@pytest.mark.parametrize(
    "text,language,said",
    [
        ("¿Cuáles son los efectos secundarios del tamoxifeno?", "Spanish", "Por ahora solo se admiten"),
        ("乳腺癌的治疗方法是什么？", "Chinese", "目前仅支持英文提问"),
        ("Какие побочные эффекты у химиотерапии?", "Russian", "Пока поддерживаются"),
        ("स्तन कैंसर का इलाज क्या है?", "Hindi", "अभी केवल अंग्रेज़ी"),
        ("ما هي أعراض سرطان القولون؟", "Arabic", "حالياً نقبل"),
    ],
)
def test_the_refusal_is_written_in_the_askers_language(text, language, said):
    screened = check_question(text)
    assert screened.language == language and screened.refusal.startswith(said)


@pytest.mark.parametrize(
    "text,first,english",
    [
        ("Tengo fiebre de 39 después de la quimio, ¿qué hago?", "URGENTE", "URGENT: your message describes"),
        ("我化疗后发烧39度，怎么办？", "紧急", "URGENT: your message describes"),
        ("Je veux en finir, je n'en peux plus", "Si vous pensez au suicide", "call or text 988"),
    ],
)
def test_an_urgent_sign_in_another_language_gets_the_urgent_message_first_in_it(text, first, english):
    """The message in the asker's language comes first, then the English message in full."""
    urgent = check_question(text).urgent
    assert urgent is not None and urgent.startswith(first)
    assert english in urgent and urgent.index(english) > urgent.index(first)


@pytest.mark.parametrize(
    "text",
    [
        "Tamoxifen side effects?",
        "What is the prognosis of stage 4 pancreatic cancer with liver metastases?",
        "Is FOLFIRINOX better than gemcitabine plus nab-paclitaxel?",
        "Can I eat grapefruit during chemo?",
    ],
)
def test_english_questions_pass_the_language_check(text):
    assert check_question(text).language_ok


def test_the_language_check_passes_real_english_consumer_questions():
    """Thousands of real English health questions, rare terms and all: at most 1 in 500 is mistaken."""
    from cpqa.sources.jsonl import read_question_texts
    from tests.conftest import shared

    questions = read_question_texts(shared("consumer_questions"))
    assert len(questions) > 1000
    mistaken = [q for q in questions if not check_question(q).language_ok]
    assert len(mistaken) <= len(questions) / 500, mistaken[:10]


# ---------------------------------------------------------------- personal details
PHI_CASES = [
    ("My name is John Smith and I have stage 4 lung cancer.", ["John", "Smith"], "name"),
    ("I'm Maria Lopez, is chemo safe for me?", ["Maria", "Lopez"], "name"),
    ("Mrs. Henderson asked about her HER2 result.", ["Henderson"], "name"),
    ("My husband Robert has prostate cancer, what now?", ["Robert"], "name"),
    ("I'm José García, can AML come back after a transplant?", ["José", "García"], "name"),
    ("My oncologist, Sarah Jones, suggested letrozole.", ["Sarah", "Jones"], "name"),
    ("My DOB is 03/14/1950, am I too old for surgery?", ["03/14/1950"], "date of birth"),
    ("I was born on March 14, 1950 and have CLL.", ["March 14, 1950"], "date of birth"),
    ("My MRN is A12345678 at the cancer center.", ["A12345678"], "medical record number"),
    ("Call me at (617) 555-0134 about my biopsy.", ["555-0134", "617"], "phone number"),
    ("Text +44 20 7946 0958 with results.", ["7946"], "phone number"),
    ("Email maria.lopez@example.com the leaflet.", ["maria.lopez@example.com"], "email address"),
    ("I live at 123 Main Street, Apt 4B, near the hospital.", ["123 Main Street", "4B"], "street address"),
    ("My SSN is 123-45-6789, does insurance cover Keytruda?", ["123-45-6789"], "identification number"),
    ("I am 93 years old with bladder cancer.", ["93"], "age over 89"),
]


@pytest.mark.parametrize("text,values,kind", PHI_CASES)
def test_personal_details_are_removed_and_only_their_kind_is_reported(text, values, kind):
    screened = check_question(text)
    for value in values:
        assert value not in screened.question
    assert kind in screened.removed_phi
    dump = screened.model_dump_json()
    assert all(value not in dump for value in values)  # neither in the question, the kinds nor the notices
    assert any(kind in n for n in screened.notices)


def test_everything_in_one_message_is_removed_but_the_medical_question_is_kept():
    text = (
        "Hi, I'm Maria Lopez. My DOB is 03/14/1950 and my MRN is A1234567. Call me at (617) 555-0134 or "
        "maria@example.com. Should I take tamoxifen 20 mg for stage 2 breast cancer?"
    )
    screened = check_question(text)
    assert set(screened.removed_phi) == {
        "name",
        "date of birth",
        "medical record number",
        "phone number",
        "email address",
    }
    for value in ["Maria", "Lopez", "1950", "A1234567", "555-0134", "maria@example.com"]:
        assert value not in screened.question
    assert "tamoxifen 20 mg for stage 2 breast cancer" in screened.question


@pytest.mark.parametrize(
    "text",
    [
        "Is 200 mg of imatinib daily standard for stage 4 GIST?",
        "What does BRCA1 c.68_69delAG mean for my sister's ovarian cancer risk?",
        "Does EGFR T790M resistance to osimertinib 80 mg occur in stage IIIA NSCLC?",
        "Results of NCT01234567 and PMID 31234567 on 5-FU with FOLFOX in 2019?",
        "I am 45 years old and I'm scared about my CA-125 of 350 U/mL.",
        "I'm Hispanic and on Herceptin every 3 weeks for HER2+ cancer.",
        "Dose-dense AC-T: 4 cycles then paclitaxel 80 mg/m2 weekly x 12?",
    ],
)
def test_medical_content_is_not_mistaken_for_personal_details(text):
    result = scrub_phi(text)
    assert result.text == text
    assert result.removed == []


def test_scrub_phi_returns_text_and_kinds():
    result = scrub_phi("my name is jane, and i have CLL")
    assert result.text == "I have CLL"  # the announcing clause goes whole: no placeholder becomes a search term
    text, kinds = result
    assert kinds == ["name"]


# ---------------------------------------------------------------- urgent triage
@pytest.mark.parametrize(
    "text,sign",
    [
        ("I have a fever of 38.5 during chemo, what should I do?", "fever"),
        ("I'm on FOLFOX and have had chills and a temperature of 101 since last night", "fever"),
        ("I've had chest pain since my infusion this morning", "chest pain"),
        ("I can't breathe properly since starting pembrolizumab", "breathlessness"),
        ("I have new back pain and my legs feel weak and numb", "spinal cord compression"),
        ("Back pain and I have lost control of my bladder, is it the cancer?", "spinal cord compression"),
        ("Heavy bleeding after my biopsy, is that normal?", "heavy bleeding"),
        ("I am coughing up blood with lung cancer", "heavy bleeding"),
    ],
)
def test_red_flags_put_an_urgent_care_message_first(text, sign):
    screened = check_question(text)
    assert screened.urgent is not None
    assert sign in screened.urgent
    assert "emergency" in screened.urgent and "24-hour line" in screened.urgent


@pytest.mark.parametrize(
    "text",
    [
        "I keep thinking about suicide since the diagnosis",
        "I don't want to live anymore with this cancer",
        "I want to hurt myself",
    ],
)
def test_thoughts_of_self_harm_get_a_crisis_message(text):
    screened = check_question(text)
    assert screened.urgent and "988" in screened.urgent and "emergency" in screened.urgent
    assert "thoughts of suicide or self-harm" in screened.red_flags


@pytest.mark.parametrize(
    "text",
    [
        "What is the survival rate of stage 4 colon cancer?",
        "I have back pain from sitting at my desk, could it be a kidney problem?",
        "Which chemotherapy is used for Hodgkin lymphoma?",
        "How is fever treated in children with the flu?",
    ],
)
def test_ordinary_questions_raise_no_urgent_message(text):
    assert check_question(text).urgent is None


# ---------------------------------------------------------------- personal dosing
@pytest.mark.parametrize(
    "text,expected",
    [
        ("How much tamoxifen should I take?", True),
        ("Can I stop my chemo?", True),
        ("Should I skip my next dose of capecitabine?", True),
        ("Is it ok to stop letrozole early?", True),
        ("How many mg of ondansetron should I take for nausea?", True),
        ("What dose of morphine should my mother take?", True),
        ("I'm thinking of stopping my tamoxifen because of side effects", True),
        ("What is the usual dose of tamoxifen for breast cancer?", False),
        ("How does tamoxifen work?", False),
        ("What are the side effects of 200 mg imatinib?", False),
    ],
)
def test_personal_dosing_requests_are_flagged(text, expected):
    assert check_question(text).personal_dosing is expected


# ---------------------------------------------------------------- secrets
@pytest.fixture
def keyed_settings(home):
    from cpqa.config import get_settings

    return get_settings(anthropic_api_key=KEY, ncbi_api_key=NCBI_KEY, cpqa_http_retries=0, cpqa_llm_max_retries=0)


def test_log_records_never_carry_configured_or_key_shaped_secrets(keyed_settings, caplog):
    install_log_redaction(keyed_settings)
    log = logging.getLogger("cpqa.test")
    with caplog.at_level(logging.INFO):
        log.info("calling with key %s", KEY)
        log.warning("GET https://eutils.example/esearch.fcgi?term=x&api_key=%s&tool=cpqa", NCBI_KEY)
        log.info("header x-api-key: sk-ant-unconfigured-0123456789")
        try:
            raise RuntimeError(f"boom {KEY}")
        except RuntimeError:
            log.exception("failed")
    text = caplog.text + "".join(r.getMessage() for r in caplog.records)
    assert KEY not in text and NCBI_KEY not in text and "sk-ant-unconfigured" not in text
    assert text.count("[REDACTED]") >= 4
    assert "calling with key" in text and "RuntimeError" in text


def test_ncbi_errors_and_httpx_logs_never_carry_the_api_key(keyed_settings, caplog):
    client_module = pytest.importorskip("cpqa.sources.ncbi.client")

    class Echo(BaseHTTPRequestHandler):  # a broken server that echoes the request (key included) in its error
        def do_GET(self):  # noqa: N802
            body = f"<html><body>bad request {self.path}</body></html>".encode()
            self.send_response(400)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/"
        settings = keyed_settings.model_copy(update={"cpqa_eutils_url": url})
        install_log_redaction(settings)
        with caplog.at_level(logging.INFO), client_module.EutilsClient(settings) as client:
            with pytest.raises(client_module.NCBIError) as err:
                client.search("breast cancer")
    finally:
        server.shutdown()
        server.server_close()
    assert NCBI_KEY not in str(err.value) and NCBI_KEY not in repr(err.value)
    assert "HTTP 400" in str(err.value)
    assert "httpx" in {r.name for r in caplog.records}  # httpx logged the request URL ...
    assert NCBI_KEY not in caplog.text  # ... with the key redacted


def test_llm_errors_never_carry_the_key(keyed_settings):
    pytest.importorskip("cpqa.models.llm")
    from cpqa.models.llm import Claude, LLMError, ToolSpec
    from cpqa.testing.anthropic_standin import AnthropicStandIn, Reply

    with AnthropicStandIn() as api:
        api.script(Reply.error(401, message=f"invalid x-api-key {KEY}"), Reply.raw(500, f"oops {KEY}"))
        claude = Claude(keyed_settings.model_copy(update={"anthropic_base_url": api.url}))
        for _ in range(2):
            with pytest.raises(LLMError) as err:
                claude.call_tool("system", [{"role": "user", "content": "hi"}], ToolSpec("t", "d", {"type": "object"}))
            assert KEY not in str(err.value) and KEY not in repr(err.value)


def test_json_output_never_carries_the_key(keyed_settings, capsys):
    from cpqa.cli.common import print_json

    screened = check_question(f"my key is {KEY}, what is stage 4 cancer?")
    payload = {
        "settings": keyed_settings.model_dump(mode="json"),
        "screened": screened.model_dump(mode="json"),
        "echo": f"api_key={NCBI_KEY}",
    }
    print_json(payload, keyed_settings)
    out = capsys.readouterr().out
    assert KEY not in out and NCBI_KEY not in out
    assert json.loads(out)["settings"]["cpqa_home"]


def test_screened_is_json_serialisable():
    screened = check_question("My name is Ann. Can I stop my chemo?")
    data = json.loads(screened.model_dump_json())
    assert Screened.model_validate(data) == screened
    assert data["personal_dosing"] is True and data["removed_phi"] == ["name"]


def test_treatment_schedules_are_not_dates():
    assert scrub_phi("FOLFOX on days 1-8-15 of a 28-day cycle").removed == []
    assert scrub_phi("Seen on 14-03-2021 and 3/14/21").removed == ["date"]


@pytest.mark.parametrize(
    "text",
    [
        "Call me on +44 20 7946 0958 about tamoxifen.",
        "My number is 020 7946 0958.",
        "Text +33 6 12 34 56 78 if needed.",
        "Reach me at (617) 555-0134.",
    ],
)
def test_phone_numbers_in_any_format_are_removed(text):
    result = scrub_phi(text)
    assert "phone number" in result.removed and not any(ch.isdigit() for ch in result.text)


def test_medical_numbers_are_not_phone_numbers():
    text = "I take 20 mg tamoxifen daily on days 1-8-15; PSA was 4.5 in 2019 and 12.3 in 2021, HER2 3+."
    assert scrub_phi(text) == (text, [])


# ---------------------------------------------------------------- phrasing sets (precision and recall)
def _scores(name: str, meaning=None) -> dict[str, dict[str, float]]:
    """Precision and recall of the urgent screen and the dosing and decision referrals on a phrasing set."""
    from cpqa.evaluation.evaluations.triage import screen_with, triage_scores

    scores = triage_scores(Path(__file__).parent / "data" / name, screen_with(meaning))
    keep = ("precision", "recall")
    return {
        "urgent": {k: scores["urgent"][k] for k in keep},
        **{kind: {k: scores["referrals"][kind][k] for k in keep} for kind in ("dosing", "decision")},
    }


def test_safety_rules_on_the_dev_phrasing_set():
    """40 urgent, 20 dosing, 20 personal-decision and 40 ordinary questions (the issue's examples among them)."""
    scores = _scores("safety_phrasings.json")
    for rule, score in scores.items():
        assert score == {"precision": 1.0, "recall": 1.0}, (rule, score)


def test_safety_rules_on_held_out_phrasings_raise_no_false_alarms():
    """Phrasings written after the rules and never tuned on: recall is reported in docs/results.md (urgent triage by
    patterns generalises poorly); no ordinary question is flagged."""
    scores = _scores("safety_phrasings_heldout.json")
    assert all(score["precision"] >= 0.95 for score in scores.values()), scores
    assert scores["dosing"]["recall"] >= 0.8 and scores["decision"]["recall"] >= 0.7, scores


@pytest.fixture(scope="module")
def meaning():
    """Triage by meaning with the offline sentence encoder (the pipeline's own)."""
    from cpqa.config import get_settings
    from cpqa.models.encoders import load_encoder
    from cpqa.safety.meaning import MeaningTriage

    encoder, _ = load_encoder("sentence_embedder", get_settings(cpqa_profile="offline"))
    return MeaningTriage(encoder)


def test_triage_by_meaning_keeps_the_dev_set_perfect(meaning):
    assert _scores("safety_phrasings.json", meaning)["urgent"] == {"precision": 1.0, "recall": 1.0}


def test_triage_by_meaning_finds_urgent_phrasings_no_pattern_lists(meaning):
    """The earlier held-out sets, beside the rules: with meaning every urgent phrasing is found, still without
    flagging ordinary questions about the same symptoms (the clean measure of issue 30's screen is
    tests/data/triage_phrasings_heldout.json, in docs/results.md)."""
    for name in ("safety_phrasings_heldout.json", "safety_phrasings_heldout2.json"):
        both = _scores(name, meaning)
        assert both["urgent"]["recall"] >= 0.9 and both["urgent"]["precision"] >= 0.95, (name, both)
    assert meaning.sign("someone is sitting on my chest and I'm sweating") == "chest pain"
    from cpqa.options import SafetyOptions

    strict = SafetyOptions(triage_threshold=0.99, triage_probability=0.99)  # the options' knobs govern the screen
    assert meaning.sign("someone is sitting on my chest and I'm sweating", strict) is None
    text = "someone is sitting on my chest and I'm sweating, what now?"
    assert check_question(text, meaning).urgent and not check_question(text, meaning, strict).urgent
    assert meaning.sign("What does chest pain mean after radiotherapy?") is None  # a general question
    assert meaning.sign("I'm fine, just wondering how tamoxifen works") is None


# ---------------------------------------------------------------- triage by category (issue 30)
@pytest.mark.parametrize(
    "text,category,action",
    [
        ("I haven't been able to pass urine since yesterday evening and my bladder aches", "urinary", "call_now"),
        (
            "I've been vomiting for two days, nothing has come out the other end and my belly is swollen",
            "constipation",
            "call_now",
        ),
        ("my platelets are low and my nose has been bleeding on and off all evening", "bleeding", "call_now"),
        ("my mouth is so full of sores I can't swallow or even drink water", "mouth", "call_now"),
        ("I've suddenly lost the feeling in my legs, I have bone metastases", "neurological", "call_now"),
        ("my husband's face has dropped on one side and his speech is slurred", "neurological", "emergency"),
        ("I'm on chemo and shivering with a temperature of 38.4", "fever", "call_now"),
    ],
)
def test_each_category_fires_by_its_rules_with_its_action(text, category, action):
    screened = check_question(text)
    [finding] = [f for f in screened.triage if f.category == category]
    assert finding.action == action and finding.by == "rules" and finding.evidence
    assert screened.urgent and finding.sign in screened.urgent and screened.urgent.startswith("URGENT")


@pytest.mark.parametrize(
    "text",
    [
        "I've given my things away and I won't be a burden to anyone much longer",
        "everyone would be better off without me",
        "I've been saving up my morphine tablets",
        "I want to end my life",
    ],
)
def test_suicidal_intent_direct_or_indirect_gets_the_crisis_message_first(text):
    screened = check_question(text)
    assert screened.crisis and screened.urgent.startswith("If you are thinking about suicide")
    assert "988" in screened.urgent and "emergency" in screened.urgent
    from cpqa.safety.screening import first_messages

    assert first_messages(screened)[0] == screened.urgent


def test_amber_signs_ask_for_the_care_team_today_not_an_emergency():
    screened = check_question("I've had loose stools a few times a day since starting capecitabine")
    assert screened.urgent is None and screened.care_soon and "care team today" in screened.care_soon
    from cpqa.safety.screening import first_messages

    assert first_messages(screened)[0] == screened.care_soon


def test_a_red_sign_told_as_history_is_not_an_emergency_now():
    assert check_question("I had a seizure last year from my brain tumour; can I drive?").urgent is None
    assert check_question("I had a seizure last year and now I've just had another one").urgent


@pytest.mark.parametrize(
    "text,kind",
    [
        ("Can I take an extra tablet if the pain comes back tonight?", "dosing"),
        ("Is it safe to take two tablets instead of one?", "dosing"),
        ("I missed my capecitabine this morning, should I double up tonight?", "dosing"),
        ("Can I crush my tamoxifen tablets?", "dosing"),
        ("Is it OK for me to take ibuprofen with my capecitabine?", "interaction"),
        ("Can I drink wine while I'm on my letrozole?", "interaction"),
        ("Does my warfarin interact with my chemo?", "interaction"),
        ("Should I have the operation or radiotherapy?", "decision"),
    ],
)
def test_referrals_in_any_phrasing(text, kind):
    screened = check_question(text)
    raised = {
        "dosing": screened.personal_dosing,
        "interaction": screened.personal_interaction,
        "decision": screened.personal_decision,
    }
    assert raised[kind], (text, raised)
    assert screened.urgent is None


def test_general_questions_about_the_same_things_get_no_referral():
    for text in (
        "How are chemotherapy tablets split for children?",
        "Does capecitabine interact with warfarin?",
        "What is the usual dose of tamoxifen?",
        "I have crushing pain in my chest",
    ):
        screened = check_question(text)
        assert not (screened.personal_dosing or screened.personal_interaction), text


def test_a_personal_decision_gets_the_care_team_referral_first():
    from cpqa.safety.screening import DECISION_REFERRAL, first_messages

    screened = check_question("Should I take olaparib for my ovarian cancer?")
    assert screened.personal_decision and not screened.personal_dosing
    assert first_messages(screened)[0] == DECISION_REFERRAL


# ---------------------------------------------------------------- names nobody announced
@pytest.mark.parametrize(
    "text,kept",
    [
        (
            "This is Margaret Olsen writing. Should I take tamoxifen after surgery?",
            "Should I take tamoxifen after surgery?",
        ),
        ("Priya Sharma here: what are the side effects of olaparib?", "what are the side effects of olaparib?"),
        ("Can Thomas Müller and Wei Zhang both get nivolumab?", "nivolumab"),
    ],
)
def test_full_names_without_a_cue_are_removed(text, kept):
    result = scrub_phi(text)
    assert "name" in result.removed and kept.lower() in result.text.lower()
    assert not any(n in result.text for n in ("Margaret", "Olsen", "Priya", "Sharma", "Zhang"))


def test_medical_phrases_and_eponyms_are_not_names():
    """Pairs of capitalised words that are not a person (the real questions of the shared data hold a few)."""
    for text in (
        "What is Di George syndrome?",
        "Can Low dose naltrexone be used for depression?",
        "Is the Kaplan Meier estimate biased?",
        "Does Hodgkin Lymphoma respond to nivolumab?",
        "Are Gram positive bacteria able to release vesicles?",
        "Is Li Fraumeni syndrome inherited?",
    ):
        assert scrub_phi(text) == (text, []), text


def test_names_lists_are_built_from_names_dataset_and_hold_common_names():
    from cpqa.safety.names import _lists

    given, family = _lists()
    assert {"Margaret", "Priya", "Wei", "Mohammed"} <= given and {"Olsen", "Sharma", "Zhang", "Smith"} <= family
    assert "Tamoxifen" not in given | family and len(given) > 10_000 and len(family) > 10_000


def test_the_trained_classifiers_are_kept_for_the_next_process(meaning, tmp_path):
    """Trained once per machine: a later process (a one-shot ``cpqa ask``) loads them without embedding the
    phrasings again or importing scikit-learn, and decides exactly as the process that trained them."""
    import subprocess
    import sys

    from cpqa.safety.meaning import MeaningTriage

    text = "I've been saving up my sleeping tablets for when it gets too much"
    trained = MeaningTriage(meaning.encoder, cache_dir=tmp_path)
    trained.prepare()
    assert len(list(tmp_path.glob("triage-*.npz"))) == 1
    script = (
        "import sys\n"
        "from cpqa.config import get_settings\n"
        "from cpqa.models.encoders import load_encoder\n"
        "from cpqa.safety.meaning import MeaningTriage\n"
        "encoder, _ = load_encoder('sentence_embedder', get_settings(cpqa_profile='offline'))\n"
        f"meaning = MeaningTriage(encoder, cache_dir=sys.argv[1])\n"
        "meaning.prepare()\n"
        f"found = meaning.find({text!r})\n"
        "print('sklearn' in sys.modules, found.category, found.evidence)\n"
    )
    out = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    expected = trained.find(text)
    assert out.stdout.strip().split(maxsplit=2) == ["False", expected.category, expected.evidence]
