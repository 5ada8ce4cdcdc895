"""Planted runs of the ``lra`` grid at the smoke preset, as chapter 05's page modules read them."""
from polyattn.analysis.lra import above_chance, lra_final
from polyattn.experiments.lra import lra, variant_label
from polyattn.results import config_dict
from polyattn.studies.lra.page import Runs
from polyattn.tasks.base import ACCURACY, TEST_LOSS
from polyattn.tasks.lra import VAL_ACCURACY

TASKS = ("listops", "image")


def lra_record(cfg, accs, wall_s=10.0):
    """A record of ``cfg`` whose test accuracy after each epoch is ``accs``."""
    metrics = [{"epoch": i + 1, "step": 10 * (i + 1), "train_loss": 1.0, "train_acc": a, "test_loss": 1.0,
                "test_acc": a, "val_acc": a, "lr": 1e-3, "wall_s": wall_s * (i + 1) / len(accs)}
               for i, a in enumerate(accs)]
    return {"schema": 1, "experiment": "lra", "config": config_dict(cfg), "config_hash": cfg.hash, "seed": cfg.seed,
            "preset": "smoke", "status": "ok", "diverged_step": None, "task": "lra", "seq_lens": {"seq_len": 64},
            "metrics_spec": [m.as_dict() for m in (ACCURACY, VAL_ACCURACY, TEST_LOSS)], "metrics": metrics,
            "probes": [], "n_params": 1000, "provenance": {"git_commit": "abc", "git_dirty": False, "wall_s": wall_s}}


def planted_runs(diff_of: dict, base=0.6, chance=None, flat=(), seeds=(0, 1, 2)) -> Runs:
    """Runs of ``TASKS`` at the smoke preset: softmax at ``base`` (+ noise per seed), each variant at
    softmax + its planted difference; tasks in ``flat`` keep every curve at one level."""
    noise = {0: 0.0, 1: 0.01, 2: -0.01}
    configs, records = [], []
    for s in seeds:
        for cfg in lra("smoke", seeds=[s], tasks=TASKS):
            label, task = variant_label(cfg), cfg.dataset
            acc = base + noise[s] + diff_of.get((task, label), 0.0) + (0.001 * (s - 1) if label != "softmax" else 0.0)
            configs.append(cfg)
            records.append(lra_record(cfg, (acc, acc) if task in flat else (0.3, acc)))
    chance = chance or {t: 0.1 for t in TASKS}
    final = lra_final(records)
    learned = above_chance(final, chance).set_index("lra_task").reindex(list(TASKS))
    return Runs("smoke", True, "", configs, list(TASKS), [], {}, records, final, chance, learned)
