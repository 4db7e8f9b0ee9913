"""A smaller card's cells, s76 (smallercard): where an estimate on a GPU type does not fit a setting that the tables
of a GPU type with no more memory (the catalogue's) document or infer on as many GPUs at the length or longer,
``solve memory`` says so in a ``smaller card:`` line (``smaller_card`` in its JSON) and ``--explain`` after the memory
model's figure: the cell, and that the estimate is on the safe side there. A note: the verdict, the exit status and
the evidence stay the estimate's (a smaller card's cells vouch for no other GPU type, issue 6). The GPU types read
are the mirror of those whose out-of-memory cells cap an estimate (`larger_gpu_types`)."""

from __future__ import annotations

import json

import solver
from solver.rules import Setting, larger_gpu_types, smaller_card_vouching, smaller_gpu_types

CATALOG = solver.load_catalog()
BIG = CATALOG.with_gpu_types([solver.described_gpu_type("big", memory_mib=102400)])  # --gpu big --gpu-memory 100GiB
NOTE = ("the H20-96GB table for 2 GPUs (its GPU has at most the memory of big) says 'SP=2' at 16384 (documented): the "
        "estimate is on the safe side there, and still decides, as a smaller card's cells vouch for no other GPU type")
H20_CELL = {"trains": True, "evidence": "documented",
            "source": {"model": "Qwen3-8B", "gpus": 2, "max_model_len": 16384, "setting": "SP=2", "gpu": "H20-96GB"}}
MEMORY = ("memory", "--model", "8B", "--gpus", "2", "--len", "16k", "--sp", "2")


def _memory_json(cli, *options: str) -> tuple[int, dict[str, object]]:
    status, out, err = cli(*MEMORY, "--json", *options)
    assert err == ""
    return status, json.loads(out)


def test_solve_memory_on_a_larger_card_of_ones_own_names_the_h20_cell_and_keeps_its_verdict(cli):
    status, answer = _memory_json(cli, "--gpu", "big", "--gpu-memory", "100GiB")
    assert status == 1  # the estimate decides: 3.36 GiB over
    assert (answer["fits"], answer["trains"], answer["tables"]) == (False, False, None)
    assert round(answer["total_gib"] - answer["usable_gib"], 2) == 3.36
    assert answer["smaller_card"] == H20_CELL


def test_the_smaller_card_line_follows_the_verdict_exactly():
    answer = solver.memory_answer("Qwen3-8B", "big", 2, 16384, sp=2, catalog=BIG)
    lines = solver.memory_text(answer, BIG, width=400).splitlines()
    verdict = next(index for index, line in enumerate(lines)
                   if line.startswith("does not fit (estimated): 3.36 GiB over"))
    assert lines[verdict + 1] == f"smaller card: {NOTE}"
    assert lines[verdict + 2] == ("longest length the memory model fits with this setting: 13312 tokens (on a "
                                  "1024-token grid)")


def test_no_note_where_the_card_s_own_tables_speak_or_it_has_less_memory_or_the_estimate_fits(cli):
    status, h20 = _memory_json(cli, "--gpu", "h20")  # its own table documents it, and decides
    assert (status, h20["trains"], h20["smaller_card"]) == (0, True, None)
    # H20's own memory (97871 MiB): its tables speak for the card (the same memory), and decide
    status, same = _memory_json(cli, "--gpu", "big", "--gpu-memory", "97871MiB")
    assert (status, same["tables"]["source"]["gpu"], same["smaller_card"]) == (0, "H20-96GB", None)
    status, less = _memory_json(cli, "--gpu", "big", "--gpu-memory", "97870MiB")  # 1 MiB less than the H20's
    assert (status, less["fits"], less["tables"], less["smaller_card"]) == (1, False, None, None)
    status, fits = _memory_json(cli, "--gpu", "big", "--gpu-memory", "140GiB")
    assert (status, fits["fits"], fits["smaller_card"]) == (0, True, None)
    status, text, _ = cli(*MEMORY, "--gpu", "big", "--gpu-memory", "97870MiB")
    assert "smaller card:" not in text


def test_with_a_critic_no_smaller_card_s_cell_vouches_as_none_of_its_own_would(cli):
    status, answer = _memory_json(cli, "--gpu", "big", "--gpu-memory", "100GiB", "--critic", "resident")
    assert (status, answer["fits"], answer["smaller_card"]) == (1, False, None)


def test_explain_gives_the_note_after_the_memory_model_s_figure(cli):
    status, out, err = cli("--model", "8B", "--gpu", "big", "--gpu-memory", "100GiB", "--gpus", "2", "--len", "16k",
                           "--sp", "2", "--no-env", "--explain", "--json")
    assert (status, err) == (0, "")
    [answer] = json.loads(out)
    assert answer["plans"][0]["evidence"] == "estimated"
    memory_model = [reason["detail"] for reason in answer["explanation"] if reason["rule"] == "memory_model"]
    assert memory_model == [(
        "on 2 GPUs: no table speaks for big (none has its memory); the memory model predicts at 16384 tokens: SP=2 "
        f"92.5 GiB of 89.1 usable, though {NOTE}")]


def test_explain_says_nothing_of_a_smaller_card_where_none_has_a_cell():
    [answer] = solver.plan("Qwen3-8B", gpu="big", budget_gpus=2, max_model_len=16384, sp=2, env=False, explain=True,
                           catalog=CATALOG.with_gpu_types([solver.described_gpu_type("big", memory_mib=97870)]))
    details = [reason.detail for reason in answer.explanation if reason.rule == "memory_model"]
    assert len(details) == 1 and "SP=2 " in details[0] and "smaller card" not in details[0]


def test_the_gpu_types_read_mirror_those_that_cap_an_estimate():
    assert [gpu.name for gpu in smaller_gpu_types(BIG, "big")] == ["H20-96GB", "A100-80GB"]  # the most memory first
    assert [gpu.name for gpu in smaller_gpu_types(CATALOG, "H20-96GB")] == ["A100-80GB"]
    assert smaller_gpu_types(CATALOG, "H100-80GB") == ()  # 81559 MiB, less than the A100's 81920
    assert [gpu.name for gpu in larger_gpu_types(CATALOG, "H100-80GB")] == ["A100-80GB", "H20-96GB"]


def test_smaller_card_vouching_is_the_smaller_card_s_tables_verdict():
    model, sp2 = CATALOG.model("Qwen3-8B"), Setting(env=False, offload=False, sp=2)
    verdict = smaller_card_vouching(BIG, "big", model, 2, sp2, 16384)
    assert verdict is not None and verdict.model_dump(mode="json") == H20_CELL
    # the H20's 2-GPU table says 'Env + Offload' at 20480: SP=2 ran out of memory there, so nothing vouches
    assert smaller_card_vouching(BIG, "big", model, 2, sp2, 20480) is None
    inferred = smaller_card_vouching(BIG, "big", model, 2, sp2, 16384, lora=True)  # LoRA: by inference alone
    assert inferred is not None and inferred.evidence == "inferred"
