"""gene-causal claims: the file validates against the registry and carries Table 1."""

from bench.registry import Registry
from leaderboard.claims import load_paper

PAPER = "gene-causal"
METHODS = {"gene", "gene_forward", "gene_no_it", "notears_mlp", "cam", "pc", "ges", "direct_lingam",
           "r2_sortnregress", "var_sortnregress"}
TABLE1 = {("gene", "f1"): 0.65, ("gene", "shd"): 11, ("gene_forward", "f1"): 0.65, ("gene_forward", "shd"): 11,
          ("notears_mlp", "f1"): 0.24, ("notears_mlp", "shd"): 19, ("cam", "f1"): 0.38, ("cam", "shd"): 16,
          ("pc", "f1"): 0.10, ("pc", "shd"): 18, ("ges", "f1"): 0.23, ("ges", "shd"): 20,
          ("r2_sortnregress", "f1"): 0.35, ("r2_sortnregress", "shd"): 17}


def test_claims_file_is_valid_and_carries_table_1():
    registry = Registry.discover()
    paper = load_paper(registry, PAPER)
    assert set(paper.methods) == METHODS
    assert all(info["fidelity"] and info.get("deviations") for info in paper.methods.values())
    sachs = {(c.groups[0].method, c.metric): c.paper_value for c in paper.claims if c.groups[0].task == "sachs"}
    assert sachs == TABLE1
    assert all(c.scale == "paper-scale" and c.kind == "value" for c in paper.claims if c.groups[0].task == "sachs")
    synthetic = [c for c in paper.claims if c.groups[0].task != "sachs"]
    assert {c.scale for c in synthetic} == {"cpu-reduced"} and all(c.differences for c in synthetic)
