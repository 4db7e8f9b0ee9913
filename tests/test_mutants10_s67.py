"""Session 67, mutants10: tests that kill mutants of session 66's changes which its tests let live (the table is in
/work/keep/review-s67-mutants10-table.md): the length a stray word names from 1024 tokens on, an option's start of
three characters, ``COLUMNS`` at the narrowest width it is read at, a map exactly as wide as its width, listed budgets
past a node that are not consecutive, `Plan.with_caution`, the pins' question (--exact, a config's count), the tables
row and caution of estimates, --check's problems said once and the rollout model's own keys, comment wrapping at
`COMMENT_WIDTH`, an unknown link, and trinity-fields.yaml's checks."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_clusterbuy_s60 import fleet_file
from test_pincost_s66 import _row

import solver
from solver.cli.output import piped_columns
from solver.render.layout import MIN_TERMINAL_WIDTH
from solver.results import Answer, Caution, CautionCode
from solver.tables import TableError, load_catalog
from solver.tables.inputs import TrinityFields
from solver.tables.loaders import load_validated
from solver.trinity import trinity_config_problems
from solver.trinity.fragment import wrapped_comments
from solver.trinity.plan_keys import COMMENT_WIDTH

Cli = Callable[..., tuple[int, str, str]]
EXAMPLES = Path(__file__).resolve().parent.parent / "docs" / "examples"


@pytest.mark.parametrize(("word", "hint"), [
    ("1k", " (did you mean --len 1k?)"), ("1024", " (did you mean --len 1024?)"),
    ("1023", ""),  # below 1024 tokens: no length
])
def test_a_stray_length_is_told_its_option_from_1024_tokens(cli: Cli, word: str, hint: str) -> None:
    status, out, err = cli("memory", word)
    assert (status, out) == (2, "")
    assert err.splitlines()[1:] == [f"solve memory: error: unrecognized arguments: {word}{hint}"]


def test_three_characters_are_too_short_to_guess_the_option_they_start(cli: Cli) -> None:
    """``--j`` starts one option alone (--json), but three characters are no guess (four are: --max)."""
    status, out, err = cli("--model", "8B", "--gpus", "4", "--j")
    assert (status, out) == (2, "")
    assert err.splitlines()[1:] == ["solve: error: unrecognized arguments: --j"]


@pytest.mark.parametrize(("columns", "read"), [
    (str(MIN_TERMINAL_WIDTH), MIN_TERMINAL_WIDTH), (str(MIN_TERMINAL_WIDTH - 1), None), ("0", None), ("", None),
    ("wide", None), ("120", 120),
])
def test_columns_are_read_from_the_narrowest_terminal_width_up(
    monkeypatch: pytest.MonkeyPatch, columns: str, read: int | None,
) -> None:
    monkeypatch.setenv("COLUMNS", columns)
    assert piped_columns() == read


def test_a_map_as_wide_as_its_width_keeps_a_column_per_budget() -> None:
    """Qwen3-8B on A100s, budgets 1 to 8: at the table's own width each budget keeps its column; a column less joins
    the budgets with the same plans."""
    maps = solver.map_plans(model="8B", gpu="a100")
    wide = solver.map_text(maps, width=300).splitlines()
    table_width = len(wide[1])
    assert table_width == 145  # its 1-GPU cell marked †: the guide advises against one A100

    def header(width: int) -> list[str]:
        return [cell.strip() for cell in solver.map_text(maps, width=width).splitlines()[2].split("┃")[1:-1]]

    assert header(table_width) == ["model", "≤1 GPU", "≤2 GPUs", "≤3 GPUs", "≤4 GPUs", "≤5 GPUs", "≤6 GPUs",
                                   "≤7 GPUs", "≤8 GPUs"]
    assert header(table_width - 1) == ["model", "≤1 GPU", "≤2-3 GPUs", "≤4-7 GPUs", "≤8 GPUs"]


def test_listed_budgets_past_a_node_join_only_consecutive_ones() -> None:
    """--budgets 8,10,16 on nodes of 8: 8 and 10 have the same plan, but 9 was not asked, so each keeps its column."""
    maps = solver.map_plans(model="8B", gpu="a100", budgets=(8, 10, 16))
    lines = solver.map_text(maps, width=200).splitlines()
    assert lines[2] == "┃ model    ┃      ≤8 GPUs      ┃     ≤10 GPUs      ┃      ≤16 GPUs      ┃"
    assert lines[4] == "│ Qwen3-8B │ 199k E+O+SP8@8~!^ │ 199k E+O+SP8@8~!^ │ 199k E+O+SP8@16~!^ │"


def _planned() -> Answer:
    """Qwen3-8B on 4 A100s at 65536 tokens: an answer whose plan has no caution."""
    answer = solver.plan("8B", gpu="a100", max_model_len=65536, budget_gpus=4)[0]
    assert answer.plans[0].cautions == ()
    return answer


TABLES_SAY = CautionCode.TABLES_SAY_OUT_OF_MEMORY


def test_a_caution_is_added_once_by_its_code_or_its_words() -> None:
    plan = _planned().plans[0]
    coded = plan.with_caution(Caution(TABLES_SAY, "the tables say no"))
    assert (coded.cautions, coded.caution_codes) == (("the tables say no",), (TABLES_SAY,))
    assert coded.with_caution(Caution(TABLES_SAY, "other words")) == coded  # its code is there
    both = coded.with_caution(Caution(CautionCode.PAST_VALIDATED_LENGTH, "past"))
    assert (both.cautions, both.caution_codes) == (("past", "the tables say no"),
                                                   (CautionCode.PAST_VALIDATED_LENGTH, TABLES_SAY))


def test_a_caution_joins_words_of_json_made_before_codes_after_them() -> None:
    """A plan read from JSON made before caution codes has words alone: a new caution's words go after them, once."""
    old = _planned().plans[0].model_copy(update={"cautions": ("an old caution",), "caution_codes": ()})
    assert old.with_caution(Caution(TABLES_SAY, "an old caution")) == old  # its words are there
    added = old.with_caution(Caution(TABLES_SAY, "new words"))
    assert (added.cautions, added.caution_codes) == (("an old caution", "new words"), ())


def test_an_answer_compares_equal_whatever_query_it_holds() -> None:
    answer = _planned()
    assert answer.query is not None
    without = answer.model_copy(update={"query": None})
    assert without == answer and hash(without) == hash(answer)


def test_an_exact_count_pinned_is_left_out_of_the_question_without_the_pins(cli: Cli) -> None:
    """--exact is a pin: without it, Qwen3-4B's longest context within 6 A100s is on 4 of them."""
    status, out, _ = cli("--model", "4B", "--gpu", "a100", "--maximize", "len", "--gpus", "6", "--exact")
    assert status == 0 and _row(out, "unpinned") == [
        ("without --exact, the best plan is Env + Offload + SP=4 on 4 GPUs at 102400 tokens, cost 0.6565 "
         "(documented): the pin costs 51200 tokens")]


def test_a_configs_exact_count_stays_in_the_question_without_the_pins(cli: Cli) -> None:
    """The example config's 6 trainer GPUs are its cluster's, no pin: without --no-env the plan stays on 6 of them
    (not on 4, which would reach 102400 tokens)."""
    status, out, _ = cli("--from-config", str(EXAMPLES / "trinity.yaml"), "--gpu", "a100", "--no-env", "--maximize",
                         "len")
    assert status == 0 and _row(out, "unpinned") == [
        ("without --no-env, the best plan is Env + Offload + SP=2 on 6 GPUs at 51200 tokens, cost 0.3703 "
         "(documented): the pin costs 8192 tokens")]


def test_an_estimate_with_a_lowered_budget_is_not_judged_by_the_tables(cli: Cli) -> None:
    """The tables measured Trinity's default budget: Qwen3-8B at 40960 tokens on one A100 with a budget lowered to
    52224 (--token-budget auto) is the estimate's alone, with no tables row (the 1-GPU table's '-' is at the
    default)."""
    status, out, _ = cli("--model", "8B", "--gpus", "1", "--len", "40k", "--gpu", "a100", "--estimate",
                         "--token-budget", "auto")
    assert status == 0 and _row(out, "plan") == ["Env + Offload on 1 of 1 GPU (none left for rollout)"]
    assert _row(out, "token budget")[0].startswith("max_token_len_per_gpu = 52224 (lowered from Trinity's default")
    assert _row(out, "tables") == []


QWEN3_8B = {"model_path": "Qwen/Qwen3-8B", "max_model_len": 4096}
ACTOR = ("trainer", "trainer_config", "actor_rollout_ref", "actor")


def _problems(mapping: dict[str, Any]) -> list[tuple[str, str]]:
    model = load_catalog().model("qwen3-8b")
    return [(problem.code.value, problem.words) for problem in trinity_config_problems(mapping, model, 8)]


def _nested(path: tuple[str, ...], value: object) -> dict[str, Any]:
    mapping: dict[str, Any] = {"model": dict(QWEN3_8B)}
    node = mapping
    for key in path[:-1]:
        node = node.setdefault(key, {})
    node[path[-1]] = value
    return mapping


@pytest.mark.parametrize(("path", "value", "problem"), [
    # a flag the dynamic-batch check judges, which the keys read elsewhere read too
    ((*ACTOR, "use_dynamic_bsz"), "maybe", (
        "flag-not-boolean", ("trainer.trainer_config.actor_rollout_ref.actor.use_dynamic_bsz must be true or false, "
                             "got 'maybe': Trinity 0.5 refuses the config, and 0.6 on verl before 0.8 sets it to "
                             "trainer.use_dynamic_bsz, and on verl 0.8 or later sets it to trainer.use_dynamic_bsz "
                             "too"))),
    # a number a check above reads, read again as a key read elsewhere
    ((*ACTOR, "ppo_max_token_len_per_gpu"), "many", (
        "not-a-number", ("trainer.trainer_config.actor_rollout_ref.actor.ppo_max_token_len_per_gpu must be a whole "
                         "number, got 'many': Trinity 0.5 refuses the config, and 0.6 on verl before 0.8 keeps it as "
                         "written, which its trainer's typed config (OmegaConf's int field) refuses as the trainer "
                         "starts; the notes that read it are not judged"))),
    # model's prompt tokens, which the rollout model's length check reads too
    (("model", "max_prompt_tokens"), "many", (
        "wrong-type-refused", ("model.max_prompt_tokens must be a whole number, got 'many': every Trinity release "
                               "refuses the config as it loads it (its typed config's int field)"))),
])
def test_a_key_of_a_wrong_type_two_checks_read_is_one_problem(path: tuple[str, ...], value: object,
                                                              problem: tuple[str, str]) -> None:
    assert _problems(_nested(path, value)) == [problem]


def test_the_check_command_says_a_number_two_checks_read_once(cli: Cli, tmp_path: Path) -> None:
    config = tmp_path / "prompt.yaml"
    config.write_text("model: {model_path: Qwen/Qwen3-8B, max_model_len: 4096, max_prompt_tokens: many}\nmode: both\n",
                      encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--check", "--gpu", "h100", "--gpus", "8")
    assert status == 1
    assert out.count("model.max_prompt_tokens must be a whole number") == 1


def test_a_rollout_rope_scaling_that_is_missing_itself_is_not_read() -> None:
    """``explorer.rollout_model.rope_scaling: ???``: the merge keeps the typed field's default (none), so nothing is
    said of it."""
    assert _problems(_nested(("explorer", "rollout_model", "rope_scaling"), "???")) == []


def test_without_estimate_only_the_answer_has_no_tables_row(cli: Cli) -> None:
    """The tables row says what the tables say of an --estimate plan; a documented plan's evidence says it already."""
    status, out, _ = cli("--model", "8B", "--gpu", "a100", "--len", "32k")
    assert status == 0 and _row(out, "plan") == ["Env + SP=2 on 6 of 6 GPUs (none left for rollout)"]
    assert _row(out, "tables") == []


def test_an_estimate_the_tables_vouch_for_says_so_and_no_more(cli: Cli) -> None:
    """--estimate's tables row where the table trains the plan's setting: what it says, without the words of a
    table that decides against the estimate."""
    status, out, _ = cli("--model", "8B", "--gpu", "a100", "--len", "32k", "--estimate")
    assert status == 0 and _row(out, "tables") == [
        "it trains (documented: the A100-80GB table for 6 GPUs says 'Env + SP=2' at 32768)"]


ROLLOUT = ("explorer", "rollout_model")


@pytest.mark.parametrize(("key", "value", "problems"), [
    # a rollout RoPE scaling holding ???: the ??? is said, no comparison with model.rope_scaling
    ("rope_scaling", {"rope_type": "yarn", "factor": "???", "original_max_position_embeddings": 40960}, [(
        "unresolved-value-refused", (
            "explorer.rollout_model.rope_scaling.factor is ???, a value missing: every Trinity release refuses the "
            "config as it loads it (explorer.rollout_model.rope_scaling is no typed section, so the merge keeps the "
            "??? and OmegaConf.to_object raises on it); give it a value, or remove the key"))]),
    ("rope_scaling", "yarn", []),  # no mapping: left alone
    ("max_model_len", 4096, []),  # as long as model's: no problem
    ("max_model_len", 4095, [(
        "rollout-length-short", (
            "explorer.rollout_model.max_model_len 4095 is below model.max_model_len 4096: the rollout's vLLM stops "
            "each sequence at 4095 tokens (a longer prompt fails its request); remove it (Trinity gives the rollout "
            "model.max_model_len)"))]),
])
def test_the_rollout_models_own_keys_at_their_edges(key: str, value: object, problems: list[tuple[str, str]]) -> None:
    assert _problems(_nested((*ROLLOUT, key), value)) == problems


def test_a_key_line_exactly_as_wide_as_the_comments_stays_whole() -> None:
    """A key's line with its end-of-line comment at `COMMENT_WIDTH` is kept; one character more puts the comment on a
    line of its own above the key."""
    key = "trainer.max_token_len_per_gpu: 32768  # "
    fitting = key + "x" * (COMMENT_WIDTH - len(key))
    assert len(fitting) == COMMENT_WIDTH and wrapped_comments(fitting) == f"{fitting}\n"
    assert wrapped_comments(fitting + "y") == f"# {'x' * (COMMENT_WIDTH - len(key))}y\n{key[:-4]}\n"


SHORT_ON_A100 = {"pools": [{"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8, "host_ram_gb": 1024}],
                 "jobs": [{"name": "short", "model": "Qwen3-4B", "max_model_len": 16384, "rollout_gpus": 2}]}


def test_a_placed_estimate_the_tables_vouch_for_has_no_tables_caution(cli: Cli, tmp_path: Path) -> None:
    """--estimate places Qwen3-4B at 16384 tokens on 6 A100s, which the 6-GPU table trains: its one caution is the
    batch's, none that the tables say otherwise."""
    status, out, err = cli("cluster", str(fleet_file(SHORT_ON_A100, tmp_path)), "--estimate")
    assert (status, err) == (0, "")
    assert [line for line in out.splitlines() if line.startswith("caution:")] == [
        ("caution: short: 6 data-parallel ranks (6 GPUs / SP=1): Trinity splits each training batch evenly over them, "
         "so buffer.train_batch_size (batch_size x")]


def test_a_trainer_on_whole_nodes_is_told_how_many(cli: Cli) -> None:
    status, out, _ = cli("--model", "32B", "--gpu", "a100", "--len", "64k", "--gpus", "16", "--emit", "trinity")
    assert status == 0
    assert ("# The trainer spans 2 whole nodes of 8 GPUs: your cluster.node_num x gpu_per_node must hold them and"
            in out.splitlines())


def test_settings_for_a_release_given_have_no_keys_only_06_takes() -> None:
    """Env + Offload + SP=4 (Qwen3-4B's longest within 6 A100s): for no release, Trinity 0.6's trainer offload keys
    are the ones 0.5 refuses; for 0.5 or 0.6 given, the keys are that release's own."""
    answer = solver.plan("4B", gpu="a100", objective="max_len", budget_gpus=6)[0]
    assert solver.trinity_settings(answer).trinity_06_keys == (
        ("trainer", "param_offload"), ("trainer", "optimizer_offload"), ("trainer", "offload_policy"))
    for version in ("0.5", "0.6"):
        assert solver.trinity_settings(answer, version=version).trinity_06_keys == ()


def test_a_pools_unknown_link_is_refused_without_a_guess(cli: Cli, tmp_path: Path) -> None:
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools:\n  - {name: lab, gpu: MI250X, nodes: 1, gpus_per_node: 8, gpu_memory_gb: 128, "
                     "gpu_interconnect: foo}\njobs:\n  - {name: a, model: Qwen3-8B, max_model_len: 8192}\n",
                     encoding="utf-8")
    assert cli("cluster", str(fleet)) == (
        2, "", (f"solve cluster: error: {fleet}: line 2: pool lab, gpu_interconnect: must be 'nvlink', "
                "'infinity-fabric' or 'pcie', got 'foo'\n"))


@pytest.mark.parametrize(("section", "where"), [("", '"" item 1'), ("model", "model item 1")])
def test_a_trinity_fields_error_names_the_top_section_as_quotes(tmp_path: Path, section: str, where: str) -> None:
    """The top section's path is "": an error inside it names it so, not as a blank."""
    path = tmp_path / "trinity-fields.yaml"
    sections = {"": ["a"], "model": ["b"], section: [1]}
    path.write_text(yaml.safe_dump({"releases": {"0.6.0": {"algorithms": ["ppo"], "sections": sections, "open": {},
                                                           "null": []}}}), encoding="utf-8")
    with pytest.raises(TableError) as raised:
        load_validated(TrinityFields, path)
    assert str(raised.value) == (f"{path}: releases, 0.6.0, sections, {where}: must be text, got 1 (YAML reads it, "
                                 "unquoted, as a number: quote it to keep it as text)")


@pytest.mark.parametrize(("release", "error"), [
    ({"sections": {"": ["b", "a"]}}, 'sections, "": not sorted; sort them'),
    ({"sections": {"": ["a", "a"]}}, "sections, \"\" lists 'a' twice; list each once"),
    ({"sections": {"model": ["a"]}}, 'sections: the top, "", is missing; give its field names'),
    ({"sections": {"": ["a"], "A.b": ["a"]}}, "sections: 'A.b' is no section path (field names or * joined by dots)"),
    ({"sections": {"": ["a"]}, "open": {"": []}}, "open: '' is no section path (field names or * joined by dots)"),
    ({"sections": {"": ["a"], "a": ["b"]}, "open": {"a": []}}, "'a' is both a section and open; it is one of them"),
    ({"sections": {"": ["a"]}, "null": ["zz"]},
     "null: 'zz' is no section, open field or list of sections; name one of theirs"),
    ({"sections": {"": ["a"], "a.*": ["b"]}, "null": ["a"]}, None),  # a list of sections whose default is null
])
def test_trinity_fields_of_a_release_are_checked(tmp_path: Path, release: dict[str, Any], error: str | None) -> None:
    path = tmp_path / "trinity-fields.yaml"
    path.write_text(yaml.safe_dump({"releases": {"0.6.0": {"algorithms": ["ppo"], "open": {}, "null": [], **release}}}),
                    encoding="utf-8")
    if error is None:
        assert load_validated(TrinityFields, path).releases["0.6.0"].null == ("a",)
        return
    with pytest.raises(TableError) as raised:
        load_validated(TrinityFields, path)
    assert str(raised.value) == f"{path}: releases, 0.6.0: {error}"
