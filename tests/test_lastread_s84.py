"""A last read of session 84's changes (lastread84): what the lines and notes it added say, held to what rft-solver
does."""

from __future__ import annotations


def test_a_placement_saved_with_a_warning_on_standard_error_is_told_to_save_standard_output_alone(cli, tmp_path):
    """`solve cluster --memory-model` warns as ``solve cluster: warning: ...``; saved with ``2>&1`` after the JSON,
    --current was told only 'not JSON': the pattern of standard error's lines knew ``note`` (and a ``caution`` that
    no command prints), not ``warning``."""
    fleet = tmp_path / "n.yaml"
    fleet.write_text("pools:\n  - {name: a, gpu: A100-80GB, nodes: 1, gpus_per_node: 8}\n"
                     "jobs:\n  - {name: j1, model: 4B, max_model_len: 8k, rollout_gpus: 0}\n", encoding="utf-8")
    status, out, err = cli("cluster", str(fleet), "--json")
    assert (status, err) == (0, "")
    now = tmp_path / "now.json"
    now.write_text(out + "solve cluster: warning: --memory-model m.yaml: an odd coefficient\n", encoding="utf-8")
    assert "solve's notes on standard error are in it too" in cli("cluster", str(fleet), "--current", str(now))[2]
    now.write_text(out + "a line of the user's own: note: this\n", encoding="utf-8")
    assert "standard error" not in cli("cluster", str(fleet), "--current", str(now))[2]
