"""Coverage of session 83's changed lines (coverage24): the branches its own tests and those of the code it changed
left unrun. A DPO config with dynamic batch sizes off and a role's micro-batch size written null gets the null line
for it and the unset line for the others, each once; ``--write`` of a config whose ``trainer.max_token_len_per_gpu``
is an alias (ruamel holds its comment elsewhere) sets the anchor and keeps the alias; a config with old Mac line
endings has its budget comment mended, or dropped below the formula, as one with ``\\n`` has (the patch reads the
text with ``\\n`` alone); and one whose last line, the formula, ends with NEL has it dropped whole or mended."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from test_dpowrite_s83 import PLAN, Cli, _dpo
from test_release06b_s83 import GRPO
from test_review83a_s83 import ARR

H200 = ("--gpu", "h200", "--trinity-version", "0.6.0")
BUDGET_LINE = "  max_token_len_per_gpu: &tok 16384   # ceil(2 x 32768 / SP 4)\n"


def test_a_dpo_size_written_null_is_said_null_once_and_the_others_unset(tmp_path: Path, cli: Cli) -> None:
    config = _dpo(None)
    config["trainer"]["trainer_config"]["actor_rollout_ref"]["ref"] = {"log_prob_micro_batch_size_per_gpu": None}
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    status, out, err = cli("--from-config", str(path), "--check", *PLAN, "--json", "--trinity-version", "0.6")
    current = json.loads(out)[0]["current"]
    unset = ("{path} is not set: Trinity 0.6 on verl 0.8 or later hands verl none, which then refuses dynamic batch "
             "sizes off as the trainer starts: set it to {fix}")
    assert (status, err) == (1, "")
    assert list(zip(current["config_problem_codes"], current["config_problems"], strict=True)) == [
        ("micro-batch-unset-refused",
         (f"{ARR}.ref.log_prob_micro_batch_size_per_gpu is null: Trinity 0.6 fails on it as the trainer starts: "
          "with verl before 0.8 its typed config refuses it, and verl 0.8 or later, left with none, refuses dynamic "
          "batch sizes off: set it to 1")),
        ("micro-batch-unset", unset.format(
            path=f"{ARR}.actor.ppo_micro_batch_size_per_gpu",
            fix="2 (--write does), one pair, a chosen and a rejected sequence, on verl 0.8 or later, and to 1 before "
                "0.8, which Trinity doubles to one pair")),
        ("micro-batch-unset", unset.format(path=f"{ARR}.rollout.log_prob_micro_batch_size_per_gpu",
                                           fix="1 (--write does)"))]


def test_write_of_a_budget_that_is_an_alias_sets_its_anchor_and_keeps_the_alias(cli: Cli, tmp_path: Path) -> None:
    # the trainer's budget an alias of the actor's: its entry holds no comment (ruamel holds an alias's in front of
    # what follows it), so the formula is not mended there; the anchor takes the plan's budget, read through the alias
    assert BUDGET_LINE in GRPO
    anchored = GRPO.replace(BUDGET_LINE, "").replace("_len_per_gpu: *tok", "_len_per_gpu: &tok 16384", 1)
    text = anchored + "  max_token_len_per_gpu: *tok   # ceil(2 x 32768 / SP 4)\n"
    path, out = tmp_path / "c.yaml", tmp_path / "out.yaml"
    path.write_text(text, encoding="utf-8")
    status, _, err = cli("--from-config", str(path), *H200, "--write", str(out))
    assert status == 0, err
    written = out.read_text(encoding="utf-8")
    assert "        ppo_max_token_len_per_gpu: &tok 65536\n" in written
    assert "\n  max_token_len_per_gpu: *tok " in written
    read = yaml.safe_load(written)["trainer"]
    assert (read["max_token_len_per_gpu"], read["ulysses_sequence_parallel_size"]) == (65536, 1)


def test_write_mends_and_drops_the_budget_formula_with_old_mac_line_endings(cli: Cli, tmp_path: Path) -> None:
    path, out = tmp_path / "c.yaml", tmp_path / "out.yaml"
    path.write_bytes(GRPO.replace("\n", "\r").encode())
    for budget, line in (((), b"  max_token_len_per_gpu: &tok 65536   # ceil(2 x 32768 / SP 1)\r  save"),
                         (("--token-budget", "20000"), b"  max_token_len_per_gpu: &tok 20000\r  save")):
        status, _, err = cli("--from-config", str(path), *H200, *budget, "--write", str(out))
        assert status == 0, err
        written = out.read_bytes()
        assert line in written and b"\n" not in written


def test_write_drops_and_mends_a_budget_formula_ended_by_a_nel_line_break(cli: Cli, tmp_path: Path) -> None:
    # the formula the config's last line, ended by NEL: ruamel's comment has no \n; lowered, the comment goes whole
    # (an empty one would fail ruamel's writer), else the plan's formula takes its place
    last = GRPO.replace(BUDGET_LINE, "") + "  max_token_len_per_gpu: &tok 16384   # ceil(2 x 32768 / SP 4)\x85"
    anchored = last.replace("_len_per_gpu: *tok", "_len_per_gpu: 16384")
    path, out = tmp_path / "c.yaml", tmp_path / "out.yaml"
    path.write_text(anchored, encoding="utf-8")
    for budget, line in ((("--token-budget", "20000"), "  max_token_len_per_gpu: &tok 20000"),
                         ((), "  max_token_len_per_gpu: &tok 65536   # ceil(2 x 32768 / SP 1)")):
        status, _, err = cli("--from-config", str(path), *H200, *budget, "--write", str(out))
        assert status == 0, err
        written = out.read_text(encoding="utf-8")
        assert "\x85" not in written and "SP 4)" not in written
        assert [text for text in written.splitlines() if text.startswith("  max_token_len_per_gpu")] == [line]
