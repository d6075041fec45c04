"""``cpqa eval``: evaluations that print JSON. One module per evaluation."""

import typer

from cpqa.evaluation.cli.eval_ablation import ablation
from cpqa.evaluation.cli.eval_answers import answers, blind, safety, support
from cpqa.evaluation.cli.eval_chunking import chunking
from cpqa.evaluation.cli.eval_cmmqa import cmmqa
from cpqa.evaluation.cli.eval_fusion import fusion
from cpqa.evaluation.cli.eval_pairs import pairs
from cpqa.evaluation.cli.eval_patient import patient
from cpqa.evaluation.cli.eval_reliability import reliability
from cpqa.evaluation.cli.eval_retrieval import retrieval

eval_app = typer.Typer(help="Evaluate retrieval, chunking, CMMQA and embedding x reranker pairs.", no_args_is_help=True)
eval_app.command("retrieval")(retrieval)
eval_app.command("fusion")(fusion)
eval_app.command("chunking")(chunking)
eval_app.command("cmmqa")(cmmqa)
eval_app.command("pairs")(pairs)
eval_app.command("reliability")(reliability)
eval_app.command("ablation")(ablation)
eval_app.command("support")(support)
eval_app.command("answers")(answers)
eval_app.command("blind")(blind)
eval_app.command("safety")(safety)
eval_app.command("patient")(patient)
