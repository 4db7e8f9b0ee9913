"""Trinity lines' words settled in session 58 (budgetwords).

A LoRA rank written ``null`` (or an interpolation that gives it) is no whole number either: every release types
``lora_rank`` as ``int``, not ``Optional[int]`` (``LoRAConfig``, ``trinity/common/config.py:108`` in 0.5.0 and 0.5.1,
``:109`` in 0.5.2, ``:110`` in 0.6.0; ``ActorModel``, ``common/verl_config.py:43`` in 0.5.0, ``:44`` in 0.5.1,
``trainer/verl/verl_config.py:50`` in 0.5.2, ``trainer/verl_legacy/verl_config.py:56`` in 0.6.0), and OmegaConf
2.3.0 refuses None there ("Incompatible value 'None' for field of type 'int'", checked with ``OmegaConf.merge`` of
the schema and the YAML, as ``load_config`` does, and with ``OmegaConf.structured`` of a dataclass holding None, as
0.6.0's trainer does with what ``build_dataclass_from_mapping`` kept)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

CONFIG = ("model:\n  model_path: Qwen/Qwen3-8B\n  max_model_len: 8192\n{lora}algorithm: {{algorithm_type: grpo}}\n"
          "cluster: {{node_num: 1, gpu_per_node: 8}}\nbuffer: {{train_batch_size: 64}}\n"
          "explorer: {{rollout_model: {{engine_num: 4}}}}\n{trainer}")
"""Qwen3-8B at 8192 tokens on 4 trainer GPUs of 8 (it trains there); `lora` adds keys under ``model``, `trainer` a
``trainer``."""
RANK = "trainer.trainer_config.actor_rollout_ref.model.lora_rank"
TYPED = "not a whole number: Trinity's typed config (OmegaConf's int field) refuses it"
FIX = "write the rank as a whole number"


def _rank_lines(cli, tmp_path: Path, *flags: str, lora: str = "", trainer: str = ""
                ) -> tuple[list[tuple[str, str]], bool, int]:
    """The (code, words) of `--from-config`'s lines on a LoRA rank on H100 80GB, whether the config is refused, and
    the exit status of the same with ``--check``."""
    config = tmp_path / "trinity.yaml"
    config.write_text(CONFIG.format(lora=lora, trainer=trainer), encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "h100", "--json", *flags)
    assert status == 0
    current = json.loads(out)[0]["current"]
    lines = [(code, words) for code, words in zip(current["config_problem_codes"], current["config_problems"],
                                                  strict=True) if code.startswith("lora-rank")]
    check = cli("--from-config", str(config), "--gpu", "h100", "--check", *flags)[0]
    return lines, current["refused"], check


def _trainer_rank(rank: str) -> str:
    """A ``trainer`` section whose ``actor_rollout_ref.model.lora_rank`` is `rank`, as written."""
    return f"trainer:\n  trainer_config:\n    actor_rollout_ref:\n      model:\n        lora_rank: {rank}\n"


@pytest.mark.parametrize("rank", ["null", "~", "Null", "${oc.env:S58_RANK,null}"])
@pytest.mark.parametrize(("flags", "line", "refused"), [
    # Trinity 0.5 merges trainer_config into its typed veRLConfig as it loads the config.
    (("--trinity-version", "0.5"), ("lora-rank-not-a-number-refused", f", with Trinity 0.5: {FIX}"), True),
    # 0.6.0 keeps the None (build_dataclass_from_mapping) and OmegaConf.structured refuses it as the trainer starts
    # on verl before 0.8; on verl 0.8 or later FROZEN_KEYS ignores the key.
    ((), ("lora-rank-not-a-number", f", with verl before 0.8; Trinity 0.6 on verl 0.8 or later ignores the key; {FIX}"),
     False),
])
def test_a_trainer_lora_rank_of_null_is_refused_where_typed(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            rank: str, flags: tuple[str, ...], line: tuple[str, str],
                                                            refused: bool):
    monkeypatch.delenv("S58_RANK", raising=False)
    code, words = line
    lines, is_refused, check = _rank_lines(cli, tmp_path, *flags, trainer=_trainer_rank(rank))
    assert lines == [(code, f"{RANK} is null, {TYPED}{words}")]
    assert (is_refused, check) == (refused, int(refused))


@pytest.mark.parametrize("flags", [(), ("--trinity-version", "0.5"), ("--trinity-version", "0.6")])
def test_a_lora_config_rank_of_null_is_refused_with_every_release(cli, tmp_path: Path, flags: tuple[str, ...]):
    lines, refused, check = _rank_lines(cli, tmp_path, *flags, lora="  lora_configs: [{lora_rank: null}]\n")
    words = f"model.lora_configs[0].lora_rank is null, {TYPED}, with every Trinity release and verl version: {FIX}"
    assert lines == [("lora-rank-not-a-number-refused", words)]
    assert (refused, check) == (True, 1)


def test_a_lora_config_rank_of_null_is_counted_as_full_fine_tuning_as_refused(cli, tmp_path: Path):
    # smalls92d: the line on LoRA agrees with the refusal (LoRAConfig.lora_rank: int = 32, 0.6.0 common/config.py:110,
    # 0.5.2 :109; load_config's OmegaConf.merge refuses None): no rank 32 counted for a null, as for true
    config = tmp_path / "trinity.yaml"
    for rank in ("null", "true"):
        config.write_text(CONFIG.format(lora=f"  lora_configs: [{{lora_rank: {rank}}}]\n", trainer=""), encoding="utf-8")
        status, out, _ = cli("--from-config", str(config), "--gpu", "a100", "--json")
        current = json.loads(out)[0]["current"]
        lines = dict(zip(current["config_problem_codes"], current["config_problems"], strict=True))
        assert (status, current["refused"]) == (0, True)
        assert (f"but the verdict and the plans count full fine-tuning's, as the tables measured (its lora_rank {rank} "
                "is not a whole number)") in lines["lora-counted-as-full"]
        assert lines["lora-rank-not-a-number-refused"].startswith(f"model.lora_configs[0].lora_rank is {rank}, {TYPED}")


@pytest.mark.parametrize(("lora", "trainer", "environ"), [
    # Unset: the typed default (32 in a LoRA config, 0 in the actor's model), no line.
    ("  lora_configs: [{path: null}]\n", "trainer:\n  trainer_config:\n    actor_rollout_ref:\n      model: {}\n",
     None),
    # An interpolation that gives a whole number.
    ("", _trainer_rank("${oc.env:S58_RANK,null}"), {"S58_RANK": "8"}),
])
def test_a_lora_rank_unset_or_given_a_number_has_no_line(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         lora: str, trainer: str, environ: dict[str, str] | None):
    for name, value in (environ or {}).items():
        monkeypatch.setenv(name, value)
    assert _rank_lines(cli, tmp_path, "--trinity-version", "0.5", lora=lora, trainer=trainer) == ([], False, 0)


@pytest.mark.parametrize(("flags", "on_08"), [((), "Trinity 0.6 on verl 0.8 or later"),
                                              (("--trinity-version", "0.6"), "on verl 0.8 or later")])
def test_a_trainer_budget_a_dynamic_ref_takes_with_the_trainers_off_is_said_unread_on_verl_08(
        cli, tmp_path: Path, flags: tuple[str, ...], on_08: str):
    """The trainer's budget below the length, its dynamic batch sizes off but the ref's own on (so the ref takes the
    budget): verl before 0.8 raises it, and verl 0.8 or later reads none (coverage93: no test reached these words)."""
    config = tmp_path / "trinity.yaml"
    config.write_text(CONFIG.format(lora="", trainer=(
        "trainer:\n  use_dynamic_bsz: false\n  max_token_len_per_gpu: 4096\n  trainer_config:\n"
        "    actor_rollout_ref:\n      ref: {log_prob_use_dynamic_bsz: true}\n")), encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "h100", "--json", *flags)
    assert status == 0
    current = json.loads(out)[0]["current"]
    lines = [words for code, words in zip(current["config_problem_codes"], current["config_problems"], strict=True)
             if code == "token-budget-below-length"]
    raised = ("Trinity with verl before 0.8 raises it to ceil(8192 / 1) = 8192 (Trinity 0.5.0 to its default, "
              "ceil(2 x 8192 / 1) = 16384)" if not flags else "Trinity 0.6 on verl before 0.8 raises it to "
              "ceil(8192 / 1) = 8192")
    assert lines[0] == (f"trainer.max_token_len_per_gpu 4096 x SP 1 is below model.max_model_len 8192: {raised}, and "
                        f"{on_08} reads no token budget with dynamic batch sizes off")
