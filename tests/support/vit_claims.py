"""Helpers for the tests of chapter 04's page modules: a row of the claim register's table, two
planted claims of a chapter "unit_vit" on a grid of planted records, and a delivered claim."""
from polyattn.book.deliver import styled


def registered_row(pairs="3 of 3", diff="−9.99 [−10.50, −9.40] points", result="worse"):
    """The register's row of one comparison, as :func:`polyattn.book.deliver.registered_rows` gives it."""
    return {"Pairs": pairs, "Difference [95% CI]": diff, "Holm p": "0.01", "TOST p": "0.9", "Result": result}


def plant_claims(tmp_path, planted_grid):
    """Two planted claims of a chapter "unit_vit" on a grid of planted records: "unit_parity" (x³/√N
    within 0.2 points of softmax over 5 seeds, and ReLU/N, described, with one seed only; registered
    late) and "unit_pending" (a grid with no stored run); returns (evaluate, claims, root)."""
    from polyattn.claims.evaluate import evaluate
    from polyattn.claims.spec import Arm, Comparison, RegisteredClaim
    from polyattn.config import TrainConfig

    from .planted_records import plant

    offsets = {"softmax": 0.0, "poly:p=3": -0.002}
    noise = (0.0, 0.004, -0.004, 0.002, -0.002)
    jitter = {"softmax": (0.0,) * 5, "poly:p=3": (0.0, 0.002, -0.002, 0.001, -0.001)}
    configs = [plant(tmp_path, TrainConfig(experiment="unit_vit", activation=a, seed=s, preset="smoke"),
                     [{"epoch": 1, "test_acc": 0.80 + d + e + jitter[a][s]}])
               for a, d in offsets.items() for s, e in enumerate(noise)]
    configs.append(plant(tmp_path, TrainConfig(experiment="unit_vit", activation="relu_n", seed=0, preset="smoke"),
                         [{"epoch": 1, "test_acc": 0.79}]))
    configs.append(TrainConfig(experiment="unit_vit", activation="relu_n", seed=1, preset="smoke"))   # not stored
    planted_grid("unit_vit", configs)
    planted_grid("unit_vit_pending", [TrainConfig(experiment="unit_vit_pending", seed=s, preset="smoke") for s in (0, 1)])

    def arm(grid, act):
        return Arm(grid, {"activation": act})

    claims = {
        "unit_parity": RegisteredClaim(
            "unit_parity", "x³/√N matches softmax", "test", "unit_vit", margin=1.0,
            registered_after="after the runs", scale="planted records",
            comparisons=(Comparison("cube", "x³/√N − softmax", arm("unit_vit", "poly:p=3"), arm("unit_vit", "softmax"),
                                    "equivalent"),
                         Comparison("relu", "ReLU/N − softmax", arm("unit_vit", "relu_n"), arm("unit_vit", "softmax"),
                                    "equivalent", role="description"))),
        "unit_pending": RegisteredClaim(
            "unit_pending", "a claim without runs", "test", "unit_vit", margin=1.0, scale="planted records",
            comparisons=(Comparison("c", "softmax − softmax", arm("unit_vit_pending", "softmax"),
                                    arm("unit_vit_pending", "softmax"), "equivalent"),)),
    }

    def planted_evaluate(claim_id, root=None, preset="book"):
        return evaluate(claims[claim_id], root=tmp_path, preset="smoke")

    return planted_evaluate, claims, tmp_path


def delivered_claim(verdict):
    """A delivered claim of ``verdict``: its table holds the comparison, pairs, difference and result."""
    from polyattn.book.deliver import Delivered
    from polyattn.claims.report import comparison_rows

    rows = [{k: r[k] for k in ("Comparison", "Pairs", "Difference [95% CI]", "Result")} for r in comparison_rows(verdict)]
    return Delivered(verdict, "", styled(rows, f"{verdict.claim.statement}: margin ±1; {verdict.claim.scale}"))
