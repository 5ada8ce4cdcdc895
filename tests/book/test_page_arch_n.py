"""Chapter 10's "What each architecture's attention normalises over, and its N": N read from the
built models, and XCiT's check read as people read numbers."""
from support.arch_runs import table_cells
from support.ci import require_module

from polyattn.studies.architectures import n as page

require_module("timm", "pip install timm==1.0.29, as in requirements.txt")


def test_n_is_read_from_the_models_for_each_architecture():
    v = page.n_values()
    assert (v["vit_n"], v["swin_n"], v["xcit_ch"], v["xcit_tok"]) == (50, 16, 16, 64)
    assert (v["vit_n_paper"], v["swin_n_paper"], v["xcit_ch_paper"], v["xcit_tok_paper"]) == (197, 49, 48, 196)
    assert v["swin_window_paper"] == "7 × 7" and v["swin_root_paper"] == "7" and v["swin_fixed_ratio_paper"] == "0.50"
    assert page.xca_layer() == {"width": 64, "heads": 4, "tokens": 64}
    for table in page.n_tables():
        assert not any(" x " in c for c in table_cells(table))
    rows = {r["Architecture"]: r for r in page.n_table().data.to_dict("records")}
    assert list(rows) == ["ViT", "DeiT", "Swin", "XCiT, N = channels", "XCiT, N = tokens"]
    assert (rows["Swin"]["N here"], rows["Swin"]["N, paper's model"], rows["Swin"]["√N/14, paper's model"]) == (16, 49,
                                                                                                          "0.50")
    assert rows["XCiT, N = tokens"]["N, paper's model"] == 196 and "dₕ × dₕ" in rows["XCiT, N = channels"][
        "A row of attention runs over"]


def test_the_xcit_check_values_read_as_people_read_numbers():
    check = {"n_channels": 16, "n_tokens": 64, "factor": 0.7937, "max_abs_diff": 1.49e-8,
             "max_abs_diff_without": 0.0193, "output_scale": 0.135}
    assert page.xcit_check_values(check) == {"factor": "0.794", "diff": "1.5 × 10⁻⁸", "without": "0.019",
                                             "scale": "0.14"}
