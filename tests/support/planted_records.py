"""Records planted in a temporary store, shaped like the ones ``fit`` writes (test accuracy only)."""
import json

from polyattn.config import TrainConfig
from polyattn.results import record_path

ACCURACY_SPEC = [{"name": "test_acc", "higher_is_better": True, "scale": 100.0, "unit": "%", "label": "test accuracy"}]


def plant(root, cfg: TrainConfig, metrics: list[dict], *, status: str = "ok", wall: float = 1.0, **fields) -> TrainConfig:
    """Write ``cfg``'s record with ``metrics`` under ``root`` (extra top-level ``fields`` included)."""
    rec = {"schema": 1, "experiment": cfg.experiment,
           "config": {**cfg.__dict__, "probe_metrics": list(cfg.probe_metrics)},
           "config_hash": cfg.hash, "seed": cfg.seed, "preset": cfg.preset, "status": status, "diverged_step": None,
           "task": "images", "metrics_spec": ACCURACY_SPEC, "metrics": metrics, "probes": [], "rank": 0,
           "provenance": {"git_commit": "x", "git_dirty": False, "started": "2026-01-01T00:00:00+00:00",
                          "wall_s": wall}, **fields}
    path = record_path(cfg, root)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(rec))
    return cfg
