"""What the docs say of session 81's changes, held to the code (docstruth17): docs/cluster.md's example of a key given
twice, run on the example fleet as it says; a job's own ``trinity_version: 0.5`` doing what ``--trinity-version 0.5``
does for it (the batch caution, the DPO pair's micro-batch); docs/cli.md's words for ``' all-linear '``;
docs/json.md's ``config_keys_changed`` (an interpolation as its text, the keys ``--write`` removes left out); and
benchmarks/README.md's account of the map's fuzz targets."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import fuzz_targets
from test_cluster import reference_checked

Cli = Callable[..., tuple[int, str, str]]
ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
INTERNLM2 = Path(__file__).parent / "data" / "hf-configs" / "internlm2-7b.json"


def _page(name: str) -> str:
    """A page's text, its lines joined as one (the quotes the tests look for may wrap)."""
    return re.sub(r"\s*\n\s*", " ", (ROOT / name).read_text(encoding="utf-8"))


def test_the_key_given_twice_example_is_what_the_example_fleet_gives(cli: Cli, tmp_path: Path) -> None:
    # Was: "line 30", a line of probe-0.6b's in the example fleet, not of math-4b's.
    quoted = re.search(r"\(`(fleet\.yaml: line \d+: key 'priority' appears twice in the entry named 'math-4b')`, for "
                       r"`docs/examples/fleet\.yaml` with a second `priority` after math-4b's `pool`\)",
                       _page("docs/cluster.md"))
    assert quoted is not None
    lines = (DOCS / "examples" / "fleet.yaml").read_text(encoding="utf-8").splitlines(keepends=True)
    pool = next(number for number, line in enumerate(lines) if line.startswith("    pool: a100"))
    assert lines[pool - 5] == "  - name: math-4b\n"  # the pool line is math-4b's
    (tmp_path / "fleet.yaml").write_text("".join(lines[:pool + 1] + ["    priority: 5\n"] + lines[pool + 1:]),
                                         encoding="utf-8")
    status, out, err = cli("cluster", str(tmp_path / "fleet.yaml"))
    assert (status, out, err) == (2, "", f"solve cluster: error: {tmp_path}/{quoted.group(1)}\n")


BATCH_FLEET = """\
pools:
  - {name: h100, gpu: h100, nodes: 1, gpus_per_node: 6}
jobs:
  - {name: j, model: Qwen3-8B, max_model_len: 65536, train_batch_size: 9%s}
"""
"""A job whose plan (Env + Offload + SP=4 on 4 GPUs) has 1 data-parallel rank, which divides its batch of 9, while
its 4 GPUs do not: the caution of Trinity 0.5.0's and 0.5.1's rule."""
BATCH_CAUTION = ("caution: j: a train batch of 9 (the job's train_batch_size) does not divide by the 4 trainer GPUs, "
                 "which Trinity 0.5.0 and 0.5.1 refuse")


def test_a_jobs_own_release_05_gets_the_batch_caution_as_the_runs_does(cli: Cli, tmp_path: Path) -> None:
    # cluster.md: "with --trinity-version 0.5 or the job's own trinity_version: 0.5 (with or without --emit-dir)".
    assert "with `--trinity-version 0.5` or the job's own `trinity_version: 0.5` (with or without `--emit-dir`)" in (
        _page("docs/cluster.md"))
    own, run = tmp_path / "own.yaml", tmp_path / "run.yaml"
    own.write_text(BATCH_FLEET % ", trinity_version: 0.5", encoding="utf-8")
    run.write_text(BATCH_FLEET % "", encoding="utf-8")
    outs = []
    for argv in (["cluster", str(own)], ["cluster", str(run), "--trinity-version", "0.5"]):
        status, out, _ = cli(*argv)
        assert status == 0 and BATCH_CAUTION in " ".join(out.split())
        outs.append(out)
    assert BATCH_CAUTION not in " ".join(cli("cluster", str(run))[1].split())  # no release: no caution
    status, _, _ = cli("cluster", str(own), "--emit-dir", str(tmp_path / "out"))
    assert status == 0
    assert "# caution: a train batch of 9 (the job's train_batch_size) does not divide by the 4 trainer GPUs," in (
        (tmp_path / "out" / "j.yaml").read_text(encoding="utf-8"))


def test_a_jobs_own_release_05_writes_the_dpo_pairs_micro_batch_of_one(cli: Cli, tmp_path: Path) -> None:
    # cluster.md: "ppo_micro_batch_size_per_gpu: 2, 1 with --trinity-version 0.5 or the job's own trinity_version: 0.5".
    assert ("(`ppo_micro_batch_size_per_gpu: 2`, `1` with `--trinity-version 0.5` or the job's own "
            "`trinity_version: 0.5`)") in _page("docs/cluster.md")
    shutil.copy(INTERNLM2, tmp_path / "internlm2-7b.json")
    for release, size in [("0.5", 1), ("0.6", 2)]:
        fleet = tmp_path / f"dpo-{release}.yaml"
        fleet.write_text("pools:\n  - {name: h100, gpu: h100, nodes: 1, gpus_per_node: 8}\njobs:\n"
                         "  - {name: j, model_config: internlm2-7b.json, max_model_len: 32768, dpo: true, "
                         f"trinity_version: '{release}'}}\n", encoding="utf-8")
        out = tmp_path / f"out-{release}"
        status, _, _ = cli("cluster", str(fleet), "--emit-dir", str(out))
        assert status == 0
        actor = (out / "j.yaml").read_text(encoding="utf-8").split("      actor:\n", 1)[1]
        assert f"ppo_micro_batch_size_per_gpu: {size}\n" in actor.split("      ref:\n", 1)[0]


def test_all_linear_with_spaces_is_refused_in_the_words_cli_md_quotes(cli: Cli) -> None:
    quoted = re.search(r"`(--lora-targets ' all-linear ' is all-linear with spaces around it, )\.\.\.(: give "
                       r"all-linear without the spaces)`", _page("docs/cli.md"))
    assert quoted is not None
    status, out, err = cli("--model", "8B", "--gpu", "h20", "--len", "8k", "--lora-rank", "16", "--lora-targets",
                           " all-linear ")
    assert (status, out) == (2, "")
    assert err.startswith(f"solve: error: {quoted.group(1)}") and err.endswith(f"{quoted.group(2)}\n")
    assert "which peft takes as a regular expression (it lowers the word but strips nothing)" in err


CONFIG = """\
algorithm:
  algorithm_type: grpo
  repeat_times: 8
buffer:
  batch_size: 96
model:
  model_path: Qwen/Qwen3-8B
  max_model_len: 32768
cluster:
  node_num: 1
  gpu_per_node: 8
explorer:
  rollout_model:
    engine_num: 2
    tensor_parallel_size: 1
trainer:
  balance_batch: true
  trainer_config:
    actor_rollout_ref:
      ref:
        log_prob_max_token_len_per_gpu: ${oc.env:REF_BUDGET,1000}
"""
"""The example's run with a key of Trinity 0.6's trainer (which --write removes for 0.5) and a ref's budget written as
an interpolation that holds no sequence of the plan's length (--write sets it to the plan's)."""


def test_config_keys_changed_as_json_md_says(cli: Cli, tmp_path: Path) -> None:
    page = _page("docs/json.md")
    assert "`config_value` (C's value as written, an interpolation as its text;" in page
    # the keys --write removes follow, marked (review81a, s81: tests/test_review81a_s81.py)
    assert ("then each key `--write` removes (a stale `model.rope_scaling`, and the rollout model's where it repeats "
            "it; with `--trinity-version 0.5`, Trinity 0.6's keys under `trainer`, which 0.5 refuses), with C's value, "
            "`plan_value` null and a fourth key, `\"removed\": true`") in " ".join(page.split())
    config = tmp_path / "c.yaml"
    config.write_text(CONFIG, encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "h20", "--trinity-version", "0.5", "--json")
    assert status == 0
    (answer,) = json.loads(out)
    assert answer["config_keys_changed"] == [
        {"key": "trainer.ulysses_sequence_parallel_size", "config_value": None, "plan_value": 2},
        {"key": "trainer.max_token_len_per_gpu", "config_value": None, "plan_value": 32768},
        {"key": "trainer.trainer_config.actor_rollout_ref.ref.log_prob_max_token_len_per_gpu",
         "config_value": "${oc.env:REF_BUDGET,1000}", "plan_value": 32768},
        {"key": "trainer.balance_batch", "config_value": True, "plan_value": None, "removed": True}]
    status, _, err = cli("--from-config", str(config), "--gpu", "h20", "--trinity-version", "0.5", "--write",
                         str(tmp_path / "w.yaml"))
    assert status == 0 and "trainer.balance_batch removed" in err  # removed, and last in the list above
    assert "balance_batch" not in (tmp_path / "w.yaml").read_text(encoding="utf-8")


def test_the_map_fuzz_targets_are_as_benchmarks_readme_says() -> None:
    page = _page("benchmarks/README.md")
    drawn = re.search(r"LoRA targets and exclusions such as (.*?) or nothing, Trinity releases known and not, "
                      r"`--dpo`, `--critic`, `--token-budget`\), `solver\.map_plans` calls with its newer keywords "
                      r"\((.*?)\) given values", page)
    assert drawn is not None
    targets = re.findall(r"`([^`]*)`", drawn.group(1))
    assert targets == ["q_proj,v_proj", "experts", "(", r".*layers\.40\..*"]
    assert set(targets) | {"", " "} <= set(fuzz_targets.LORA_TARGETS)
    assert {"--dpo", "--critic", "--token-budget"} <= set(fuzz_targets.MAP_FLAGS)
    assert set(fuzz_targets.RELEASES) & {"0.5.2", "0.6"} and "0.7" in fuzz_targets.RELEASES  # known and not
    assert re.findall(r"`([a-z_]+)`", drawn.group(2)) == list(fuzz_targets.MAP_OPTIONS)
    # "Both drew --svg among the map's words, since left out"
    assert "--svg" not in fuzz_targets.MAP_WORDS and "--svg" not in fuzz_targets.MAP_FLAGS
    # the table's rows are the targets, in their order
    rows = re.findall(r"\| ([a-zA-Z_ ]+) \| 2000 \|", page.split("A later session (s81 mapfuzz", 1)[1])
    assert rows == list(fuzz_targets.TARGETS)


def test_an_exclusion_of_every_layer_is_refused_in_the_peft_words_cli_md_quotes(cli: Cli) -> None:
    page = _page("docs/cli.md")
    assert ("`--lora-exclude '.*', on Qwen3-8B, leaves out every module all-linear matches (\"All modules were "
            "excluded\"): exclude fewer, or remove it`; one that leaves out every layer but not the model's other "
            "modules, `.*layers\\..*`, in PEFT's other words, `(\"No modules were targeted for adaptation\")`") in page
    for exclusion, words in [(".*", "All modules were excluded"),
                             (r".*layers\..*", "No modules were targeted for adaptation")]:
        status, out, err = cli("--model", "8B", "--gpu", "h20", "--len", "8k", "--lora-rank", "16", "--lora-exclude",
                               exclusion)
        said = (f"solve: error: --lora-exclude '{exclusion}', on Qwen3-8B, leaves out every module all-linear "
                f"matches (\"{words}\"): exclude fewer, or remove it\n")
        assert (status, out, err) == (2, "", said)


def test_a_jobs_own_release_050_asks_its_trainer_gpus_to_divide_the_batch(cli: Cli, tmp_path: Path) -> None:
    # cluster.md: "For Trinity 0.5.0 or 0.5.1 (the job's trinity_version, or --trinity-version), ... its trainer GPUs
    # must divide it." The batch of 9: 0.5.2 places the job on 4 GPUs at SP=4 (1 rank); 0.5.0 finds no count of GPUs
    # that divides 9 and trains the length.
    assert ("For Trinity 0.5.0 or 0.5.1 (the job's `trinity_version`, or `--trinity-version`), whose validator asks "
            "more, its trainer GPUs must divide it.") in _page("docs/cluster.md")
    for release, placed in [("0.5.2", 1), ("0.5.0", 0), ("0.5.1", 0)]:
        path = tmp_path / f"{release}.yaml"
        path.write_text(BATCH_FLEET % f", trinity_version: '{release}'", encoding="utf-8")
        status, out, _ = cli("cluster", str(path), "--json")
        result = reference_checked(path, out)  # the batch rule of the job's own release, as the reference counts it
        assert (status, len(result["placements"])) == (1 - placed, placed)
        if not placed:
            assert ("a train batch that 4 trainer GPUs divide (the nearest to 9: 8) lets Env + Offload + SP=4 on "
                    "4 GPUs train it") in (
                result["unplaced"][0]["reason"])
