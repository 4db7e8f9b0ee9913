"""What a new user of one node of four A100-40GB trips on (session 84, persona 72): a DPO config whose actor's own
``use_dynamic_bsz`` is false, which Trinity 0.6 replaces with the trainer's (true where unset), is told that the
trainer's key is on, not that the actor's false is true; ``--gpu a100 --gpu-memory 40G`` is told the catalogue's
A100-40GB; ``--lora 64`` is told ``--lora-rank``; a ``--dpo`` fragment's ``mode: train`` says DPO has no explorer;
a cluster job whose rollout leaves the GPUs that train it no layout, and that ``--token-budget auto`` places on the
nodes as they are, is told that, not ``--buy``."""

from __future__ import annotations

import json

from test_dpopairs_s82 import ARR, DYNAMIC, PAIR, UNSET, _dpo, _lines


def test_a_dpo_configs_actor_key_off_is_not_said_to_be_true():
    # the trainer's unset (true), the actor's own off: Trinity 0.5 reads the actor's (off: no line); Trinity 0.6 sets
    # the actor's to the trainer's, which is what is on, and what the fix names
    config = _dpo()
    config["trainer"]["trainer_config"]["actor_rollout_ref"]["actor"]["use_dynamic_bsz"] = False
    over = f"Trinity 0.6 sets {ARR}.actor.use_dynamic_bsz to it, over the false written there"
    for version in (None, "0.6"):
        unset = UNSET.removesuffix(")") + f"; {over})"
        line = DYNAMIC.format(key="trainer.use_dynamic_bsz", shown=unset) + PAIR[version]
        assert _lines(config, version) == [("dpo-pair-dynamic", line)]
    assert _lines(config, "0.5") == []
    config["trainer"]["use_dynamic_bsz"] = True
    said_true = DYNAMIC.format(key="trainer.use_dynamic_bsz", shown=f"true ({over})") + PAIR[None]
    assert _lines(config, None) == [("dpo-pair-dynamic", said_true)]


def test_a_catalogue_name_with_the_memory_of_its_sibling_is_told_the_sibling(cli, tmp_path):
    # --gpu a100 is the A100-80GB; a user of 40 GB cards who adds --gpu-memory 40G meant the A100-40GB
    known = "--gpu a100 names A100-80GB (80.0 GiB), a GPU type whose memory is known: "
    rest = "drop --gpu-memory, or give your GPU type a name of its own\n"
    for size in ("40G", "40960MiB", "40GiB"):
        assert cli("--model", "4B", "--len", "8k", "--gpu", "a100", "--gpu-memory", size) == (
            2, "", f"solve: error: {known}for the 40 GB card give --gpu A100-40GB; else {rest}")
    # a size no other catalogue type has, or the type's own, keeps the words it had
    for size in ("64", "80"):
        assert cli("--model", "4B", "--len", "8k", "--gpu", "a100", "--gpu-memory", size) == (
            2, "", f"solve: error: {known}{rest}")
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools:\n  - {name: lab, gpu: a100, gpu_memory_gb: 40, nodes: 1, gpus_per_node: 4}\n"
                     "jobs:\n  - {name: j, model: 4B, max_model_len: 8192}\n", encoding="utf-8")
    assert cli("cluster", str(fleet)) == (2, "", (
        f"solve cluster: error: {fleet}: pool lab: gpu a100 names A100-80GB (80.0 GiB), a GPU type whose memory is "
        "known: for the 40 GB card give gpu: A100-40GB; else drop gpu_memory_gb and gpu_memory_mib, or give your GPU "
        "type a name of its own\n"))


def test_a_lora_rank_by_another_tools_name_is_told_lora_rank(cli):
    # --lora starts three options (--lora-rank, --lora-targets, --lora-exclude), so no start of one named it
    for given in ("--lora", "--lora_r", "--LORA-DIM"):
        assert cli("--model", "4B", "--len", "8k", given, "64") == (2, "", (
            "usage: solve [options] (--help lists them)\n"
            f"solve: error: unrecognized arguments: {given} 64 (did you mean --lora-rank?)\n"))


def test_a_dpo_fragments_mode_train_says_dpo_has_no_explorer(cli):
    # DPO trains from a preference dataset: no explorer runs anywhere, not "elsewhere, in mode explore"
    flags = ("--model", "4B", "--len", "16k", "--gpus", "4", "--gpu", "a100-40g", "--rollout-gpus", "0",
             "--train-batch-size", "64", "--emit", "trinity")
    status, out, _ = cli(*flags, "--dpo")
    assert status == 0
    assert "\nmode: train  # Trinity trains DPO on a dataset in mode train alone, with no explorer anywhere\n" in out
    status, out, _ = cli(*flags)
    assert status == 0 and "\nmode: train  # no explorer here: it runs elsewhere, in mode explore, or none does (SFT)\n" in out


def test_a_job_whose_rollout_leaves_no_layout_is_told_token_budget_auto_where_it_places_it(cli, tmp_path):
    # Qwen3-4B LoRA at 49152 tokens trains on 4 A100-40GB at the default budget, which leaves no GPU of the node of 4
    # for its rollout; --token-budget auto trains it on 2 beside it: that is said, not --buy
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools:\n  - {name: lab, gpu: a100-40gb, nodes: 1, gpus_per_node: 4, host_ram_gb: 256}\n"
                     "jobs:\n  - {name: long, model: Qwen3-4B, max_model_len: 49152, lora_rank: 64, rollout_gpus: 1}\n",
                     encoding="utf-8")
    status, out, err = cli("cluster", str(fleet), "--json")
    [pool] = json.loads(out)["unplaced"][0]["pools"]
    assert (status, pool["reason_code"], pool["token_budget_auto_reach"]) == (1, "no-layout-beside-rollout", True)
    status, _, err = cli("cluster", str(fleet))
    assert status == 1 and err == (
        "solve cluster: note: long: --token-budget auto trains its max_model_len on the pools' nodes as they are "
        "(Trinity's default token budget does not): run again with it to place it where there is room\n")
    status, out, _ = cli("cluster", str(fleet), "--token-budget", "auto", "--json")
    assert (status, [placement["plan"]["gpus"] for placement in json.loads(out)["placements"]]) == (0, [2])
