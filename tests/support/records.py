"""Synthetic result records of the Table 1 grid and the scale sweep, with known answers."""
import math

from polyattn.experiments import vit

#: the planted scale sweep's constants (the book's grid less its largest)
CONSTS = ("1/32", "1/8", "1/2", "2")


def make_record(activation="softmax", seed=0, accs=(0.5, 0.6, 0.7), status="ok", diverged_step=None,
                patch_size=4, experiment="vit_table1", probes=None, wall_s=10.0, model="micro", augment="none"):
    cfg = vit.table1("smoke", seeds=[seed])[0].replace(activation=activation, patch_size=patch_size,
                                                       experiment=experiment, model=model, augment=augment)
    from polyattn.results import config_dict

    metrics = [{"epoch": i + 1, "step": 10 * (i + 1), "train_loss": 1.0, "train_acc": a, "test_loss": 1.0,
                "test_acc": a, "lr": 1e-3, "wall_s": wall_s * (i + 1) / len(accs)} for i, a in enumerate(accs)]
    return {"schema": 1, "experiment": experiment, "config": config_dict(cfg), "config_hash": cfg.hash,
            "seed": seed, "preset": "smoke", "status": status, "diverged_step": diverged_step, "metrics": metrics,
            "probes": probes or [], "n_params": 1000,
            "provenance": {"git_commit": "abc", "git_dirty": False, "wall_s": wall_s,
                           "hardware": {"cpu": "Test CPU", "cores": 2, "torch_threads": 1, "device": "cpu"},
                           "packages": {"torch": "x"}}}


def table1_records(diffs, base=0.80, seeds=(0, 1, 2), noise=(0.0, 0.004, -0.004)):
    """softmax at `base` + noise per seed; each other activation at softmax + its planted difference."""
    recs = []
    for s, eps in zip(seeds, noise):
        recs.append(make_record("softmax", s, accs=(0.5, base + eps)))
        for act, d in diffs.items():
            jitter = 0.001 * (s - 1)
            recs.append(make_record(act, s, accs=(0.5, base + eps + d + jitter)))
    return recs


def sweep_records(best_by_patch, seeds=(0, 1, 2), diverge=(), noise=0.0):
    """Accuracy peaks (in log c) at the planted c for each patch size; ``noise`` varies per seed and c."""
    recs = []
    for patch, best in best_by_patch.items():
        for c in CONSTS:
            for s in seeds:
                cv = float(eval(c))
                acc = (0.85 - 0.03 * (math.log(cv) - math.log(best)) ** 2 + 0.002 * (s - 1)
                       + noise * math.sin(7.0 * s + 3.0 * cv + patch))
                st = "diverged" if (patch, c) in diverge else "ok"
                recs.append(make_record(f"poly:p=3,c={c}", s, accs=(acc,), patch_size=patch, experiment="vit_scale",
                                        status=st, diverged_step=4 if st == "diverged" else None))
    return recs
