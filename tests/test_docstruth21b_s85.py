"""What docs/trinity.md and docs/memory.md say, held to the code (session 85's second pass, docstruth21b): the train
batch under 0.5.0 and 0.5.1, the host memory a node needs under 0.5.1 and 0.5.2 as verl 0.7 places the blocks, and
the plan an offloaded critic gets."""

from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TRINITY_PAGE = " ".join((ROOT / "docs" / "trinity.md").read_text(encoding="utf-8").split())
MEMORY_PAGE = " ".join((ROOT / "docs" / "memory.md").read_text(encoding="utf-8").split())
Cli = Callable[..., tuple[int, str, str]]

TRAIN_BATCH_CONFIG = """\
mode: both
algorithm: {algorithm_type: grpo}
model: {model_path: Qwen/Qwen3-8B, max_model_len: 16384}
cluster: {node_num: 2, gpu_per_node: 8}
explorer: {rollout_model: {engine_num: 8, tensor_parallel_size: 1}}
buffer: {train_batch_size: 12}
trainer: {ulysses_sequence_parallel_size: 2}
"""


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_a_train_batch_the_trainer_gpus_do_not_divide_breaks_051s_rule_in_the_words_quoted(cli: Cli, tmp_path: Path):
    config = tmp_path / "batch.yaml"
    config.write_text(TRAIN_BATCH_CONFIG, encoding="utf-8")
    quoted = ("it breaks a rule: a train batch of 12 (buffer.train_batch_size) does not divide by the 8 trainer GPUs, "
              "which Trinity 0.5.0 and 0.5.1 refuse")
    assert f'With `0.5.0` or `0.5.1`, whose validator asks more, the trainer GPUs must divide it, and the plans are ' \
           f'kept to that ("{quoted} ...")' in TRINITY_PAGE
    status, out, _ = cli("--from-config", str(config), "--gpu", "h100", "--trinity-version", "0.5.1")
    assert status == 1 and quoted in _flat(out) and "a train batch that 8 trainer GPUs divide" in _flat(out)
    status, out, _ = cli("--from-config", str(config), "--gpu", "h100", "--trinity-version", "0.5", "--json")
    assert '"batch-divides-trainer-gpus"' in out and "a `batch-divides-trainer-gpus` line and a caution" in TRINITY_PAGE
    status, out, _ = cli("--from-config", str(config), "--gpu", "h100", "--trinity-version", "0.5.2")
    assert "it trains" in _flat(out) and "which Trinity 0.5.0 and 0.5.1 refuse" not in _flat(out)


def test_the_pinned_blocks_need_is_051s_while_training_and_052s_start_up_is_more(cli: Cli):
    assert ("Offload with its reference needs 147.8 GiB of a node while training, not 164.7 (the need of 0.5.1, whose "
            "rank 0 alone loads the model; 0.5.2's, every rank loading it, is 235.2 at start-up)") in MEMORY_PAGE
    question = ("memory", "--model", "8B", "--gpu", "h100", "--gpus", "6", "--len", "8k", "--offload",
                "--trinity-version")
    _, out, _ = cli(*question, "0.5.1")
    assert "host memory: 147.8 GiB per node for Offload" in _flat(out)
    _, out, _ = cli(*question, "0.5.2")
    assert "host memory: 235.2 GiB per node for Offload" in _flat(out) and "147.8 while training" in _flat(out)


def test_an_offloaded_critic_gets_env_and_sp_4_not_the_actor_alones_plan(cli: Cli):
    assert "with `offloaded`, Env + SP=4 too, the actor's pass the tighter peak)" in MEMORY_PAGE
    question = ("--model", "8B", "--gpu", "a100", "--gpus", "4", "--len", "32768")
    _, alone, _ = cli(*question)
    _, offloaded, _ = cli(*question, "--critic", "offloaded")
    assert "plan           SP=4 on 4 of 4 GPUs" in alone
    assert "plan           Env + SP=4 on 4 of 4 GPUs" in offloaded
    assert "to spare at the actor's pass, the tighter peak" in _flat(offloaded)


LORA_CONFIG = """\
mode: both
algorithm: {algorithm_type: grpo}
model: {model_path: Qwen/Qwen3-8B, max_model_len: 16384, lora_configs: [{name: a, lora_rank: 64, lora_alpha: 128}]}
cluster: {node_num: 1, gpu_per_node: 8}
explorer: {rollout_model: {engine_num: 2, tensor_parallel_size: 1}}
buffer: {train_batch_size: 48}
"""


def test_the_apply_row_offers_write_only_at_a_lora_rank_write_takes(cli: Cli, tmp_path: Path):
    # trinity.md: the apply row offers --write FILE only where the options are ones --write takes; --write refuses a
    # --lora-rank other than the config's own LoRA's (it keeps that adapter), so the row offers none there
    assert ("the summary's `apply` row offers `--write FILE` only where these options are ones it takes: with "
            "`--gpus`, `--node-gpus`, `--train-batch-size`, `--lora-rank` or `--model` at odds with the config") in (
                TRINITY_PAGE)
    config = tmp_path / "lora.yaml"
    config.write_text(LORA_CONFIG, encoding="utf-8")
    offer = "--write FILE writes a copy of lora.yaml with the plan applied"
    for rank, offered in ((None, True), ("64", True), ("0", True), ("128", False), ("16", False)):
        rank_option = () if rank is None else ("--lora-rank", rank)
        status, out, _ = cli("--from-config", str(config), "--gpu", "h100", *rank_option)
        assert status == 0 and (offer in _flat(out)) == offered, rank
        status, _, err = cli("--from-config", str(config), "--gpu", "h100", *rank_option, "--write",
                             str(tmp_path / f"written-{rank}.yaml"))
        assert status == (0 if offered else 2), (rank, err)


def test_the_apply_row_offers_no_write_beside_a_model_other_than_the_configs(cli: Cli, tmp_path: Path):
    # trinity.md: --write refuses a --model naming another model than the config's model.model_path
    assert "- **`--model`** naming another model than the config's `model.model_path` is refused" in TRINITY_PAGE
    config = tmp_path / "batch.yaml"
    config.write_text(TRAIN_BATCH_CONFIG.replace("train_batch_size: 12", "train_batch_size: 48"), encoding="utf-8")
    for model, offered in (("8B", True), ("14B", False)):
        status, out, _ = cli("--from-config", str(config), "--gpu", "h100", "--model", model)
        assert status == 0 and ("--write FILE writes a copy of batch.yaml" in _flat(out)) == offered, model
        status, _, err = cli("--from-config", str(config), "--gpu", "h100", "--model", model, "--write",
                             str(tmp_path / f"written-{model}.yaml"))
        assert status == (0 if offered else 2), (model, err)


def test_the_apply_row_offers_no_write_for_a_config_of_another_trainer_strategy(cli: Cli, tmp_path: Path):
    # trinity.md: a trainer_strategy other than fsdp or fsdp2 (megatron) is refused by --write
    assert "- **A `trainer_strategy` other than `fsdp` or `fsdp2`** (`megatron`) is refused" in TRINITY_PAGE
    for strategy, offered in (("fsdp2", True), ("megatron", False)):
        config = tmp_path / f"{strategy}.yaml"
        config.write_text(LORA_CONFIG.replace(", lora_configs: [{name: a, lora_rank: 64, lora_alpha: 128}]", "")
                          + f"trainer: {{trainer_strategy: {strategy}}}\n", encoding="utf-8")
        status, out, _ = cli("--from-config", str(config), "--gpu", "h100")
        assert status == 0 and ("--write FILE writes a copy of" in _flat(out)) == offered, strategy
        status, _, err = cli("--from-config", str(config), "--gpu", "h100", "--write", str(tmp_path / "written.yaml"))
        assert status == (0 if offered else 2), (strategy, err)


def test_writes_yarn_note_in_a_run_without_a_rollout_says_the_key_reaches_no_model(cli: Cli, tmp_path: Path):
    assert ("so that in a run without a rollout (`mode: train`, DPO) it reaches no model of the run there"
            in TRINITY_PAGE)
    config = tmp_path / "sft.yaml"
    config.write_text("mode: train\nalgorithm: {algorithm_type: sft}\nmodel: {model_path: Qwen/Qwen3-8B, "
                      "max_model_len: 65536}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
                      "buffer: {train_batch_size: 64}\n", encoding="utf-8")
    status, _, err = cli("--from-config", str(config), "--gpu", "h100", "--write", str(tmp_path / "written.yaml"))
    assert status == 0 and "model.rope_scaling reaches no model of this run (it has no rollout)" in _flat(err)
