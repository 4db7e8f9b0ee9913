"""Answers a user with one or two GPUs can use (session 62, review s61 persona 7, items 6, 9 and 10): a refusal on
the nodes given names no plan on larger ones; one GPU in all says that the rollout needs GPUs of its own; the Python
API's notes name its keywords, not the command's flags."""

from __future__ import annotations

import json

import solver
from solver.rules import API_OPTIONS, COMMAND_OPTIONS

FOUR_B_ON_4090S = ("--model", "4B", "--gpu", "4090", "--len", "32k", "--gpus", "2", "--host-ram", "48")
ONE_A100 = ("--gpu", "a100 40gb", "--gpus", "1", "--maximize", "len", "--model", "1.7B")


def test_the_reviews_4b_on_two_4090s_in_a_box_of_2_names_no_plan_on_nodes_of_8(cli):
    # Item 6. Before: "on nodes of 8 GPUs, more trainer GPUs train 32768 tokens if you also drop --host-ram 48GB: Env
    # + Offload + SP=8 on 8 GPUs": a box of 2 has no nodes of 8. Now it says plainly that no count of nodes of 2
    # trains it, with what was lifted to prove it and the SP a node holds.
    status, out, err = cli(*FOUR_B_ON_4090S, "--node-gpus", "2")
    assert (status, err) == (1, "")
    assert " ".join(out.split()).endswith(
        "within 2 GPUs trains with --host-ram 48 GiB; no count of nodes of 2 GPUs (--node-gpus) trains it, even "
        "without --host-ram 48 GiB and with --token-budget auto: an SP group stays within one node, so SP=2 at most "
        "--explain says why, rule by rule, and names plans beyond these limits where there are any")
    status, out, _ = cli(*FOUR_B_ON_4090S, "--node-gpus", "2", "--json")
    (answer,) = json.loads(out)
    assert (status, answer["reason_code"], answer["node_gpus"]) == (1, "nothing-trains", 2)
    assert "nodes of 8" not in answer["reason"]
    # Without --node-gpus (the default nodes of 8) the nearest plan on 8 GPUs is named, as before.
    status, out, _ = cli(*FOUR_B_ON_4090S)
    assert status == 1 and ("; more trainer GPUs train 32768 tokens if you also drop --host-ram 48 GiB: Env + Offload "
                            "+ SP=8 on 8 GPUs (estimated, extrapolated)") in " ".join(out.split())


def test_a_nearest_plan_on_more_of_the_nodes_given_says_how_many_it_takes(cli):
    # More GPUs on nodes of 4 given are more nodes of 4: the nearest plan says how many.
    status, out, _ = cli("--model", "8B", "--gpu", "a100-40g", "--len", "32k", "--gpus", "2", "--node-gpus", "4",
                         "--no-offload", "--minimize", "gpus")
    assert status == 1 and ("; on 4 nodes of 4 GPUs, more trainer GPUs train 32768 tokens: Env + SP=4 on 16 GPUs "
                            "(estimated, extrapolated)") in " ".join(out.split())
    (answer,) = solver.plan("8B", gpu="a100-40g", max_model_len=32768, budget_gpus=2, node_gpus=4, offload=False,
                            objective="min_gpus")
    assert "; on 4 nodes of 4 GPUs, more trainer GPUs train 32768 tokens" in answer.reason


def test_one_gpu_in_all_says_the_rollout_needs_gpus_of_its_own(cli):
    # Item 10. Before: "Env + Offload on 1 of 1 GPU (none left for rollout)" and no word more; --gpus counts the
    # trainer's GPUs, and Trinity's rollout (explorer) takes GPUs of its own beside them (facts.md).
    status, out, err = cli(*ONE_A100)
    assert (status, err) == (0, "")
    lines = out.splitlines()
    assert lines[1] == "plan           Env + Offload on 1 of 1 GPU (none left for rollout)"
    assert " ".join(" ".join(lines[2:6]).split()) == (
        "for rollout the rollout (explorer) takes GPUs of its own beside the trainer's, and keeping the 1 GPU for it "
        "leaves the trainer none: give the rollout GPUs beside it instead: --gpus 1 --rollout-gpus R; or, with one "
        "GPU in all, Trinity's mode colocate runs the trainer and its vLLM engine on one GPU, the engine taking up to "
        "25% of it (gpu_memory_utilization), which rft-solver does not plan: plan the trainer on the 75% left, a GPU "
        "type of your own (--gpu NAME --gpu-memory SIZE: 75% of nvidia-smi's total, in MiB)")
    status, out, _ = cli(*ONE_A100, "--json")
    assert status == 0 and json.loads(out)[0]["rollout_kept"] == {"rollout_gpus": 1, "plan": None,
                                                                  "without_host_ram": None, "without_pins": None}
    # The flags it names plan: the trainer's GPU and one for the rollout beside it.
    status, out, _ = cli(*ONE_A100, "--rollout-gpus", "1")
    assert status == 0 and "for rollout" not in out and "1 of 1 GPU, with 1 rollout GPU" in out


def test_the_apis_fragment_notes_name_its_keywords(cli, tmp_path):
    # Item 9. Before: solver.trinity_config's header said "not checked: --host-ram not given" and its comment on
    # Trinity 0.6's flags "--trinity-version 0.5 leaves them out", the command's flags; the API's keywords are
    # host_ram_gb= and version=. The command's own fragment keeps its flags. One text each, worded per caller.
    assert (COMMAND_OPTIONS.host_ram, API_OPTIONS.host_ram) == ("--host-ram", "host_ram_gb")
    (answer,) = solver.plan("1.7B", gpu="a100 40gb", budget_gpus=1, objective="max_len")
    fragment = solver.trinity_config(answer)
    assert "# host memory: 38.6 GiB per node for Offload; not checked: host_ram_gb not given\n" in fragment
    assert ("  # these three are Trinity 0.6's (0.5 refuses them: version=\"0.5\" leaves them out); on verl before\n"
            "  # 0.8, Trinity 0.6 reads these, not the roles' fsdp_config flags\n  param_offload: true\n") in fragment
    assert "--host-ram" not in fragment and "--trinity-version" not in fragment
    (held,) = solver.plan("1.7B", gpu="a100 40gb", budget_gpus=1, objective="max_len", host_ram_gb=48.0)
    assert "# host memory: 38.6 GiB per node for Offload, within host_ram_gb of 48 GiB\n" in solver.trinity_config(held)
    status, out, _ = cli(*ONE_A100, "--emit", "trinity")
    assert status == 0 and "not checked: --host-ram not given" in out and "--trinity-version 0.5 leaves them out" in out
    # The check command in the header is a command: it keeps the command's flags.
    checked = solver.trinity_config(held, version="0.5")
    assert "solve --from-config CONFIG --check --gpu A100-40GB --host-ram 48 --critic none --trinity-version 0.5" in (
        checked)
