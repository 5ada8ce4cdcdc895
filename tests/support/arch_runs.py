"""Planted runs of the architectures grid at the smoke preset and planted register results, as
chapter 10's page modules read them."""
from types import SimpleNamespace

from polyattn.analysis import architectures as arch
from polyattn.claims.evaluate import ClaimVerdict, ComparisonResult
from polyattn.claims.spec import Arm, Comparison
from polyattn.experiments.architectures import table2
from polyattn.results import config_dict
from polyattn.studies.architectures.page import Runs
from polyattn.tasks.base import ACCURACY, TEST_LOSS

NOISE = {0: 0.0, 1: 0.004, 2: -0.004}     # shared by every variant of a seed: cancels in the pairs
#: Words that decide a comparison; the page's own tables are description and carry none of them.
VERDICT_WORDS = ("equivalent", "worse", "better", "inconclusive", "verdict")


def arch_record(cfg, acc):
    metrics = [{"epoch": 1, "step": 10, "train_loss": 1.0, "train_acc": acc, "test_loss": 1.0, "test_acc": acc,
                "lr": 1e-3, "wall_s": 5.0}]
    return {"schema": 1, "experiment": cfg.experiment, "config": config_dict(cfg), "config_hash": cfg.hash,
            "seed": cfg.seed, "preset": cfg.preset, "status": "ok", "diverged_step": None, "task": "images",
            "seq_lens": cfg.seq_lens, "metrics_spec": [m.as_dict() for m in (ACCURACY, TEST_LOSS)],
            "metrics": metrics, "probes": [], "n_params": 1000,
            "provenance": {"git_commit": "abc", "git_dirty": False, "wall_s": 5.0}}


def planted_runs(diff=None, softmax=None, base=0.7, seeds=(0, 1, 2)) -> Runs:
    """Runs of the smoke grid: each variant at its architecture's softmax (``softmax[arch]`` or
    ``base``) plus ``diff[(arch, variant)]`` and a small per-seed jitter."""
    diff, softmax = diff or {}, softmax or {}
    configs, records = table2("smoke", seeds=list(seeds)), []
    for cfg in configs:
        a, v = arch.architecture_of(cfg), arch.variant_label(cfg)
        jitter = 0.0 if v == arch.SOFTMAX else 0.0005 * (cfg.seed - 1)
        records.append(arch_record(cfg, softmax.get(a, base) + NOISE[cfg.seed] + diff.get((a, v), 0.0) + jitter))
    return Runs("smoke", True, "", configs, records, arch.architecture_final(records))


def table_cells(table) -> list[str]:
    frame = table.data
    return [str(c) for c in frame.columns] + [str(v) for v in frame.to_numpy().ravel()]


def planted_result(cid, label, n, mean, cells=None, role="primary", result="inconclusive", planned=None):
    comparison = Comparison(cid, label, Arm("architectures_table2", {"activation": "poly:p=3"}),
                            Arm("architectures_table2", {"activation": "softmax"}), "equivalent", role=role)
    return ComparisonResult(comparison, n, planned if planned is not None else n, 0, "points", True, 50.0, 50.0, mean,
                            mean - 2.0, mean + 2.0, mean - 1.5, mean + 1.5, 0.5, 0.4, False, 3.0, holm_p=0.6,
                            result=result, margin=1.0, cell_estimates=cells)


def delivered_claim(results, claim_id="table2_architectures"):
    from polyattn.claims import claim

    verdict = ClaimVerdict(claim(claim_id), list(results), "inconclusive at this power", {}, None)
    return SimpleNamespace(verdict=verdict, table=None)
