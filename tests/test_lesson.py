"""The lesson's worked examples, through the command line as a user would run them."""

import json
import subprocess
import sys
from pathlib import Path

from ragdiff.cli.main import main
from ragdiff.core.labels.gold import load_gold
from ragdiff.core.metrics.evaluate import evaluate
from ragdiff.core.metrics.specs import EvalSettings, parse_metric
from ragdiff.core.io.runs import load_run

LESSON = Path(__file__).parent / "data" / "lesson"


def run_cli(capsys, *args):
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_recall_and_mrr_from_yaml_gold_and_json_run(capsys):
    code, out, err = run_cli(capsys, "eval", str(LESSON / "runs.json"), "--gold", str(LESSON / "gold.yaml"),
                             "--metrics", "recall@1,recall@3,mrr", "--json")
    assert code == 0, err
    metrics = json.loads(out)["runs"][0]["metrics"]
    assert f"{metrics['recall@1']:.2f}" == "0.33"
    assert f"{metrics['recall@3']:.2f}" == "1.00"
    assert f"{metrics['mrr']:.2f}" == "0.56"


def test_table_output_shows_the_same_numbers(capsys):
    code, out, _ = run_cli(capsys, "eval", str(LESSON / "runs.json"), "--gold", str(LESSON / "gold.yaml"),
                           "--metrics", "recall@1,recall@3,mrr")
    assert code == 0
    lines = {line.split()[0]: line.split()[-1] for line in out.splitlines() if line.strip()[:1].isalpha()}
    assert lines["recall@1"] == "0.3333" and lines["recall@3"] == "1.0000" and lines["mrr"] == "0.5556"


def test_python_dash_m_works_the_same():
    result = subprocess.run([sys.executable, "-m", "ragdiff", "eval", str(LESSON / "runs.json"), "--gold",
                             str(LESSON / "gold.yaml"), "--metrics", "mrr", "--json"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert round(json.loads(result.stdout)["runs"][0]["metrics"]["mrr"], 2) == 0.56


def test_ndcg_at_3_for_grades_3_0_2(tmp_path):
    """By hand: 3/1 + 0/1.58 + 2/2 = 4.0 over the best order 3 + 2/1.58 = 4.26 -> 0.94."""
    (tmp_path / "gold.json").write_text(json.dumps({"q": {"full": 3, "noise": 0, "useful": 2}}))
    (tmp_path / "run.json").write_text(json.dumps({"q": ["full", "noise", "useful"]}))
    ev = evaluate(load_run(tmp_path / "run.json"), load_gold(tmp_path / "gold.json"), EvalSettings(),
                  [parse_metric("ndcg@3")])
    assert f"{ev.means['ndcg@3']:.2f}" == "0.94"
    assert abs(ev.means["ndcg@3"] - 4.0 / (3 + 2 / 1.584962500721156)) < 1e-12


def test_exponential_gain_is_an_option_and_is_named(tmp_path, capsys):
    (tmp_path / "gold.json").write_text(json.dumps({"q": {"full": 3, "noise": 0, "useful": 2}}))
    (tmp_path / "run.json").write_text(json.dumps({"q": ["full", "noise", "useful"]}))
    code, out, _ = run_cli(capsys, "eval", str(tmp_path / "run.json"), "--gold", str(tmp_path / "gold.json"),
                           "--metrics", "ndcg@3", "--gain", "exp")
    assert code == 0
    assert "2^grade-1" in out
    # (7 + 0 + 3/2) / (7 + 3/log2(3))
    expected = (7 + 1.5) / (7 + 3 / 1.584962500721156)
    assert f"{expected:.4f}" in out
