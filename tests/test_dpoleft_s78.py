"""DPO's loose ends (session 78). A layout's interpolations are read in the ``environ`` given to `plan_settings` and
`trinity_fragment` (as Trinity reads them in the environment ``trinity run`` starts in; the command passes its shell's,
as its plans read the config); without one each ``${oc.env:VAR,default}`` takes its default, which the fragment's header
says. ``dpo=False`` beside a layout that reads DPO, interpolated too, is refused; `config_query` refuses a ``dpo=`` the
config does not say, and a DPO config beside a critic, as ``--dpo`` is; the DPO mode note is said where no config of
mode train gives the mode, in the API and the command alike; ``solve --dpo`` and ``--from-config`` count the same."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from test_padbound_s71 import INTERNLM2, Cli

import solver
from solver.api import answer_query, config_query
from solver.query import make_query
from solver.results import TrinitySettings
from solver.tables import QueryError, load_catalog
from solver.tables.model_config import load_model_config
from solver.trinity import plan_settings, read_trinity_config, trinity_fragment

CATALOG = load_catalog()
MODEL = load_model_config(INTERNLM2)
PADDED = CATALOG.with_model(MODEL)
DPO_CONFIG = """mode: {mode}
model:
  model_path: /models/internlm2-7b
  max_model_len: 8192
cluster:
  node_num: 1
  gpu_per_node: {node}
algorithm:
  algorithm_type: dpo
buffer:
  train_batch_size: 64
"""
INTERPOLATED_DPO = {"algorithm": {"algorithm_type": "${oc.env:ALGO,dpo}"}}
REFUSED = ("dpo is False, but layout trains DPO (algorithm.algorithm_type: dpo{read}) and internlm2-7b is trained one "
           "padded sequence per micro-batch, which for DPO holds a pair the plan did not count: plan with dpo=True "
           "and pass dpo=True (its answer's dpo_pairs) or None (which reads layout)")
DEFAULTS_NOTE = ("# No environ given: layout's ${oc.env:...} took their defaults (DYN), as the keys here read them; "
                 "Trinity resolves them as it loads the config (trinity/common/config.py:1059 in 0.6.0), in the "
                 "environment trinity run starts in: where that sets them, pass it as environ (environ=os.environ in "
                 "that shell).")
MODE_NOTE = "# DPO: Trinity trains it on a dataset in mode train alone (it refuses mode both:"


def _actor(settings: TrinitySettings) -> int:
    return int(settings.config["trainer"]["trainer_config"]["actor_rollout_ref"]["actor"][
        "ppo_micro_batch_size_per_gpu"])


def _plain_plan() -> solver.Plan:
    query = make_query(PADDED, model=MODEL.name, gpu="h100", max_model_len=32768, budget_gpus=8)
    best = answer_query(query, PADDED)[0].best
    assert best is not None
    return best


def _joined_comments(text: str) -> str:
    """The fragment's header paragraphs, their wrapped lines joined (each paragraph between ``#`` lines)."""
    lines = [line for line in text.splitlines() if line.startswith("#")]
    return " ".join(lines).replace(" # ", " ")


def test_a_layouts_interpolations_are_read_in_environ_or_said_taken_at_their_default():
    # Before, the fragment and the settings read every ${oc.env:...} of a layout at its default, and said nothing.
    answer = solver.plan("Qwen3-8B", gpu="h100", budget_gpus=8, max_model_len=32768)[0]
    assert answer.best is not None
    layout = {"trainer": {"use_dynamic_bsz": "${oc.env:DYN,false}"}}
    dynamic = [plan_settings(answer.best, CATALOG.model("Qwen3-8B"), layout=layout, environ=environ).config[
        "trainer"].get("use_dynamic_bsz") for environ in (None, {"DYN": "true"}, {"DYN": "false"})]
    assert dynamic == [True, None, True]  # turned back on where it reads false; left where the environment says true
    made = trinity_fragment(answer.best, CATALOG.model("Qwen3-8B"), layout=layout)
    assert DEFAULTS_NOTE in _joined_comments(made)
    assert "No environ given" not in trinity_fragment(answer.best, CATALOG.model("Qwen3-8B"), layout=layout,
                                                      environ={})
    assert "No environ given" not in trinity_fragment(answer.best, CATALOG.model("Qwen3-8B"))  # no layout: none read


@pytest.mark.parametrize(("environ", "read"), [
    (None, ", read from ${oc.env:ALGO,dpo} at its default: no environ given (pass the one the plans read it in)"),
    ({"ALGO": "dpo"}, ", read from ${oc.env:ALGO,dpo} in environ")])
def test_dpo_false_beside_an_interpolated_dpo_layout_is_refused(environ: dict[str, str] | None, read: str):
    # Before, both wrote the actor's 1 (one sequence) for a layout whose algorithm_type reads dpo, with no line.
    plan = _plain_plan()
    for made in (plan_settings, trinity_fragment):
        with pytest.raises(QueryError) as refused:
            made(plan, MODEL, layout=INTERPOLATED_DPO, dpo=False, environ=environ)
        assert str(refused.value) == REFUSED.format(read=read)
    # read as grpo in the plans' environment: dpo=False stands, one sequence
    assert _actor(plan_settings(plan, MODEL, layout=INTERPOLATED_DPO, dpo=False, environ={"ALGO": "grpo"})) == 1


@pytest.mark.parametrize(("environ", "message"), [
    ({"ALGO": 1}, "environ's values must be a str, got 1"), (3, "environ must be a Mapping or None, got 3")])
def test_an_environ_of_another_kind_is_refused(environ: object, message: str):
    for made in (plan_settings, trinity_fragment):
        with pytest.raises(QueryError) as refused:
            made(_plain_plan(), MODEL, environ=environ)  # type: ignore[arg-type]
        assert str(refused.value) == message


def test_config_query_refuses_a_dpo_the_config_does_not_say_and_a_critic_beside_its_dpo(tmp_path: Path, cli: Cli):
    # Before, dpo= overrode the config (the command refuses --dpo with --from-config); a DPO config planned a critic.
    dpo = read_trinity_config(DPO_CONFIG.format(mode="train", node=8), "dpo.yaml", {})
    grpo = read_trinity_config(DPO_CONFIG.format(mode="train", node=8).replace("dpo\n", "grpo\n"), "grpo.yaml", {})
    for config, given, verb in ((dpo, False, "trains"), (grpo, True, "does not train")):
        with pytest.raises(QueryError) as refused:
            config_query(PADDED, config, gpu="h100", dpo=given, critic="none")
        assert str(refused.value) == (f"dpo={given}, but the config's algorithm.algorithm_type says the run {verb} "
                                      "DPO: drop dpo (the config gives it, as --from-config refuses --dpo)")
    assert config_query(PADDED, dpo, gpu="h100", dpo=True).dpo is True  # the config's own: no conflict
    with pytest.raises(QueryError) as refused:
        config_query(PADDED, dpo, gpu="h100", critic="resident")
    assert str(refused.value) == ("the config's algorithm.algorithm_type dpo trains no PPO critic (Trinity's dpo "
                                  "algorithm uses none): drop critic='resident'")
    given = tmp_path / "dpo.yaml"
    given.write_text(DPO_CONFIG.format(mode="train", node=8))
    common = ("--from-config", str(given), "--model-config", str(INTERNLM2), "--gpu", "h100")
    assert cli(*common, "--critic", "resident") == (2, "", (
        "solve: error: the config's algorithm.algorithm_type dpo trains no PPO critic (Trinity's dpo algorithm uses "
        "none): drop --critic resident\n"))
    assert cli(*common, "--no-reference") == (2, "", (
        "solve: error: the config's algorithm.algorithm_type dpo without LoRA builds a reference model (Trinity's dpo "
        "algorithm uses one): drop --no-reference, or give --lora-rank\n"))


@pytest.mark.parametrize(("mode", "node", "said"), [("train", 8, False), ("both", 9, True)])
def test_the_dpo_mode_note_is_said_where_no_config_of_mode_train_gives_it(tmp_path: Path, cli: Cli, mode: str,
                                                                          node: int, said: bool):
    # Before, the API's fragment repeated a config's own mode: train, and --emit never said it for a config.
    text = DPO_CONFIG.format(mode=mode, node=node)
    config = read_trinity_config(text, "dpo.yaml", {})
    answer = answer_query(config_query(PADDED, config, gpu="h100"), PADDED)[0]
    assert (MODE_NOTE in solver.trinity_config(answer, PADDED)) is said
    given = tmp_path / "dpo.yaml"
    given.write_text(text)
    status, out, _ = cli("--from-config", str(given), "--model-config", str(INTERNLM2), "--gpu", "h100", "--emit",
                         "trinity")
    assert (status, MODE_NOTE in out) == (0, said)
    assert MODE_NOTE in solver.trinity_config(solver.plan(
        MODEL.name, gpu="h100", max_model_len=8192, budget_gpus=8, dpo=True, catalog=PADDED)[0], PADDED)


def test_the_command_reads_a_layouts_interpolations_in_its_shell(tmp_path: Path, cli: Cli,
                                                                 monkeypatch: pytest.MonkeyPatch):
    # Before, --emit and --json's apply read the config's other interpolations at their defaults.
    given = tmp_path / "run.yaml"
    given.write_text("model:\n  model_path: /models/Qwen3-8B\n  max_model_len: 32768\ncluster:\n  node_num: 1\n"
                     "  gpu_per_node: 8\nmode: train\nbuffer:\n  train_batch_size: 64\ntrainer:\n"
                     "  use_dynamic_bsz: ${oc.env:DYN,false}\n")
    common = ("--from-config", str(given), "--gpu", "h100")
    for value, written in (("true", None), ("false", True)):
        monkeypatch.setenv("DYN", value)
        status, out, _ = cli(*common, "--emit", "trinity")
        assert (status, yaml.safe_load(out)["trainer"].get("use_dynamic_bsz"), "No environ" in out) == (0, written,
                                                                                                        False)
        status, out, _ = cli(*common, "--json")
        assert (status, json.loads(out)[0]["apply"]["config"]["trainer"].get("use_dynamic_bsz")) == (0, written)


def test_solve_dpo_and_a_dpo_config_count_the_same_and_bad_combinations_are_one_line(tmp_path: Path, cli: Cli):
    given = tmp_path / "dpo.yaml"
    given.write_text(DPO_CONFIG.format(mode="train", node=8))
    model = ("--model-config", str(INTERNLM2), "--gpu", "h100")
    _, flags, _ = cli("--dpo", *model, "--gpus", "8", "--exact", "--len", "8192", "--json")
    _, config, _ = cli("--from-config", str(given), *model, "--json")
    figures = [(answer["dpo_pairs"], answer["plans"][0]["memory_gb"], answer["plans"][0]["max_token_len_per_gpu"])
               for answer in (json.loads(flags)[0], json.loads(config)[0])]
    assert figures == [(True, 32.64, 16384)] * 2
    api = solver.plan(MODEL.name, gpu="h100", max_model_len=8192, budget_gpus=8, exact=True, dpo=True,
                      catalog=PADDED)[0]
    assert (api.dpo_pairs, round(api.plans[0].memory_gb, 2)) == (True, 32.64)
    assert cli("--from-config", str(given), *model, "--dpo") == (2, "", (
        "solve: error: --from-config's algorithm.algorithm_type says whether the run trains DPO (dpo): drop --dpo\n"))
    # since s79 solve memory --dpo and a cluster job's dpo: count it too (tests/test_dpoeverywhere_s79.py)
    memory = json.loads(cli("memory", *model, "--gpus", "8", "--len", "8192", "--env", "--dpo", "--json")[1])
    assert (memory["dpo_pairs"], round(memory["total_gib"], 2), memory["tokens_per_gpu"]) == (True, 32.64, 16384)
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools:\n  - {name: h, gpu: H100-80GB, nodes: 1, gpus_per_node: 8}\n"
                     "jobs:\n  - {name: j, model: Qwen3-4B, max_model_len: 8192, dpo: true}\n")
    assert cli("cluster", str(fleet))[0] == 0
