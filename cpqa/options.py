"""Every knob of the query pipeline in one typed object, one nested section per stage (paper-qa style).

``Settings`` (``cpqa.config``) holds the environment and secrets; ``PipelineOptions`` holds how a question is
processed, and is recorded in every trace. Every tuned value is a field here, its tuned value the only default: the
stages read their section, and a part built outside a pipeline takes its defaults from these classes. Field names
are unique across sections, so a caller may override any knob by its bare name (``pipeline.ask(q, years=5,
hyde=True)``; ``cpqa ask --option years=5``); ``with_overrides`` routes it to its section. A deployment writes them in
a TOML file, one table per section (``cpqa.options_file``).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from cpqa.types import Mode, Source

SmallToBig = Literal["off", "neighbours", "section"]
LadderRanking = Literal["ladder", "rrf", "weighted", "bestmatch"]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class SafetyOptions(_Section):
    """Stage 1: the screen. Triage by meaning fires when a question is this close (cosine) to an urgent prototype
    and this much closer to it than to any ordinary question (``cpqa eval safety``, docs/results.md)."""

    triage_threshold: float = Field(default=0.5, ge=0.0, le=1.0, description="cosine to the nearest urgent prototype")
    triage_margin: float = Field(
        default=0.1, ge=0.0, le=1.0, description="... ahead of the nearest ordinary question by at least this"
    )
    triage_method: Literal["prototypes", "classifier", "either"] = Field(
        default="either",
        description="triage by meaning: nearest phrasing, a classifier over the phrasings, or either firing "
        "(chosen by cross-validation; docs/results.md, issue 30)",
    )
    triage_probability: float = Field(
        default=0.5, gt=0.0, lt=1.0, description="... the classifier's probability that a question is urgent"
    )
    referral_probability: float = Field(
        default=0.5, gt=0.0, lt=1.0, description="referrals by meaning: the classifier's probability of a referral kind"
    )
    model_triage: bool = Field(
        default=True,
        description="with a language model configured, a short triage call beside the search may raise a flag "
        "(never lower one), and translates a question in another language for the search",
    )
    model_triage_max_tokens: int = Field(default=400, ge=64, description="the triage call's output budget")
    foreign_confidence: float = Field(
        default=0.9,
        gt=0.0,
        le=1.0,
        description="a question counts as not English only when the language detector is this sure of another",
    )
    classifier_c: float = Field(
        default=4.0,
        gt=0.0,
        description="triage by meaning: the classifiers' regularisation, chosen by 5-fold cross-validation over the "
        "phrasings (docs/results.md, issue 30); fixed when the pipeline loads",
    )
    max_question_chars: int = Field(
        default=2000,
        ge=100,
        description="a longer message is cut to its question (with as much of the text before it as fits); a "
        "budget for searches and prompts, not tuned",
    )


class RewriteOptions(_Section):
    """Stage 2: what is searched."""

    adaptive_retrieval: bool = Field(
        default=False,
        description="decide per question whether retrieval is needed (Claude, rule-based fallback); "
        "off by default for a patient-facing product",
    )
    term_links: bool = Field(
        default=False,
        description="local Automatic Term Mapping: add the MeSH-heading and "
        "abbreviation links `cpqa index build` learns from the records to the vocabulary (off: "
        "on the BioASQ tuning split they cost E2 recall; docs/results.md, "
        "'HSRDR against the naive hybrid (issue 15)')",
    )
    hyde: bool = Field(
        default=False,
        description="search E1 with the question plus a drafted pseudo-answer "
        "(HyDE / Query2Doc); needs a language model",
    )
    history_turns: int = Field(default=6, ge=1, description="earlier dialogue turns the rewrite reads (a budget)")
    min_levels: int = Field(
        default=3, ge=1, description="a model's ladder shorter than this is filled with rule-built levels"
    )
    ladder_and_concepts: int = Field(
        default=6, ge=2, description="rule ladder: concepts ANDed at most (C(5, 2) = 10 clauses in an 'm of n' level)"
    )
    ladder_synonyms: int = Field(default=5, ge=0, description="rule ladder: synonyms ORed per concept at most")
    ladder_synonym_words: int = Field(default=4, ge=1, description="rule ladder: longer synonyms are left out")
    lay_searched: int = Field(
        default=3,
        ge=1,
        description="lay words: clinical terms searched beside them at every level (the rest widen the last one)",
    )
    lay_glossed: int = Field(
        default=2, ge=0, description="lay words: clinical terms the search intent names after them"
    )
    definitional_words: int = Field(
        default=12, ge=1, description="adaptive retrieval's rules: a longer question is never 'definitional'"
    )
    rewrite_max_tokens: int = Field(default=2048, ge=64, description="a language model's budget for the rewrite")
    decision_max_tokens: int = Field(default=300, ge=16, description="... for adaptive retrieval's decision")
    hyde_max_tokens: int = Field(
        default=400, ge=16, description="... for HyDE's pseudo-answer (fixed when the pipeline loads)"
    )


class DocumentOptions(_Section):
    """Stage 3: HSRDR. The fusion (E1 1.5, E2 1.0 with the Best-Match-like "bestmatch" ladder ranking and title 4 /
    abstract 1 / MeSH 2 field weights, plain BM25 0.5, RRF k 10) was chosen by ``cpqa eval fusion`` on the 400-question
    BioASQ tuning split (``cpqa/evaluation/data/bioasq_splits.json``) beside the encoder trained here, and measured on
    the dev split and the cancer questions it was not tuned on; the sweeps and the held-out numbers are in
    docs/results.md ("A biomedical retriever trained here (issue 36)"; MiniLM's: "HSRDR against the naive hybrid
    (issue 15)")."""

    years: int | None = Field(default=None, ge=1, le=100, description="only evidence from the last N years (1-100)")
    sources: tuple[Source, ...] = Field(
        default=("D1", "D2", "D4"),
        min_length=1,
        description="D1 PubMed abstracts, D2 PMC reviews, D3 other PMC full texts, D4 NIH patient information "
        "(cancer.gov, MedlinePlus and other NIH pages: `cpqa ingest medquad`)",
    )
    patient_sections: int = Field(
        default=3, ge=1, description="D4: the patient-information sections searched for that reach the passages"
    )
    patient_pool: int = Field(
        default=12,
        ge=1,
        description="D4: of the sections found first, those of a kind the question asks for (its signs, outlook, "
        "treatment...) are preferred",
    )
    # D4's own fusion, chosen on the cancer.gov questions of MedQuAD's tuning and train pages (539; eval pages
    # untouched): equal weights gave recall@1/@3 0.48/0.86, below dense alone (0.69/0.92; BM25 alone 0.24/0.60);
    # BM25 at 0.3 gave 0.69/0.91 (docs/results.md, issue 35).
    patient_rrf_k: int = Field(default=10, ge=1, description="D4: reciprocal-rank k (as HSRDR's; 60 gave the same)")
    patient_bm25_weight: float = Field(default=0.3, ge=0.0, description="D4: BM25's weight in the fusion")
    patient_dense_weight: float = Field(default=1.0, ge=0.0, description="D4: the dense path's weight")
    patient_depth: int = Field(default=50, ge=1, description="D4: candidates each path passes to the fusion")
    e1_k: int = Field(default=100, ge=1, description="semantic hits taken into fusion")
    ladder_min_docs: int = Field(
        default=200, ge=1, description="the Boolean ladder stops once this many PMIDs are found (a depth budget)"
    )
    ladder_retmax: int = Field(
        default=100,
        ge=1,
        le=9_999,
        description="PMIDs asked for per ladder level (PubMed esearch serves the first 9,999)",
    )
    ladder_ranking: LadderRanking = Field(
        default="bestmatch",
        description="E2's order: 'ladder' = earlier, more "
        "specific levels first; 'rrf' = every level run and fused by RRF; "
        "'weighted' = the levels run within the budget, fused by RRF with "
        "specific levels weighing more; 'bestmatch' = the levels run within "
        "the budget, ranked by field-weighted BM25 plus a level bonus "
        "(Best-Match-like; 'weighted' on E-utilities)",
    )
    ladder_level_decay: float = Field(
        default=0.9, gt=0.0, le=1.0, description="'weighted': level n weighs decay ** (n - 1)"
    )
    ladder_level_bonus: float = Field(
        default=0.1,
        ge=0.0,
        description="'bestmatch': bonus for the most specific "
        "level that found a document, level n earning bonus * decay ** (n - 1), "
        "beside its BM25 score normalised to the best hit (1.0)",
    )
    ladder_field_weights: tuple[float, float, float] = Field(
        default=(4.0, 1.0, 2.0),
        description="'bestmatch': BM25 weight of title, abstract and MeSH (local store; title 4 / MeSH 2 chosen with "
        "the trained encoder's fusion on the tuning split, issue 36; equal weights were best beside MiniLM)",
    )
    ladder_rrf_k: int = Field(
        default=60, ge=1, description="'rrf' / 'weighted': the RRF constant fusing the ladder's levels (the paper's)"
    )
    rrf_k: int = Field(default=10, ge=1, description="the RRF constant fusing the paths")
    e1_weight: float = Field(default=1.5, ge=0.0, description="0 leaves the path out")
    e2_weight: float = Field(default=1.0, ge=0.0, description="0 leaves the path out")
    bm25_weight: float = Field(
        default=0.5,
        ge=0.0,
        description="plain BM25 over title + abstract as a third path; 0 leaves it out (0.5 beside the encoder trained "
        "here, chosen on the BioASQ tuning split; 1.5 beside MiniLM: docs/results.md, issue 36)",
    )
    bm25_k: int = Field(default=100, ge=1, description="BM25 hits taken into fusion")
    fusion_depth: int = Field(default=100, ge=1, description="ranks per path that enter fusion")
    max_docs: int = Field(default=50, ge=1, description="kept candidates returned")

    @property
    def weights(self) -> dict[str, float]:
        """Fusion weight per path; a path of weight 0 does not run."""
        return {"E1": self.e1_weight, "E2": self.e2_weight, "BM25": self.bm25_weight}


class PassageOptions(_Section):
    """Stage 4: SEOS passages, two-stage retrieval and the answerer's context."""

    max_documents: int | None = Field(
        default=5,
        ge=1,
        description="only the N best-fused documents reach "
        "passage retrieval, so only they are segmented on first sight (None: every "
        "document HSRDR keeps); chosen with the record prior on the BioASQ tuning "
        "split, where more records only let weaker ones in (docs/results.md, issue "
        "27)",
    )
    record_prior: float = Field(
        default=2.0,
        ge=0.0,
        description="weight of the record's place in the document "
        "ranking beside the passage's place in the reranked list (weighted RRF; 0: the "
        "passage ranking alone)",
    )
    record_prior_k: int = Field(default=10, ge=1, description="the record prior's RRF constant")
    per_record: int = Field(default=2, ge=1, description="passages of one record among the top before any third")
    top_k: int = Field(default=20, ge=1, description="passages kept by the dense retriever")
    top_n: int = Field(default=5, ge=1, description="passages kept by the reranker")
    preclinical_demotion: int = Field(
        default=5,
        ge=0,
        description="patient mode: passages from animal or cell-line "
        "studies move this many places down the reranked list, so human clinical "
        "evidence is read first (0: off; clinician mode: off)",
    )
    patient_passage_words: int = Field(
        default=120,
        ge=20,
        description="D4: a patient section is cut into chunks of whole sentences of at most this many words; its first "
        "chunk and the one covering most of the question's words reach the answer",
    )
    urgent_top_n: int = Field(
        default=3,
        ge=1,
        description="an urgent question's evidence: at most this many passages, from human studies only (the urgent "
        "message is what the person needs; the evidence stays short)",
    )
    matryoshka_dim: int | None = Field(
        default=None, ge=1, description="passage embedding size (paper profile); fixed when the pipeline loads"
    )
    multi_query: bool = Field(
        default=False,
        description="passage retrieval with the search intent and variants of it, fused by reciprocal rank",
    )
    multi_query_k: int = Field(
        default=60,
        ge=1,
        description="multi-query: the reciprocal-rank constant on 0-based ranks (LlamaIndex's QueryFusionRetriever's; "
        "not tuned here)",
    )
    small_to_big: SmallToBig = Field(
        default="off",
        description="give the answerer the retrieved passages' neighbouring passages or their enclosing section",
    )
    small_to_big_window: int = Field(default=1, ge=1, le=5, description="neighbouring passages on each side")
    small_to_big_max_words: int = Field(
        default=600, ge=50, description="small-to-big: a section longer than this is cut (a context budget, not tuned)"
    )
    restructure: bool = Field(
        default=False,
        description="evidence sentences grouped into topics, TextRank-selected, topics ordered by reranker relevance",
    )
    restructure_similarity: float = Field(
        default=0.5, gt=0, le=1, description="restructure: sentences closer than this (cosine) may share a topic"
    )
    restructure_per_topic: int = Field(default=3, ge=1, description="restructure: sentences kept per topic")
    restructure_damping: float = Field(
        default=0.85, gt=0, lt=1, description="restructure: TextRank's damping (PageRank's usual 0.85, not tuned here)"
    )
    repack: bool = Field(
        default=False, description="most relevant evidence at the edges of the context (LlamaIndex LongContextReorder)"
    )


class SegmentationOptions(_Section):
    """Stage 4a: SEOS, cross-validated on the chunking dev benchmark (docs/results.md, issue 27): halves tuned on one,
    judged on the other. A passage vector reads the whole chunk, window by window, so a chunk may pass the embedder's
    window. Fixed when the pipeline loads: the passage store keeps the layouts these settings made."""

    window_fill: float = Field(
        default=3.0, gt=0, description="a chunk fills at most this share of the passage embedder's token window"
    )
    overlap_fill: float = Field(default=0.0, ge=0, lt=1, description="overlap bound as a share of the chunk bound")
    gap_window: int = Field(default=3, ge=1, description="sentences on each side of a gap when scoring its depth")
    cutoff_sd: float = Field(default=1.0, description="boundary cut-off: mean + cutoff_sd * std of valley depths")
    min_fraction: float = Field(default=0.25, ge=0, le=1, description="segments under this share of the bound merge")


class RerankOptions(_Section):
    """Stage 4b: the offline reranker (the paper profile's cross-encoder has no knob). Fixed when the pipeline
    loads."""

    dense_weight: float = Field(
        default=0.5,
        ge=0.0,
        le=1.0,
        description="offline fusion reranker: weight of passage-embedding cosine beside BM25 (both min-max scaled)",
    )


class SupportOptions(_Section):
    """Stage 5b: every cited sentence checked against what it cites; below the threshold it is removed. Chosen by
    ``cpqa eval support`` (best balanced accuracy on the tuning half: 0.957, held out 0.937)."""

    support_threshold: float = Field(default=0.55, ge=0.0, le=1.0, description="support score a sentence needs")
    support_cosine_share: float = Field(
        default=0.5, ge=0.0, le=1.0, description="support score = share * cosine + (1 - share) * word coverage"
    )
    verify_max_tokens: int = Field(default=1024, ge=64, description="a language model's budget for the verification")


class AnswerOptions(_Section):
    """Stage 5: who writes, for whom, and how the extractive answer (no language model) quotes. The dense
    threshold, floor share and rank decay were chosen by a sweep over 120 BioASQ dev questions outside the cancer set
    (quote precision against gold snippets 0.587 -> 0.718; docs/results.md, issue 17)."""

    mode: Mode = "patient"
    cot_refine: bool = Field(
        default=False, description="answer without retrieval, then revise against the evidence; needs a language model"
    )
    answer_max_tokens: int = Field(default=2048, ge=64, description="a language model's output budget per answer")
    chooser: bool = Field(
        default=False,
        description="extractive: the answer chooser trained here (cpqa train chooser) ranks a patient page's chunks "
        "and may let a page answer a question whose wording names no kind of section (off: the search's order and the "
        "section kind; on the MedQuAD tuning pages the first quote fell inside the gold section 0.779 without it, "
        "0.727 with it: docs/results.md, issue 35)",
    )
    chooser_candidates: int = Field(
        default=0,
        ge=0,
        description="extractive: research sentences the chooser rescores, best by similarity first (0: none; on the "
        "BioASQ tuning split rescoring 16 lowered first quotes naming an exact answer 0.394 -> 0.384-0.389 at "
        "thresholds 0.5-0.9: docs/results.md, issue 35)",
    )
    chooser_threshold: float = Field(
        default=0.5,
        ge=0.0,
        le=1.0,
        description="extractive: a research sentence the chooser scores at least this answers the question, whatever "
        "the addressing rule says",
    )
    page_threshold: float = Field(
        default=0.5,
        ge=0.0,
        le=1.0,
        description="extractive: a patient page's chunk the chooser scores at least this answers the question even "
        "when its section is not of a kind the question asks for",
    )
    min_lexical_score: float = Field(
        default=0.3, ge=0.0, le=1.0, description="extractive, no encoder: word coverage below which evidence is thin"
    )
    min_dense_score: float = Field(
        default=0.4, ge=-1.0, le=1.0, description="extractive: cosine below which evidence is thin"
    )
    rank_decay: float = Field(
        default=0.1,
        ge=0.0,
        lt=0.25,
        description="extractive: the n-th passage's sentences weigh 1 - decay * (n - 1) (the reranker's order counts)",
    )
    floor_share: float = Field(
        default=0.8, ge=0.0, le=1.0, description="extractive: a quote scores at least this share of the best one"
    )
    coverage_bonus: float = Field(
        default=0.3,
        ge=0.0,
        description="extractive: a sentence covering question words no chosen one covers is worth up to this much more",
    )
    max_quotes: int = Field(default=3, ge=1, description="extractive: sentences quoted")
    quotes_per_record: int = Field(default=2, ge=1, description="extractive: sentences quoted from one record")
    max_quote_words: int = Field(
        default=80, ge=10, description="extractive: longer 'sentences' are tables or run-on text a reader cannot check"
    )
    rare_record_share: float = Field(
        default=0.005,
        gt=0.0,
        le=1.0,
        description="a question word in fewer than this share of the store's records (and rare in English) names "
        "something the evidence must mention, else an extractive answer abstains",
    )
    rare_word_zipf: float = Field(
        default=3.0, description="... rare in English: below this Zipf frequency (wordfreq; 3 = once per million)"
    )
    min_records_for_share: int = Field(
        default=1000,
        ge=1,
        description="... the share is read only from a store of at least this many records (below it, a share means "
        "nothing; a floor, not tuned)",
    )
    distinctive_word_zipf: float = Field(
        default=4.0, description="words of a name below this Zipf frequency carry it ('hodgkin', not 'disease')"
    )


class PipelineOptions(_Section):
    """How one question is processed; every section has defaults, so ``PipelineOptions()`` is the paper's pipeline."""

    safety: SafetyOptions = Field(default_factory=SafetyOptions)
    rewrite: RewriteOptions = Field(default_factory=RewriteOptions)
    documents: DocumentOptions = Field(default_factory=DocumentOptions)
    segmentation: SegmentationOptions = Field(default_factory=SegmentationOptions)
    passages: PassageOptions = Field(default_factory=PassageOptions)
    rerank: RerankOptions = Field(default_factory=RerankOptions)
    answer: AnswerOptions = Field(default_factory=AnswerOptions)
    support: SupportOptions = Field(default_factory=SupportOptions)

    @classmethod
    def section_of(cls, name: str) -> str:
        """The section that holds the knob ``name``; ValueError for an unknown knob."""
        for section, field in cls.model_fields.items():
            if name in field.annotation.model_fields:  # type: ignore[union-attr]
                return section
        raise ValueError(f"unknown pipeline option {name!r}")

    @classmethod
    def of(cls, **knobs: Any) -> "PipelineOptions":
        """Options from bare knob names: ``PipelineOptions.of(mode="clinician", top_n=3)``."""
        return cls().with_overrides(**knobs)

    def with_overrides(self, **knobs: Any) -> "PipelineOptions":
        """A copy with knobs replaced by bare name (or by section, given a dict); None keeps the current value."""
        data = self.model_dump()
        for name, value in knobs.items():
            if value is None:
                continue
            if name in type(self).model_fields:
                data[name] = {**data[name], **(value.model_dump() if isinstance(value, BaseModel) else value)}
            else:
                data[self.section_of(name)][name] = value
        return type(self).model_validate(data)

    def load_time(self) -> dict[str, Any]:
        """The knobs fixed when a pipeline loads (the models' sizes, the stored layouts), by bare name."""
        fixed = {**self.segmentation.model_dump(), **self.rerank.model_dump()}
        return {
            **fixed,
            "matryoshka_dim": self.passages.matryoshka_dim,
            "hyde_max_tokens": self.rewrite.hyde_max_tokens,
        }

    def flat(self) -> dict[str, Any]:
        """Every knob by bare name (for tables and logs)."""
        return {k: v for section in self.model_dump(mode="json").values() for k, v in section.items()}
