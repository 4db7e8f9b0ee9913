"""Small slips session 67's reviews left: a count of one reads "1 token" and "nodes of 1 GPU", not "1 tokens" or
"1 GPUs"; explain says plainly that a setting has no lowered budget left (not "at most 0 tokens per GPU"); a GPU's
form factor written without its hyphen (``h100sxm``, ``a100sxm4``, ``h100pcie``) names the catalogue's GPU type as
the hyphenated one does, PCIe note and all; and a `place` `required` item that is not a str is refused as the other
list items of the API are (``required[0] must be a str``)."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path

import pytest
from test_oddlen2_s66 import _catalog
from test_oddlen3_s67 import SP8_WITHOUT_ENV, TINY_CELLS
from test_persona17_s67 import PCIE_NOTE

import solver
from solver.tables import QueryError, load_catalog, says_pcie
from solver.tables.text import smi_name_form

Cli = Callable[..., tuple[int, str, str]]
ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("budget", ["default", "auto"])
@pytest.mark.parametrize("length", ["1", "2", "3"])
def test_no_answer_on_a_one_token_row_says_1_tokens(cli: Cli, tmp_path: Path, budget: str, length: str):
    _, cells = _catalog(tmp_path, TINY_CELLS)
    status, out, err = cli("--cells", str(cells), *SP8_WITHOUT_ENV, "--len", length, "--token-budget", budget,
                           "--explain")
    assert status == (0 if length == "1" else 1) and "Traceback" not in err
    assert "1 tokens" not in out and "0 tokens" not in out and " 1 token" in out


def test_the_rows_of_a_one_token_plan_count_it_as_one(cli: Cli, tmp_path: Path):
    _, cells = _catalog(tmp_path, TINY_CELLS)
    _, out, _ = cli("--cells", str(cells), *SP8_WITHOUT_ENV, "--len", "1", "--explain")
    lines = out.splitlines()
    row = [lines[2], *itertools.takewhile(lambda line: line.startswith(" "), lines[3:])]  # the row, wrapped
    # The fewest pins that rule them out (s88): --no-env kept, Offload's estimate without Env trains 1 token on 6
    assert " ".join(part.strip() for part in row) == (
        "for rollout    keeping 2 of the 8 for it leaves no plan for 1 token (within 6): --sp 8 --no-offload rule "
        "them out (without them: Offload on 6 trainer GPUs with --total-gpus 8 --rollout-gpus 2); give the rollout "
        "GPUs beside these instead: --gpus 8 --rollout-gpus R")
    assert next(line for line in lines if line.startswith("choice")).startswith(
        "choice           SP=8 on 8 GPUs is the cheapest plan at 1 token on exactly 8 GPUs; each of the 14 ")


def test_the_longest_length_of_one_token_is_counted_as_one(tmp_path: Path):
    catalog, _ = _catalog(tmp_path, TINY_CELLS)
    (answer,) = solver.plan("8B", gpu="H800", max_model_len=2, budget_gpus=8, exact=True, sp=8, env=False,
                            offload=False, token_budget="auto", catalog=catalog, explain=True)
    reasons = {reason.rule: reason.detail for reason in answer.explanation}
    assert reasons["shorter_length"].startswith(
        "on exactly 8 GPUs the longest length with a plan is 1 token (1 fewer): SP=8 on 8 GPUs at 1 token (documented")
    assert reasons["fewer_tokens"] == (
        "prompt and response together (max_prompt_tokens + max_response_tokens) must then fit in 1 token, which is "
        "max_token_len_per_gpu = 1 on each of 8 GPUs with SP=8")
    assert reasons["out_of_memory"].endswith(
        "so SP=8 ran out of memory there (at Trinity's default budget; lowered, SP=8 has no budget left: a row says it "
        "ran out of memory at 1 token per GPU, the least budget)")


def test_nodes_of_one_gpu_are_nodes_of_1_gpu():
    (answer,) = solver.plan("8B", gpu="h100", max_model_len=32768, budget_gpus=4, node_gpus=1, explain=True)
    assert answer.explanation[0].detail.startswith(
        "no plan passes these rules together: SP must divide the 1 GPU of a node; nothing in the tables")


@pytest.mark.parametrize(("written", "taken"), [
    ("h100sxm", "H100-80GB"), ("h100sxm5", "H100-80GB"), ("H100SXM-80GB", "H100-80GB"), ("a100sxm4", "A100-80GB"),
    ("a100sxm4-40gb", "A100-40GB"), ("h100pcie", "H100-80GB"), ("a100pcie-40gb", "A100-40GB")])
def test_a_form_factor_without_its_hyphen_names_the_gpu_type_as_with_it(written: str, taken: str):
    catalog = load_catalog()
    hyphenated = written.lower().replace("sxm", "-sxm").replace("pcie", "-pcie")
    assert catalog.gpu(written).name == catalog.gpu(hyphenated).name == taken
    assert smi_name_form(written) == smi_name_form(hyphenated)
    assert says_pcie(written) == says_pcie(hyphenated) == ("pcie" in hyphenated)


@pytest.mark.parametrize("name", ["h100", "h100-nvl", "l40s", "pcie", "mi300x", "rtx-4090"])
def test_names_without_a_form_factor_keep_their_form(name: str):
    assert (smi_name_form(name), says_pcie(name)) == (name, name == "pcie")


def test_pcie_cards_written_without_the_hyphen_get_the_pcie_note(cli: Cli):
    status, _, err = cli("--model", "8B", "--gpu", "h100pcie", "--gpus", "4", "--len", "8k")
    assert (status, err) == (0, (f"solve: note: --gpu 'h100pcie' {PCIE_NOTE.format(taken='H100-80GB')}--gpu "
                                 "my-h100-pcie --gpu-memory 81559MiB --gpu-interconnect pcie (81559: the SXM board's "
                                 "total; give nvidia-smi's)\n"))


def test_a_v100_written_without_the_hyphen_is_refused_as_a_v100(cli: Cli):
    status, out, err = cli("--model", "8B", "--gpu", "v100sxm2", "--gpus", "4", "--len", "8k")
    assert (status, out) == (2, "") and err.startswith("solve: error: 'v100sxm2' is a V100, which has no bf16")


@pytest.mark.parametrize(("required", "words"), [
    ([1], "required[0] must be a str, got 1"), (("math-4b", None), "required[1] must be a str, got None")])
def test_a_required_item_that_is_not_a_str_is_refused_as_other_list_items_are(required: object, words: str):
    with pytest.raises(QueryError) as refused:
        solver.place(ROOT / "docs" / "examples" / "fleet.yaml", required=required)  # type: ignore[arg-type]
    assert str(refused.value) == words
    with pytest.raises(QueryError) as gpu:
        solver.plan("8B", gpu=["h100", 1], max_model_len=8192)  # type: ignore[list-item]
    assert str(gpu.value) == "gpu[1] must be a str, got 1"
