"""Trinity's LoRA keys as the released wheels read them (session 57): ``_validate_lora`` is skipped where
``model.tinker.enable`` is on (``common/config_validator.py:699`` in 0.5.2, ``:668`` in 0.5.0, ``:667`` in 0.5.1,
``:780`` in 0.6.0), so such a config is refused as one the Tinker service trains, never for its LoRA configs."""

from __future__ import annotations

from pathlib import Path

import pytest

TINKER = ("the Tinker service trains this config (model.tinker.enable or trainer.trainer_type tinker), so there is no "
          "trainer GPU to plan (rft-solver plans verl's FSDP trainer)\n")


@pytest.mark.parametrize("version", [(), ("--trinity-version", "0.5"), ("--trinity-version", "0.6")])
@pytest.mark.parametrize("lora", ["[{lora_rank: 8}, {lora_rank: 16}]", "[]", "{lora_rank: 8}"])
def test_lora_configs_under_tinker_are_refused_for_tinker_alone(cli, tmp_path: Path, version: tuple[str, ...],
                                                                lora: str):
    config = tmp_path / "trinity.yaml"
    config.write_text(f"model:\n  model_path: Qwen/Qwen3-8B\n  tinker: {{enable: true}}\n  lora_configs: {lora}\n"
                      "cluster: {node_num: 1, gpu_per_node: 8}\n", encoding="utf-8")
    status, out, err = cli("--from-config", str(config), "--gpu", "h100", "--len", "8192", *version)
    assert (status, out, err) == (2, "", f"solve: error: --from-config {config}: {TINKER}")
