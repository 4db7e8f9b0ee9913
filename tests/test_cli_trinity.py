"""The Trinity side of the CLI: --emit trinity, --out, --rollout-gpus, --from-config and --write."""

from __future__ import annotations

import errno
import json
import os
import signal
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import yaml
from conftest import PADDED_051, qwen3_8b_checkpoint
from option_reference import option_reference
from test_padbound_s71 import ACTOR_FLAG_SCOPE

import solver
import solver.api
import solver.cli.atomic
import solver.cli.planner
from solver.cli.atomic import write_all_atomically
from solver.memory import host_memory_gib
from solver.render import APPLY_HEADING
from solver.tables import QueryError, load_catalog
from solver.trinity import ROLE_KEYS_IGNORED, TRINITY_06_OFFLOAD
from solver.trinity.patch import _paths_to

DATA = Path(__file__).parent / "data" / "trinity"
FLAGSHIP = ["--maximize", "len", "--gpus", "6", "--model", "4B", "--gpu", "a100-80g"]
A100_NOTE = ("solve: note: --gpu 'a100' is taken as A100-80GB; nodes of A100-40GB need that name (the memory decides "
             "the plans)\n")
"""The note on --gpu a100, which comes before the notes on what is made and written."""


@pytest.fixture
def user_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The realistic user config, with the environment it expects: Qwen3-8B at 32768 tokens."""
    monkeypatch.setenv("MODEL_PATH", "Qwen/Qwen3-8B")
    monkeypatch.setenv("MAX_MODEL_LEN", "32768")
    monkeypatch.delenv("PYTORCH_CUDA_ALLOC_CONF", raising=False)
    path = tmp_path / "trinity.yaml"
    path.write_bytes((DATA / "user-config.yaml").read_bytes())
    return path


def test_emit_prints_the_golden_fragment(cli):
    status, out, err = cli(*FLAGSHIP, "--emit", "trinity", "--rollout-gpus", "2")
    assert (status, err) == (0, "")
    assert out == (DATA / "golden-env-offload-sp4-yarn.yaml").read_text(encoding="utf-8")


def test_emit_and_write_say_whether_host_ram_holds_the_plans_host_memory(cli, user_config: Path, tmp_path: Path):
    # As the summary's host memory row: --emit's header and --write's note above trainer_strategy say that the
    # need is within --host-ram, or that it was not checked without it. (Qwen3-4B is tied: every rank loads it.)
    status, out, _ = cli(*FLAGSHIP, "--emit", "trinity")
    assert status == 0 and ("\n# host memory: 102.2 GiB per node for Offload (at start-up, every rank loading the "
                            "model; 93.4 while\n# training); not checked: --host-ram not given\n") in out
    status, out, _ = cli(*FLAGSHIP, "--emit", "trinity", "--host-ram", "512")
    assert status == 0 and ("\n# host memory: 102.2 GiB per node for Offload (at start-up, every rank loading the "
                            "model; 93.4 while\n# training), within --host-ram 512 GiB\n") in out
    # The user's config (Qwen3-8B, untied) names no release: each of the plan's 6 trainer ranks loads the model at
    # start-up, 6 x 30.51 GiB beside the reference model's and the actor's pinned shards, 266.0 GiB, more than the
    # 185.4 that training holds.
    patched = tmp_path / "patched.yaml"
    asked = ("--from-config", str(user_config), "--gpu", "a100", "--len", "51200", "--write", str(patched))
    assert cli(*asked, "--host-ram", "512")[0] == 0
    assert ("  # host memory: 266.0 GiB per node for Offload (at start-up, every rank loading the model; 185.4\n"
            "  #   while training), within --host-ram 512 GiB\n  trainer_strategy: fsdp2\n"
            in patched.read_text(encoding="utf-8"))
    assert cli(*asked)[0] == 0
    assert ("  # host memory: 266.0 GiB per node for Offload (at start-up, every rank loading the model; 185.4\n"
            "  #   while training); not checked: --host-ram not given\n  trainer_strategy: fsdp2\n"
            in patched.read_text(encoding="utf-8"))
    assert "Planned for a train batch" not in cli(*FLAGSHIP, "--emit", "trinity")[1]
    # One data-parallel rank takes any batch: no line.
    assert "Planned for a train batch" not in cli("--model", "8B", "--gpu", "a100", "--gpus", "4", "--len", "32768",
                                                  "--train-batch-size", "256", "--emit", "trinity")[1]
    # The API checks what it is given: a batch the plan's ranks do not divide is refused.
    (answer,) = solver.plan("8B", gpu="a100", budget_gpus=6, max_model_len=32768)
    with pytest.raises(QueryError, match=r"^train_batch_size must be a whole number from 1 to 16777216 that the plan's "
                                         r"data-parallel ranks \(6 GPUs / SP=2\) divide, got 256$"):
        solver.trinity.trinity_fragment(answer.best, solver.tables.load_catalog().model("8B"), train_batch_size=256)
    # Nor is an empty batch, which every count of ranks divides.
    with pytest.raises(QueryError, match=r"^train_batch_size must be a whole number from 1 to 16777216 that the plan's "
                                         r"data-parallel ranks \(6 GPUs / SP=2\) divide, got 0$"):
        solver.trinity.trinity_fragment(answer.best, solver.tables.load_catalog().model("8B"), train_batch_size=0)


def test_a_fragment_carries_the_plans_cautions_it_says_nowhere_else(cli):
    # A thin estimate beyond the calibration (Qwen3-32B at the longest 8 H100s reach: 0.0 GiB to spare) and
    # data-parallel ranks without a batch (3 on 6 A100s at SP=2) get a caution line, as under `solve`'s plan; YaRN
    # past what is validated is said beside rope_scaling only, and a batch given makes the ranks' a header line.
    def header(*flags: str) -> list[str]:
        """The header's caution lines, wrapped: from the first to the note (after ``#``) that follows them."""
        status, out, _ = cli(*flags, "--emit", "trinity")
        assert status == 0
        lines = out.split("\n#\n")[0].splitlines()
        return lines[next((index for index, line in enumerate(lines) if line.startswith("# caution: ")), len(lines)):]

    # (Trinity 0.6 loads Qwen3-32B on rank 0 alone on an H100: no release named, each of 8 ranks would, 1256.4 GiB,
    # and the caution that nothing checks that need would close the header instead.)
    thin = header("--model", "32B", "--gpu", "h100", "--gpus", "8", "--maximize", "len", "--trinity-version", "0.6")
    assert thin[0].startswith("# caution: 0.0 GiB to spare where the estimate extrapolates, and its error there is "
                              "unmeasured") and thin[-2:] == [
        "# rft-solver's source); --margin 0.05 keeps 3.0 GiB more to spare than the default 0.01 here, or",
        "# measure a step first"]
    assert header("--model", "8B", "--gpu", "a100", "--gpus", "6", "--exact", "--len", "32k") == [
        "# caution: 3 data-parallel ranks (6 GPUs / SP=2): Trinity splits each training batch evenly over",
        "# them, so buffer.train_batch_size (batch_size x repeat_times) must be a multiple of 3; give",
        "# --train-batch-size to plan for yours"]
    assert header("--model", "8B", "--gpu", "a100", "--gpus", "6", "--exact", "--len", "32k", "--train-batch-size",
                  "96") == []
    assert header("--model", "4B", "--gpu", "h20", "--gpus", "4", "--maximize", "len") == []  # YaRN's, beside it


def test_emit_for_every_gpu_type_prints_one_document_each(cli):
    status, out, _ = cli("--maximize", "len", "--gpus", "6", "--model", "4B", "--emit", "trinity")
    documents = out.split("---\n")
    assert status == 0 and len(documents) == 2
    assert "A100-80GB" in documents[0] and "max_model_len: 102400" in documents[0]
    assert "H20-96GB" in documents[1] and "max_model_len: 133120" in documents[1]


def test_out_writes_the_fragment_and_nothing_else(cli, tmp_path: Path):
    target = tmp_path / "plan.yaml"
    status, out, err = cli(*FLAGSHIP, "--out", str(target))
    assert (status, err) == (0, "") and "Env + Offload + SP=4 on 4 of 6 GPUs" in out
    _, emitted, _ = cli(*FLAGSHIP, "--emit", "trinity")
    assert target.read_text(encoding="utf-8") == emitted
    assert [p.name for p in tmp_path.iterdir()] == ["plan.yaml"]  # no temporary file left


def test_a_single_write_that_fails_midway_leaves_the_target_as_it_was(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch):
    # The disk fills while the new text is synced: the old file stays whole and no temporary file is left.
    target = tmp_path / "plan.yaml"
    target.write_text("old\n", encoding="utf-8")

    def full(descriptor: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(solver.cli.atomic.os, "fsync", full)
    with pytest.raises(QueryError, match="plan.yaml: cannot write: No space left on device"):
        solver.cli.atomic.write_atomically(target, "new\n" * 1000)
    assert target.read_text(encoding="utf-8") == "old\n"
    assert [path.name for path in tmp_path.iterdir()] == ["plan.yaml"]


def test_out_replaces_an_existing_file_whole(cli, tmp_path: Path):
    target = tmp_path / "plan.yaml"
    target.write_text("old: content\n" * 1000, encoding="utf-8")
    assert cli(*FLAGSHIP, "--out", str(target))[0] == 0
    assert "old: content" not in target.read_text(encoding="utf-8")


def test_written_files_keep_or_get_the_usual_permissions(cli, user_config: Path, tmp_path: Path):
    patched = tmp_path / "patched.yaml"
    patched.write_text("old: copy\n", encoding="utf-8")
    patched.chmod(0o640)  # a config the user shares with a group
    assert cli("--from-config", str(user_config), "--gpu", "a100", "--write", str(patched))[0] == 0
    assert "ulysses_sequence_parallel_size: 2" in patched.read_text(encoding="utf-8")
    assert stat.S_IMODE(patched.stat().st_mode) == 0o640
    previous = os.umask(0o027)
    try:
        assert cli(*FLAGSHIP, "--out", str(tmp_path / "plan.yaml"))[0] == 0
        solver.cli.atomic.write_all_atomically({tmp_path / "a.yaml": "a\n", tmp_path / "b.yaml": "b\n"})
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "plan.yaml").stat().st_mode) == 0o640  # 0666 less the umask, as with open()
    # Reading the umask sets it: it is set straight back, so the second of two new files gets the same.
    assert [stat.S_IMODE((tmp_path / name).stat().st_mode) for name in ("a.yaml", "b.yaml")] == [0o640, 0o640]


def test_the_original_config_is_never_overwritten(cli, user_config: Path, monkeypatch: pytest.MonkeyPatch):
    original = user_config.read_bytes()
    monkeypatch.chdir(user_config.parent)
    for flag, target in (("--write", str(user_config)), ("--write", "./trinity.yaml"), ("--out", "trinity.yaml")):
        status, out, err = cli("--from-config", str(user_config), "--gpu", "a100", flag, target)
        assert (status, out) == (2, "")
        assert err == f"solve: error: {flag} {Path(target)} would overwrite the file of --from-config: write to another file\n"
    assert user_config.read_bytes() == original


def test_emit_names_the_gpu_types_without_a_plan(cli):
    status, out, err = cli("--model", "8B", "--len", "110k", "--emit", "trinity")
    # The H20-96GB table for 4 GPUs trains 112640 tokens (110k rounded up to its row) with Env + Offload + SP=4.
    assert status == 1 and "A100-80GB" not in out and out.startswith(
        "# Trinity-RFT settings generated by rft-solver for Qwen3-8B\n"
        "# plan: Env + Offload + SP=4 on 4 H20-96GB trainer GPUs, max_model_len 112640\n")
    assert err.startswith("solve: A100-80GB: no plan: 112640 tokens is beyond what") and err.count("\n") == 1
    status, out, err = cli("--model", "8B", "--len", "500k", "--gpu", "a100", "--emit", "trinity")
    # The note on the input (--gpu a100) before the ones on what is made (session 74).
    assert (status, out) == (1, "") and err.startswith(f"{A100_NOTE}solve: A100-80GB: no plan: 512000 tokens")


def test_rollout_gpus_of_a_trainer_on_whole_nodes_fill_its_last_node(cli):
    flags = ["--model", "8B", "--len", "32k", "--gpu", "h100", "--exact", "--emit", "trinity"]
    status, out, err = cli(*flags, "--gpus", "16", "--rollout-gpus", "4")
    assert status == 0 and "node_num: 3\n" in out and "gpu_per_node: 8  # 16 trainer + 8 rollout\n" in out
    assert "engine_num: 8" in out
    assert err == ("solve: note: rollout gets 8 GPUs, not 4: the trainer's 16 GPUs take whole nodes of 8, and "
                   "rollout the rest of the 3 nodes\n")
    # The plan line says so too, without --emit: a user with one node must not read it as fitting there.
    status, out, _ = cli(*flags[:-2], "--gpus", "16", "--rollout-gpus", "4")
    assert status == 0 and ("on 16 of 16 GPUs, with 8 rollout GPUs, trainer and rollout on 3 nodes of 8 "
                            "(--rollout-gpus 4 asked: a trainer on whole nodes leaves the rollout whole nodes)"
                            ) in " ".join(out.split())
    status, out, _ = cli(*flags[:-2], "--gpus", "4", "--rollout-gpus", "12")
    assert status == 0 and "on 4 of 4 GPUs, with 12 rollout GPUs, trainer and rollout on 2 nodes of 8\n" in out
    status, out, err = cli(*flags, "--gpus", "4", "--rollout-gpus", "4")
    assert (status, err) == (0, "") and "node_num: 1\n" in out and "gpu_per_node: 8  # 4 trainer + 4 rollout\n" in out
    # A trainer in part of one node, and rollout filling it and another: 4 + 12 GPUs on 2 nodes of 8.
    status, out, err = cli(*flags, "--gpus", "4", "--rollout-gpus", "12")
    assert (status, err) == (0, "") and "node_num: 2\n" in out and "gpu_per_node: 8  # 4 trainer + 12 rollout\n" in out
    assert "engine_num: 12" in out
    status, out, err = cli(*flags, "--gpus", "6", "--rollout-gpus", "4")
    assert (status, out) == (1, "") and err == (
        "solve: H100-80GB: no plan for exactly 6 trainer GPUs with Qwen3-8B on H100-80GB: 6 trainer + 4 "
        "rollout GPUs (--rollout-gpus) fit neither one node of 8, nor whole nodes with the trainer in one of them, nor "
        "with the trainer on whole nodes; fewer trainer GPUs train 32768 "
        "tokens: Env + SP=4 on 4 GPUs (estimated), the other 2 free for rollout\n")


def test_a_trainer_on_a_whole_node_says_what_one_node_would_run(cli):
    # One node of 8 A100s, 2 of them for rollout: 8 trainer GPUs are cheapest per step, but put the rollout on
    # a second node; 6 + 2 fit the one node (the 6-GPU table's own cell), 1.33x the cost.
    flags = ["--model", "8B", "--gpu", "a100", "--gpus", "8", "--rollout-gpus", "2", "--len", "32k"]
    status, out, _ = cli(*flags)
    assert status == 0 and ("fewer nodes    1 node of 8 GPUs instead of 2 nodes: Env + SP=2 on 6 trainer + 2 rollout GPUs, "
                            "32768 tokens, 1.33x the relative step time (documented): --gpus 6\n") in out
    # Maximising the length, the trade is the length.
    status, out, _ = cli(*flags[:-2], "--maximize", "len")
    assert status == 0 and ("fewer nodes    1 node of 8 GPUs instead of 2 nodes: Env + Offload + SP=4 on 4 trainer + 2 "
                            "rollout GPUs, 102400 tokens instead of 203776 (documented): --gpus 4\n") in out
    [answer] = json.loads(cli(*flags, "--json")[1])
    fewer = answer["fewer_nodes"]
    assert (fewer["gpus"], fewer["unused_gpus"], fewer["nodes"], fewer["rollout_gpus"], fewer["evidence"]) == (
        6, 2, 1, 2, "documented")
    # --top shows each plan's rollout GPUs and nodes.
    status, out, _ = cli(*flags, "--top", "2")
    rows = [line for line in out.splitlines() if line.startswith(("┃ #", "│ 1", "│ 2"))]
    assert [row.split("│")[1:5] if row.startswith("│") else row.split("┃")[1:5] for row in rows] == [
        [" # ", " GPUs ", " rollout ", " nodes "], [" 1 ", "  8/8 ", "       8 ", "     2 "],
        [" 2 ", "  6/8 ", "       2 ", "     1 "]]
    # Not where the count is exact, nor where the best plan keeps to the rollout asked for.
    for other in ([*flags, "--exact"], [*flags[:4], "--gpus", "6", *flags[6:]], [*flags[:6], "--rollout-gpus", "8", *flags[8:]]):
        [answer] = json.loads(cli(*other, "--json")[1])
        assert answer["plans"] and "fewer_nodes" not in answer and "fewer nodes" not in cli(*other)[1]


def test_rollout_gpus_leave_room_on_the_trainers_node(cli):
    # Within 6 A100s, Qwen3-8B at 32768 is cheapest on 6 (Env + SP=2); with 4 rollout GPUs beside it on a
    # node of 8, the trainer gets at most 4: SP=4 (documented), as with --gpus 4.
    flags = ["--model", "8B", "--len", "32768", "--gpus", "6", "--gpu", "a100", "--json"]
    [alone] = json.loads(cli(*flags)[1])
    status, out, _ = cli(*flags, "--rollout-gpus", "4")
    [beside] = json.loads(out)
    assert (alone["plans"][0]["gpus"], alone["plans"][0]["sp"]) == (6, 2)
    best = beside["plans"][0]
    assert (status, best["gpus"], best["sp"], best["unused_gpus"], best["evidence"]) == (0, 4, 4, 2, "documented")
    # The human answer names the rollout GPUs asked for, not the 2 the budget leaves.
    _, out, _ = cli(*flags[:-1], "--rollout-gpus", "4")
    assert "plan           SP=4 on 4 of 6 GPUs, with 4 rollout GPUs\n" in out and "left for rollout" not in out


def test_out_into_a_missing_folder_exits_2_and_leaves_nothing(cli, tmp_path: Path):
    target = tmp_path / "missing" / "plan.yaml"
    status, out, err = cli(*FLAGSHIP, "--out", str(target))
    assert status == 2 and out == ""
    assert err == f"solve: error: --out {target}: cannot write: {target.parent} does not exist\n"
    assert not target.parent.exists()
    # A folder's name (a trailing slash), a file's name used as a folder, two outputs on one file: refused.
    status, _, err = cli(*FLAGSHIP, "--out", f"{tmp_path / 'missing'}/")
    assert status == 2 and err.endswith(f"error: argument --out: expected a file name, got the folder name "
                                        f"'{tmp_path / 'missing'}/'\n") and not (tmp_path / "missing").exists()
    a_file = tmp_path / "plan.yaml"
    a_file.write_text("keep\n", encoding="utf-8")
    assert cli(*FLAGSHIP, "--out", str(a_file / "x.yaml")) == (
        2, "", f"solve: error: --out {a_file / 'x.yaml'}: cannot write: {a_file} is not a folder\n")
    config = tmp_path / "trinity.yaml"
    config.write_text("model: {model_path: Qwen/Qwen3-4B, max_model_len: 8192}\ncluster: {node_num: 1, gpu_per_node: 4}\n"
                      "mode: train\n", encoding="utf-8")
    assert cli("--from-config", str(config), "--gpu", "a100", "--write", str(a_file), "--out", str(a_file)) == (
        2, "", f"solve: error: --out and --write both write {a_file}: give each its own file\n")
    assert a_file.read_text(encoding="utf-8") == "keep\n"


def test_several_files_are_written_all_or_none(tmp_path: Path):
    first, second = tmp_path / "a.yaml", tmp_path / "missing" / "b.yaml"
    first.write_text("old\n", encoding="utf-8")
    with pytest.raises(QueryError, match=r"b.yaml: cannot write: a temporary file cannot be created in .*missing "
                                         r"\(No such file or directory\)"):
        write_all_atomically({first: "new\n", second: "new\n"})
    assert first.read_text(encoding="utf-8") == "old\n" and sorted(p.name for p in tmp_path.iterdir()) == ["a.yaml"]
    write_all_atomically({first: "new\n", tmp_path / "c.yaml": "c\n"})
    assert (first.read_text(encoding="utf-8"), (tmp_path / "c.yaml").read_text(encoding="utf-8")) == ("new\n", "c\n")


def test_a_rename_that_fails_names_the_files_already_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # Every file is written in full before the first rename; should a rename fail (an immutable file), the message
    # names the files already in place, and no temporary file is left.
    files = [tmp_path / name for name in ("a.yaml", "b.yaml", "c.yaml")]
    replace = os.replace
    for refused in ("a.yaml", "c.yaml"):
        for path in files:
            path.write_text("old\n", encoding="utf-8")

        def immutable(source: str, target: Path, refused: str = refused) -> None:
            if Path(target).name == refused:
                raise PermissionError(errno.EPERM, "Operation not permitted")
            replace(source, target)

        monkeypatch.setattr(solver.cli.atomic.os, "replace", immutable)
        with pytest.raises(QueryError) as raised:
            write_all_atomically(dict.fromkeys(files, "new\n"))
        a, b, c = (path.resolve() for path in files)
        assert str(raised.value) == (f"{a}: cannot write: Operation not permitted" if refused == "a.yaml" else
                                     f"{c}: cannot write: Operation not permitted (already written: {a}, {b})")
        assert [path.read_text(encoding="utf-8") for path in files] == (
            ["old\n"] * 3 if refused == "a.yaml" else ["new\n", "new\n", "old\n"])
        assert sorted(path.name for path in tmp_path.iterdir()) == ["a.yaml", "b.yaml", "c.yaml"]


def test_a_file_is_replaced_by_a_rename_not_rewritten_in_place(tmp_path: Path):
    # A reader that has the old file open reads it whole: the new text is a new file, renamed over the name.
    target = tmp_path / "plan.yaml"
    target.write_text("old\n", encoding="utf-8")
    with target.open(encoding="utf-8") as reader:
        solver.cli.atomic.write_atomically(target, "new\n")
        assert reader.read() == "old\n"
    assert target.read_text(encoding="utf-8") == "new\n"


def test_a_name_as_long_as_the_folder_takes_is_written(tmp_path: Path):
    # The temporary file's name adds 14 characters to the file's: cut to fit, it may not refuse a name of 255 bytes.
    target = tmp_path / ("a" * 250 + ".yaml")
    solver.cli.atomic.write_atomically(target, "new\n")
    assert target.read_text(encoding="utf-8") == "new\n" and [p.name for p in tmp_path.iterdir()] == [target.name]


@pytest.mark.parametrize(("error", "reason"), [
    (OSError(errno.ENOSPC, "No space left on device"), "No space left on device"),  # its strerror
    (OSError("no usable name"), "no usable name"),  # an error without one: its words
])
def test_a_temporary_file_that_cannot_be_created_is_named_with_the_reason(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch,
                                                                          error: OSError, reason: str):
    # A folder that passed the checks may still refuse a new file (a full disk, a quota): one line, nothing written.
    target = tmp_path / "plan.yaml"

    def refused(*args: object, **kwargs: object) -> None:
        raise error

    monkeypatch.setattr(solver.cli.atomic.tempfile, "NamedTemporaryFile", refused)
    with pytest.raises(QueryError) as raised:
        solver.cli.atomic.write_atomically(target, "new\n")
    assert str(raised.value) == (f"{target}: cannot write: a temporary file cannot be created in {tmp_path} "
                                 f"({reason}); the file is written there first, then renamed into place")
    assert list(tmp_path.iterdir()) == []


def test_two_paths_that_are_one_file_are_refused_before_either_is_written(cli, tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch):
    # A link to where --out's file will be: renamed in turn, the second file would replace the first (exit 0, the
    # fragment lost). Relative paths, as typed, are compared where they lead.
    monkeypatch.chdir(tmp_path)
    Path("link.yaml").symlink_to("plan.yaml")
    Path("trinity.yaml").write_text("model: {model_path: Qwen/Qwen3-4B, max_model_len: 8192}\ncluster: {node_num: 1, "
                                    "gpu_per_node: 4}\nmode: train\n", encoding="utf-8")
    assert cli("--from-config", "trinity.yaml", "--gpu", "a100", "--out", "plan.yaml", "--write", "link.yaml") == (
        2, "", "solve: error: --out and --write both write link.yaml: give each its own file\n")
    with pytest.raises(QueryError, match=(r"^plan.yaml and link.yaml are one file \(through a link\): writing both "
                                          r"would lose the first; remove the link, or write elsewhere$")):
        solver.cli.atomic.write_all_atomically({Path("plan.yaml"): "a\n", Path("link.yaml"): "b\n"})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.yaml", "trinity.yaml"]


def test_many_files_are_checked_for_one_file_twice_each_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # A cluster file may have 20000 jobs: comparing every config with every other (a stat or a realpath each) took
    # 12 s for 1000 jobs' --emit-dir, twice (before the placement, and as the configs are written). Each path is
    # looked at once; a link among them is still found.
    stat, lstat, looks = os.stat, os.lstat, []
    monkeypatch.setattr(os, "stat", lambda *args, **kwargs: (looks.append(args[0]), stat(*args, **kwargs))[1])
    monkeypatch.setattr(os, "lstat", lambda *args, **kwargs: (looks.append(args[0]), lstat(*args, **kwargs))[1])
    paths = [tmp_path / "configs" / f"job-{index}.yaml" for index in range(300)]
    solver.cli.atomic.refuse_one_file_twice(paths)
    assert len(looks) <= 10 * len(paths)
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "job-299.yaml").symlink_to("job-7.yaml")
    with pytest.raises(QueryError, match=r"job-7.yaml and .*job-299.yaml are one file \(through a link\)"):
        solver.cli.atomic.refuse_one_file_twice(paths)


@pytest.mark.skipif(os.name == "nt", reason="POSIX signals")
def test_files_are_written_from_a_thread_other_than_the_main_one(tmp_path: Path):
    # Only the main thread may set signal handlers (signal.signal raises ValueError elsewhere): a command run in
    # another thread (solver.cli.main in a worker) writes its files without holding the signals.
    files = [tmp_path / "a.yaml", tmp_path / "b.yaml"]
    errors: list[BaseException] = []

    def write() -> None:
        try:
            solver.cli.atomic.write_all_atomically(dict.fromkeys(files, "new\n"))
        except BaseException as error:  # noqa: BLE001 (reported below, in the main thread)
            errors.append(error)

    worker = threading.Thread(target=write)
    worker.start()
    worker.join()
    assert errors == [] and [path.read_text(encoding="utf-8") for path in files] == ["new\n"] * 2
    assert sorted(path.name for path in tmp_path.iterdir()) == ["a.yaml", "b.yaml"]


@pytest.mark.usefixtures("python_ctrl_c")
def test_ctrl_c_while_files_are_renamed_comes_once_all_are_in_place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # Ctrl-C after the first of three renames: held until the other two are done (every file new, or none), then
    # raised; no temporary file is left.
    files = [tmp_path / name for name in ("a.yaml", "b.yaml", "c.yaml")]
    for path in files:
        path.write_text("old\n", encoding="utf-8")
    replace, renamed = os.replace, []

    def interrupted(source: str, target: Path) -> None:
        replace(source, target)
        renamed.append(target)
        if len(renamed) == 1:
            signal.raise_signal(signal.SIGINT)

    monkeypatch.setattr(solver.cli.atomic.os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        solver.cli.atomic.write_all_atomically(dict.fromkeys(files, "new\n"))
    assert [path.read_text(encoding="utf-8") for path in files] == ["new\n"] * 3
    assert sorted(path.name for path in tmp_path.iterdir()) == ["a.yaml", "b.yaml", "c.yaml"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # Python's own handler is back


@pytest.mark.skipif(os.name == "nt", reason="POSIX signals")
@pytest.mark.parametrize(("setup", "signals", "ending"), [
    ("", ("SIGTERM",), "SIGTERM"),
    ("", ("SIGHUP",), "SIGHUP"),
    ("", ("SIGTERM", "SIGINT"), "SIGTERM"),  # of two, the first is delivered first
    # A job a script starts in the background ignores Ctrl-C (SIGINT: SIG_IGN). SIGINT to its group, then SIGTERM: the
    # SIGINT stays ignored, and the SIGTERM still ends the process (delivering only the first signal held lost it).
    ("signal.signal(signal.SIGINT, signal.SIG_IGN)\n", ("SIGINT", "SIGTERM"), "SIGTERM"),
], ids=["SIGTERM", "SIGHUP", "SIGTERM-then-SIGINT", "ignored-SIGINT-then-SIGTERM"])
def test_a_request_to_end_while_a_file_is_written_leaves_no_temporary_file(tmp_path: Path, setup: str,
                                                                           signals: tuple[str, ...], ending: str):
    # SIGTERM (kill, timeout) or SIGHUP (a closed terminal) while the new text is synced: it ends the process once the
    # file is in place, rather than leave .plan.yaml.*.tmp behind.
    raised = "".join(f"signal.raise_signal(signal.{name}), " for name in signals)
    code = ("import os, signal, sys\nfrom pathlib import Path\nimport solver.cli.atomic as atomic\n"
            "signal.signal(signal.SIGHUP, signal.SIG_DFL)\n"  # as a terminal's shell has it (not ignored, as by nohup)
            f"{setup}fsync = os.fsync\natomic.os.fsync = lambda fd: (fsync(fd), {raised})\n"
            "atomic.write_atomically(Path('plan.yaml'), 'new\\n')\nprint('not reached')\n")
    (tmp_path / "plan.yaml").write_text("old\n", encoding="utf-8")
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                            check=False)
    assert (result.returncode, result.stdout, result.stderr) == (-getattr(signal, ending), "", "")
    assert [path.name for path in tmp_path.iterdir()] == ["plan.yaml"]
    assert (tmp_path / "plan.yaml").read_text(encoding="utf-8") == "new\n"


@pytest.mark.skipif(os.name == "nt", reason="POSIX signals")
@pytest.mark.usefixtures("python_ctrl_c")
def test_ctrl_c_while_the_handlers_are_put_back_leaves_none_held(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # Ctrl-C the moment Python's own handler for it is back raises KeyboardInterrupt there: the handlers of the
    # other signals must be back already, or SIGTERM and SIGHUP would stay held (swallowed) for the rest of the process.
    put = signal.signal
    before = {number: signal.getsignal(number) for number in solver.cli.atomic.HELD_SIGNALS}

    def interrupted_once_back(number: int, handler: object) -> object:
        previous = put(number, handler)
        if number == signal.SIGINT and handler is signal.default_int_handler:
            signal.raise_signal(signal.SIGINT)
        return previous

    monkeypatch.setattr(solver.cli.atomic.signal, "signal", interrupted_once_back)
    try:
        with pytest.raises(KeyboardInterrupt):
            solver.cli.atomic.write_atomically(tmp_path / "plan.yaml", "new\n")
        assert {number: signal.getsignal(number) for number in before} == before
    finally:
        for number, handler in before.items():
            put(number, handler)
    assert (tmp_path / "plan.yaml").read_text(encoding="utf-8") == "new\n"


def test_no_plan_writes_nothing(cli, tmp_path: Path):
    target = tmp_path / "plan.yaml"
    status, out, err = cli("--model", "8B", "--len", "200000", "--gpu", "a100-80g", "--out", str(target))
    # The A100-80GB tables stop Qwen3-8B at 102400 (4 GPUs): no plan, and no file, not even a temporary one.
    assert (status, err) == (1, f"solve: note: no plan, so {target} is not written\n")
    assert out.startswith(
        "A100-80GB · Qwen3-8B · cheapest plan for 200000 tokens within 6 GPUs: infeasible\nno plan: ")
    assert list(tmp_path.iterdir()) == []


def test_emitted_config_reads_back_to_the_same_plan(cli, tmp_path: Path):
    _, fragment, _ = cli(*FLAGSHIP, "--emit", "trinity", "--rollout-gpus", "2")
    config = tmp_path / "emitted.yaml"
    config.write_text(fragment.replace("model:\n", "model:\n  model_path: Qwen/Qwen3-4B\n", 1), encoding="utf-8")
    # As its header's check command says: a fragment has no algorithm_type (Trinity's default: PPO, whose critic
    # the plan did not count).
    status, out, err = cli("--from-config", str(config), "--gpu", "a100-80g", "--env", "--critic", "none", "--json")
    (answer,) = json.loads(out)
    _, original, _ = cli(*FLAGSHIP, "--json")
    best = json.loads(original)[0]["plans"][0]
    assert (status, err) == (0, "")
    assert answer["current"]["gpus"] == 4 and answer["current"]["sp"] == 4 and answer["current"]["offload"]
    layout = ("unused_gpus", "nodes", "rollout_gpus")  # the config's 2 rollout GPUs, on the trainer's node
    assert {k: v for k, v in answer["plans"][0].items() if k not in layout} == \
        {k: v for k, v in best.items() if k not in layout}
    assert (answer["plans"][0]["nodes"], answer["plans"][0]["rollout_gpus"]) == (1, 2)


YARN_NOT_NEEDED = ("model.rope_scaling: max_model_len 32768 is within Qwen3-8B's native context of 40960: YaRN is not "
                   "needed there (it stretches the positions the model was trained on); remove it")
"""The user config's YaRN block at MAX_MODEL_LEN=32768, which its patch removes."""
FACTOR_UNSET = ("cannot check model.rope_scaling.factor: environment variable FACTOR is not set and "
                "'${oc.env:FACTOR}' has no default: set FACTOR as trinity run will have it (Trinity fails to load "
                "the config without it), or give it a default (${oc.env:FACTOR,DEFAULT})")
"""The same block's factor, the source guide's ${oc.env:FACTOR} without a default: Trinity refuses it unset."""


VANILLA_RAN_OUT = ("trinity.yaml runs vanilla on 6 trainer GPUs at 32768 tokens (Env off, "
                   "PYTORCH_CUDA_ALLOC_CONF unset in this shell): the A100-80GB table for 6 GPUs says 'Env' at 16384, "
                   "so vanilla ran out of memory there. At 32768 tokens each GPU holds more than at 16384. The best "
                   "plan follows.")
"""The verdict on the user config's settings on an A100-80GB, as the text prints it and the JSON's ``verdict`` holds
it."""


def test_from_config_says_whether_the_settings_train(cli, user_config: Path):
    status, out, err = cli("--from-config", str(user_config), "--gpu", "a100-80g", "--json")
    (answer,) = json.loads(out)
    assert (status, err) == (0, "")
    # 8 GPUs less 2 rollout engines: 6 trainer GPUs, SP=1 and no Offload, Env not set here.
    assert answer["current"] == {"config": "trinity.yaml", "config_model": None, "gpus": 6, "gpus_given": True,
                                 "nodes_given": True, "batch_given": True, "env": False, "offload": False, "sp": 1,
                                 "critic_sps": [],
                                 "env_variable": "PYTORCH_CUDA_ALLOC_CONF", "env_variable_set": False,
                                 "max_model_len": 32768, "length_given": True, "max_token_len_per_gpu": None,
                                 "trains": False, "plan": None, "unread_keys": [],
                                 "broken_rule": None, "broken_rule_code": None, "predicted": None,
                                 "predicted_step": None, "predicted_critic_pass": None, "host_memory_needed": None,
                                 "out_of_memory": {"model": "Qwen3-8B", "gpus": 6, "max_model_len": 16384, "setting": "Env"},
                                 "smaller_card": None,
                                 "config_problems": [YARN_NOT_NEEDED, FACTOR_UNSET],
                                 "config_problem_codes": ["rope-scaling-unneeded", "unresolved-value"],
                                 "states_grouped": False,
                                 "verdict": VANILLA_RAN_OUT, "refused": False}
    assert (answer["budget_gpus"], answer["plans"][0]["sp"], answer["plans"][0]["env"]) == (6, 2, True)
    status, out, _ = cli("--from-config", str(user_config), "--gpu", "a100-80g")
    # The cell is at a shorter length than the config's: the verdict says why it holds at the config's too.
    assert VANILLA_RAN_OUT in " ".join(out.split())  # the words of the JSON's verdict
    _, out, _ = cli("--from-config", str(user_config), "--gpu", "a100-80g", "--len", "16384")
    assert ("the A100-80GB table for 6 GPUs says 'Env' at 16384, so vanilla ran out of memory there. The best plan "
            "follows.") in " ".join(out.split())


def test_a_configs_setting_without_offload_is_refuted_by_a_fewer_gpu_tables_offload_failure(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # Qwen3-0.6B with Env on 8 trainer GPUs at 30720: the A100-80GB table for 1 GPU says Env + Offload ran out of
    # memory at 32768, and without Offload each of the 8 holds the states besides.
    config = tmp_path / "t.yaml"
    config.write_text("model:\n  model_path: Qwen/Qwen3-0.6B\n  max_model_len: 30720\ncluster:\n  node_num: 2\n"
                      "  gpu_per_node: 8\nexplorer:\n  rollout_model:\n    engine_num: 8\n"
                      "    tensor_parallel_size: 1\n", encoding="utf-8")
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100")
    assert status == 0 and ("t.yaml runs Env on 8 trainer GPUs at 30720 tokens (Env on, read from this shell's "
                            "PYTORCH_CUDA_ALLOC_CONF): the A100-80GB table for 1 GPU says '-' at 32768, so Env ran out "
                            "of memory there. It ran out with Offload too, which holds as much per GPU on 8 GPUs "
                            "as on 1 (the states are on the CPU); without Offload each GPU holds more. The best plan "
                            "follows."
                            ) in " ".join(out.split())


def test_from_config_without_a_cluster_says_the_count_is_the_budgets(cli, tmp_path: Path):
    config = tmp_path / "min.yaml"
    config.write_text("model:\n  model_path: Qwen/Qwen3-8B\n  max_model_len: 8192\n", encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100")
    assert status == 0 and "min.yaml runs vanilla on 6 trainer GPUs (the budget's: the config does not give " \
                           "its GPUs) at 8192 tokens" in " ".join(out.split())
    _, out, _ = cli("--from-config", str(config), "--gpu", "a100", "--json")
    assert json.loads(out)[0]["current"]["gpus_given"] is False


def test_from_config_names_a_broken_rule_and_a_missing_plan(cli, user_config: Path, monkeypatch: pytest.MonkeyPatch):
    text = user_config.read_text(encoding="utf-8")
    user_config.write_text(text.replace("  use_dynamic_bsz: true", "  use_dynamic_bsz: true\n  ulysses_sequence_parallel_size: 3"),
                           encoding="utf-8")
    status, out, _ = cli("--from-config", str(user_config), "--gpu", "a100")
    assert status == 0 and ("trinity.yaml runs SP=3 on 6 trainer GPUs at 32768 tokens (Env off, "
                            "PYTORCH_CUDA_ALLOC_CONF unset in this shell): it breaks a rule: Qwen3-8B: SP=3 does not "
                            "divide its 32 attention heads (Trinity and verl stop on it as the trainer starts: the "
                            "config as written is refused). The best plan follows.") in " ".join(out.split())
    user_config.write_text(text.replace("  use_dynamic_bsz: true", "  use_dynamic_bsz: true\n  ulysses_sequence_parallel_size: 4"),
                           encoding="utf-8")
    status, out, _ = cli("--from-config", str(user_config), "--gpu", "a100", "--json")
    current = json.loads(out)[0]["current"]
    # release89b: on the config's own GPUs, Trinity (verl before 0.8) and PyTorch's device mesh (0.8) refuse it
    assert (current["broken_rule"], current["refused"]) == ("SP=4 does not divide 6 GPUs", True)
    assert ("it breaks a rule: SP=4 does not divide 6 GPUs (Trinity stops on it as it loads the config on verl before "
            "0.8, PyTorch's device mesh as the trainer starts on 0.8 or later: the config as written is refused). The "
            "best plan follows.") in current["verdict"]
    # 2 nodes of 8 less 4 rollout GPUs: 12 trainer GPUs, no whole nodes, which Trinity's config validator refuses
    user_config.write_text(text.replace("node_num: 1", "node_num: 2").replace("engine_num: 2", "engine_num: 4"),
                           encoding="utf-8")
    status, out, _ = cli("--from-config", str(user_config), "--gpu", "a100")
    assert status == 1 and ("it breaks a rule: 12 GPUs span nodes of 8 (cluster.gpu_per_node) but are not whole nodes "
                            "(Trinity stops on it as it loads the config: the config as written is refused).") in (
        " ".join(out.split()))
    user_config.write_text(text.replace("  use_dynamic_bsz: true", "  use_dynamic_bsz: true\n  ulysses_sequence_parallel_size: 4"),
                           encoding="utf-8")
    monkeypatch.setenv("MAX_MODEL_LEN", "200000")
    status, out, _ = cli("--from-config", str(user_config), "--gpu", "a100")
    assert status == 1 and "No plan trains either (the reason follows)." in " ".join(out.split())


def test_from_config_plans_for_the_configs_train_batch(cli, user_config: Path):
    # 32 x 8 = 256 experiences: not over 3 data-parallel ranks, so SP=2 on the config's 6 trainer GPUs is out.
    text = user_config.read_text(encoding="utf-8").replace("batch_size: 96", "batch_size: 32")
    sp2 = text.replace("  use_dynamic_bsz: true", "  use_dynamic_bsz: true\n  ulysses_sequence_parallel_size: 2")
    user_config.write_text(sp2, encoding="utf-8")
    status, out, _ = cli("--from-config", str(user_config), "--gpu", "a100", "--json")
    (answer,) = json.loads(out)
    broken = ("the train batch of 256 (buffer.batch_size x algorithm.repeat_times) must split evenly over the "
              "data-parallel ranks, and 3 (6 GPUs / SP=2) do not divide it")
    assert (status, answer["current"]["broken_rule"], answer["plans"]) == (1, broken, [])
    # The reason says the batch is what stops them, and which batch would not, and where that batch is set: 255 is no
    # buffer.batch_size x repeat_times 8 (persona91e: the words left the user to change buffer.batch_size).
    assert answer["reason"].startswith(
        "nothing in the tables and the memory model's estimates for Qwen3-8B on A100-80GB on exactly 6 GPUs trains "
        "with a train batch of 256 (buffer.batch_size x algorithm.repeat_times); a train batch that 3 data-parallel "
        "ranks divide (the nearest to 256: 255, set as buffer.train_batch_size) lets Env + SP=2 on 6 GPUs train it "
        "(32768 tokens, documented); fewer trainer GPUs train 32768 tokens: SP=4 on 4 GPUs (documented)")
    # --train-batch-size overrides the config's: 96 splits over 3 ranks, and the verdict is the tables'.
    status, out, _ = cli("--from-config", str(user_config), "--gpu", "a100", "--train-batch-size", "96", "--json")
    (answer,) = json.loads(out)
    assert (status, answer["current"]["broken_rule"], answer["current"]["trains"]) == (0, None, False)
    best = answer["plans"][0]
    assert (best["gpus"], best["sp"], best["env"], best["cautions"]) == (6, 2, True, [])
    # Without --exact pinning the config's count, 256 experiences find SP=4 on 4 of its 6 GPUs.
    status, out, _ = cli("--from-config", str(user_config), "--gpu", "a100", "--gpus", "6", "--json")
    best = json.loads(out)[0]["plans"][0]
    assert (status, best["gpus"], best["sp"], best["env"], best["offload"]) == (0, 4, 4, False, False)


def test_a_configs_own_token_budget_keeps_the_train_batch_it_is_judged_with(cli, user_config: Path,
                                                                            monkeypatch: pytest.MonkeyPatch):
    # Env + SP=2 on the config's 6 trainer GPUs at its own budget: 3 data-parallel ranks, which divide its batch of
    # 96 x 8 = 768, so the plan that says it trains has no caution on its ranks.
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    text = user_config.read_text(encoding="utf-8").replace(
        "  use_dynamic_bsz: true\n", "  use_dynamic_bsz: true\n  max_token_len_per_gpu: 16384\n"
                                     "  ulysses_sequence_parallel_size: 2\n")
    user_config.write_text(text, encoding="utf-8")
    status, out, _ = cli("--from-config", str(user_config), "--gpu", "a100", "--json")
    current = json.loads(out)[0]["current"]
    assert (status, current["trains"], current["plan"]["max_token_len_per_gpu"]) == (0, True, 16384)
    assert current["plan"]["cautions"] == []


def test_a_cell_at_a_shorter_length_is_not_said_to_hold_less_against_a_configs_own_budget(cli, user_config: Path):
    # The config sets its own token budget: what each GPU holds is that budget, not the length, so the verdict
    # names the cell and no more.
    text = user_config.read_text(encoding="utf-8").replace(
        "  use_dynamic_bsz: true\n", "  use_dynamic_bsz: true\n  max_token_len_per_gpu: 40960\n")
    user_config.write_text(text, encoding="utf-8")
    out = " ".join(cli("--from-config", str(user_config), "--gpu", "a100")[1].split())
    assert ("the A100-80GB table for 6 GPUs says 'Env' at 16384, so vanilla ran out of memory there. The best plan "
            "follows.") in out and "each GPU holds more" not in out


def test_write_refuses_a_node_size_other_than_the_configs(cli, user_config: Path, tmp_path: Path):
    # --write keeps the config's cluster (nodes of 8): a plan laid out on nodes of another size would not be the
    # file's (an SP group or a trainer's whole nodes that its cluster.gpu_per_node breaks).
    patched = tmp_path / "patched.yaml"
    status, out, err = cli("--from-config", str(user_config), "--gpu", "a100", "--node-gpus", "16",
                           "--write", str(patched))
    assert (status, out, patched.exists()) == (2, "", False)
    assert err == (f"solve: error: --node-gpus 16: --write keeps {user_config}'s cluster, whose nodes have 8 GPUs "
                   "(cluster.gpu_per_node), so the plan must lay out the trainer on those: drop --node-gpus or change "
                   "the config's cluster (or use --out FILE for a fragment with its own cluster)\n")
    status, _, _ = cli("--from-config", str(user_config), "--gpu", "a100", "--node-gpus", "8",
                       "--write", str(patched))  # the config's own: nothing to refuse
    assert status == 0 and patched.exists()


def test_write_refuses_a_train_batch_other_than_the_configs(cli, user_config: Path, tmp_path: Path):
    # --write keeps the config's batch (96 x 8 = 768), so a plan for another would break the rule it was made for.
    patched = tmp_path / "patched.yaml"
    status, out, err = cli("--from-config", str(user_config), "--gpu", "a100", "--train-batch-size", "256",
                           "--write", str(patched))
    assert (status, out, patched.exists()) == (2, "", False)
    assert err == (f"solve: error: --train-batch-size 256: {user_config} gives a train batch of 768 (buffer.batch_size "
                   "x algorithm.repeat_times), which --write keeps: drop --train-batch-size, or change the config's "
                   "batch first\n")
    status, _, _ = cli("--from-config", str(user_config), "--gpu", "a100", "--train-batch-size", "768",
                       "--write", str(patched))  # the config's own: nothing to refuse
    assert status == 0 and patched.exists()
    _, out, _ = cli("--from-config", str(patched), "--gpu", "a100", "--json")
    assert json.loads(out)[0]["current"]["broken_rule"] is None
    # A config that sets no batch has none for --write to keep: the flag plans for yours, and the file is written.
    bare = tmp_path / "bare.yaml"
    bare.write_text("model: {model_path: Qwen/Qwen3-8B, max_model_len: 32768}\n"
                    "cluster: {node_num: 1, gpu_per_node: 8}\nexplorer: {rollout_model: {engine_num: 2}}\n",
                    encoding="utf-8")
    status, _, _ = cli("--from-config", str(bare), "--gpu", "a100", "--train-batch-size", "256", "--write",
                       str(tmp_path / "bare-patched.yaml"))
    assert status == 1 and not (tmp_path / "bare-patched.yaml").exists()  # 6 GPUs: no layout splits 256
    status, _, _ = cli("--from-config", str(bare), "--gpu", "a100", "--train-batch-size", "96", "--write",
                       str(tmp_path / "bare-patched.yaml"))
    assert status == 0 and (tmp_path / "bare-patched.yaml").exists()


def test_a_config_trinity_refuses_for_want_of_a_train_batch_is_not_checked_and_says_so(cli, tmp_path: Path):
    for head, why in (("mode: train", "mode train"), ("algorithm: {algorithm_type: sft}", "algorithm_type sft")):
        config = tmp_path / "trinity.yaml"
        config.write_text(f"{head}\nbuffer: {{batch_size: 32}}\nmodel: {{model_path: Qwen/Qwen3-8B, max_model_len: "
                          "32768}\ncluster: {node_num: 1, gpu_per_node: 6}\n", encoding="utf-8")
        _, out, _ = cli("--from-config", str(config), "--gpu", "a100", "--json")
        (answer,) = json.loads(out)
        assert answer["train_batch_size"] is None and answer["current"]["broken_rule"] is None
        assert (f"buffer.train_batch_size is unset, which Trinity requires with {why}: it refuses the config (the "
                "verdict and the plans check no train batch)") in answer["current"]["config_problems"]


@pytest.mark.parametrize(("value", "problem"), [
    ("0", "must be a whole number from 1 to 16777216, got 0"),
    ("-4", "must be a whole number from 1 to 16777216, got -4"),
    ("2.5", "expected a whole number from 1 to 16777216, got '2.5'"),
    ("many", "expected a whole number from 1 to 16777216, got 'many'"),
])
def test_train_batch_size_must_be_a_positive_count(cli, value: str, problem: str):
    assert cli("--model", "8B", "--len", "32768", "--train-batch-size", value) == (2, "", (
        f"usage: solve [options] (--help lists them)\nsolve: error: argument --train-batch-size: {problem}\n"))


def test_from_config_with_env_set_in_the_environment(cli, user_config: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("MAX_MODEL_LEN", "16384")
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    _, out, _ = cli("--from-config", str(user_config), "--gpu", "a100", "--json")
    current = json.loads(out)[0]["current"]
    # The A100 table for 6 GPUs says 'Env' for Qwen3-8B at 16384: with Env set, the config's vanilla trains.
    assert (current["env"], current["trains"], current["plan"]["evidence"]) == (True, True, "documented")


@pytest.mark.parametrize(("setting", "env", "refused"), [
    ("expandable_segments:True", True, None), ("garbage_collection_threshold:0.6,expandable_segments:False", False, None),
    ("expandable_segments:True,expandable_segments:False", False, None),  # the last word wins
    ("expandable_segments:true", False, "true"), ("expandable_segments:1", False, "1"),
])
def test_env_is_read_as_pytorch_reads_it(cli, user_config: Path, monkeypatch: pytest.MonkeyPatch, setting: str,
                                         env: bool, refused: str | None):
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", setting)
    _, out, _ = cli("--from-config", str(user_config), "--gpu", "a100", "--json")
    current = json.loads(out)[0]["current"]
    problem = (f"PYTORCH_CUDA_ALLOC_CONF has expandable_segments:{refused}, which PyTorch refuses (it takes True or "
               "False, so the run stops at its first GPU allocation)")
    said = [said for said in current["config_problems"] if said.startswith("PYTORCH_CUDA_ALLOC_CONF")]
    assert current["env"] == env and said == ([problem] if refused is not None else [])  # False is not refused


def test_a_long_but_line_wraps_under_its_first_words(cli, tmp_path: Path):
    config = tmp_path / "megatron.yaml"
    config.write_text("model: {model_path: Qwen/Qwen3-8B, max_model_len: 8192}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
                      "trainer: {trainer_strategy: megatron}\n", encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100")
    assert status == 0 and ("  but: trainer.trainer_strategy is megatron: the tables and the memory model are FSDP's "
                            "(fsdp, or fsdp2 for Offload), so the verdict and the plans are for an\n       FSDP trainer\n"
                            ) in out


def test_write_says_to_export_env_on_every_node_of_a_config_on_several(cli, tmp_path: Path):
    config = tmp_path / "two-nodes.yaml"
    config.write_text("model: {model_path: Qwen/Qwen3-14B, max_model_len: 65536}\n"
                      "cluster: {node_num: 2, gpu_per_node: 8}\nexplorer: {rollout_model: {engine_num: 8}}\n",
                      encoding="utf-8")
    patched = tmp_path / "patched.yaml"
    status, _, err = cli("--from-config", str(config), "--gpu", "h100", "--write", str(patched))
    assert (status, err.splitlines()[-1]) == (0, (
        f"solve: note: {patched} needs Env, which a config cannot set: export "
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True on every node of the job before `ray start` there"))


def test_write_says_to_export_env_on_every_node_of_a_trainer_past_one_node_of_a_config_without_a_cluster(
        cli, tmp_path: Path):
    # No cluster section: the trainer's 16 GPUs (--gpus) take two nodes of 8 (--node-gpus), so the note says what the
    # summary's apply lines say; on nodes of 16, one export.
    config = tmp_path / "bare.yaml"
    config.write_text("model:\n  model_path: Qwen/Qwen3-8B\n  max_model_len: 131072\n", encoding="utf-8")
    patched = tmp_path / "patched.yaml"
    export = (f"solve: note: {patched} needs Env, which a config cannot set: export "
              "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True")
    for node_gpus, when, apply in (("8", "on every node of the job before `ray start` there", "# on every node of the"),
                                   ("16", "before Ray starts", "# before Ray starts:")):
        status, out, err = cli("--from-config", str(config), "--gpu", "a100-80g", "--gpus", "16", "--node-gpus",
                               node_gpus,
                               "--write", str(patched))
        assert (status, err.splitlines()[-1]) == (0, f"{export} {when}")
        assert f"apply          {APPLY_HEADING}\n{apply}" in out


def test_from_config_says_how_write_applies_the_plan(cli, tmp_path: Path):
    # The next step after a verdict is --write: the apply row names it, with the answer's --gpu where the answers
    # cover several GPU types (--write takes one); with --write given, or without a config, the row is the plain one.
    config = tmp_path / "grpo.yaml"
    config.write_text("algorithm: {algorithm_type: grpo}\nmodel: {model_path: Qwen/Qwen3-8B, max_model_len: 40960}\n"
                      "cluster: {node_num: 1, gpu_per_node: 8}\nexplorer: {rollout_model: {engine_num: 4}}\n",
                      encoding="utf-8")
    write = "--write FILE writes a copy of grpo.yaml with the plan applied"
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100")
    assert (status, " ".join(out.split()).count(f"apply {APPLY_HEADING}; {write} model.max_model_len: 40960")) == (0, 1)
    status, out, _ = cli("--from-config", str(config))
    assert status == 0 and [f"--gpu {gpu} {write}" in " ".join(out.split()) for gpu in ("A100-80GB", "H20-96GB")] == [
        True, True]
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100", "--write", str(tmp_path / "patched.yaml"))
    assert (status, "--write FILE" in out, f"apply          {APPLY_HEADING}\n" in out) == (0, False, True)
    status, out, _ = cli("--model", "8B", "--len", "40960", "--gpus", "4", "--gpu", "a100")
    assert (status, "--write FILE" in out, f"apply          {APPLY_HEADING}\n" in out) == (0, False, True)


@pytest.mark.parametrize(("asked", "gpus"), [(("--gpus", "2"), 2), (("--minimize", "gpus"), 2)])
def test_from_config_on_other_gpus_than_its_cluster_says_the_apply_lines_need_the_cluster_set(
        cli, tmp_path: Path, asked: tuple[str, ...], gpus: int):
    # s87's persona: the config's cluster gives the trainer 4 GPUs; a plan on 2 was applied by its lines alone, which
    # run it on 4 (an SP the GPUs may not allow), and the apply row said nothing of the cluster.
    config = tmp_path / "grpo.yaml"
    config.write_text("algorithm: {algorithm_type: grpo}\nmodel: {model_path: Qwen/Qwen3-8B, max_model_len: 40960}\n"
                      "cluster: {node_num: 1, gpu_per_node: 8}\nexplorer: {rollout_model: {engine_num: 4}}\n",
                      encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100", *asked)
    assert status == 0 and f"on {gpus} of " in out
    assert (f"apply {APPLY_HEADING}; grpo.yaml's cluster gives the trainer 4 GPUs, where these lines would run: set it "
            f"to give {gpus}, this plan's (cluster.node_num x cluster.gpu_per_node, less the rollout's GPUs)"
            ) in " ".join(out.split())


def test_from_config_names_a_misspelt_key_and_judges_without_it(cli, tmp_path: Path):
    # trainer.ulysses_sequence_paralel_size sets nothing: the verdict is at SP=1, and a but: line names the key meant.
    config = tmp_path / "typo.yaml"
    config.write_text("model: {model_path: Qwen/Qwen3-8B, max_model_len: 40960}\n"
                      "cluster: {node_num: 1, gpu_per_node: 8}\nexplorer: {rollout_model: {engine_num: 4}}\n"
                      "trainer: {ulysses_sequence_paralel_size: 4}\n", encoding="utf-8")
    status, out, err = cli("--from-config", str(config), "--gpu", "a100-80g")
    text = " ".join(out.split())
    assert (status, err) == (0, "")
    assert "typo.yaml runs vanilla on 4 trainer GPUs at 40960 tokens" in text
    assert ("refused: trainer.ulysses_sequence_paralel_size: did you mean ulysses_sequence_parallel_size? That key is "
            "unset, and read as such; Trinity refuses the config (it knows no such key)") in text


def test_from_config_names_a_length_key_spelt_out_though_prompt_and_response_give_the_length(cli, tmp_path: Path):
    # model.max_model_length (max_model_len's word spelt out, difflib's ratio 0.897) is no key of Trinity's, whose
    # typed config refuses it; the verdict's length, prompt + response, does not hide that the key meant is unset.
    config = tmp_path / "length.yaml"
    config.write_text("model: {model_path: Qwen/Qwen3-8B, max_model_length: 65536, max_prompt_tokens: 4096, "
                      "max_response_tokens: 28672}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
                      "explorer: {rollout_model: {engine_num: 4}}\n", encoding="utf-8")
    status, out, err = cli("--from-config", str(config), "--gpu", "a100-80g", "--trinity-version", "0.6", "--json")
    (answer,) = json.loads(out)
    assert (status, err, answer["current"]["max_model_len"], answer["current"]["refused"]) == (0, "", 32768, True)
    assert answer["current"]["config_problems"][0] == (
        "model.max_model_length: did you mean max_model_len? That key is unset, and read as such; Trinity refuses the "
        "config (it knows no such key)")


def test_explain_names_where_the_exact_count_came_from(cli, tmp_path: Path):
    # A config that gives its cluster pins the trainer's count without --exact: --explain names the config, not a flag
    # the user did not type; with --write, the --write that keeps that cluster; with --exact, --exact.
    config = tmp_path / "trinity.yaml"
    config.write_text("algorithm: {algorithm_type: grpo}\nmodel: {model_path: Qwen/Qwen3-8B, max_model_len: 65536}\n"
                      "cluster: {node_num: 1, gpu_per_node: 8}\nexplorer: {rollout_model: {engine_num: 4}}\n",
                      encoding="utf-8")
    for extra, source in (([], "the config's cluster"), (["--write", str(tmp_path / "w.yaml")],
                                                         "--write (the config's cluster)"),
                          (["--exact", "--gpus", "4"], "--exact")):
        status, out, _ = cli("--from-config", str(config), "--gpu", "a100", "--explain", *extra)
        assert status == 0 and f"budget           2, 3, 6 GPUs: {source} asks for 4\n" in out


def test_flags_override_the_config(cli, user_config: Path):
    _, out, _ = cli("--from-config", str(user_config), "--gpu", "a100", "--len", "8192", "--model", "4B", "--json")
    (answer,) = json.loads(out)
    assert (answer["model"], answer["current"]["max_model_len"], answer["current"]["trains"]) == ("Qwen3-4B", 8192, True)


KEPT_LENGTH_NOTE = ("solve: note: {patched}: model.max_model_len stays ${{oc.env:MAX_MODEL_LEN,4096}}, which gives "
                    "32768 in this environment: the plan holds for that value\n"
                    "solve: note: {patched}: model.max_prompt_tokens 2048 + model.max_response_tokens 2048 = 4096, below "
                    "model.max_model_len 32768: no sequence uses the rest; raise max_response_tokens to train at the "
                    "length\n")
"""The notes of --write on the user config's length, whose interpolation gives the plan's length here, and which its
prompt and response leave mostly unused."""


def test_write_patches_a_copy_and_keeps_the_rest(cli, user_config: Path, tmp_path: Path):
    patched = tmp_path / "patched.yaml"
    original = user_config.read_text(encoding="utf-8")
    status, _, err = cli("--from-config", str(user_config), "--gpu", "a100-80g", "--write", str(patched))
    # MAX_MODEL_LEN=32768 here: the length's interpolation gives the plan's, and stays (with a note).
    assert (status, err) == (0, f"{KEPT_LENGTH_NOTE.format(patched=patched)}solve: note: {patched} needs Env, which a "
                                "config cannot set: export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True before Ray "
                                "starts\n")
    assert user_config.read_text(encoding="utf-8") == original  # the original is untouched
    new = patched.read_text(encoding="utf-8").splitlines()
    old = original.splitlines()
    removed = [line for line in old if line not in new]
    added = [line for line in new if line not in old]
    assert removed == ["  rope_scaling:", "    rope_type: yarn",
                       "    factor: ${oc.decode:${oc.env:FACTOR}}  # 推荐值 = MAX_MODEL_LEN / 40960",
                       "    original_max_position_embeddings: 40960"]
    # The check sets the variables the config's keys read here: without MAX_MODEL_LEN, the length it keeps would give
    # 4096, another plan's (test_checkenv_s67). MODEL_PATH, no number, is the shell's own, its value unwritten
    # (test_checkvars_s68).
    assert added == ["  # To check this file as its plan was made:",
                     (f"  #   MODEL_PATH=\"${{MODEL_PATH:?}}\" MAX_MODEL_LEN=32768 PYTORCH_CUDA_ALLOC_CONF="
                      f"expandable_segments:True solve --from-config {patched} --check --gpu A100-80GB"),
                     "  ulysses_sequence_parallel_size: 2", "  max_token_len_per_gpu: 32768"]


def test_a_write_that_fails_is_one_line_without_the_notes_before_it(cli, user_config: Path, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch):
    # The longest plan offloads, and the config has no trainer-level offload flags: a note, once the file is written.
    patched = tmp_path / "patched.yaml"
    flags = ("--from-config", str(user_config), "--gpu", "a100", "--maximize", "len", "--write", str(patched))
    status, _, err = cli(*flags)
    assert status == 0 and "has no offload flags under trainer itself" in err
    patched.unlink()
    before = sorted(tmp_path.iterdir())

    def full(descriptor: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(solver.cli.atomic.os, "fsync", full)
    assert cli(*flags) == (74, "", f"solve: error: --write {patched}: cannot write: No space left on device\n")
    assert sorted(tmp_path.iterdir()) == before  # no file, nor a temporary one


@pytest.mark.parametrize("failing", ["--out", "--write"])
def test_a_failed_write_names_the_option_of_its_file_and_writes_neither(
        cli, user_config: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: str):
    # --out and --write are written together (both or neither): the error names the option whose file failed.
    files = {"--out": tmp_path / "fragment.yaml", "--write": tmp_path / "patched.yaml"}
    for path in files.values():
        path.write_text("mine\n", encoding="utf-8")
    staged = solver.cli.atomic._staged

    def full_for_one(path: Path, text: str) -> tuple[str, Path]:
        if path == files[failing]:
            raise solver.cli.atomic.WriteFailed(f"{path}: cannot write: No space left on device")
        return staged(path, text)

    monkeypatch.setattr(solver.cli.atomic, "_staged", full_for_one)
    outputs = [str(word) for option_and_path in files.items() for word in option_and_path]
    flags = ("--from-config", str(user_config), "--gpu", "a100", *outputs)
    assert cli(*flags) == (  # a full disk: 74, its error still one once named by its option
        74, "", f"solve: error: {failing} {files[failing]}: cannot write: No space left on device\n")
    assert [path.read_text(encoding="utf-8") for path in files.values()] == ["mine\n", "mine\n"]
    real_replace = os.replace

    def immutable(source: str, target: Path) -> None:  # the rename of the second file fails: the first is in place
        if target == files["--write"]:
            raise OSError(errno.EPERM, "Operation not permitted")
        real_replace(source, target)

    monkeypatch.setattr(solver.cli.atomic, "_staged", staged)
    monkeypatch.setattr(solver.cli.atomic.os, "replace", immutable)
    assert cli(*flags) == (2, "", (f"solve: error: --write {files['--write']}: cannot write: Operation not permitted "
                                   f"(already written: {files['--out']})\n"))


@pytest.mark.parametrize(("added", "message"), [
    ("? [a, b]\n: 1\n", "line 84: a key must be a plain value, not a list"),
    ("xx: &a [1]\nyy: *a\nzz: &a [2]\n", "line 86: malformed YAML: found duplicate anchor 'a' (first on line 84)"),
])
def test_yaml_that_trinity_cannot_read_is_refused_though_ruamel_would_patch_it(cli, user_config: Path, tmp_path: Path,
                                                                               added: str, message: str):
    """A key that is a list and an anchor given twice are YAML that ruamel (which patches the config) reads, and
    PyYAML, OmegaConf's reader and so Trinity's, refuses: the config is refused as Trinity would refuse it."""
    with user_config.open("a", encoding="utf-8") as handle:
        handle.write(added)
    patched = tmp_path / "patched.yaml"
    assert cli("--from-config", str(user_config), "--gpu", "a100", "--write", str(patched)) == (
        2, "", f"solve: error: --from-config {user_config}: {message}\n")
    assert not patched.exists()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("model: [unclosed\n", "bad.yaml: at the end of the file: malformed YAML"),  # line 2 would not exist
        ("model: {a: 1}\n  b: [\n", "bad.yaml: line 2: malformed YAML"),
        ("- a\n- b\n", "bad.yaml"),
        ("model:\n  max_model_len: 4096\n", "bad.yaml: missing model.model_path"),
        ("model:\n  model_path: 7\n", "bad.yaml: model.model_path must be a path, got 7"),
        ("model:\n  model_path: /\n", "bad.yaml: model.model_path: no model name in '/'"),
        ("model:\n  model_path: Qwen/Qwen3-4B\ntrainer:\n  trainer_type: [1]\n",
         "bad.yaml: trainer.trainer_type must be text, got [1]"),
        ("model:\n  model_path: Qwen/Qwen3-4B\nexplorer:\n  auxiliary_models: 5\n",
         "bad.yaml: explorer.auxiliary_models must be a list, got 5"),
        ("model:\n  model_path: Qwen/Qwen3-4B\nexplorer:\n  auxiliary_models: [5]\n",
         "bad.yaml: explorer.auxiliary_models[0] must be a mapping"),
        ("model:\n  model_path: Qwen/Qwen2-7B\n  max_model_len: 4096\n",
         "bad.yaml: model.model_path: unknown model 'Qwen2-7B' (did you mean Qwen2.5-7B?): give --model M (a "
         "catalogue model of its shape, such as the one it was fine-tuned from), or --model-config PATH (its "
         "config.json); accepted: Qwen3-0.6B"),
        ("model:\n  model_path: Qwen/Qwen3-4B\n  max_model_len: ${model.other}\n", "bad.yaml: model.max_model_len: cannot resolve"),
        ("model:\n  model_path: ${oc.env:UNSET_MODEL_VARIABLE}\n", "bad.yaml: model.model_path"),
        ("model:\n  model_path: Qwen/Qwen3-4B\n  max_model_len: 99999999999\n",
         "bad.yaml: model.max_model_len must be at most 16777216, got 99999999999"),
        ("model:\n  model_path: Qwen/Qwen3-4B\ntrainer:\n  ulysses_sequence_parallel_size: 99999999999999999999999\n",
         "bad.yaml: trainer.ulysses_sequence_parallel_size must be at most 65536, got 99999999999999999999999"),
        ("model:\n  model_path: Qwen/Qwen3-4B\ncluster:\n  node_num: 9000\n  gpu_per_node: 8\n",
         "bad.yaml: cluster.node_num x cluster.gpu_per_node = 72000 GPUs; at most 65536"),
    ],
)
def test_bad_configs_exit_2_with_one_line_and_write_nothing(cli, tmp_path: Path, text: str, message: str):
    config = tmp_path / "bad.yaml"
    config.write_text(text, encoding="utf-8")
    target = tmp_path / "patched.yaml"
    status, out, err = cli("--from-config", str(config), "--len", "8192", "--gpu", "a100", "--write", str(target))
    assert status == 2 and out == ""
    assert len(err.splitlines()) == 1 and err.startswith("solve: error: ") and message in err
    assert "Traceback" not in err and not target.exists()


def test_a_config_file_that_is_not_there_exits_2(cli, tmp_path: Path):
    status, _, err = cli("--from-config", str(tmp_path / "nope.yaml"))
    missing = tmp_path / "nope.yaml"
    assert status == 2 and err == f"solve: error: --from-config {missing}: cannot read: No such file or directory\n"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([*FLAGSHIP, "--emit", "trinity", "--json"],
         "--emit trinity prints YAML: drop --json (its apply carries the same settings) or --emit"),
        ([*FLAGSHIP, "--write", "x.yaml"],  # the fix for someone who has no config to patch too
         ("solve: error: --write patches the config of --from-config FILE: give it, or write the plan's keys to a new "
          "file with --out FILE")),
        (["--maximize", "len", "--gpus", "6", "--model", "4B", "--out", "x.yaml"],
         ("--out takes one plan: choose one GPU type with --gpu (A100-80GB or H20-96GB, the ones this "
          "answer covers, or any other of the catalogue)")),
        ([*FLAGSHIP, "--emit", "yaml"], "argument --emit: invalid choice: 'yaml'"),
        ([*FLAGSHIP, "--emit", "trinity", "--rollout-gpus", "-1"],
         "argument --rollout-gpus: must be a whole number from 0 to 65536, got -1"),
    ],
)
def test_conflicting_trinity_flags_exit_2(cli, argv: list[str], message: str):
    status, out, err = cli(*argv)
    assert status == 2 and out == "" and message in err.splitlines()[-1]


def test_no_output_overwrites_an_input_or_a_special_file(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(tmp_path)
    cells = tmp_path / "cells.yaml"
    cells.write_bytes((Path(__file__).parent.parent / "docs" / "examples" / "my-cells.yaml").read_bytes())
    weights = tmp_path / "w.yaml"
    weights.write_text("offload: 1.0\nsp: 0.3\nenv: 0.01\n", encoding="utf-8")
    before = {path: path.read_bytes() for path in (cells, weights)}
    assert cli("calibrate", "--cells", "cells.yaml", "--out", "cells.yaml") == (
        2, "", "solve calibrate: error: --out cells.yaml would overwrite the file of --cells: write to another file\n")
    assert cli(*FLAGSHIP, "--weights", "w.yaml", "--out", "w.yaml") == (
        2, "", "solve: error: --out w.yaml would overwrite the file of --weights: write to another file\n")
    assert {path: path.read_bytes() for path in (cells, weights)} == before
    assert cli(*FLAGSHIP, "--out", "/dev/null") == (
        2, "", "solve: error: --out /dev/null: not a regular file; give a file name to write\n")
    real, link = tmp_path / "real.yaml", tmp_path / "link.yaml"
    real.write_text("old\n", encoding="utf-8")
    link.symlink_to(real)
    assert cli(*FLAGSHIP, "--out", "link.yaml")[0] == 0
    assert link.is_symlink() and real.read_text(encoding="utf-8").startswith("# Trinity-RFT settings")  # written through


def test_write_keeps_the_configs_trainer_gpus(cli, user_config: Path, tmp_path: Path):
    # --write patches the plan's keys, not the cluster: the config gives the trainer 6 of 8 GPUs (2 rollout
    # engines), so a plan on another count would leave a config that Trinity rejects.
    patched = tmp_path / "patched.yaml"
    keeps = (f"solve: error: --write keeps {user_config}'s cluster, which gives the trainer 6 GPUs, so the plan "
             "must use exactly that many: ")
    status, out, err = cli("--from-config", str(user_config), "--gpu", "a100", "--gpus", "4", "--write", str(patched))
    assert (status, out, err) == (2, "", keeps + "drop --gpus 4 or change the config's cluster (or use --out FILE "
                                  "for a fragment with its own cluster)\n")
    status, out, err = cli("--from-config", str(user_config), "--gpu", "a100", "--minimize", "gpus", "--write",
                           str(patched))
    assert (status, out) == (2, "") and err.startswith(keeps + "drop --minimize gpus")
    assert not patched.exists()
    status, out, _ = cli("--from-config", str(user_config), "--gpu", "a100", "--gpus", "6", "--write", str(patched))
    assert status == 0 and "on exactly 6 GPUs" in out
    # One GPU is counted as one.
    one = tmp_path / "one.yaml"
    one.write_text("model: {model_path: Qwen/Qwen3-4B, max_model_len: 8192}\ncluster: {node_num: 1, gpu_per_node: 2}\n"
                   "explorer: {rollout_model: {engine_num: 1}}\n", encoding="utf-8")
    assert cli("--from-config", str(one), "--gpu", "a100", "--minimize", "gpus", "--write", str(patched)) == (
        2, "", (f"solve: error: --write keeps {one}'s cluster, which gives the trainer 1 GPU, so the plan must use "
                "exactly that many: drop --minimize gpus (or use --out FILE for a fragment with its own cluster)\n"))


def test_no_plan_on_the_configs_gpus_names_a_plan_on_fewer(cli, user_config: Path, monkeypatch: pytest.MonkeyPatch):
    # Qwen3-4B at 102400 tokens on exactly 6 A100s: the tables stop at 51200 there, but 4 GPUs with
    # Env + Offload + SP=4 train it, leaving 2 more GPUs to rollout.
    monkeypatch.setenv("MODEL_PATH", "Qwen/Qwen3-4B")
    monkeypatch.setenv("MAX_MODEL_LEN", "102400")
    status, out, _ = cli("--from-config", str(user_config), "--gpu", "a100", "--json")
    [answer] = json.loads(out)
    assert status == 1 and answer["reason"].endswith(
        "the longest is 51200 (Env + Offload + SP=2 on 6 GPUs, documented); fewer trainer GPUs train 102400 tokens: "
        "Env + Offload + SP=4 on 4 GPUs (documented), the other 2 free for rollout (then 4 GPUs in the config's "
        "explorer); --token-budget auto trains "
        "102400 tokens: "
        "Env + Offload + SP=2 on 6 GPUs with max_token_len_per_gpu = 51200 (estimated)")


def test_a_configs_trainer_across_nodes_not_whole_names_the_rollout_it_then_takes(cli, tmp_path: Path):
    # Two nodes of 8 H100s, one engine of 4 for the rollout: 12 trainer GPUs span the nodes but are not whole nodes,
    # which Trinity refuses; 8 train it, and the reason says what the config's explorer then takes (session 93).
    config = tmp_path / "grpo32b.yaml"
    config.write_text("algorithm: {algorithm_type: grpo}\nmodel: {model_path: Qwen/Qwen3-32B, max_model_len: 65536}\n"
                      "cluster: {node_num: 2, gpu_per_node: 8}\n"
                      "explorer: {rollout_model: {engine_num: 1, tensor_parallel_size: 4}}\n", encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "h100", "--trinity-version", "0.6.0")
    assert status == 1 and ("12 GPUs span nodes of 8 (cluster.gpu_per_node) but are not whole nodes; fewer trainer "
                            "GPUs train 65536 tokens: Env + Offload + SP=4 on 8 GPUs (estimated, extrapolated), the "
                            "other 4 free for rollout (then 8 GPUs in the config's explorer) --explain") in " ".join(
                                out.split())
    # mutants59: so does the nearest plan that drops a pin to train on fewer GPUs
    status, out, _ = cli("--from-config", str(config), "--gpu", "h100", "--trinity-version", "0.6.0", "--no-offload")
    assert status == 1 and ("fewer trainer GPUs train 65536 tokens if you also drop --no-offload: Env + Offload + "
                            "SP=4 on 8 GPUs (estimated, extrapolated), the other 4 free for rollout (then 8 GPUs in "
                            "the config's explorer)") in " ".join(out.split())
    # Without a config, --rollout-gpus names the rollout already: the words stay as they were.
    status, out, _ = cli("--model", "32B", "--gpu", "h100", "--len", "64k", "--total-gpus", "16", "--rollout-gpus",
                         "4", "--exact")
    assert status == 1 and "the other 4 free for rollout --explain" in " ".join(out.split()) and "then 8" not in out


def test_a_config_without_a_length_names_the_missing_key(cli, tmp_path: Path):
    config = tmp_path / "nolen.yaml"
    config.write_text("model:\n  model_path: Qwen/Qwen3-4B\ncluster:\n  gpu_per_node: 4\n", encoding="utf-8")
    assert cli("--from-config", str(config), "--gpu", "a100") == (
        2, "", (f"solve: error: --from-config {config}: no model.max_model_len to plan for: give --len L (or "
                "--maximize len)\n"))
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100", "--maximize", "len")
    assert status == 0 and "longest context on exactly 3 GPUs" in out
    # Trinity takes prompt and response together where max_model_len is not set, and so does the verdict.
    config.write_text("model:\n  model_path: Qwen/Qwen3-4B\n  max_prompt_tokens: 4096\n  max_response_tokens: 28672\n"
                      "cluster:\n  gpu_per_node: 4\n", encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100", "--json")
    [answer] = json.loads(out)
    assert (status, answer["current"]["max_model_len"]) == (1, 32768) and "32768 tokens is beyond" in answer["reason"]
    assert answer["current"]["config_problems"][0] == (
        "model.max_model_len is not set: Trinity takes max_prompt_tokens + max_response_tokens = 4096 + 28672 = 32768, "
        "as the verdict does")
    config.write_text("model:\n  model_path: Qwen/Qwen3-4B\n  max_prompt_tokens: 4096\ncluster:\n  gpu_per_node: 4\n",
                      encoding="utf-8")  # one of them alone: Trinity cannot tell the length either
    assert cli("--from-config", str(config), "--gpu", "a100")[0] == 2


def test_write_for_a_model_with_its_own_rope_scaling_removes_a_yarn_block(cli, tmp_path: Path):
    # A YaRN block would replace Llama 3.1's llama3 scaling: --write removes it, whatever the length.
    config = tmp_path / "llama.yaml"
    config.write_text("algorithm: {algorithm_type: grpo}\n"
                      "model:\n  model_path: meta-llama/Llama-3.1-8B\n  max_model_len: 262144\n  rope_scaling:\n"
                      "    rope_type: yarn\n    factor: 2.0\n    original_max_position_embeddings: 131072\n"
                      "cluster:\n  node_num: 1\n  gpu_per_node: 8\nexplorer:\n  rollout_model:\n    engine_num: 0\n",
                      encoding="utf-8")
    patched = tmp_path / "patched.yaml"
    assert cli("--from-config", str(config), "--gpu", "h100", "--len", "32k", "--write", str(patched))[0] == 0
    assert "rope_scaling" not in patched.read_text(encoding="utf-8")


def test_a_config_naming_llama_by_hugging_faces_older_id_is_planned_for_that_model(cli, tmp_path: Path):
    # meta-llama/Meta-Llama-3.1-8B-Instruct was the id before Meta renamed it; configs written then still use it.
    config = tmp_path / "llama.yaml"
    for model, name in (("Meta-Llama-3.1-8B-Instruct", "Llama-3.1-8B"), ("Meta-Llama-3.1-70B", "Llama-3.1-70B")):
        config.write_text(f"algorithm: {{algorithm_type: grpo}}\nmodel:\n  model_path: meta-llama/{model}\n"
                          "  max_model_len: 8192\n", encoding="utf-8")
        status, out, _ = cli("--from-config", str(config), "--gpu", "h100", "--gpus", "8", "--json")
        assert status == 0 and {answer["model"] for answer in json.loads(out)} == {name}


def test_write_with_yarn_says_where_trinity_hands_it_and_not_for_05(cli, tmp_path: Path):
    # As the fragment's header: on Trinity 0.6 with verl 0.8 or later model.rope_scaling reaches vLLM only.
    patched = tmp_path / "patched.yaml"
    flags = ("--from-config", "docs/examples/trinity.yaml", "--gpu", "h20", "--len", "60k", "--write", str(patched))
    status, _, err = cli(*flags)
    assert status == 0 and (
        f"solve: note: {patched}: model.rope_scaling reaches the rollout (vLLM), but on Trinity 0.6 with verl 0.8 or "
        "later not the trainer, whose model reads the checkpoint's config.json alone: to train with YaRN too, add the "
        "same rope_scaling there, the way Qwen's model cards add theirs (memory is the same either way)\n") in err
    assert "rope_scaling reaches" not in cli(*flags, "--trinity-version", "0.5")[2]


def test_write_needs_the_trainer_gpus_and_takes_the_node_size_from_the_config(cli, tmp_path: Path):
    bare = tmp_path / "bare.yaml"  # no cluster section: the trainer's GPU count is Ray's business
    bare.write_text("algorithm: {algorithm_type: grpo}\nmodel:\n  model_path: Qwen/Qwen3-8B\n  max_model_len: 65536\n",
                    encoding="utf-8")
    patched = tmp_path / "patched.yaml"
    assert cli("--from-config", str(bare), "--gpu", "a100", "--write", str(patched)) == (
        2, "", f"solve: error: --write keeps {bare}'s cluster, which does not say how many GPUs the trainer gets (no "
               "cluster.gpu_per_node): give them with --gpus N\n")
    # --minimize gpus chooses the trainer's GPU count, which --write would then leave to Ray: refused, --gpus or not.
    status, out, err = cli("--from-config", str(bare), "--gpu", "a100", "--gpus", "4", "--minimize", "gpus", "--write",
                           str(patched))
    assert (status, out, err) == (2, "", (
        f"solve: error: --write keeps {bare}'s cluster, which does not say how many GPUs the trainer gets (no "
        "cluster.gpu_per_node): drop --minimize gpus and give them with --gpus N (or use --out FILE for a fragment "
        "with its own cluster)\n")) and not patched.exists()
    status, out, _ = cli("--from-config", str(bare), "--gpu", "a100", "--gpus", "4", "--write", str(patched))
    assert status == 0 and "on exactly 4 GPUs" in out
    two_nodes = tmp_path / "two-nodes.yaml"  # 8 trainer GPUs on two nodes of 4: SP must divide 4
    two_nodes.write_text("mode: train\nalgorithm: {algorithm_type: grpo}\nmodel:\n  model_path: Qwen/Qwen3-8B\n"
                         "  max_model_len: 131072\n"
                         "cluster:\n  node_num: 2\n  gpu_per_node: 4\n", encoding="utf-8")
    status, out, _ = cli("--from-config", str(two_nodes), "--gpu", "h100", "--json")
    [answer] = json.loads(out)
    assert status == 1 and answer["reason"].endswith(
        "the longest is 101376 on the 1024-token grid (Env + Offload + SP=4 on 8 GPUs, estimated, extrapolated); --token-budget auto trains "
        "131072 tokens: Env + SP=4 on 8 GPUs with max_token_len_per_gpu = 38912 (estimated, extrapolated); on nodes of "
        "4 GPUs (cluster.gpu_per_node) an SP group stays within one node, so SP=4 at most")
    status, out, _ = cli("--from-config", str(two_nodes), "--gpu", "h100", "--node-gpus", "8", "--json")
    assert status == 0 and json.loads(out)[0]["plans"][0]["sp"] == 8  # --node-gpus overrides the config's


@pytest.mark.parametrize(("outputs", "named"), [
    (["--write"], "--write takes"),
    (["--write", "--out"], "--out and --write take"),
])
def test_one_plan_outputs_name_only_the_flags_given(cli, user_config: Path, outputs: list[str], named: str):
    argv = [word for flag in outputs for word in (flag, str(user_config.parent / f"{flag[2:]}.yaml"))]
    status, out, err = cli("--from-config", str(user_config), *argv)
    assert (status, out) == (2, "") and err == (
        f"solve: error: {named} one plan: choose one GPU type with --gpu (A100-80GB or H20-96GB, the ones this "
        "answer covers, or any other of the catalogue)\n")
    assert not (user_config.parent / "write.yaml").exists() and not (user_config.parent / "out.yaml").exists()


def test_rollout_gpus_must_match_the_configs(cli, user_config: Path):
    status, out, err = cli("--from-config", str(user_config), "--gpu", "a100", "--rollout-gpus", "4", "--emit", "trinity")
    assert (status, out) == (2, "") and err == (f"solve: error: --rollout-gpus 4: {user_config} gives the rollout "
                                                "2 GPUs (its engines times their GPUs each): drop --rollout-gpus, or "
                                                "plan a rollout of 4 GPUs from a copy whose explorer takes that "
                                                "many (explorer.rollout_model.engine_num x each engine's GPUs, with "
                                                "any auxiliary models')\n")


@pytest.mark.parametrize(("section", "message"), [
    ("trainer: {trainer_config: []}", "trainer.trainer_config must be a mapping, got []"),
    ("trainer: {trainer_config: {actor_rollout_ref: {actor: {fsdp_config: 5}}}}",
     "trainer.trainer_config.actor_rollout_ref.actor.fsdp_config must be a mapping, got 5"),
    ("model: {model_path: Qwen/Qwen3-8B, max_model_len: 65536, rope_scaling: [yarn]}",
     "model.rope_scaling must be a mapping, got ['yarn']"),
])
def test_write_refuses_a_section_of_the_wrong_type_and_writes_nothing(cli, tmp_path: Path, section: str, message: str):
    config = tmp_path / "trinity.yaml"
    model = "" if section.startswith("model:") else "model: {model_path: Qwen/Qwen3-8B, max_model_len: 65536}\n"
    config.write_text(f"mode: train\n{model}cluster: {{node_num: 1, gpu_per_node: 8}}\n{section}\n", encoding="utf-8")
    patched, fragment = tmp_path / "patched.yaml", tmp_path / "fragment.yaml"
    status, out, err = cli("--from-config", str(config), "--gpu", "a100", "--write", str(patched), "--out", str(fragment))
    assert (status, out, err) == (2, "", f"solve: error: --from-config {config}: {message}\n")
    assert not patched.exists() and not fragment.exists()


def test_write_refuses_a_model_that_is_not_the_configs(cli, tmp_path: Path):
    config = tmp_path / "trinity.yaml"
    config.write_text("mode: train\nalgorithm: {algorithm_type: grpo}\n"
                      "model: {model_path: Qwen/Qwen3-14B, max_model_len: 32768}\n"
                      "cluster: {node_num: 1, gpu_per_node: 6}\n", encoding="utf-8")
    patched = tmp_path / "patched.yaml"
    assert cli("--from-config", str(config), "--gpu", "a100-80g", "--model", "0.6B", "--write", str(patched)) == (
        2, "", f"solve: error: --model names Qwen3-0.6B, but {config} trains Qwen3-14B (model.model_path): --write "
               "would give it another model's plan; drop --model\n")
    assert not patched.exists()
    # Nor does a fragment to merge into it take another model's plan; the verdict alone may (what if ...).
    for made, flags in (("--out", ("--out", str(tmp_path / "fragment.yaml"))),
                        ("--emit trinity", ("--emit", "trinity"))):
        assert cli("--from-config", str(config), "--gpu", "a100-80g", "--model", "0.6B", *flags) == (
            2, "", (f"solve: error: --model names Qwen3-0.6B, but {config} trains Qwen3-14B (model.model_path): "
                    f"{made} would give it another model's plan; drop --model\n"))
    assert not (tmp_path / "fragment.yaml").exists()
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100-80g", "--model", "0.6B")
    assert status == 0 and ("apply the lines below are for Qwen3-0.6B, not for trinity.yaml's Qwen3-14B: they apply "
                            "with model.model_path set to a Qwen3-0.6B checkpoint (dotted keys) model.max_model_len: "
                            "32768") in " ".join(out.split())  # whose plan the lines are, not the config's model's
    status, _, _ = cli("--from-config", str(config), "--gpu", "a100-80g", "--model", "14B", "--write", str(patched))
    assert status == 0 and patched.exists()  # the same model, named again, is fine
    # A model_path the catalogue does not know (a local checkpoint, say) is the user's to name: --model says which.
    config.write_text("mode: train\nalgorithm: {algorithm_type: grpo}\nmodel: {model_path: /data/ckpt/my-run, "
                      "max_model_len: 8192}\ncluster: {node_num: 1, gpu_per_node: 8}\n", encoding="utf-8")
    status, _, err = cli("--from-config", str(config), "--gpu", "a100-80g", "--model", "4B", "--write", str(patched))
    assert (status, err) == (0, "")
    assert patched.read_text(encoding="utf-8") == (
        "mode: train\nalgorithm: {algorithm_type: grpo}\n"
        "# evidence: inferred: the A100-80GB table for 6 GPUs says 'vanilla' at 8192, and this plan runs that\n"
        "#   same setting on more GPUs (which hold no more per GPU)\n"  # wrapped at the margin: test_lead_s75
        f"# To check this file as its plan was made:\n#   solve --from-config {patched} --check --gpu A100-80GB "
        "--model 4B\n"
        "model: {model_path: /data/ckpt/my-run, max_model_len: 8192}\n"
        "cluster: {node_num: 1, gpu_per_node: 8}\ntrainer:\n  ulysses_sequence_parallel_size: 1\n"
        "  max_token_len_per_gpu: 16384\n")


OFFLOADED_4B = """mode: train
algorithm: {algorithm_type: grpo}
buffer: {train_batch_size: 64}
model:
  model_path: Qwen/Qwen3-4B
  max_model_len: 102400
  rope_scaling: {rope_type: yarn, factor: 4.0, original_max_position_embeddings: 40960, rope_theta: 1000000}
cluster: {node_num: 1, gpu_per_node: 4}
trainer:
  trainer_strategy: fsdp2
  ulysses_sequence_parallel_size: 4
  max_token_len_per_gpu: 409600
  save_hf_checkpoint: last  # we evaluate the HF weights
  trainer_config:
    actor_rollout_ref:
      actor: {fsdp_config: {param_offload: yes, optimizer_offload: on, offload_policy: true}}
      ref: {fsdp_config: {param_offload: false}}
"""


def test_from_config_names_what_else_in_the_config_is_wrong_or_unlike_the_tables(cli, tmp_path: Path, monkeypatch):
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    config = tmp_path / "trinity.yaml"
    config.write_text(OFFLOADED_4B, encoding="utf-8")
    status, out, err = cli("--from-config", str(config), "--gpu", "a100", "--json")
    [answer] = json.loads(out)
    current = answer["current"]
    # yes / on are YAML 1.1 booleans (as Trinity reads them): Offload is on, and the table documents it, at the
    # default budget: its own 409600 above it leaves trains false (s87).
    assert (status, current["offload"], current["trains"], current["plan"]["evidence"]) == (
        0, True, False, "documented")
    assert current["config_problems"] == [
        ("model.rope_scaling (factor 4.0 over 40960) covers the length, but not as Trinity-RFT's guide sets it, "
         "factor max_model_len / 40960 = 2.5 over 40960: it stretches the positions more than the length needs"),
        TRINITY_06_OFFLOAD,
        "trainer.max_token_len_per_gpu 409600 is above Trinity's default ceil(2 x 102400 / 4) = 51200, which the "
        "tables measured: more tokens per GPU than the verdict assumes",
    ]
    _, out, _ = cli("--from-config", str(config), "--gpu", "a100")
    assert ("\n  but: model.rope_scaling (factor 4.0 over 40960) covers the length, but not as Trinity-RFT's guide "
            "sets it") in out
    # --write fixes what the plan sets and keeps the user's own save_hf_checkpoint; the YaRN, the guide's form over
    # 40960 with another length's factor, gets this length's (a YaRN of the config's own form is kept:
    # test_writeyarn_s71).
    patched = tmp_path / "patched.yaml"
    status, _, err = cli("--from-config", str(config), "--gpu", "a100", "--write", str(patched))
    assert status == 0 and "kept it" not in err and "stretches" not in err
    text = patched.read_text(encoding="utf-8")
    assert "factor: 2.5" in text and "max_token_len_per_gpu: 51200" in text
    assert "save_hf_checkpoint: last  # we evaluate the HF weights" in text


def issue_398_config(tmp_path: Path, trainer: str) -> Path:
    """Trinity-RFT #398's config: Qwen2.5-7B at 131072 tokens on an 8-GPU node with 2 rollout engines (6 trainer
    GPUs), with `trainer` as its trainer section, and the model's rope_theta in its YaRN, which Trinity 0.6's trainer
    needs there (#398's has none: a line where no release is named, tests/test_ropecheck_s79.py)."""
    config = tmp_path / "trinity.yaml"
    config.write_text("mode: both\nalgorithm: {algorithm_type: grpo}\nmodel:\n  model_path: Qwen/Qwen2.5-7B-Instruct\n"
                      "  max_model_len: 131072\n  rope_scaling: {rope_type: yarn, factor: 4.0, "
                      "original_max_position_embeddings: 32768, rope_theta: 1000000}\n"
                      "cluster: {node_num: 1, gpu_per_node: 8}\nexplorer: {rollout_model: {engine_num: 2}}\n"
                      f"trainer: {trainer}\n", encoding="utf-8")
    return config


def test_a_token_budget_below_the_default_is_legal_and_the_verdict_is_at_it(cli, tmp_path: Path):
    # Trinity-RFT #398: Qwen2.5-7B at 131072 on 6 H20s, SP capped at 2 by the 28 heads; half the default
    # budget still holds the longest sequence (65536 x 2 = 131072), so verl takes it.
    config = issue_398_config(tmp_path, "{ulysses_sequence_parallel_size: 2, max_token_len_per_gpu: 65536}")
    status, out, _ = cli("--from-config", str(config), "--gpu", "h20", "--json")
    current = json.loads(out)[0]["current"]
    assert (status, current["gpus"], current["sp"], current["broken_rule"]) == (1, 6, 2, None)  # too long for 6
    assert current["config_problems"] == [
        "trainer.max_token_len_per_gpu 65536 is below Trinity's default ceil(2 x 131072 / 2) = 131072, which the "
        "tables measured: the verdict is at 65536 tokens per GPU (each step takes more micro-batches); Trinity 0.5.0 "
        "raises it back to the default: use 0.5.1 or later"]
    assert current["max_token_len_per_gpu"] == 65536 and not current["trains"]
    # Lowering budgets as the config does, the planner finds 4 of the 6 GPUs with SP=4 (28 heads: not on 6).
    assert ("fewer trainer GPUs train 131072 tokens: Env + SP=4 on 4 GPUs with a lowered max_token_len_per_gpu of "
            in json.loads(out)[0]["reason"])


def test_a_config_that_breaks_the_whole_nodes_rule_is_told_once_naming_its_own_key(cli, tmp_path: Path):
    config = tmp_path / "trinity.yaml"
    config.write_text("mode: both\nalgorithm: {algorithm_type: grpo}\n"
                      "model: {model_path: Qwen/Qwen3-0.6B, max_model_len: 4096}\n"
                      "cluster: {node_num: 2, gpu_per_node: 4}\nexplorer: {rollout_model: {engine_num: 2}}\n",
                      encoding="utf-8")
    status, out, err = cli("--from-config", str(config), "--gpu", "a100-80g", "--gpus", "6", "--json")
    current = json.loads(out)[0]["current"]
    assert (status, err) == (0, "")
    assert current["broken_rule"] == "6 GPUs span nodes of 4 (cluster.gpu_per_node) but are not whole nodes"
    assert current["config_problems"] == []  # the verdict says it; a 'but:' line would say it again
    # A --node-gpus that overrides the config's node size makes the verdict the flag's, and the config's own
    # rule, which the flag does not change in the file, a 'but:' line.
    status, out, err = cli("--from-config", str(config), "--gpu", "a100-80g", "--gpus", "6", "--node-gpus", "8",
                           "--json")
    current = json.loads(out)[0]["current"]
    assert (current["broken_rule"], current["config_problems"]) == (
        None, ["6 GPUs span nodes of 4 (cluster.gpu_per_node) but are not whole nodes"])


@pytest.mark.parametrize(("change", "flags", "message"), [
    ("mode: train", "mode: explore", "mode explore runs no trainer, so there is nothing to plan (rft-solver plans "
                                     "the trainer of mode both or train)"),
    ("mode: train", "mode: colocate", ("Trinity's mode colocate runs the trainer and its vLLM engine on one GPU, "
                                       "the engine taking up to 25% of it (gpu_memory_utilization), which rft-solver "
                                       "does not plan: plan the trainer on the 75% left, a GPU type of your own (--gpu "
                                       "NAME --gpu-memory 61440MiB: 75% of the A100-80GB's 81920 MiB); it plans the "
                                       "trainer of mode both or train")),
    ("mode: train", "mode: bogus", ("mode must be one of both, train, explore, bench, serve or colocate, as Trinity "
                                    "takes it, got 'bogus'")),
    ("trainer_strategy: fsdp2", "trainer_strategy: megatron", "trainer.trainer_strategy is megatron: rft-solver plans "
     "FSDP trainers (fsdp, or fsdp2 for Offload), whose settings do not carry over to it; plan it by hand"),
])
def test_configs_without_an_fsdp_trainer_are_refused(cli, tmp_path: Path, change: str, flags: str, message: str):
    config = tmp_path / "trinity.yaml"
    config.write_text(OFFLOADED_4B.replace(change, flags), encoding="utf-8")
    patched = tmp_path / "patched.yaml"
    assert cli("--from-config", str(config), "--gpu", "a100", "--write", str(patched)) == (
        2, "", f"solve: error: --from-config {config}: {message}\n")
    assert not patched.exists()
    assert cli("--from-config", str(config), "--gpu", "a100", "--emit", "trinity") == (  # a fragment for it neither
        2, "", f"solve: error: --from-config {config}: {message}\n")


@pytest.mark.parametrize("mode", ["trian", 5, "Train"])
def test_the_api_refuses_a_mode_trinity_lacks_as_the_cli_does(mode: object):
    # checks93: trinity_config_problems said nothing of a mode Trinity's validator refuses ("Invalid mode",
    # config_validator.py:93 in 0.6.0) and --check refuses: one rule now (check_mode), in the same words
    from solver.trinity import trinity_config_problems
    from solver.trinity.keys import ConfigError

    mapping = {**yaml.safe_load(OFFLOADED_4B), "mode": mode}
    with pytest.raises(ConfigError) as refused:
        trinity_config_problems(mapping, load_catalog().model("4B"), 4)
    assert str(refused.value) == ("mode must be one of both, train, explore, bench, serve or colocate, as Trinity "
                                  f"takes it, got {mode!r}")
    # the modes Trinity runs are judged (the CLI refuses to plan explore, bench, serve and colocate, but the API's
    # caller gives the trainer GPUs, and explore's rollout is judged: test_smallslips21_s75)
    for runs in ("train", "both", "explore", "colocate", None):
        judged = trinity_config_problems({**mapping, "mode": runs}, load_catalog().model("4B"), 4)
        assert [problem.code.value for problem in judged] == ["rope-scaling-off-guide"]


def test_check_refuses_a_mode_typo(cli, tmp_path: Path):
    config = tmp_path / "trinity.yaml"
    config.write_text(OFFLOADED_4B.replace("mode: train", "mode: trian"), encoding="utf-8")
    assert cli("--from-config", str(config), "--gpu", "a100", "--check") == (2, "", (
        f"solve: error: --from-config {config}: mode must be one of both, train, explore, bench, serve or colocate, "
        "as Trinity takes it, got 'trian'\n"))


def test_a_fragment_for_a_config_keeps_its_rollout_engines_and_gives_the_cluster(cli, tmp_path: Path):
    # 2 nodes of 8 with 2 rollout engines of tensor-parallel size 4: 8 rollout GPUs, 8 trainer GPUs. The
    # fewest trainer GPUs must leave Trinity a layout with those 8 (the trainer gets the rest of whole
    # nodes), and the fragment gives the cluster for them without replacing the engines.
    config = tmp_path / "trinity.yaml"
    config.write_text("algorithm: {algorithm_type: grpo}\n"
                      "model: {model_path: Qwen/Qwen3-4B, max_model_len: 16384}\n"
                      "cluster: {node_num: 2, gpu_per_node: 8}\n"
                      "explorer: {rollout_model: {engine_num: 2, tensor_parallel_size: 4}}\n", encoding="utf-8")
    fragment = tmp_path / "fragment.yaml"
    status, out, err = cli("--from-config", str(config), "--gpu", "a100", "--minimize", "gpus", "--out", str(fragment))
    assert status == 0 and "vanilla on 8 of 8 GPUs, with 8 rollout GPUs" in out
    data = yaml.safe_load(fragment.read_text(encoding="utf-8"))
    assert data["cluster"] == {"node_num": 2, "gpu_per_node": 8} and "explorer" not in data


def test_write_keeps_crlf_line_endings_and_a_byte_order_mark(cli, tmp_path: Path):
    config = tmp_path / "trinity.yaml"
    config.write_bytes("\ufeffmode: train  # windows\r\nmodel:\r\n  model_path: Qwen/Qwen3-4B\r\n  max_model_len: 8192\r\n"
                       "cluster:\r\n  node_num: 1\r\n  gpu_per_node: 4\r\n".encode())
    patched = tmp_path / "patched.yaml"
    assert cli("--from-config", str(config), "--gpu", "a100", "--write", str(patched))[0] == 0
    data = patched.read_bytes()
    assert data.startswith("\ufeffmode: train  # windows\r\n".encode()) and b"\n" not in data.replace(b"\r\n", b"")


def test_write_keeps_the_cr_line_endings_of_a_classic_mac_file(cli, tmp_path: Path):
    # YAML reads CR alone as a line break too. Before, the file came back with LF lines, its comments' CRs left
    # before an LF, and the blank line after the model section's last key (a CR in its comment) gone.
    config = tmp_path / "trinity.yaml"
    config.write_bytes(b"algorithm: {algorithm_type: grpo}\r"
                       b"model:\r  model_path: Qwen/Qwen3-4B\r  max_model_len: 8192  # short\r\r# the trainer\r"
                       b"trainer:\r  save_interval: 10\r")
    patched = tmp_path / "patched.yaml"
    assert cli("--from-config", str(config), "--gpu", "a100", "--gpus", "2", "--len", "24k", "--write",
               str(patched))[0] == 0
    assert patched.read_bytes() == (b"algorithm: {algorithm_type: grpo}\r"
                                    b"model:\r  model_path: Qwen/Qwen3-4B\r"
                                    b"  # To check this file as its plan was made:\r"
                                    b"  #   solve --from-config " + bytes(patched) + b" --check --gpu A100-80GB\r"
                                    b"  max_model_len: 24576  # short\r\r"
                                    b"# the trainer\rtrainer:\r  save_interval: 10\r"
                                    b"  ulysses_sequence_parallel_size: 2\r  max_token_len_per_gpu: 24576\r")


def test_write_gives_lf_lines_to_an_lf_file_with_a_stray_cr(cli, tmp_path: Path):
    # One line of an LF file ends in CR alone (pasted from a classic Mac file): LF is the file's ending, so the CR is
    # written as LF, as YAML read it, and no other line takes CR.
    config = tmp_path / "trinity.yaml"
    config.write_bytes(b"algorithm: {algorithm_type: grpo}\n"
                       b"model:\n  model_path: Qwen/Qwen3-4B\r  max_model_len: 8192\ntrainer:\n  save_interval: 10\n")
    patched = tmp_path / "patched.yaml"
    assert cli("--from-config", str(config), "--gpu", "a100", "--gpus", "2", "--len", "24k", "--write",
               str(patched))[0] == 0
    assert patched.read_bytes() == (b"algorithm: {algorithm_type: grpo}\n"
                                    b"model:\n  model_path: Qwen/Qwen3-4B\n"
                                    b"  # To check this file as its plan was made:\n"
                                    b"  #   solve --from-config " + bytes(patched) + b" --check --gpu A100-80GB\n"
                                    b"  max_model_len: 24576\ntrainer:\n"
                                    b"  save_interval: 10\n  ulysses_sequence_parallel_size: 2\n"
                                    b"  max_token_len_per_gpu: 24576\n")


@pytest.mark.parametrize(("setting", "env"), [
    ("expandable_segments:True", True), ("garbage_collection_threshold:0.6, expandable_segments: True", True),
    ("expandable_segments:True,expandable_segments:False", False), ("expandable_segments:False", False), ("", False),
])
def test_env_is_read_as_pytorch_reads_the_allocator_setting(cli, monkeypatch, setting: str, env: bool):
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", setting)
    example = Path(__file__).parent.parent / "docs" / "examples" / "trinity.yaml"
    # --maximize len has no --len: the verdict is on the config's own length.
    [answer] = json.loads(cli("--from-config", str(example), "--gpu", "a100", "--maximize", "len", "--json")[1])
    assert (answer["current"]["env"], answer["current"]["max_model_len"]) == (env, 32768)


def test_notes_skip_what_they_cannot_read_and_the_checks_skip_yaml_pyyaml_cannot(cli, tmp_path: Path):
    config = tmp_path / "trinity.yaml"
    # A flag read only for a note, given by a reference: the verdict stands, without the note.
    base = ("mode: both\nmodel: {model_path: Qwen/Qwen3-8B, max_model_len: 32768}\n"
            "cluster: {node_num: 1, gpu_per_node: 8}\nexplorer: {rollout_model: {engine_num: 2}}\n")
    config.write_text(base + "trainer:\n  trainer_config:\n    actor_rollout_ref:\n      ref:\n        fsdp_config:\n"
                      "          param_offload: ${trainer.trainer_config.actor_rollout_ref.actor.fsdp_config.x}\n",
                      encoding="utf-8")
    status, out, err = cli("--from-config", str(config), "--gpu", "a100-80g", "--json")
    assert (status, err) == (0, "") and json.loads(out)[0]["current"]["gpus"] == 6
    # A complex key, which ruamel reads and PyYAML, and so Trinity, does not: refused as Trinity refuses it.
    config.write_text(base + "extra:\n  ? [a, b]\n  : 1\n", encoding="utf-8")
    assert cli("--from-config", str(config), "--gpu", "a100-80g", "--json") == (
        2, "", f"solve: error: --from-config {config}: line 6: a key must be a plain value, not a list\n")


def test_an_explore_config_is_refused_for_its_mode_even_when_its_engines_take_every_gpu(cli, tmp_path: Path):
    config = tmp_path / "trinity.yaml"
    config.write_text("mode: explore\nmodel: {model_path: Qwen/Qwen3-8B, max_model_len: 32768}\n"
                      "cluster: {node_num: 1, gpu_per_node: 8}\nexplorer: {rollout_model: {engine_num: 8}}\n",
                      encoding="utf-8")
    assert cli("--from-config", str(config), "--gpu", "a100") == (
        2, "", f"solve: error: --from-config {config}: "
               "mode explore runs no trainer, so there is nothing to plan (rft-solver plans "
               "the trainer of mode both or train)\n")


def test_a_fragment_whose_rollout_is_not_the_configs_gives_its_engines(cli):
    # The example config has 2 rollout engines; a trainer of 8 on whole nodes leaves the rollout a node of 8,
    # so the fragment must give those 8 engines, or Trinity would hand the trainer 14 GPUs.
    example = Path(__file__).parent.parent / "docs" / "examples" / "trinity.yaml"
    status, out, err = cli("--from-config", str(example), "--gpus", "8", "--exact", "--gpu", "h100", "--emit", "trinity")
    data = yaml.safe_load(out)
    assert status == 0 and "rollout gets 8 GPUs, not 2" in err
    assert data["cluster"] == {"node_num": 2, "gpu_per_node": 8} and data["explorer"]["rollout_model"]["engine_num"] == 8


def test_a_model_config_describes_the_configs_model(cli, tmp_path: Path):
    # --model-config with --from-config plans the config.json's shape, even under the catalogue's name.
    example = Path(__file__).parent.parent / "docs" / "examples" / "trinity.yaml"
    folder = qwen3_8b_checkpoint(tmp_path / "Qwen3-8B", vocab_size=300000)
    status, out, _ = cli("--model-config", str(folder), "--from-config", str(example), "--gpu", "a100-80g", "--json")
    [answer] = json.loads(out)
    # Its larger vocabulary has no tables: estimated, and 32768 on the config's 6 GPUs is past what they reach.
    assert (status, answer["model"], answer["plans"]) == (1, "Qwen3-8B (config shape)", [])
    assert answer["nearest"]["evidence"] == "estimated" and answer["nearest"]["max_model_len"] < 32768
    assert "for Qwen3-8B (config shape) on A100-80GB on exactly 6 GPUs" in answer["reason"]
    patched = tmp_path / "patched.yaml"
    status, _, err = cli("--model-config", str(folder), "--from-config", str(example), "--gpu", "a100-80g", "--write",
                         str(patched))
    # Planned for its shape: 32768 is past it on 6 A100s; no plan, no file, and a note says so; another names the
    # one term that keeps Qwen3-8B's cells from it.
    near = ("solve: note: Qwen3-8B (config shape) has Qwen3-8B's shape but for vocab_size 300000 (Qwen3-8B's: "
            "151936), so no table's cells stand for it and its plans are estimates (the memory a trainer needs "
            "depends on the shape); a checkpoint of that model's very shape would take its cells\n")
    assert (status, err) == (1, f"{near}solve: note: no plan, so {patched} is not written\n")  # the input's first
    assert not patched.exists()
    patched.write_text("mine\n", encoding="utf-8")
    status, _, err = cli("--model-config", str(folder), "--from-config", str(example), "--gpu", "a100-80g", "--write",
                         str(patched))
    assert (status, err) == (1, (f"{near}solve: note: no plan, so {patched} is not written (the file there is "
                                 "left as it was)\n")) and patched.read_text(encoding="utf-8") == "mine\n"


def test_links_in_a_loop_are_refused_as_outputs(cli, tmp_path: Path):
    loop = tmp_path / "loop.yaml"
    loop.symlink_to(loop)
    assert cli(*FLAGSHIP, "--out", str(loop)) == (2, "", f"solve: error: --out {loop}: not a regular file; give a "
                                                  "file name to write\n")


@pytest.mark.parametrize(("explorer", "engines"), [
    ("explorer: {rollout_model: {engine_num: 1, tensor_parallel_size: 2}}", {"engine_num": 4, "tensor_parallel_size": 2}),
    ("explorer: {rollout_model: {engine_num: 2}, auxiliary_models: [{engine_num: 2}]}",
     {"engine_num": 6, "tensor_parallel_size": 1}),
])
def test_a_fragment_keeps_the_configs_engine_size_and_auxiliary_models(cli, tmp_path: Path, explorer: str,
                                                                       engines: dict):
    # A trainer of 8 on whole nodes of 8 leaves the rollout a node of 8: engines of the config's
    # tensor-parallel size, beside its auxiliary models' GPUs.
    config = tmp_path / "trinity.yaml"
    config.write_text("model: {model_path: Qwen/Qwen3-8B, max_model_len: 32768}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
                      + explorer + "\n", encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpus", "8", "--exact", "--gpu", "h100", "--emit", "trinity")
    data = yaml.safe_load(out)
    assert status == 0 and data["cluster"] == {"node_num": 2, "gpu_per_node": 8}
    assert data["explorer"]["rollout_model"] == engines


def test_write_refuses_a_model_config_of_another_catalogue_model(cli, tmp_path: Path):
    folder = tmp_path / "Qwen3-32B"
    folder.mkdir()

    qwen = load_catalog().model("Qwen3-32B")
    (folder / "config.json").write_text(json.dumps({
        "model_type": "qwen3", "hidden_size": qwen.hidden_size, "intermediate_size": qwen.intermediate_size,
        "num_hidden_layers": qwen.num_layers,
        "num_attention_heads": qwen.num_attention_heads, "num_key_value_heads": qwen.num_key_value_heads,
        "head_dim": qwen.head_dim, "vocab_size": qwen.vocab_size, "max_position_embeddings": qwen.native_context}),
        encoding="utf-8")
    example = Path(__file__).parent.parent / "docs" / "examples" / "trinity.yaml"
    patched = tmp_path / "patched.yaml"
    status, out, err = cli("--model-config", str(folder), "--from-config", str(example), "--gpu", "h100", "--len", "8k",
                           "--write", str(patched))
    assert (status, out) == (2, "") and err == (
        f"solve: error: --model-config names Qwen3-32B, but {example} trains Qwen3-8B (model.model_path): --write "
        "would give it another model's plan; drop --model-config\n")
    assert not patched.exists()


def test_a_date_is_text_as_omegaconf_reads_it(cli, tmp_path: Path):
    # OmegaConf drops YAML's timestamps: a date, even one that does not exist, is text to Trinity.
    config = tmp_path / "trinity.yaml"
    config.write_text("model: {model_path: Qwen/Qwen3-8B, max_model_len: 32768}\ncheckpoint_date: 2020-13-45\n",
                      encoding="utf-8")
    status, out, err = cli("--from-config", str(config), "--gpu", "a100-80g", "--gpus", "4")
    assert (status, err) == (0, "") and "cheapest plan for 32768 tokens" in out


def test_a_rollout_the_configs_engines_cannot_take_is_one_line(cli, tmp_path: Path):
    config = tmp_path / "trinity.yaml"
    config.write_text("model: {model_path: Qwen/Qwen3-8B, max_model_len: 32768}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
                      "explorer: {rollout_model: {engine_num: 1, tensor_parallel_size: 3}}\n", encoding="utf-8")
    assert cli("--from-config", str(config), "--gpus", "8", "--exact", "--gpu", "h100", "--emit", "trinity") == (
        2, "", f"solve: error: --from-config {config}: "
               "8 rollout GPUs less the 0 of auxiliary models are not whole engines of "
               "3 GPUs each on nodes of 8: choose a trainer size with --gpus that leaves the config's engines exactly their GPUs\n")


def test_zero_rollout_gpus_plan_a_trainer_alone(cli):
    # --rollout-gpus 0: no rollout beside the trainer (mode: train, or the explorer elsewhere).
    flags = ["--model", "8B", "--len", "32k", "--gpu", "a100", "--gpus", "7", "--no-estimate", "--rollout-gpus", "0"]
    status, out, _ = cli(*flags)
    assert status == 0 and "plan           Env + SP=2 on 6 of 7 GPUs (1 unused)\n" in out
    status, out, _ = cli(*flags, "--emit", "trinity")
    assert status == 0 and "gpu_per_node: 6  # 6 trainer, no rollout GPU here" in out and "explorer:" not in out


def test_a_fragment_without_rollout_gpus_passes_its_own_check(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """--rollout-gpus 0: the fragment says mode: train (no explorer here), so reading it back gives the
    trainer all of its cluster's GPUs, not those less Trinity's default explorer engine."""
    fragment = tmp_path / "fragment.yaml"
    status, _, _ = cli("--model", "8B", "--len", "64k", "--gpus", "4", "--gpu", "a100", "--rollout-gpus", "0",
                       "--out", str(fragment))
    text = fragment.read_text(encoding="utf-8")
    assert status == 0 and "\nmode: train  # no explorer here: it runs elsewhere, in mode explore, or none does (SFT)\n" in text
    config = tmp_path / "trinity.yaml"
    # Merged into a user's config, which in mode train gives buffer.train_batch_size (Trinity refuses it unset).
    merged = "buffer: {train_batch_size: 64}\n" + text.replace("model:\n", "algorithm: {algorithm_type: grpo}\n"
                                                                           "model:\n  model_path: Qwen/Qwen3-8B\n", 1)
    config.write_text(merged, encoding="utf-8")
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100")
    assert status == 0 and "runs Env + Offload + SP=4 on 4 trainer GPUs at 65536 tokens" in out
    assert "it trains (documented" in out


def test_per_role_token_budgets_other_than_the_default_are_caveats_and_write_lowers_one_above_the_plans(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    config = tmp_path / "trinity.yaml"
    config.write_text("algorithm: {algorithm_type: grpo}\n"
                      "model:\n  model_path: Qwen/Qwen3-8B\n  max_model_len: 32768\ncluster:\n  node_num: 1\n"
                      "  gpu_per_node: 8\nexplorer:\n  rollout_model:\n    engine_num: 2\ntrainer:\n"
                      "  ulysses_sequence_parallel_size: 2\n  trainer_config:\n    actor_rollout_ref:\n      actor:\n"
                      "        ppo_max_token_len_per_gpu: 131072  # mine\n      ref:\n"
                      "        log_prob_max_token_len_per_gpu: 16384\n", encoding="utf-8")
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    patched = tmp_path / "patched.yaml"
    status, out, err = cli("--from-config", str(config), "--gpu", "a100", "--write", str(patched))
    key = "trainer.trainer_config.actor_rollout_ref.actor.ppo_max_token_len_per_gpu"
    assert status == 0 and (f"but: {key} 131072 is above Trinity's default ceil(2 x 32768 / 2) = 32768, which the "
                            "tables measured: more tokens per GPU than the verdict assumes (on verl before 0.8 only: "
                            "Trinity 0.6 on verl 0.8 or later ignores the roles' own token budgets and dynamic-batch "
                            "keys, taking the trainer's)") in " ".join(out.split())
    # The ref's, the least that holds a sequence (ceil(32768 / 2)), is below the default: cautious, and said so.
    ref = "trainer.trainer_config.actor_rollout_ref.ref.log_prob_max_token_len_per_gpu"
    assert (f"{ref} 16384 is below Trinity's default ceil(2 x 32768 / 2) = 32768, which the tables measured: fewer "
            "tokens per GPU than the verdict assumes (so it is cautious; each step takes more micro-batches) (on verl "
            "before 0.8 only:") in " ".join(out.split())
    # The actor's budget overrides the plan's for the actor: --write lowers it, comment kept. The ref's, below the
    # plan's (cautious) but holding a sequence of the length, which verl takes, is kept (s81, rolebudget: it was raised
    # to the plan's; a lower budget lowers the ref's memory alone, which the plan's figure bounds).
    assert "warning" not in err and (f"solve: note: {patched}: {key} 131072 lowered to the plan's 32768: set by hand, "
                                     f"it overrides trainer.max_token_len_per_gpu for its role ({ROLE_KEYS_IGNORED})\n"
                                     ) in err
    assert (f"solve: note: {patched}: {ref} 16384 kept, below the plan's 32768: it holds a sequence of the plan's "
            "length (ceil(32768 / 2) = 16384 tokens per GPU or more), so verl takes it, splitting that role's batch "
            f"into more micro-batches of less memory, which the plan's figure bounds ({ROLE_KEYS_IGNORED})\n") in err
    written = patched.read_text(encoding="utf-8")
    assert "        ppo_max_token_len_per_gpu: 32768  # mine\n" in written
    assert "        log_prob_max_token_len_per_gpu: 16384\n" in written
    # Trinity 0.5 runs verl before 0.8, which reads the roles' own budgets: its lines and notes say nothing of 0.6.
    status, out, err = cli("--from-config", str(config), "--gpu", "a100", "--write", str(patched), "--trinity-version",
                           "0.5")
    assert status == 0 and (f"but: {key} 131072 is above Trinity's default ceil(2 x 32768 / 2) = 32768, which the "
                            "tables measured: more tokens per GPU than the verdict assumes\n") in " ".join(
                                out.split("\n       "))
    assert (f"solve: note: {patched}: {key} 131072 lowered to the plan's 32768: set by hand, it overrides "
            "trainer.max_token_len_per_gpu for its role\n") in err and "0.6" not in err
    assert patched.read_text(encoding="utf-8") == written.replace(" --gpu A100-80GB\n",
                                                                  " --gpu A100-80GB --trinity-version 0.5\n")
    # A role's budget equal to the plan's is left as it is, without a note that it was lowered.
    config.write_text(config.read_text(encoding="utf-8").replace("16384", "32768"), encoding="utf-8")
    status, _, err = cli("--from-config", str(config), "--gpu", "a100", "--write", str(patched))
    assert status == 0 and f"{key} 131072 lowered" in err and ref not in err


def test_a_critic_budget_above_the_verdicts_and_the_plans_is_named_and_write_lowers_it(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    config = tmp_path / "trinity.yaml"
    config.write_text("model:\n  model_path: Qwen/Qwen3-8B\n  max_model_len: 32768\ncluster:\n  node_num: 1\n"
                      "  gpu_per_node: 8\nexplorer:\n  rollout_model:\n    engine_num: 2\nalgorithm:\n"
                      "  algorithm_type: ppo\ntrainer:\n  ulysses_sequence_parallel_size: 2\n  trainer_config:\n"
                      "    critic:\n      ppo_max_token_len_per_gpu: 131072\n", encoding="utf-8")
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    patched = tmp_path / "patched.yaml"
    status, out, err = cli("--from-config", str(config), "--gpu", "a100", "--write", str(patched))
    # criticbudget_s82: --write lowers it to the plan's, as a role's (it kept it, and said so, before)
    key = "trainer.trainer_config.critic.ppo_max_token_len_per_gpu"
    assert status == 0 and (
        f"but: {key} 131072 is above the verdict's 32768 tokens per GPU: on verl before 0.8 the critic's own update "
        "takes 131072 tokens per GPU, where the memory model counts it at the verdict's 32768 (at 131072, 118.9 GiB "
        "per A100-80GB GPU, of 73.5 usable); --write sets it to the plan's") in " ".join(out.split())
    assert (f"solve: note: {patched}: {key} 131072 lowered to the plan's 32768: set by hand, it overrides "
            f"trainer.max_token_len_per_gpu for its role ({ROLE_KEYS_IGNORED})\n") in err
    assert "      ppo_max_token_len_per_gpu: 32768\n" in patched.read_text(encoding="utf-8")
    # At or below the plan's budget, nothing is said of it.
    config.write_text(config.read_text(encoding="utf-8").replace("131072", "32768"), encoding="utf-8")
    status, out, err = cli("--from-config", str(config), "--gpu", "a100", "--write", str(patched))
    assert status == 0 and "critic.ppo_max_token_len_per_gpu" not in out + err


def test_check_fails_where_a_trained_critics_own_budget_is_above_the_verdicts(cli, tmp_path: Path):
    # budgetrule87: --check fails where some verl line takes more tokens per GPU than the verdict vouches for and a
    # setting fits every line. The critic's own budget, read before verl 0.8 (0.6 on 0.8 gives it the trainer's),
    # lowered to the verdict's fits both: so its line fails the check as a role's does (it passed). PPO on Qwen3-8B at
    # 8192 tokens on 6 H100s, vanilla: it fits at the default's 16384 tokens per GPU.
    config = tmp_path / "trinity.yaml"
    config.write_text("model: {model_path: Qwen/Qwen3-8B, max_model_len: 8192}\n" + REFUSING_HEAD.replace(
        "grpo", "ppo") + "trainer: {trainer_config: {critic: {ppo_max_token_len_per_gpu: 131072}}}\n", encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "h100", "--check", "--json")
    current = json.loads(out)[0]["current"]
    assert (status, current["trains"], current["config_problem_codes"], current["plan"]["max_token_len_per_gpu"]) == (
        1, False, ["critic-trained", "critic-budget-above-verdict"], 16384)
    assert ("it fits in memory at 16384 tokens per GPU (estimated: the memory model predicts 63.9 GiB per GPU for the "
            "actor's pass and 51.1 for the critic's own update, 7.1 GiB to spare at the actor's pass, the tighter "
            "peak), but the config lets a GPU take more") in current["verdict"]
    config.write_text(config.read_text(encoding="utf-8").replace("131072", "16384"), encoding="utf-8")
    assert cli("--from-config", str(config), "--gpu", "h100", "--check")[0] == 0


def test_write_warns_when_a_patched_key_is_an_anchor_other_keys_repeat(cli, tmp_path: Path):
    config = tmp_path / "trinity.yaml"
    config.write_text("model:\n  model_path: Qwen/Qwen3-8B\n  max_model_len: &len 65536\ncluster:\n  node_num: 1\n"
                      "  gpu_per_node: 8\nexplorer:\n  max_timeout: *len\n  rollout_model:\n    engine_num: 2\n"
                      "    max_model_len: *len\n", encoding="utf-8")
    patched = tmp_path / "patched.yaml"
    status, _, err = cli("--from-config", str(config), "--gpu", "a100", "--len", "16k", "--write", str(patched))
    # The rollout's length, the model's (through the alias), is set with it (session 71: left at 65536, it was past
    # Qwen3-8B's native 40960, which vLLM refuses); the explorer's timeout, which repeats the anchor too, is left.
    assert status == 0 and err.startswith(
        f"{A100_NOTE}solve: warning: {patched}: model.max_model_len is the anchor &len, which other keys repeat "
        "(*len): the patch sets it to 16384 and explorer.rollout_model.max_model_len to 16384, written out (no longer "
        "*len), and leaves explorer.max_timeout at 65536 (the anchor moves there)\nsolve: note: ")
    assert ("  max_model_len: 16384\ncluster:\n  node_num: 1\n  gpu_per_node: 8\nexplorer:\n  max_timeout: &len 65536\n"
            "  rollout_model:\n    engine_num: 2\n    max_model_len: 16384\ntrainer:\n") in patched.read_text(
                encoding="utf-8")
    # A rollout length of its own, other than the model's, is left: past the native 40960, vLLM refuses it (said).
    config.write_text(config.read_text(encoding="utf-8").replace("&len 65536", "32768").replace("*len", "65536"),
                      encoding="utf-8")
    status, _, err = cli("--from-config", str(config), "--gpu", "a100", "--len", "16k", "--write", str(patched))
    assert status == 0 and err.startswith(f"{A100_NOTE}solve: warning: {patched}: explorer.rollout_model.max_model_len "
                                          "65536 is ")
    assert "    max_model_len: 65536\ntrainer:\n" in patched.read_text(encoding="utf-8")
    # An anchor no alias repeats (*len2 is another anchor's; a comment is no alias) gets no warning.
    config.write_text("model:\n  model_path: Qwen/Qwen3-8B\n  max_model_len: &len 65536  # see *len\n"
                      "other: &len2 1\nmore: *len2\n", encoding="utf-8")
    status, _, err = cli("--from-config", str(config), "--gpu", "a100", "--gpus", "4", "--len", "16k", "--write",
                         str(patched))
    assert status == 0 and "is the anchor" not in err


def test_messages_name_the_config_as_where_the_node_size_came_from(cli, tmp_path: Path):
    config = tmp_path / "trinity.yaml"
    config.write_text("model:\n  model_path: Qwen/Qwen3-8B\n  max_model_len: 65536\ncluster:\n  node_num: 4\n"
                      "  gpu_per_node: 4\nexplorer:\n  rollout_model:\n    engine_num: 0\n", encoding="utf-8")
    status, _, err = cli("--from-config", str(config), "--gpu", "h100", "--sp", "8")
    assert status == 2 and "16 GPUs span nodes of 4 (cluster.gpu_per_node), and SP=8 does not divide a node" in err
    status, _, err = cli("--from-config", str(config), "--gpu", "h100", "--sp", "8", "--node-gpus", "4")
    assert status == 2 and "16 GPUs span nodes of 4 (--node-gpus), and SP=8 does not divide a node" in err


def test_offload_flags_under_the_roles_engine_are_left_out_and_patched_into_fsdp_config(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # Nothing reads a role's engine (Trinity 0.5 refuses the key, 0.6 drops it, verl 0.8 and later replaces it with
    # fsdp_config): the verdict leaves its flags out and says so, and --write sets fsdp_config's.
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    config = tmp_path / "trinity.yaml"
    config.write_text(
        "algorithm: {algorithm_type: grpo}\n"
        "model: {model_path: Qwen/Qwen3-8B, max_model_len: 65536}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
        "explorer: {rollout_model: {engine_num: 4, tensor_parallel_size: 1}}\ntrainer:\n  trainer_strategy: fsdp2\n"
        "  ulysses_sequence_parallel_size: 4\n  trainer_config:\n    actor_rollout_ref:\n"
        "      actor: {engine: {param_offload: true, offload_policy: true}}\n"
        "      ref:   {engine: {param_offload: true}}\n", encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100", "--json")
    current = json.loads(out)[0]["current"]
    assert status == 0 and not current["offload"]
    assert [problem for problem in current["config_problems"] if "engine" in problem] == [(
        "actor.engine.param_offload, actor.engine.offload_policy, ref.engine.param_offload (under "
        "trainer.trainer_config.actor_rollout_ref): Trinity reads a role's offload flags from its fsdp_config, never "
        "its engine (Trinity 0.5 refuses the key, 0.6 drops it, and verl 0.8 or later replaces it with fsdp_config), "
        "so the verdict leaves them out; set them under fsdp_config (--write does)")]
    patched = tmp_path / "patched.yaml"
    assert cli("--from-config", str(config), "--gpu", "a100", "--write", str(patched))[0] == 0
    roles = yaml.safe_load(patched.read_text(encoding="utf-8"))["trainer"]["trainer_config"]["actor_rollout_ref"]
    on = {"param_offload": True, "optimizer_offload": True, "offload_policy": True}
    assert roles == {"actor": {"engine": {"param_offload": True, "offload_policy": True}, "fsdp_config": on},
                     "ref": {"engine": {"param_offload": True}, "fsdp_config": on}}
    status, out, _ = cli("--from-config", str(patched), "--gpu", "a100", "--json")
    assert json.loads(out)[0]["current"]["offload"]


LOCAL_MODEL_CONFIG = ("algorithm: {{algorithm_type: grpo}}\n"
                      "model: {{model_path: {path}, max_model_len: {length}}}\n"
                      "cluster: {{node_num: 1, gpu_per_node: 8}}\n"
                      "explorer: {{rollout_model: {{engine_num: 2}}}}\n")
"""A Trinity config of 6 trainer GPUs whose model_path and length are to be filled in."""


def _planned(cli, config: Path, text: str, path: Path) -> tuple[int, dict]:
    """Status and answer of --from-config on A100s for `text` with `path` as its model_path."""
    config.write_text(text.format(path=path), encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100", "--json")
    return status, json.loads(out)[0]


def test_a_model_path_of_a_local_checkpoint_is_read_as_its_config_json(cli, tmp_path: Path):
    config = tmp_path / "trinity.yaml"
    text = LOCAL_MODEL_CONFIG.replace("{length}", "32768")
    # Saved from Qwen/Qwen3-8B and of its shape: that model, its tables.
    folder = qwen3_8b_checkpoint(tmp_path / "my-sft" / "global_step_100", _name_or_path="Qwen/Qwen3-8B")
    config.write_text(text.format(path=folder), encoding="utf-8")
    status, out, err = cli("--from-config", str(config), "--gpu", "a100-80g", "--json")
    [answer] = json.loads(out)
    assert (status, err) == (0, "") and answer["model"] == "Qwen3-8B"
    assert answer["plans"][0]["evidence"] == "documented"
    # The config.json itself, named after no catalogue model but of Qwen3-8B's shape: planned from that
    # model's tables, which say so; of another shape (a resized vocabulary), from estimates.
    other = qwen3_8b_checkpoint(tmp_path / "global_step_7")
    status, answer = _planned(cli, config, text, other / "config.json")
    assert status == 0 and answer["model"] == "global_step_7"
    assert answer["plans"][0]["evidence"] == "documented" and answer["plans"][0]["source"]["model"] == "Qwen3-8B"
    resized = qwen3_8b_checkpoint(tmp_path / "global_step_8", vocab_size=151937)
    status, answer = _planned(cli, config, text, resized / "config.json")
    assert status == 0 and answer["model"] == "global_step_8"
    assert all(plan["evidence"] == "estimated" for plan in answer["plans"])
    # --model names the model instead: the folder's config.json is not read (here it is not even JSON).
    (other / "config.json").write_text("not json", encoding="utf-8")
    config.write_text(text.format(path=other), encoding="utf-8")
    assert cli("--from-config", str(config), "--gpu", "a100-80g", "--model", "8B", "--json")[0] == 0
    assert cli("--from-config", str(config), "--gpu", "a100-80g") == (
        2, "", f"solve: error: {other / 'config.json'}: not JSON: Expecting value (line 1)\n")


def test_a_local_copy_of_a_catalogue_model_keeps_that_model(cli, tmp_path: Path):
    # A folder named after a catalogue model whose config.json is of its shape (its _name_or_path a
    # snapshot hash), or cannot be read (a mixture of experts' config.json that gives no sizes): the
    # name stands, as for a Hugging Face id, with the model's tables.
    config = tmp_path / "trinity.yaml"
    text = LOCAL_MODEL_CONFIG.replace("{length}", "8192")
    folder = qwen3_8b_checkpoint(tmp_path / "models" / "Qwen3-8B", _name_or_path="3c0a9e1f")
    status, answer = _planned(cli, config, text, folder)
    assert (status, answer["model"], answer["plans"][0]["evidence"]) == (0, "Qwen3-8B", "documented")
    moe = tmp_path / "ckpt" / "Qwen3-30B-A3B"
    moe.mkdir(parents=True)
    (moe / "config.json").write_text('{"num_experts": 128, "hidden_size": 2048}', encoding="utf-8")
    status, answer = _planned(cli, config, text, moe)
    assert (status, answer["model"]) == (0, "Qwen3-30B-A3B")
    # Named after a catalogue model but of another shape: the config.json decides.
    status, answer = _planned(cli, config, text, qwen3_8b_checkpoint(tmp_path / "more" / "Qwen3-4B"))
    assert (status, answer["model"]) == (0, "Qwen3-4B (config shape)")
    # Read or not (--model names the model), the file is never overwritten.
    target = folder / "config.json"
    config.write_text(text.format(path=folder), encoding="utf-8")
    before = target.read_bytes()
    assert cli("--from-config", str(config), "--gpu", "a100", "--out", str(target))[0] == 2
    assert cli("--from-config", str(config), "--gpu", "a100", "--model", "8B", "--write", str(target))[0] == 2
    assert target.read_bytes() == before
    # Of the catalogue model's shape, the config's context holds, as with --model-config: a YaRN of its own
    # from 32768 gives 49152 a factor of 1.5, not the catalogue's 1.2 (from 40960).
    yarn = qwen3_8b_checkpoint(tmp_path / "yarn" / "Qwen3-8B", _name_or_path="3c0a9e1f", max_position_embeddings=131072,
                               rope_scaling={"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768})
    status, answer = _planned(cli, config, text.replace("8192", "49152"), yarn)
    assert (status, answer["model"], answer["plans"][0]["rope_scaling_factor"]) == (0, "Qwen3-8B", 1.5)
    _, out, _ = cli("--model-config", str(yarn), "--gpu", "a100", "--len", "48k", "--gpus", "6", "--json")
    assert json.loads(out)[0]["plans"][0]["rope_scaling_factor"] == 1.5


def test_write_takes_a_model_config_of_the_config_s_own_model_path(cli, tmp_path: Path):
    # --model-config naming the folder model.model_path names is the config's own model (Llama-3.1-8B),
    # whatever the catalogue calls a model of the folder's name (8B is Qwen3-8B's alias).
    folder = qwen3_8b_checkpoint(tmp_path / "m" / "8B", _name_or_path="meta-llama/Llama-3.1-8B", model_type="llama",
                                 intermediate_size=14336,
                                 num_hidden_layers=32, vocab_size=128256, max_position_embeddings=131072, head_dim=None,
                                 rope_scaling={"rope_type": "llama3", "factor": 8.0, "original_max_position_embeddings": 8192,
                                               "low_freq_factor": 1.0, "high_freq_factor": 4.0})
    config = tmp_path / "trinity.yaml"
    config.write_text(f"model: {{model_path: {folder}, max_model_len: 8192}}\ncluster: {{node_num: 1, gpu_per_node: 8}}\n"
                      "explorer: {rollout_model: {engine_num: 2}}\n", encoding="utf-8")
    patched = tmp_path / "patched.yaml"
    status, out, err = cli("--from-config", str(config), "--gpu", "a100", "--model-config", str(folder), "--write",
                           str(patched))
    assert status == 0 and patched.exists() and "Llama-3.1-8B ·" in out, err


def test_no_output_overwrites_the_config_json_of_a_local_model_path(cli, tmp_path: Path):
    folder = qwen3_8b_checkpoint(tmp_path / "global_step_100", _name_or_path="Qwen/Qwen3-8B")
    config = tmp_path / "trinity.yaml"
    config.write_text(f"model: {{model_path: {folder}, max_model_len: 32768}}\ncluster: {{gpu_per_node: 8}}\n",
                      encoding="utf-8")
    before = (folder / "config.json").read_bytes()
    target = folder / "config.json"
    assert cli("--from-config", str(config), "--gpu", "a100", "--write", str(target)) == (
        2, "", (f"solve: error: --write {target} would overwrite the config.json that model.model_path names: "
                "write to another file\n"))
    assert cli("--from-config", str(config), "--gpu", "a100", "--out", str(target)) == (  # refused as .json first (s75)
        2, "", (f"solve: error: --out {target}: --out writes YAML, not JSON: name the file .yaml (--json prints the "
                f"JSON on standard output: redirect that, > {target})\n"))
    assert (folder / "config.json").read_bytes() == before


@pytest.mark.parametrize("folder", ["gone", "x" * 300])  # no such folder; a name too long for one
def test_a_model_path_neither_local_nor_in_the_catalogue_says_how_to_name_the_model(cli, tmp_path: Path,
                                                                                    folder: str):
    config = tmp_path / "trinity.yaml"
    config.write_text(f"model: {{model_path: {tmp_path / folder / 'global_step_100'}, max_model_len: 32768}}\n",
                      encoding="utf-8")
    status, out, err = cli("--from-config", str(config), "--gpu", "a100", "--gpus", "4")
    assert (status, out) == (2, "") and len(err.splitlines()) == 1
    # The way out comes before the list of the catalogue's models, which is long.
    assert err.startswith(f"solve: error: --from-config {config}: "
                          "model.model_path: unknown model 'global_step_100' (and no "
                          f"config.json at {tmp_path / folder / 'global_step_100'}): give --model M (a catalogue model "
                          "of its shape, such as the one it was fine-tuned from), or --model-config PATH (its "
                          "config.json); accepted: Qwen3-0.6B/1.7B/8B/14B(-Base), ")


def test_a_relative_model_path_without_a_config_says_where_it_was_looked_for(cli, tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch):
    config = tmp_path / "trinity.yaml"
    config.write_text("model: {model_path: ./ckpt, max_model_len: 8192}\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # no ckpt folder here
    status, _, err = cli("--from-config", str(config), "--gpu", "a100", "--gpus", "4")
    assert status == 2 and (f"(and no config.json at ./ckpt, from the working directory {tmp_path}, as Trinity reads "
                            "it): give --model M") in err
    config.write_text("model: {model_path: ../ckpt, max_model_len: 8192}\n", encoding="utf-8")  # none there either
    status, _, err = cli("--from-config", str(config), "--gpu", "a100", "--gpus", "4")
    assert status == 2 and (f"(and no config.json at ../ckpt, from the working directory {tmp_path}, as Trinity reads "
                            "it): give --model M") in err
    # an SFT stage's checkpoint named as the next stage's model, no ./ before it (s89): no Hugging Face id has two
    # slashes, so it was looked for here too, which the refusal said only of ./ and ../ paths
    config.write_text("model: {model_path: sft/global_step_400/hf, max_model_len: 8192}\n", encoding="utf-8")  # 3 parts
    status, _, err = cli("--from-config", str(config), "--gpu", "a100", "--gpus", "4")
    assert status == 2 and ("model.model_path: unknown model 'hf' (and no config.json at sft/global_step_400/hf, "
                            f"from the working directory {tmp_path}, as Trinity reads it): give --model M") in err
    config.write_text("model: {model_path: my-org/my-sft, max_model_len: 8192}\n", encoding="utf-8")  # an id
    status, _, err = cli("--from-config", str(config), "--gpu", "a100", "--gpus", "4")
    assert status == 2 and "model.model_path: unknown model 'my-sft': give --model M" in err


def test_a_model_path_of_an_adapters_folder_alone_is_refused_naming_its_base_model(cli, tmp_path: Path,
                                                                                   monkeypatch: pytest.MonkeyPatch):
    # s90 (persona): a LoRA checkpoint's folder (adapter_config.json, no config.json) as model.model_path was told
    # only that the model is unknown; --model-config's refusal of the folder names the base model, and is reused:
    # for an absolute path, and for a namespace/name one that is a local folder (read before any Hugging Face id).
    adapter = tmp_path / "my-org" / "my-lora"
    adapter.mkdir(parents=True)
    (adapter / "adapter_config.json").write_text('{"base_model_name_or_path": "Qwen/Qwen3-4B", "peft_type": "LORA", '
                                                 '"r": 64}', encoding="utf-8")
    config = tmp_path / "trinity.yaml"
    monkeypatch.chdir(tmp_path)
    for path in (adapter, "my-org/my-lora"):
        config.write_text(f"model: {{model_path: {path}, max_model_len: 8192}}\n", encoding="utf-8")
        status, out, err = cli("--from-config", str(config), "--gpu", "a100", "--gpus", "4")
        assert (status, out) == (2, "") and err == (
            f"solve: error: --from-config {config}: model.model_path: {Path(path) / 'config.json'}: missing, and "
            "adapter_config.json beside it is a LoRA/PEFT adapter's, not a model's: give its base model's config.json "
            "(Qwen/Qwen3-4B), whose shape the adapter trains (--model-config PATH), or --model M, a catalogue model "
            "of that shape\n")


def test_a_write_refused_for_a_yaml_alias_bomb_is_one_short_line_at_once(cli, tmp_path: Path):
    # 9^9 strings in a few lines: the refusal shows the value cut short, without writing it out whole.
    bomb = "a0: &a0 [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]\n" for i in range(1, 9))
    config = tmp_path / "bomb.yaml"
    config.write_text(bomb + "model:\n  model_path: Qwen/Qwen3-4B\n  max_model_len: 8192\ncluster:\n  node_num: 1\n"
                      "  gpu_per_node: 8\ntrainer:\n  trainer_config: *a8\n", encoding="utf-8")
    patched = tmp_path / "patched.yaml"
    assert cli("--from-config", str(config), "--gpu", "a100", "--gpus", "7", "--write", str(patched)) == (
        2, "", (f"solve: error: --from-config {config}: "
                "trainer.trainer_config must be a mapping, got [[[[...], [...], [...], "
                "[...], [...], [...], ...], [[...]...\n"))
    assert not patched.exists()


def _fragment_roles(cli, tmp_path: Path, actor: str, *flags: str) -> dict:
    """The actor_rollout_ref section of the --out fragment for a Qwen3-8B config whose actor is `actor`."""
    config = tmp_path / "trinity.yaml"
    config.write_text("model: {model_path: Qwen/Qwen3-8B, max_model_len: 8192}\n"
                      "cluster: {node_num: 1, gpu_per_node: 8}\nexplorer: {rollout_model: {engine_num: 2}}\n"
                      "trainer:\n  trainer_strategy: fsdp2\n  trainer_config:\n    actor_rollout_ref:\n"
                      f"      actor: {actor}\n", encoding="utf-8")
    fragment = tmp_path / "fragment.yaml"
    assert cli("--from-config", str(config), "--gpu", "a100", "--out", str(fragment), *flags)[0] == 0
    return yaml.safe_load(fragment.read_text(encoding="utf-8"))["trainer"]["trainer_config"]["actor_rollout_ref"]


def test_without_offload_the_reference_model_stays_offloaded(cli, tmp_path: Path):
    # The memory model counts no reference model on the GPU: --write does not bring an offloaded one back
    # (under FSDP1 too, where its param_offload still works and is no Offload of the actor's).
    config, patched = tmp_path / "trinity.yaml", tmp_path / "patched.yaml"
    config.write_text("model: {model_path: Qwen/Qwen3-8B, max_model_len: 8192}\n"
                      "cluster: {node_num: 1, gpu_per_node: 8}\nexplorer: {rollout_model: {engine_num: 2}}\n"
                      "trainer:\n  trainer_config:\n    actor_rollout_ref:\n"
                      "      actor: {fsdp_config: {param_offload: true}}\n"
                      "      ref: {fsdp_config: {param_offload: true}}\n", encoding="utf-8")
    status, out, err = cli("--from-config", str(config), "--gpu", "a100", "--no-offload", "--write", str(patched))
    assert status == 0, err
    assert "the offload flags are set" in out  # the actor's, under FSDP1
    roles = yaml.safe_load(patched.read_text(encoding="utf-8"))["trainer"]["trainer_config"]["actor_rollout_ref"]
    assert roles == {"actor": {"fsdp_config": {"param_offload": False}}, "ref": {"fsdp_config": {"param_offload": True}}}
    status, out, _ = cli("--from-config", str(patched), "--gpu", "a100")
    assert status == 0 and "offload flags" not in out


def test_a_longer_length_written_says_when_prompt_and_response_stay_shorter(cli, tmp_path: Path):
    config, patched = tmp_path / "trinity.yaml", tmp_path / "patched.yaml"
    config.write_text("model: {model_path: Qwen/Qwen3-8B, max_model_len: 32768, max_prompt_tokens: 2048, "
                      "max_response_tokens: 30720}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
                      "explorer: {rollout_model: {engine_num: 2}}\n", encoding="utf-8")
    status, _, err = cli("--from-config", str(config), "--gpu", "a100", "--maximize", "len", "--write", str(patched))
    length = yaml.safe_load(patched.read_text(encoding="utf-8"))["model"]["max_model_len"]
    assert status == 0 and length > 32768
    assert (f"solve: note: {patched}: model.max_prompt_tokens 2048 + model.max_response_tokens 30720 = 32768, below "
            f"model.max_model_len {length}: no sequence uses the rest; raise max_response_tokens to train at the "
            "length\n") in err
    # At the config's own length (or a shorter one) nothing is said.
    status, _, err = cli("--from-config", str(config), "--gpu", "a100", "--write", str(patched))
    assert status == 0 and "max_response_tokens" not in err


def test_a_shorter_length_than_prompt_and_response_is_not_written(cli, tmp_path: Path):
    # Trinity refuses to load a config whose prompt and response exceed its max_model_len: --write refuses it
    # before writing anything (an older patched file stays as it was); at the sum itself the write goes through.
    config, patched = tmp_path / "trinity.yaml", tmp_path / "patched.yaml"
    config.write_text("model: {model_path: Qwen/Qwen3-8B, max_model_len: 32768, max_prompt_tokens: 4096, "
                      "max_response_tokens: 28672}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
                      "explorer: {rollout_model: {engine_num: 2}}\n", encoding="utf-8")
    patched.write_text("older\n", encoding="utf-8")
    status, out, err = cli("--from-config", str(config), "--gpu", "a100", "--len", "16k", "--write", str(patched))
    assert (status, out) == (2, "") and err == (
        f"solve: error: --write {patched}: model.max_prompt_tokens 4096 + model.max_response_tokens 28672 = 32768, "
        "above model.max_model_len 16384: Trinity would refuse to load it; lower them in "
        f"{config}, or plan for 32768 tokens or more (--len 32768)\n")
    assert patched.read_text(encoding="utf-8") == "older\n" and sorted(tmp_path.iterdir()) == sorted([config, patched])
    # Without --write, the verdict's line on it says what to do, as the refusal does (the length --len's: the config
    # has its own 32768; the written copy would have 16384, its key's).
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100", "--len", "16k")
    assert status == 0 and ("refused: model.max_prompt_tokens 4096 + model.max_response_tokens 28672 = 32768, above "
                            "--len's 16384, which Trinity refuses to load: lower them, or plan for 32768 "
                            "tokens or more (--len 32768)") in " ".join(out.split())
    status, _, err = cli("--from-config", str(config), "--gpu", "a100", "--len", "32k", "--write", str(patched))
    assert status == 0 and "max_response_tokens" not in err
    assert yaml.safe_load(patched.read_text(encoding="utf-8"))["model"]["max_model_len"] == 32768


@pytest.mark.parametrize(("keys", "status", "said"), [
    ("max_prompt_tokens: 1, max_response_tokens: 16384", 2,  # one token past the length: refused
     ("solve: error: --write {patched}: model.max_prompt_tokens 1 + model.max_response_tokens 16384 = 16385, above "
      "model.max_model_len 16384: Trinity would refuse to load it; lower them in {config}, or plan for 16385 tokens "
      "or more (--len 16385)\n")),
    ("max_prompt_tokens: 2048, max_response_tokens: 14336", 0, ""),  # the length exactly: nothing to say
    ("max_prompt_tokens: 2048, max_response_tokens: 14335", 0,  # one token short of it: a note
     ("solve: note: {patched}: model.max_prompt_tokens 2048 + model.max_response_tokens 14335 = 16383, below "
      "model.max_model_len 16384: no sequence uses the rest; raise max_response_tokens to train at the length\n")),
    ("max_prompt_tokens: 4096", 0, ""),  # no response budget to add: neither
    ("max_prompt_tokens: 4096, max_response_tokens: '${oc.env:RESPONSE}'", 2,  # as Trinity reads it: 28672
     ("solve: error: --write {patched}: model.max_prompt_tokens 4096 + model.max_response_tokens 28672 = 32768, above "
      "model.max_model_len 16384: Trinity would refuse to load it; lower them in {config}, or plan for 32768 tokens "
      "or more (--len 32768)\n")),
], ids=["one-over", "exact", "one-short", "no-response", "from-the-environment"])
def test_prompt_and_response_against_the_written_length_at_its_edges(cli, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch, keys: str,
                                                                     status: int, said: str):
    monkeypatch.setenv("RESPONSE", "28672")
    config, patched = tmp_path / "trinity.yaml", tmp_path / "patched.yaml"
    config.write_text(f"model: {{model_path: Qwen/Qwen3-8B, max_model_len: 16384, {keys}}}\n"
                      "cluster: {node_num: 1, gpu_per_node: 8}\nexplorer: {rollout_model: {engine_num: 2}}\n",
                      encoding="utf-8")
    result = cli("--from-config", str(config), "--gpu", "a100-80g", "--len", "16k", "--no-env", "--write", str(patched))
    assert (result[0], result[2]) == (status, said.format(patched=patched, config=config))  # --no-env: no note on Env
    assert patched.exists() is (status == 0)


def test_a_length_kept_from_the_environment_says_when_prompt_and_response_stay_shorter(cli, tmp_path: Path,
                                                                                       monkeypatch: pytest.MonkeyPatch):
    # The length comes from LEN, which the patch keeps as the interpolation: the plan is for 65536 tokens, which
    # prompt and response (32768) never reach.
    config, patched = tmp_path / "trinity.yaml", tmp_path / "patched.yaml"
    config.write_text("model: {model_path: Qwen/Qwen3-8B, max_model_len: '${oc.env:LEN,32768}', max_prompt_tokens: 2048, "
                      "max_response_tokens: 30720}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
                      "explorer: {rollout_model: {engine_num: 2}}\n", encoding="utf-8")
    monkeypatch.setenv("LEN", "65536")
    status, _, err = cli("--from-config", str(config), "--gpu", "a100", "--token-budget", "auto", "--write", str(patched))
    assert status == 0 and "${oc.env:LEN,32768}" in patched.read_text(encoding="utf-8")
    assert (f"solve: note: {patched}: model.max_prompt_tokens 2048 + model.max_response_tokens 30720 = 32768, below "
            "model.max_model_len 65536: no sequence uses the rest") in err


def test_a_fragment_for_a_config_with_flags_in_an_engine_puts_them_in_fsdp_config(cli, tmp_path: Path):
    # Offload flags under a role's engine, which nothing reads: the fragment to merge puts them in fsdp_config, and
    # says the engine's alike.
    roles = _fragment_roles(cli, tmp_path, "{engine: {param_offload: true, optimizer_offload: true}}", "--offload")
    on = {"param_offload": True, "optimizer_offload": True, "offload_policy": True}
    assert roles == {"actor": {"fsdp_config": on, "engine": {"param_offload": True, "optimizer_offload": True}},
                     "ref": {"fsdp_config": on}}


def test_a_fragment_without_offload_turns_the_configs_offload_flags_off(cli, tmp_path: Path):
    # Merged as told, a fragment that said nothing of them would leave the config's Offload on.
    roles = _fragment_roles(cli, tmp_path, "{fsdp_config: {param_offload: true, optimizer_offload: true}}",
                            "--no-offload")
    assert roles == {"actor": {"fsdp_config": {"param_offload": False, "optimizer_offload": False}}}


@pytest.mark.parametrize("flags", [(), ("--offload",), ("--no-offload",)])
def test_flags_in_both_sections_of_a_role_are_set_alike(cli, tmp_path: Path, flags: tuple[str, ...]):
    # Several flags in engine and in fsdp_config: the fragment nests each section's keys together, and
    # --write sets both sections the plan's way.
    config = tmp_path / "trinity.yaml"
    config.write_text("algorithm: {algorithm_type: grpo}\nmodel: {model_path: Qwen/Qwen3-8B, max_model_len: 32768}\n"
                      "cluster: {node_num: 1, gpu_per_node: 8}\nexplorer: {rollout_model: {engine_num: 2}}\n"
                      "trainer:\n  trainer_strategy: fsdp2\n  trainer_config:\n    actor_rollout_ref:\n      actor:\n"
                      "        engine: {param_offload: false, optimizer_offload: false}\n"
                      "        fsdp_config: {param_offload: true, optimizer_offload: true, offload_policy: true}\n",
                      encoding="utf-8")
    patched, fragment = tmp_path / "patched.yaml", tmp_path / "fragment.yaml"
    status, _, err = cli("--from-config", str(config), "--gpu", "h20", "--write", str(patched), "--out",
                         str(fragment), *flags)
    assert status == 0, err
    for written in (patched, fragment):
        actor = yaml.safe_load(written.read_text(encoding="utf-8"))["trainer"]["trainer_config"][
            "actor_rollout_ref"]["actor"]
        values = {v for section in actor.values() for v in section.values()}
        assert len(values) == 1 and set(actor) == {"engine", "fsdp_config"}, (written, actor)


def test_len_overrides_the_configs_length_in_its_checks_too(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # The verdict is about --len's length: the config's checks (YaRN, token limits) are too (vLLM takes the length).
    monkeypatch.setenv("VLLM_ALLOW_LONG_MAX_MODEL_LEN", "1")
    config = tmp_path / "trinity.yaml"
    config.write_text("model: {model_path: Qwen/Qwen3-8B, max_model_len: 65536}\n"
                      "cluster: {node_num: 1, gpu_per_node: 8}\nexplorer: {rollout_model: {engine_num: 2}}\n",
                      encoding="utf-8")
    _, out, _ = cli("--from-config", str(config), "--gpu", "h20", "--len", "61440")
    text = " ".join(out.split())
    assert "--len's 61440 is beyond Qwen3-8B's native context of 40960: set {rope_type: yarn, factor: 1.5" in text
    assert "65536" not in text.split("plan ")[0]


def test_a_config_with_its_own_lower_token_budget_is_judged_at_it(cli, user_config: Path, monkeypatch: pytest.MonkeyPatch):
    # Qwen3-8B at 131072 tokens on 4 H20s with Env + SP=4: the default budget (65536) does not fit, the config's
    # own 35840 does. The verdict is at the config's budget, and the planner may lower budgets as the config did.
    monkeypatch.setenv("MAX_MODEL_LEN", "131072")
    monkeypatch.setenv("FACTOR", "3.2")
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    text = user_config.read_text(encoding="utf-8").replace("  gpu_per_node: 8", "  gpu_per_node: 6").replace(
        "  use_dynamic_bsz: true", "  use_dynamic_bsz: true\n  ulysses_sequence_parallel_size: 4\n"
                                   "  max_token_len_per_gpu: 35840")
    user_config.write_text(text, encoding="utf-8")
    status, out, _ = cli("--from-config", str(user_config), "--gpu", "h20", "--json")
    [answer] = json.loads(out)
    current = answer["current"]
    assert status == 0 and (current["trains"], current["max_token_len_per_gpu"]) == (True, 35840)
    assert current["plan"]["max_token_len_per_gpu"] == 35840 and current["plan"]["evidence"] == "estimated"
    assert "trainer.max_token_len_per_gpu 35840 is below Trinity's default ceil(2 x 131072 / 4) = 65536, which the " \
           "tables measured: the verdict is at 35840 tokens per GPU (each step takes more micro-batches); Trinity " \
           "0.5.0 raises it back to the default: use 0.5.1 or later" in current["config_problems"]
    best = answer["plans"][0]
    assert (best["sp"], best["env"], best["offload"]) == (4, True, False) and best["max_token_len_per_gpu"] >= 35840
    # At Trinity's default budget (--token-budget default) nothing trains the length on these 4 GPUs.
    status, out, _ = cli("--from-config", str(user_config), "--gpu", "h20", "--token-budget", "default", "--json")
    assert status == 1 and json.loads(out)[0]["plans"] == []
    # A budget above what the setting holds does not train.
    user_config.write_text(text.replace("35840", "60000"), encoding="utf-8")
    status, out, _ = cli("--from-config", str(user_config), "--gpu", "h20", "--json")
    assert json.loads(out)[0]["current"]["trains"] is False


def test_dynamic_batch_sizes_turned_off_are_reported_and_written_back_on(cli, user_config: Path, tmp_path: Path):
    user_config.write_text(user_config.read_text(encoding="utf-8").replace("use_dynamic_bsz: true",
                                                                           "use_dynamic_bsz: false"), encoding="utf-8")
    _, out, _ = cli("--from-config", str(user_config), "--gpu", "h20", "--json")
    assert "trainer.use_dynamic_bsz is false: verl then ignores the token budget (max_token_len_per_gpu), which the " \
           "tables measured and the plan sets, and fills micro-batches by sequence count: set it to true" in \
           json.loads(out)[0]["current"]["config_problems"]
    patched = tmp_path / "patched.yaml"
    assert cli("--from-config", str(user_config), "--gpu", "h20", "--write", str(patched))[0] == 0
    diff = set(patched.read_text(encoding="utf-8").splitlines()) - set(user_config.read_text(encoding="utf-8").splitlines())
    assert "  use_dynamic_bsz: true" in diff


_SP4_8B_CONFIG = ("algorithm: {algorithm_type: grpo}\nmodel:\n  model_path: Qwen/Qwen3-8B\n  max_model_len: 32768\n"
                  "cluster: {node_num: 1, gpu_per_node: 8}\n"
                  "explorer: {rollout_model: {engine_num: 4}}\ntrainer:\n  ulysses_sequence_parallel_size: 4\n")
"""Qwen3-8B at 32768 on 4 trainer GPUs of 8 at SP 4, its trainer section open for more keys."""


def test_gradient_checkpointing_turned_off_is_reported_and_written_back_on(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # The tables measured with verl's gradient checkpointing (Trinity's default): without it each layer keeps its
    # activations, so nothing the planner says holds; --write turns it back on, as it does dynamic batch sizes.
    monkeypatch.delenv("PYTORCH_CUDA_ALLOC_CONF", raising=False)
    config = tmp_path / "trinity.yaml"
    text = (_SP4_8B_CONFIG + "  trainer_config:\n    actor_rollout_ref:\n      model:\n"
            "        enable_gradient_checkpointing: VALUE\n")
    config.write_text(text.replace("VALUE", "false"), encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100-80g", "--json")
    [answer] = json.loads(out)
    assert status == 0 and answer["current"]["config_problems"] == [(
        "trainer.trainer_config.actor_rollout_ref.model.enable_gradient_checkpointing is false: the tables measured "
        "with gradient checkpointing, Trinity's default, and the verdict and the plans assume it; without it each "
        "layer keeps its activations for the backward, many times the memory: set it to true")]
    patched = tmp_path / "patched.yaml"
    status, out, err = cli("--from-config", str(config), "--gpu", "a100-80g", "--write", str(patched))
    assert (status, err) == (0, "") and out.endswith(f"wrote {patched}\n")  # no warning: the written config has it on
    assert "        enable_gradient_checkpointing: true" in patched.read_text(encoding="utf-8").splitlines()
    # On, or not given, nothing is said; a value Trinity refuses is named.
    # Under trainer_config, without --trinity-version 0.5, not every release refuses it.
    refused = ("trainer.trainer_config.actor_rollout_ref.model.enable_gradient_checkpointing must be true or false, "
               "got 'maybe': Trinity 0.5 refuses the config, and 0.6 on verl before 0.8 keeps it as written, which "
               "its trainer's typed config (OmegaConf's bool field) refuses as the trainer starts, and on verl 0.8 or "
               "later hands it to verl as written, which reads it as true (Python's truth of it)")
    for value, problems in (("true", []), ("maybe", [refused])):
        config.write_text(text.replace("VALUE", value), encoding="utf-8")
        [answer] = json.loads(cli("--from-config", str(config), "--gpu", "a100-80g", "--json")[1])
        assert answer["current"]["config_problems"] == problems


def test_remove_padding_turned_off_is_reported_and_written_back_on(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # The tables measured with remove padding (Trinity's default): without it micro-batches are padded and verl splits
    # no sequence over SP. Trinity 0.6's own key and verl's (which 0.6 sets to the trainer's) are both checked, and
    # --write turns them back on.
    monkeypatch.delenv("PYTORCH_CUDA_ALLOC_CONF", raising=False)
    config = tmp_path / "trinity.yaml"
    text = (_SP4_8B_CONFIG + "  use_remove_padding: TRAINER\n  trainer_config:\n    actor_rollout_ref:\n      model:\n"
            "        use_remove_padding: MODEL\n")
    why = ("is false: the tables measured with remove padding, Trinity's default, and the verdict and the plans assume "
           "it; without it each micro-batch is padded to its longest sequence, and verl splits no sequence over "
           "Ulysses SP: set it to true")
    config.write_text(text.replace("TRAINER", "false").replace("MODEL", "'off'"), encoding="utf-8")
    [answer] = json.loads(cli("--from-config", str(config), "--gpu", "a100-80g", "--json")[1])
    assert answer["current"]["config_problems"] == [
        f"trainer.use_remove_padding {why}",
        (f"trainer.trainer_config.actor_rollout_ref.model.use_remove_padding {why} (on Trinity before 0.6 only: "
         "Trinity 0.6 sets it to trainer.use_remove_padding whatever the verl)")]
    patched = tmp_path / "patched.yaml"
    status, out, err = cli("--from-config", str(config), "--gpu", "a100-80g", "--write", str(patched))
    assert (status, err) == (0, "") and out.endswith(f"wrote {patched}\n")  # no warning: the written config has it on
    written = patched.read_text(encoding="utf-8").splitlines()
    assert "  use_remove_padding: true" in written and "        use_remove_padding: true" in written
    refused = "trainer.use_remove_padding must be true or false, got 'maybe': Trinity refuses the config"
    for trainer, problems in (("true", []), ("maybe", [refused])):
        config.write_text(text.replace("TRAINER", trainer).replace("MODEL", "yes"), encoding="utf-8")
        [answer] = json.loads(cli("--from-config", str(config), "--gpu", "a100-80g", "--json")[1])
        assert answer["current"]["config_problems"] == problems


def test_a_verdict_no_table_speaks_for_gives_the_memory_models_figures(cli, tmp_path: Path):
    config = issue_398_config(tmp_path, "{ulysses_sequence_parallel_size: 2}")
    status, out, _ = cli("--from-config", str(config), "--gpu", "h20", "--json")
    current = json.loads(out)[0]["current"]
    total, usable = current["predicted"]
    assert status == 1 and not current["trains"] and total > usable
    estimate = solver.estimate_memory("Qwen2.5-7B", "h20", 6, 131072, sp=2)
    assert (total, usable) == (round(estimate.total_gib, 1), round(estimate.usable_gib, 1))
    _, out, _ = cli("--from-config", str(config), "--gpu", "h20")
    assert f"says it trains (the memory model predicts {total:.1f} GiB per GPU, of {usable:.1f} usable)" in \
        " ".join(out.split())
    # Without estimates there are no figures to give: the verdict says only that nothing vouches for it.
    status, out, _ = cli("--from-config", str(config), "--gpu", "h20", "--no-estimate", "--json")
    assert status == 1 and json.loads(out)[0]["current"]["predicted"] is None
    _, out, _ = cli("--from-config", str(config), "--gpu", "h20", "--no-estimate")
    verdict = " ".join(out.split()).split(" runs ", 1)[1]  # what the environment's Env says, then the verdict
    assert verdict.startswith("SP=2 on 6 trainer GPUs at 131072 tokens (Env ")
    assert verdict.split("): ", 1)[1].startswith(
        "nothing in the tables says it trains. No plan trains either (the reason follows). no plan:")


def test_a_verdict_on_settings_a_no_env_estimate_trains_says_why_the_best_plan_costs_more(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # Qwen3-14B at 65536 tokens, Offload + SP=4 on 4 H20s without Env: no cell speaks of it, and the memory model fits
    # it (cost 0.65); the best plan, the 4-GPU table's Env + Offload + SP=4 (0.6565), costs a hair more, since
    # estimates keep Env on. With --no-env the config's own settings are the best plan, and nothing needs saying.
    monkeypatch.delenv("PYTORCH_CUDA_ALLOC_CONF", raising=False)
    config = tmp_path / "trinity.yaml"
    config.write_text("algorithm: {algorithm_type: grpo}\n"
                      "model:\n  model_path: Qwen/Qwen3-14B\n  max_model_len: 65536\n"
                      "  rope_scaling: {rope_type: yarn, factor: 1.6, original_max_position_embeddings: 40960}\n"
                      "cluster: {node_num: 1, gpu_per_node: 8}\n"
                      "explorer: {rollout_model: {engine_num: 2, tensor_parallel_size: 2}}\n"
                      "trainer:\n  trainer_strategy: fsdp2\n  ulysses_sequence_parallel_size: 4\n  trainer_config:\n"
                      "    actor_rollout_ref:\n"
                      "      actor: {fsdp_config: {param_offload: true, optimizer_offload: true, "
                      "offload_policy: true}}\n"
                      "      ref: {fsdp_config: {param_offload: true}}\n", encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "h20")
    said = " ".join(out.split())
    assert status == 0 and "runs Offload + SP=4 on 4 trainer GPUs at 65536 tokens (Env off, PYTORCH_CUDA_ALLOC_CONF " \
        "unset in this shell): it trains (estimated: " in said
    assert ("). The planner did not rank these settings: its estimates keep Env on (--no-env estimates without it). "
            "The plan below adds Env: its cost is higher (0.6565 against 0.65) by Env's ranking weight alone, not "
            "step time. but:") in said and "plan Env + Offload + SP=4 on 4 of 4 GPUs" in said
    status, out, _ = cli("--from-config", str(config), "--gpu", "h20", "--no-env")
    said = " ".join(out.split())
    assert status == 0 and "did not rank these settings" not in said and "plan Offload + SP=4 on 4 of 4 GPUs" in said
    # Under --minimize gpu-hours the plan's 4 GPUs x 0.6565 are more GPU-hours than the settings' 4 x 0.65: said too
    status, out, _ = cli("--from-config", str(config), "--gpu", "h20", "--minimize", "gpu-hours")
    assert status == 0 and "The plan below adds Env: its cost is higher (0.6565 against 0.65)" in " ".join(out.split())
    # The longest context's plan is longer, and costs more for its length: Env is no reason, and none is given.
    status, out, _ = cli("--from-config", str(config), "--gpu", "h20", "--maximize", "len")
    said = " ".join(out.split())
    assert status == 0 and "did not rank these settings" not in said and "max_model_len 112640" in said


def test_a_verdict_whose_best_plan_differs_in_env_and_token_budget_names_both(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # Qwen3-8B at 65536 tokens on 4 A100s, SP=4 without Env at a budget lowered by hand to 16384: it trains by
    # estimate (cost 0.325). The best plan, Env + SP=4, costs a hair more (0.3282) for Env, which estimates keep on,
    # and keeps the config's budget (s80: a cap); with --token-budget auto it takes the most that fits, 25600 tokens
    # per GPU: a difference the cost does not count, named too.
    monkeypatch.delenv("PYTORCH_CUDA_ALLOC_CONF", raising=False)
    config = tmp_path / "trinity.yaml"
    config.write_text("algorithm: {algorithm_type: grpo}\nmodel:\n  model_path: Qwen/Qwen3-8B\n  max_model_len: 65536\n"
                      "  rope_scaling: {rope_type: yarn, factor: 1.6, original_max_position_embeddings: 40960}\n"
                      "cluster: {node_num: 1, gpu_per_node: 8}\nexplorer: {rollout_model: {engine_num: 4}}\n"
                      "trainer:\n  ulysses_sequence_parallel_size: 4\n  max_token_len_per_gpu: 16384\n",
                      encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100")
    said = " ".join(out.split())
    assert status == 0 and ("by Env's ranking weight alone, not step time. but:" in said
                            and "max_token_len_per_gpu = 16384 (capped by the config's own" in said)
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100", "--token-budget", "auto")
    said = " ".join(out.split())
    assert status == 0 and (
        "trinity.yaml runs SP=4 on 4 trainer GPUs at 65536 tokens (Env off, "
        "PYTORCH_CUDA_ALLOC_CONF unset in this shell): it trains (estimated: the memory model predicts 61.1 GiB per "
        "GPU, 10.2 GiB to spare). The planner did not rank these settings: its estimates keep Env on (--no-env "
        "estimates without it). The plan below adds Env: its cost is higher (0.3282 against 0.325) by Env's ranking "
        "weight alone, not step time. Its max_token_len_per_gpu is 25600, not 16384 (fewer micro-batches, which the "
        "cost does not count). but:") in said
    assert "plan Env + SP=4 on 4 of 4 GPUs" in said and "max_token_len_per_gpu = 25600" in said


def test_settings_with_env_that_train_by_estimate_get_no_word_on_env(cli, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch):
    # The config's Env + SP=2 trains by estimate; the longest context's plan costs more, for its length: Env is no
    # reason, and none is given.
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    config = tmp_path / "trinity.yaml"
    config.write_text("algorithm: {algorithm_type: grpo}\n"
                      "model:\n  model_path: Qwen/Qwen2.5-7B\n  max_model_len: 16384\n"
                      "cluster: {node_num: 1, gpu_per_node: 8}\nexplorer: {rollout_model: {engine_num: 4}}\n"
                      "trainer:\n  ulysses_sequence_parallel_size: 2\n", encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "h100", "--maximize", "len")
    said = " ".join(out.split())
    assert status == 0 and ("trinity.yaml runs Env + SP=2 on 4 trainer GPUs at 16384 tokens (Env on, read from "
                            "this shell's PYTORCH_CUDA_ALLOC_CONF): it trains (estimated: ") in said
    assert "plan Env + Offload + SP=4 on 4 of 4 GPUs" in said and "did not rank these settings" not in said


def _long_qwen25_config(tmp_path: Path, trainer: str) -> Path:
    """Qwen2.5-7B-Instruct at 131072 tokens (YaRN over its 32768, with its rope_theta) on 4 trainer GPUs of an 8-GPU
    node, SP=4, with `trainer` keys added."""
    config = tmp_path / "trinity.yaml"
    config.write_text("algorithm: {algorithm_type: grpo}\nmodel:\n  model_path: Qwen/Qwen2.5-7B-Instruct\n"
                      "  max_model_len: 131072\n  rope_scaling: {rope_type: yarn, factor: 4.0, "
                      "original_max_position_embeddings: 32768, rope_theta: 1000000}\n"
                      "cluster: {node_num: 1, gpu_per_node: 8}\nexplorer: {rollout_model: {engine_num: 4}}\n"
                      f"trainer:\n  ulysses_sequence_parallel_size: 4\n{trainer}", encoding="utf-8")
    return config


def test_the_verdict_is_at_the_most_tokens_any_role_takes(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    roles = "  trainer_config:\n    actor_rollout_ref:\n      actor: {ppo_max_token_len_per_gpu: %d}\n"
    # The actor's own 65536 (the default) overrides the trainer's 40960: at 65536 Env + SP=4 does not fit.
    config = _long_qwen25_config(tmp_path, "  max_token_len_per_gpu: 40960\n" + roles % 65536)
    current = json.loads(cli("--from-config", str(config), "--gpu", "h20", "--json")[1])[0]["current"]
    assert (current["trains"], current["max_token_len_per_gpu"]) == (False, None)
    # The actor's 50000: the verdict is at it, and the trainer's 40960 is below it.
    config = _long_qwen25_config(tmp_path, "  max_token_len_per_gpu: 40960\n" + roles % 50000)
    current = json.loads(cli("--from-config", str(config), "--gpu", "h20", "--json")[1])[0]["current"]
    assert current["max_token_len_per_gpu"] == 50000 and not current["trains"]
    assert current["config_problems"][:2] == [
        ("the token budget in effect, 50000 (the most any role takes), is below Trinity's default ceil(2 x 131072 / 4) "
         "= 65536, which the tables measured: the verdict is at 50000 tokens per GPU (each step takes more "
         "micro-batches); Trinity 0.5.0 raises it back to the default: use 0.5.1 or later"),
        ("trainer.max_token_len_per_gpu 40960 is below the verdict's budget: fewer tokens per GPU than the verdict "
         "assumes (so it is cautious; each step takes more micro-batches)")]


def test_a_config_budget_between_the_planners_and_the_most_that_fits_trains(cli, tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch):
    # The planner lowers Env + SP=4 here to 40960 (a multiple of 1024); the setting holds a little more.
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    config = _long_qwen25_config(tmp_path, "  max_token_len_per_gpu: 41000\n")
    current = json.loads(cli("--from-config", str(config), "--gpu", "h20", "--json")[1])[0]["current"]
    assert current["trains"] and current["plan"]["max_token_len_per_gpu"] == 41000
    assert solver.estimate_memory("Qwen2.5-7B", "h20", 4, 131072, sp=4, env=True, max_token_len_per_gpu=41000).fits
    # With the tables alone the verdict is at the default (they measured it), which does not train.
    current = json.loads(cli("--from-config", str(config), "--gpu", "h20", "--no-estimate", "--json")[1])[0]["current"]
    assert (current["trains"], current["max_token_len_per_gpu"]) == (False, None)
    assert any("fewer tokens per GPU than the verdict assumes" in problem for problem in current["config_problems"])


def test_a_verdict_that_host_memory_rules_out_says_so(cli, tmp_path: Path):
    config = tmp_path / "trinity.yaml"
    config.write_text("algorithm: {algorithm_type: grpo}\n"
                      "model: {model_path: Qwen/Qwen3-14B, max_model_len: 32768}\n"
                      "cluster: {node_num: 1, gpu_per_node: 8}\n"
                      "explorer: {rollout_model: {engine_num: 0}}\ntrainer:\n  ulysses_sequence_parallel_size: 8\n"
                      "  trainer_strategy: fsdp2\n  trainer_config:\n    actor_rollout_ref:\n      actor:\n"
                      "        fsdp_config: {param_offload: true, optimizer_offload: true, offload_policy: true}\n"
                      "      ref:\n        fsdp_config: {param_offload: true}\n", encoding="utf-8")
    current = json.loads(cli("--from-config", str(config), "--gpu", "h100", "--host-ram", "64", "--json")[1])[0]["current"]
    assert not current["trains"] and current["predicted"] is None  # the GPUs hold it: only the host memory does not
    # No release named: each of the 8 ranks loads the untied model at start-up, 8 x 55.02 GiB beside the reference
    # model's and the actor's pinned shards, more than the 351.53 that training holds.
    need = host_memory_gib(solver.load_catalog().model("14B"), 8)
    assert round(need, 2) == 601.12 and current["host_memory_needed"] == 601.2  # rounded up to a tenth
    _, out, _ = cli("--from-config", str(config), "--gpu", "h100", "--host-ram", "64")
    assert (f"with Offload it needs {current['host_memory_needed']:.1f} GiB of host memory per node, more than "
            "--host-ram 64 GiB.") in " ".join(out.split())
    # Without Offload the start-up load is checked too (the example names no release: each of its 6 trainer ranks loads
    # Qwen3-8B, 6 x 30.51 GiB beside the reference model's pinned shards); where a table says the GPUs run out of
    # memory, that comes first (more host memory would not make it train).
    example = Path(__file__).parent.parent / "docs" / "examples" / "trinity.yaml"
    _, out, _ = cli("--from-config", str(example), "--gpu", "h20", "--host-ram", "70")
    assert ("the H20-96GB table for 6 GPUs says 'SP=2' at 24576, so vanilla ran out of memory there. At 32768 "
            "tokens each GPU holds more than at 24576. It needs 224.6 GiB of host memory per node while the model "
            "loads, more than --host-ram 70 GiB.") in " ".join(out.split())
    # A config a table documents is refused for its host memory alone (Qwen3-4B ties its embeddings: every rank
    # loads it, 15 GiB each).
    documented = tmp_path / "documented.yaml"
    documented.write_text("algorithm: {algorithm_type: grpo}\n"
                          "model: {model_path: Qwen/Qwen3-4B, max_model_len: 20480}\n"
                          "cluster: {node_num: 1, gpu_per_node: "
                          "8}\nexplorer: {rollout_model: {engine_num: 4, tensor_parallel_size: 1}}\n", encoding="utf-8")
    assert json.loads(cli("--from-config", str(documented), "--gpu", "a100", "--json")[1])[0]["current"]["trains"]
    status, out, _ = cli("--from-config", str(documented), "--gpu", "a100", "--host-ram", "50", "--json")
    current = json.loads(out)[0]["current"]
    assert (status, current["trains"], current["predicted"], current["host_memory_needed"]) == (1, False, None, 81.1)
    # Where no table speaks, the memory model's figures come first, as a table's cell does.
    long = tmp_path / "long.yaml"
    long.write_text(example.read_text(encoding="utf-8").replace("max_model_len: 32768", "max_model_len: 131072")
                    .replace("max_response_tokens: 30720", "max_response_tokens: 129024"), encoding="utf-8")
    status, out, _ = cli("--from-config", str(long), "--gpu", "h200", "--host-ram", "10", "--json")
    current = json.loads(out)[0]["current"]
    assert (status, current["predicted"], current["host_memory_needed"]) == (1, [419.2, 125.1], 224.6)
    _, out, _ = cli("--from-config", str(long), "--gpu", "h200", "--host-ram", "10")
    assert ("(the memory model predicts 419.2 GiB per GPU, of 125.1 usable). It needs 224.6 GiB of host memory per "
            "node while the model loads, more than --host-ram 10 GiB.") in " ".join(out.split())


@pytest.mark.parametrize("value", ["0", "n", "${oc.env:DYNAMIC,true}"])
def test_dynamic_batch_sizes_off_as_verl_takes_them_are_reported_and_turned_on(cli, tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch,
                                                                               value: str):
    monkeypatch.setenv("DYNAMIC", "false")
    config = tmp_path / "trinity.yaml"
    config.write_text("model: {model_path: Qwen/Qwen3-8B, max_model_len: 8192}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
                      f"explorer: {{rollout_model: {{engine_num: 4}}}}\ntrainer:\n  use_dynamic_bsz: {value}\n",
                      encoding="utf-8")
    current = json.loads(cli("--from-config", str(config), "--gpu", "h20", "--json")[1])[0]["current"]
    assert any("use_dynamic_bsz is false" in problem for problem in current["config_problems"])
    patched = tmp_path / "patched.yaml"
    status, _, err = cli("--from-config", str(config), "--gpu", "h20", "--write", str(patched))
    assert status == 0 and "use_dynamic_bsz: true" in patched.read_text(encoding="utf-8")
    # the patched config is not warned about; an interpolation replaced is noted (unread87)
    replaced = (f"solve: note: {patched}: trainer.use_dynamic_bsz {value} replaced by the plan's true: the "
                "interpolation gives another value here, or none, and the patch writes the value the plan holds for")
    assert [line for line in err.splitlines() if "use_dynamic_bsz" in line] == (
        [replaced] if value.startswith("${") else [])


def test_a_role_budget_out_of_range_is_refused_like_the_trainers(cli, tmp_path: Path):
    config = tmp_path / "trinity.yaml"
    config.write_text("model: {model_path: Qwen/Qwen3-8B, max_model_len: 8192}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
                      "explorer: {rollout_model: {engine_num: 4}}\ntrainer:\n  trainer_config:\n    actor_rollout_ref:\n"
                      "      actor: {ppo_max_token_len_per_gpu: 1000000000}\n", encoding="utf-8")
    assert cli("--from-config", str(config), "--gpu", "h20") == (
        2, "", (f"solve: error: --from-config {config}: "
                "trainer.trainer_config.actor_rollout_ref.actor.ppo_max_token_len_per_gpu "
                "must be at most 16777216, got 1000000000\n"))


def verdict_of(cli, tmp_path: Path, text: str, gpu: str) -> tuple[Path, dict]:
    """A Trinity config of `text` in `tmp_path`, and the JSON verdict (``current``) on it on `gpu`."""
    config = tmp_path / "trinity.yaml"
    config.write_text(text, encoding="utf-8")
    return config, json.loads(cli("--from-config", str(config), "--gpu", gpu, "--json")[1])[0]["current"]


def test_an_a800_config_is_judged_by_the_a100_tables(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # The A800-80GB reports the A100-80GB's memory: the A100's tables are its own, and say Env + SP=2 trains.
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    config, current = verdict_of(cli, tmp_path, (
        "algorithm: {algorithm_type: grpo}\n"
        "model: {model_path: Qwen/Qwen3-4B, max_model_len: 32768}\ncluster: {node_num: 1, gpu_per_node: 4}\n"
        "explorer: {rollout_model: {engine_num: 2}}\ntrainer: {ulysses_sequence_parallel_size: 2}\n"), "a800")
    assert current["trains"] and current["plan"]["source"] == {
        "model": "Qwen3-4B", "gpus": 2, "max_model_len": 32768, "setting": "Env + SP=2", "gpu": "A100-80GB"}
    _, out, _ = cli("--from-config", str(config), "--gpu", "a800")
    assert ("it trains (documented: the A100-80GB table for 2 GPUs (its GPU has the same memory as A800-80GB) "
            "says 'Env + SP=2' at 32768)") in " ".join(out.split())


def test_a_verdict_the_optimizer_step_rules_out_says_so(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    config, current = verdict_of(cli, tmp_path, (
        "algorithm: {algorithm_type: grpo}\n"
        "model: {model_path: Qwen/Qwen3-32B, max_model_len: 2048}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
        "explorer: {rollout_model: {engine_num: 0}}\ntrainer: {ulysses_sequence_parallel_size: 8}\n"), "h100")
    total, usable = current["predicted"]
    step, allowed = current["predicted_step"]
    assert not current["trains"] and total <= usable and step > allowed
    _, out, _ = cli("--from-config", str(config), "--gpu", "h100")
    assert (f"of {usable:.1f} usable, but {step:.2f} GiB at the optimizer step, more than the {allowed:.2f} it may "
            "take)") in " ".join(out.split())


def test_from_config_names_a_table_for_more_gpus_that_says_its_settings_ran_out(cli, tmp_path: Path,
                                                                                monkeypatch: pytest.MonkeyPatch):
    # Env + Offload + SP=2 on 4 H20s at 65536: never measured on 4; the table for 6 says '-' at 71680. (vLLM is let
    # take the length without YaRN: the verdict on the memory is what is checked.)
    monkeypatch.setenv("VLLM_ALLOW_LONG_MAX_MODEL_LEN", "1")
    config = tmp_path / "trinity.yaml"
    flags = "{param_offload: true, optimizer_offload: true, offload_policy: true}"
    config.write_text("model:\n  model_path: Qwen/Qwen3-4B\n  max_model_len: 65536\ncluster:\n  node_num: 1\n"
                      "  gpu_per_node: 8\nexplorer:\n  rollout_model:\n    engine_num: 4\ntrainer:\n"
                      "  trainer_strategy: fsdp2\n  ulysses_sequence_parallel_size: 2\n  trainer_config:\n"
                      f"    actor_rollout_ref:\n      actor:\n        fsdp_config: {flags}\n      ref:\n"
                      f"        fsdp_config: {flags}\n", encoding="utf-8")
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    status, out, _ = cli("--from-config", str(config), "--gpu", "h20")
    assert status == 0 and ("trinity.yaml runs Env + Offload + SP=2 on 4 trainer GPUs at 65536 tokens (Env on, read "
                            "from this shell's PYTORCH_CUDA_ALLOC_CONF): the H20-96GB table for 6 GPUs says '-' at "
                            "71680, so Env + Offload + SP=2 ran out of memory there. With Offload it holds as much "
                            "per GPU on 4 GPUs as on 6 (the states are on the CPU). "
                            "The best plan follows."
                            ) in " ".join(out.split())
    status, out, _ = cli("--from-config", str(config), "--gpu", "h20", "--json")
    current = json.loads(out)[0]["current"]
    assert (current["trains"], current["out_of_memory"], current["predicted"]) == (
        False, {"model": "Qwen3-4B", "gpus": 6, "max_model_len": 71680, "setting": "-"}, None)


@pytest.mark.parametrize("role_keys", [
    "      ref:\n        log_prob_max_token_len_per_gpu: 204800\n",
    "      ref:\n        log_prob_use_dynamic_bsz: false\n",
    "      actor:\n        use_dynamic_bsz: false\n      ref:\n        log_prob_use_dynamic_bsz: false\n",
    ("      ref:\n        log_prob_use_dynamic_bsz: false\n        log_prob_max_token_len_per_gpu: 204800\n"
     "      actor:\n        use_dynamic_bsz: false\n        ppo_max_token_len_per_gpu: 300000\n"),
])
def test_role_keys_beside_an_offload_plan_are_written_with_its_flags(cli, tmp_path: Path, role_keys: str):
    # Qwen3-4B at 102400 on 4 of 6 A100s: Env + Offload + SP=4. The roles' own keys (dynamic batches back on, a
    # budget above the plan's lowered) and the offload flags go under each role together.
    config = tmp_path / "trinity.yaml"
    config.write_text("algorithm: {algorithm_type: grpo}\n"
                      "model:\n  model_path: Qwen/Qwen3-4B\n  max_model_len: 102400\ncluster:\n  node_num: 1\n"
                      "  gpu_per_node: 6\nexplorer:\n  rollout_model:\n    engine_num: 2\ntrainer:\n  trainer_config:\n"
                      "    actor_rollout_ref:\n" + role_keys, encoding="utf-8")
    patched = tmp_path / "patched.yaml"
    status, _, err = cli("--from-config", str(config), "--gpu", "a100", "--write", str(patched))
    assert status == 0 and "warning" not in err and "Traceback" not in err
    roles = yaml.safe_load(patched.read_text(encoding="utf-8"))["trainer"]["trainer_config"]["actor_rollout_ref"]
    for role in roles.values():
        assert role["fsdp_config"] == {"param_offload": True, "optimizer_offload": True, "offload_policy": True}
        assert all(value is True or value == 51200 for key, value in role.items() if key != "fsdp_config")
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100", "--emit", "trinity")
    fragment = yaml.safe_load(out)["trainer"]["trainer_config"]["actor_rollout_ref"]
    assert status == 0 and fragment == roles
    # The verdict's lines on the roles' own keys say which verl takes them.
    status, current = config_verdict(cli, tmp_path, config.read_text(encoding="utf-8"), "a100")
    role_lines = [line for line in current["config_problems"] if ".actor_rollout_ref." in line]
    actor_dynamic_batches = f" ({ACTOR_FLAG_SCOPE})"
    assert all(line.endswith((f" ({ROLE_KEYS_IGNORED})", actor_dynamic_batches)) for line in role_lines)
    assert role_lines or role_keys == "      ref:\n        log_prob_max_token_len_per_gpu: 204800\n"  # the default at SP 1


@pytest.mark.parametrize(("flags", "verdict"), [
    ("{offload_policy: true}", ("runs Env + Offload + SP=4 on 4 trainer GPUs at 102400 tokens (Env on, read from "
                                "this shell's PYTORCH_CUDA_ALLOC_CONF): it trains (documented")),
    ("{param_offload: true, optimizer_offload: true}", "runs Env + SP=4 on 4 trainer GPUs at 102400 tokens"),
])
def test_fsdp2_offload_is_the_actors_offload_policy(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    flags: str, verdict: str):
    # verl's FSDP2 worker offloads the actor through CPUOffloadPolicy when offload_policy is on (the others then
    # do nothing); param_offload and optimizer_offload alone load the states back onto the GPUs for each step.
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    monkeypatch.setenv("VLLM_ALLOW_LONG_MAX_MODEL_LEN", "1")  # the config has no YaRN: vLLM takes the length so
    config = tmp_path / "trinity.yaml"
    config.write_text("algorithm: {algorithm_type: grpo}\n"
                      "model: {model_path: Qwen/Qwen3-4B, max_model_len: 102400}\n"
                      "cluster: {node_num: 1, gpu_per_node: 6}\n"
                      "explorer: {rollout_model: {engine_num: 2}}\ntrainer:\n  trainer_strategy: fsdp2\n"
                      "  ulysses_sequence_parallel_size: 4\n"
                      f"  trainer_config: {{actor_rollout_ref: {{actor: {{fsdp_config: {flags}}}}}}}\n", encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100")
    said = " ".join(out.split())
    assert status == 0 and verdict in said
    assert ("without offload_policy" in said) == ("param_offload" in flags)


ANCHORED_OFFLOAD = (
    "algorithm: {algorithm_type: grpo}\n"
    "model:\n  model_path: Qwen/Qwen3-14B\n  max_model_len: 65536\ncluster: {node_num: 2, gpu_per_node: 8}\n"
    "explorer:\n  rollout_model: {engine_num: 4, tensor_parallel_size: 2}\ntrainer:\n"
    "  trainer_strategy: fsdp2\n  ulysses_sequence_parallel_size: 4\n  trainer_config:\n"
    "    actor_rollout_ref:\n      actor:\n        fsdp_config: &offload\n          param_offload: true\n"
    "          optimizer_offload: true\n          offload_policy: true\n"
    "      ref:\n        fsdp_config: *offload\n")
"""A Trinity config whose actor and reference model share one anchored fsdp_config, with Offload on."""


def test_write_warns_when_a_patched_key_sits_in_a_mapping_other_keys_repeat(cli, tmp_path: Path):
    # The actor's and the ref's fsdp_config are one anchored mapping: turning the actor's Offload off turns the
    # ref's off too, so --write says so.
    config = tmp_path / "trinity.yaml"
    config.write_text(ANCHORED_OFFLOAD, encoding="utf-8")
    patched = tmp_path / "patched.yaml"
    status, out, err = cli("--from-config", str(config), "--gpu", "h20", "--write", str(patched))
    assert status == 0 and "plan           Env + SP=4 on 8 of 8 GPUs" in out
    assert (f"solve: warning: {patched}: trainer.trainer_config.actor_rollout_ref.actor.fsdp_config is the anchor "
            "&offload, which trainer.trainer_config.actor_rollout_ref.ref.fsdp_config repeats (*offload): the patch's "
            "changes in it (param_offload to false, ...) reach it too\n") in err


def config_verdict(cli, tmp_path: Path, text: str, gpu: str) -> tuple[int, dict]:
    """The exit status and the JSON `current` of --from-config for a config of `text`, on `gpu`; a `text` without an
    ``algorithm`` section is GRPO's (Trinity's default, PPO, adds a note on its critic)."""
    config = tmp_path / "trinity.yaml"
    config.write_text(text if "algorithm:" in text else "algorithm: {algorithm_type: grpo}\n" + text, encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", gpu, "--json")
    return status, json.loads(out)[0]["current"]


def test_a_budget_that_holds_no_sequence_is_a_broken_rule_not_a_cautious_one(cli, tmp_path: Path):
    status, current = config_verdict(cli, tmp_path, (
        "model:\n  model_path: Qwen/Qwen3-8B\n  max_model_len: 32768\ncluster: {node_num: 1, gpu_per_node: 8}\n"
        "explorer: {rollout_model: {engine_num: 2}}\ntrainer:\n  max_token_len_per_gpu: 16384\n"), "a100")
    assert status == 0 and current["config_problems"] == [(
        "trainer.max_token_len_per_gpu 16384 x SP 1 is below model.max_model_len 32768: verl 0.8 or later stops at the "
        "first sequence longer than that, and Trinity with verl before 0.8 raises it to ceil(32768 / 1) = 32768 "
        "(Trinity 0.5.0 to its default, ceil(2 x 32768 / 1) = 65536)"),
        PADDED_051.format(budget="trainer.max_token_len_per_gpu", least=32768, sp=1, tokens=32768)]


def test_a_config_without_a_cluster_is_told_which_gpus_the_plan_holds_for(cli, tmp_path: Path):
    config = tmp_path / "trinity.yaml"
    config.write_text("algorithm: {algorithm_type: grpo}\n"
                      "model:\n  model_path: Qwen/Qwen3-8B\n  max_model_len: 40960\nexplorer:\n  rollout_model:\n"
                      "    engine_num: 2\n", encoding="utf-8")
    status, out, err = cli("--from-config", str(config), "--gpu", "a100-80g", "--gpus", "4", "--emit", "trinity")
    assert status == 0 and "ulysses_sequence_parallel_size: 4" in out
    assert err == (f"solve: note: {config} gives no cluster (node_num, gpu_per_node): Trinity takes the GPUs Ray finds, "
                   "and the plan holds where that leaves exactly 4 trainer GPUs beside the 2 rollout GPUs: set "
                   "cluster.node_num x cluster.gpu_per_node to 6\n")
    # With --rollout-gpus (which such a config may differ from), the rollout GPUs are those the fragment gives.
    status, out, err = cli("--from-config", str(config), "--gpu", "a100-80g", "--gpus", "4", "--rollout-gpus", "4",
                           "--emit", "trinity")
    assert status == 0 and "gpu_per_node: 8  # 4 trainer + 4 rollout" in out
    assert err == (f"solve: note: {config} gives no cluster (node_num, gpu_per_node): Trinity takes the GPUs Ray "
                   "finds, and the plan holds where that leaves exactly 4 trainer GPUs beside the 4 rollout GPUs: set "
                   "cluster.node_num x cluster.gpu_per_node to 8\n")


def test_trinity_06_offload_flags_under_trainer_decide_and_are_written_there(cli, tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch):
    # Trinity 0.6 keeps the offload flags under trainer itself and copies them over the roles' own.
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    monkeypatch.setenv("VLLM_ALLOW_LONG_MAX_MODEL_LEN", "1")  # the config has no YaRN: vLLM takes the length so
    text = ("algorithm: {algorithm_type: grpo}\n"
            "model: {model_path: Qwen/Qwen3-4B, max_model_len: 102400}\ncluster: {node_num: 1, gpu_per_node: 6}\n"
            "explorer: {rollout_model: {engine_num: 2}}\ntrainer:\n  trainer_strategy: fsdp2\n"
            "  ulysses_sequence_parallel_size: 4\n  offload_policy: %s\n")
    config = tmp_path / "trinity.yaml"
    config.write_text(text % "true", encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100")
    assert status == 0 and "runs Env + Offload + SP=4 on 4 trainer GPUs at 102400 tokens (Env on, read from this " \
                           "shell's PYTORCH_CUDA_ALLOC_CONF): it trains (documented" in " ".join(out.split())
    config.write_text(text % "false", encoding="utf-8")
    patched = tmp_path / "patched.yaml"
    assert cli("--from-config", str(config), "--gpu", "a100", "--write", str(patched))[0] == 0
    trainer = yaml.safe_load(patched.read_text(encoding="utf-8"))["trainer"]
    assert all(trainer[flag] is True for flag in ("param_offload", "optimizer_offload", "offload_policy"))
    status, out, _ = cli("--from-config", str(patched), "--gpu", "a100")
    assert "runs Env + Offload + SP=4 on 4 trainer GPUs" in " ".join(out.split())
    config.write_text((text % "true").replace("  trainer_strategy: fsdp2\n", ""), encoding="utf-8")  # 0.6's default
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100")
    assert status == 0 and "runs Env + Offload + SP=4 on 4 trainer GPUs" in " ".join(out.split())


def test_trinity_06_rollout_engines_take_their_data_and_pipeline_parallel_gpus(cli, tmp_path: Path):
    # Trinity 0.6: an engine takes tensor x data x pipeline parallel GPUs; 1 engine of 2 x 2 on a node of 8
    # leaves the trainer 4 GPUs, not 6.
    status, current = config_verdict(cli, tmp_path, (
        "model: {model_path: Qwen/Qwen3-8B, max_model_len: 32768}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
        "explorer: {rollout_model: {engine_num: 1, tensor_parallel_size: 2, data_parallel_size: 2}}\n"), "h100")
    assert status == 0 and current["gpus"] == 4
    config = tmp_path / "trinity.yaml"
    status, out, _ = cli("--from-config", str(config), "--gpus", "8", "--exact", "--gpu", "h100", "--emit", "trinity")
    data = yaml.safe_load(out)  # 8 rollout GPUs beside a trainer of 8: two engines of 4, their sizes kept
    assert status == 0 and data["explorer"]["rollout_model"] == {"engine_num": 2}


def test_a_length_from_prompt_and_response_is_checked_as_a_given_one(cli, tmp_path: Path):
    # No max_model_len: 4096 + 61440 = 65536, past Qwen3-8B's native 40960, with a budget that holds no sequence.
    status, current = config_verdict(cli, tmp_path, (
        "model:\n  model_path: Qwen/Qwen3-8B\n  max_prompt_tokens: 4096\n  max_response_tokens: 61440\n"
        "cluster: {node_num: 1, gpu_per_node: 8}\nexplorer: {rollout_model: {engine_num: 2}}\n"
        "trainer:\n  max_token_len_per_gpu: 20000\n"), "a100")
    problems = current["config_problems"]
    # a plan on exactly 6 A100s: the cap is the 20000 as every release raises it at SP 1, 65536 (release89b)
    assert status == 0 and current["max_model_len"] == 65536 and len(problems) == 4
    assert problems[0].startswith("trainer.max_token_len_per_gpu 20000 x SP 1 is below model.max_model_len 65536")
    assert problems[1].startswith("trainer.max_token_len_per_gpu as Trinity 0.5.1 raises it, 65536 x SP 1")
    assert problems[2].startswith("model.rope_scaling: max_model_len 65536 is beyond Qwen3-8B's native context")
    # A prompt length Trinity resolves and rft-solver cannot: no length from them, and --len gives one.
    config = tmp_path / "trinity.yaml"
    config.write_text("model:\n  model_path: Qwen/Qwen3-8B\n  max_prompt_tokens: ${oc.select:foo,2048}\n"
                      "  max_response_tokens: 4096\ncluster: {node_num: 1, gpu_per_node: 8}\n", encoding="utf-8")
    assert cli("--from-config", str(config), "--gpu", "a100", "--len", "16384")[0] == 0


def test_the_actors_offload_policy_decides_and_is_read_strictly(cli, tmp_path: Path):
    config = tmp_path / "trinity.yaml"
    config.write_text("model: {model_path: Qwen/Qwen3-8B, max_model_len: 16384}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
                      "trainer:\n  trainer_strategy: fsdp2\n  trainer_config:\n    actor_rollout_ref:\n"
                      "      actor: {fsdp_config: {offload_policy: '${trainer.x}'}}\n", encoding="utf-8")
    status, out, err = cli("--from-config", str(config), "--gpu", "a100")
    assert (status, out) == (2, "") and "offload_policy" in err and len(err.splitlines()) == 1


def test_write_warns_of_an_anchor_only_where_it_writes(cli, tmp_path: Path):
    # The flags under the shared anchor are false already, and the plan has no Offload: nothing written in it.
    config = tmp_path / "trinity.yaml"
    config.write_text("model: {model_path: Qwen/Qwen3-8B, max_model_len: 16384}\n"
                      "cluster: {node_num: 1, gpu_per_node: 8}\nalgorithm: {algorithm_type: grpo}\n"
                      "trainer:\n  trainer_config:\n    actor_rollout_ref:\n      actor:\n        fsdp_config: &fs\n"
                      "          param_offload: false\n      ref:\n        fsdp_config: *fs\n", encoding="utf-8")
    patched = tmp_path / "patched.yaml"
    status, _, err = cli("--from-config", str(config), "--gpu", "a100", "--write", str(patched))
    assert status == 0 and "is the anchor" not in err and err.startswith(f"{A100_NOTE}solve: note: {patched} needs Env")
    # The anchored mapping is left as it was: the plan (Env on 7 GPUs) adds two trainer keys below it.
    note, model, rest = patched.read_text(encoding="utf-8").partition("model: {")
    assert note.startswith("# evidence: inferred: ") and note.endswith(" --check --gpu A100-80GB\n")
    assert model + rest == config.read_text(encoding="utf-8") + (
        "  ulysses_sequence_parallel_size: 1\n  max_token_len_per_gpu: 32768\n")


def test_engines_that_run_elsewhere_take_no_gpu(cli, tmp_path: Path):
    # Trinity 0.6 gives an engine of engine_type tinker or external no GPU: an API judge beside two vLLM engines
    # on a node of 8 leaves the trainer 6 GPUs, not 5.
    status, current = config_verdict(cli, tmp_path, (
        "model: {model_path: Qwen/Qwen3-8B, max_model_len: 32768}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
        "explorer:\n  rollout_model: {engine_num: 2}\n  auxiliary_models:\n"
        "    - {engine_type: external, engine_num: 1, tensor_parallel_size: 1}\n"), "h100")
    assert status == 0 and current["gpus"] == 6
    status, current = config_verdict(cli, tmp_path, (
        "model: {model_path: Qwen/Qwen3-8B, max_model_len: 32768}\ncluster: {node_num: 1, gpu_per_node: 4}\n"
        "explorer:\n  rollout_model: {engine_type: tinker, engine_num: 2, tensor_parallel_size: 2}\n"), "h100")
    assert status == 0 and current["gpus"] == 4


@pytest.mark.parametrize("model", ["{model_path: Qwen/Qwen3-8B}\nexplorer: {rollout_model: {engine_type: external}}",
                                   "{model_path: Qwen/Qwen3-8B, external_model: {enable: true}}"])
def test_an_external_rollout_model_is_refused_for_the_trainer_gets_no_gpu(cli, tmp_path: Path, model: str):
    # Trinity returns before it counts GPUs for an external rollout model (a bench-mode feature): no trainer GPU.
    config = tmp_path / "trinity.yaml"
    config.write_text(f"model: {model}\ncluster: {{node_num: 1, gpu_per_node: 8}}\n", encoding="utf-8")
    status, out, err = cli("--from-config", str(config), "--gpu", "h100", "--len", "8192")
    assert (status, out) == (2, "") and err == (
        f"solve: error: --from-config {config}: "
        "an external rollout model (explorer.rollout_model.engine_type external, or "
        "model.external_model.enable) is for mode bench: Trinity then gives the trainer no GPU, so there is nothing "
        "to plan\n")


@pytest.mark.parametrize("trainer", ["model: {model_path: Qwen/Qwen3-8B, tinker: {enable: true}}\n",
                                     "model: {model_path: Qwen/Qwen3-8B}\ntrainer: {trainer_type: tinker}\n"])
def test_a_config_trained_by_tinker_is_refused_in_one_line(cli, tmp_path: Path, trainer: str):
    config = tmp_path / "trinity.yaml"
    config.write_text(trainer + "cluster: {node_num: 1, gpu_per_node: 8}\n", encoding="utf-8")
    status, out, err = cli("--from-config", str(config), "--gpu", "h100", "--len", "8192")
    assert (status, out) == (2, "") and err == (
        f"solve: error: --from-config {config}: "
        "the Tinker service trains this config (model.tinker.enable or trainer.trainer_type tinker), "
        "so there is no trainer GPU to plan (rft-solver plans verl's FSDP trainer)\n")


def test_a_fragment_cannot_give_rollout_gpus_to_engines_that_run_elsewhere(cli, tmp_path: Path):
    config = tmp_path / "trinity.yaml"
    config.write_text("model: {model_path: Qwen/Qwen3-8B, max_model_len: 16384}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
                      "explorer:\n  rollout_model: {engine_type: tinker}\n  auxiliary_models:\n"
                      "    - {engine_num: 1, tensor_parallel_size: 2}\n", encoding="utf-8")
    # 16 trainer GPUs take two nodes of 8: the third holds 8 rollout GPUs, 2 for the auxiliary model's engine.
    status, out, err = cli("--from-config", str(config), "--gpu", "a100", "--gpus", "16", "--exact", "--emit", "trinity")
    assert (status, out) == (2, "") and err == (
        f"solve: error: --from-config {config}: "
        "its rollout engines run elsewhere (engine_type tinker or external) and take none of "
        "the 6 rollout GPUs on nodes of 8: choose a trainer size with --gpus that leaves the config's engines exactly their GPUs\n")


def test_write_sets_both_levels_of_a_trinity_06_config_alike_and_notes_a_config_with_the_roles_only(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    head = ("algorithm: {algorithm_type: grpo}\nmodel: {model_path: Qwen/Qwen3-4B, max_model_len: 102400}\n"
            "cluster: {node_num: 1, gpu_per_node: 6}\n"
            "explorer: {rollout_model: {engine_num: 2}}\ntrainer:\n  trainer_strategy: fsdp2\n"
            "  ulysses_sequence_parallel_size: 4\n")
    roles = "  trainer_config:\n    actor_rollout_ref:\n      actor: {fsdp_config: {offload_policy: false}}\n"
    config, patched = tmp_path / "trinity.yaml", tmp_path / "patched.yaml"
    config.write_text(head + "  offload_policy: true\n" + roles, encoding="utf-8")  # they disagree: Offload off
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100", "--write", str(patched))
    assert status == 0 and "runs Env + SP=4 on 4 trainer GPUs" in " ".join(out.split())
    trainer = yaml.safe_load(patched.read_text(encoding="utf-8"))["trainer"]
    on = {"param_offload": True, "optimizer_offload": True, "offload_policy": True}
    assert {flag: trainer[flag] for flag in on} == on == trainer["trainer_config"]["actor_rollout_ref"]["actor"]["fsdp_config"]
    status, out, _ = cli("--from-config", str(patched), "--gpu", "a100", "--json")
    assert json.loads(out)[0]["current"]["offload"] and "offload" not in " ".join(
        json.loads(out)[0]["current"]["config_problems"])
    # The roles' flags alone: --write adds the trainer's too (Trinity 0.6 on verl before 0.8 reads those, so Offload
    # would be off without them) and says that Trinity before 0.6 refuses them; --trinity-version 0.5 leaves them out.
    config.write_text(head + roles, encoding="utf-8")
    status, _, err = cli("--from-config", str(config), "--gpu", "a100", "--write", str(patched))
    trainer = yaml.safe_load(patched.read_text(encoding="utf-8"))["trainer"]
    assert status == 0 and {flag: trainer[flag] for flag in on} == on
    assert (f"solve: note: {config} has no offload flags under trainer itself (Trinity 0.6's, which it reads instead "
            "of the roles' on verl before 0.8), so what is made from it adds them; Trinity before 0.6 refuses them "
            "(--trinity-version 0.5 leaves them out)\n") in err
    status, _, err = cli("--from-config", str(config), "--gpu", "a100", "--write", str(patched), "--trinity-version",
                         "0.5")
    assert status == 0 and "offload flags under trainer" not in err
    assert "param_offload" not in yaml.safe_load(patched.read_text(encoding="utf-8"))["trainer"]


def test_the_roles_own_sp_is_named_where_it_differs_and_write_sets_it_to_the_plans(cli, tmp_path: Path):
    # Trinity with verl before 0.8 runs a role at its own SP (Trinity's config generator writes SP there); Trinity
    # 0.6 on verl 0.8 or later at the trainer's. The plan's SP goes to both.
    _, current = config_verdict(cli, tmp_path, (
        "model: {model_path: Qwen/Qwen3-8B, max_model_len: 32768}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
        "explorer: {rollout_model: {engine_num: 4}}\ntrainer:\n  trainer_config:\n    actor_rollout_ref:\n"
        "      actor: {ulysses_sequence_parallel_size: 4}\n      ref: {ulysses_sequence_parallel_size: 1}\n"), "a100")
    config = tmp_path / "trinity.yaml"
    assert current["sp"] == 1 and [problem for problem in current["config_problems"] if "ulysses" in problem] == [(
        "trainer.trainer_config.actor_rollout_ref.actor.ulysses_sequence_parallel_size 4 is not "
        "trainer.ulysses_sequence_parallel_size 1: Trinity with verl before 0.8 runs that role at SP 4 (with the "
        "trainer's token budget), Trinity 0.6 on verl 0.8 or later at SP 1; the verdict is at SP 1: set them alike "
        "(--write does)")]
    patched = tmp_path / "patched.yaml"
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100", "--write", str(patched))
    data = yaml.safe_load(patched.read_text(encoding="utf-8"))
    sp = data["trainer"]["ulysses_sequence_parallel_size"]
    assert status == 0 and sp > 1 and data["trainer"]["trainer_config"]["actor_rollout_ref"] == {
        "actor": {"ulysses_sequence_parallel_size": sp}, "ref": {"ulysses_sequence_parallel_size": sp}}
    status, out, _ = cli("--from-config", str(patched), "--gpu", "a100", "--json")
    assert not [problem for problem in json.loads(out)[0]["current"]["config_problems"] if "ulysses" in problem]


def test_trinity_05_runs_the_trainer_at_the_actors_own_sp(cli, tmp_path: Path):
    # Trinity 0.5 fills a role's SP from the trainer's only where it is unset (verl_config.py's synchronize_config,
    # set_if_none) and builds the trainer's Ulysses groups from the actor's (fsdp_workers.py): the verdict is at the
    # actor's SP there. Without the release, or for 0.6 (whose verl 0.8 path takes the trainer's), at the trainer's.
    config = tmp_path / "trinity.yaml"
    config.write_text(
        "algorithm: {algorithm_type: grpo}\nmodel: {model_path: Qwen/Qwen3-8B, max_model_len: 32768}\n"
        "cluster: {node_num: 1, gpu_per_node: 8}\nexplorer: {rollout_model: {engine_num: 4}}\ntrainer:\n"
        "  trainer_config:\n    actor_rollout_ref:\n      actor: {ulysses_sequence_parallel_size: 4}\n"
        "      ref: {ulysses_sequence_parallel_size: 1}\n", encoding="utf-8")
    verdicts = {}
    for version in ((), ("--trinity-version", "0.6"), ("--trinity-version", "0.5")):
        status, out, _ = cli("--from-config", str(config), "--gpu", "a100", "--json", *version)
        verdicts[version[1:]] = (status, json.loads(out)[0]["current"])
    for version in ((), ("0.6",)):
        status, current = verdicts[version]
        assert (status, current["sp"], current["trains"]) == (0, 1, False)
    status, current = verdicts[("0.5",)]  # the fill above the verdict's budget leaves trains false (s87)
    assert (status, current["sp"], current["trains"], current["plan"]["sp"]) == (0, 4, False, 4)
    assert current["config_problem_codes"] == ["role-sp-differs", "role-sp-differs", "token-budget-above-verdict"]
    assert current["config_problems"] == [
        ("trainer.trainer_config.actor_rollout_ref.actor.ulysses_sequence_parallel_size 4 is not "
         "trainer.ulysses_sequence_parallel_size 1: Trinity 0.5 runs the trainer at the actor's (it takes the "
         "trainer's only where a role sets none), so the verdict is at SP 4: set them alike (--write does)"),
        ("trainer.trainer_config.actor_rollout_ref.ref.ulysses_sequence_parallel_size 1 is not the actor's 4: Trinity "
         "0.5 runs that role's forward at SP 1 within the actor's SP groups; the verdict is at SP 4: set them alike "
         "(--write does)"),
        ("the unset trainer.max_token_len_per_gpu, which Trinity 0.5 fills at the trainer's SP 1 with ceil(2 x 32768 "
         "/ 1) = 65536, is above Trinity's default ceil(2 x 32768 / 4) = 16384, which the tables measured: more "
         "tokens per GPU than the verdict assumes")]
    # The rules are checked at the actor's SP too: 3 divides neither the 4 trainer GPUs nor Qwen3-8B's heads.
    config.write_text(config.read_text(encoding="utf-8").replace("actor: {ulysses_sequence_parallel_size: 4}",
                                                                 "actor: {ulysses_sequence_parallel_size: 3}"),
                      encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100", "--json", "--trinity-version", "0.5")
    current = json.loads(out)[0]["current"]
    assert (status, current["sp"], current["trains"], current["broken_rule_code"]) == (0, 3, False, "sp-model-heads")
    assert ("trainer.trainer_config.actor_rollout_ref.actor.ulysses_sequence_parallel_size: SP=3 does not divide 4 "
            "GPUs (the trainer's)") in current["config_problems"]


def test_a_verdict_cites_the_table_of_a_gpu_type_with_at_least_as_much_memory(cli, tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    status, current = config_verdict(cli, tmp_path, (
        "model: {model_path: Qwen/Qwen3-4B, max_model_len: 110592, rope_scaling: {rope_type: yarn, factor: 2.7, "
        "original_max_position_embeddings: 40960}}\ncluster: {node_num: 1, gpu_per_node: 6}\n"
        "explorer: {rollout_model: {engine_num: 2}}\n"
        "trainer: {trainer_strategy: fsdp2, ulysses_sequence_parallel_size: 4, offload_policy: true}\n"), "h100")
    assert (status, current["trains"], current["out_of_memory"]) == (1, False, {
        "model": "Qwen3-4B", "gpus": 4, "max_model_len": 112640, "setting": "-", "gpu": "A100-80GB"})
    _, out, _ = cli("--from-config", str(tmp_path / "trinity.yaml"), "--gpu", "h100")
    assert ("the A100-80GB table for 4 GPUs (its GPU has at least the memory of H100-80GB) says '-' at 112640, so "
            "Env + Offload + SP=4 ran out of memory there") in " ".join(out.split())


def test_trinity_version_decides_where_the_offload_flags_go(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    flags = ("param_offload", "optimizer_offload", "offload_policy")
    # A fragment for 0.5 has the roles' flags only (0.5 refuses the trainer's); for 0.6 both, without the comment.
    for version, trainer_has in (("0.5", False), ("0.6", True)):
        status, out, _ = cli(*FLAGSHIP, "--emit", "trinity", "--trinity-version", version)
        trainer = yaml.safe_load(out)["trainer"]
        assert status == 0 and all((flag in trainer) is trainer_has for flag in flags)
        assert "drop them" not in out and trainer["trainer_config"]["actor_rollout_ref"]["actor"]["fsdp_config"] == \
            dict.fromkeys(flags, True)
    # --write for 0.6 on a config with the roles' flags alone adds the trainer's, and needs no note.
    config, patched = tmp_path / "trinity.yaml", tmp_path / "patched.yaml"
    config.write_text("algorithm: {algorithm_type: grpo}\n"
                      "model: {model_path: Qwen/Qwen3-4B, max_model_len: 102400}\n"
                      "cluster: {node_num: 1, gpu_per_node: 6}\n"
                      "explorer: {rollout_model: {engine_num: 2}}\ntrainer:\n  trainer_config:\n    actor_rollout_ref:\n"
                      "      actor: {fsdp_config: {offload_policy: false}}\n", encoding="utf-8")
    status, _, err = cli("--from-config", str(config), "--gpu", "a100", "--write", str(patched), "--trinity-version", "0.6")
    trainer = yaml.safe_load(patched.read_text(encoding="utf-8"))["trainer"]
    assert status == 0 and {flag: trainer[flag] for flag in flags} == dict.fromkeys(flags, True)
    assert "has no offload flags under trainer itself" not in err


def test_trinity_version_06_reads_an_unset_trainer_strategy_as_fsdp2(cli, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch):
    # The roles' offload flags alone and no trainer_strategy: Trinity before 0.6 runs fsdp (no Offload), 0.6 fsdp2.
    config = tmp_path / "t.yaml"
    config.write_text("algorithm: {algorithm_type: grpo}\n"
                      "model: {model_path: Qwen/Qwen3-8B, max_model_len: 24576}\ncluster: {gpu_per_node: 1}\n"
                      "mode: train\ntrainer:\n  trainer_config:\n    actor_rollout_ref:\n"
                      "      actor: {fsdp_config: {offload_policy: true}}\n", encoding="utf-8")
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")  # Env, as the table's cell has it
    verdicts, codes = {}, {}
    for version in (None, "0.6"):
        status, out, _ = cli("--from-config", str(config), "--gpu", "a100", "--json",
                             *(("--trinity-version", version) if version else ()))
        [answer] = json.loads(out)
        assert status == 0
        verdicts[version] = (answer["current"]["offload"], answer["current"]["trains"])
        codes[version] = answer["current"]["config_problem_codes"][0]
    # Qwen3-8B at 24576 on one A100 trains with Env + Offload only: without Offload, no setting of one GPU does.
    # Under 0.6 the strategy is fsdp2, but verl before 0.8 replaces the roles' flags with the trainer's, unset here,
    # and the verdict counts that reading (test_release06b_s83); with the trainer's flags too, Offload counts.
    assert verdicts == {None: (False, False), "0.6": (False, False)}
    assert codes == {None: "offload-needs-fsdp2", "0.6": "trainer-offload-flags-unset"}
    config.write_text(config.read_text(encoding="utf-8").replace("trainer:\n", "trainer:\n  offload_policy: true\n"),
                      encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100", "--json", "--trinity-version", "0.6")
    current = json.loads(out)[0]["current"]
    assert (status, current["offload"], current["trains"]) == (0, True, True)


def test_write_checks_the_patched_config_for_the_trinity_version_given(cli, tmp_path: Path):
    # The reference model's offload_policy, which a plan without Offload keeps, and no trainer_strategy: Trinity
    # before 0.6 runs fsdp, which refuses it, and 0.6 fsdp2: the written config is warned about for the former only.
    config, patched = tmp_path / "t.yaml", tmp_path / "patched.yaml"
    config.write_text("model: {model_path: Qwen/Qwen3-4B, max_model_len: 8192}\n"
                      "cluster: {node_num: 1, gpu_per_node: 6}\nexplorer: {rollout_model: {engine_num: 2}}\n"
                      "trainer:\n  trainer_config:\n    actor_rollout_ref:\n"
                      "      ref: {fsdp_config: {offload_policy: true}}\n", encoding="utf-8")
    warning = (f"solve: warning: {patched}: trainer.trainer_config.actor_rollout_ref.ref.fsdp_config.offload_policy "
               "needs trainer.trainer_strategy fsdp2, got none (Trinity {})\n")
    # release06 (s82): each names the default of the release it is for (none named: both)
    for version, warned in ((None, "before 0.6 takes fsdp; 0.6, fsdp2"), ("0.5", "0.5 takes fsdp"), ("0.6", None)):
        status, _, err = cli("--from-config", str(config), "--gpu", "a100", "--write", str(patched),
                             *(("--trinity-version", version) if version else ()))
        assert status == 0 and ("needs trainer.trainer_strategy" in err) is (warned is not None), (version, err)
        assert warned is None or warning.format(warned) in err
        assert "offload_policy: true" in patched.read_text(encoding="utf-8")


def test_keys_that_cannot_be_resolved_are_each_one_problem(cli, tmp_path: Path):
    # Every key the checks read, left to an unset variable where Trinity's reading allows it: each is said once
    # (the checks used to read the dynamic batch flag and the rope type twice, and then called the type wrong).
    unset = {path: f"UNSET_RFT_SOLVER_{i}" for i, path in enumerate((
        "model.max_prompt_tokens", "model.max_response_tokens", "model.rope_scaling.rope_type",
        "model.rope_scaling.type", "model.rope_scaling.factor", "model.rope_scaling.original_max_position_embeddings",
        "trainer.use_dynamic_bsz", "trainer.trainer_config.actor_rollout_ref.actor.use_dynamic_bsz",
        "trainer.trainer_config.actor_rollout_ref.ref.log_prob_use_dynamic_bsz"))}
    config, roles = tmp_path / "trinity.yaml", "trainer.trainer_config.actor_rollout_ref."
    config.write_text(
        "algorithm: {algorithm_type: grpo}\nmodel:\n  model_path: Qwen/Qwen3-4B\n  max_model_len: 81920\n"
        f"  max_prompt_tokens: ${{oc.env:{unset['model.max_prompt_tokens']}}}\n"
        f"  max_response_tokens: ${{oc.env:{unset['model.max_response_tokens']}}}\n"
        "  rope_scaling:\n"
        + "".join(f"    {key}: ${{oc.env:{unset['model.rope_scaling.' + key]}}}\n"
                  for key in ("rope_type", "type", "factor", "original_max_position_embeddings"))
        + "    rope_theta: 1000000\n"  # Qwen3-4B's own base: no line on it where no release is named (s79)
        + f"trainer:\n  use_dynamic_bsz: ${{oc.env:{unset['trainer.use_dynamic_bsz']}}}\n"
        "  trainer_config:\n    actor_rollout_ref:\n"
        f"      actor: {{use_dynamic_bsz: '${{oc.env:{unset[roles + 'actor.use_dynamic_bsz']}}}'}}\n"
        f"      ref: {{log_prob_use_dynamic_bsz: '${{oc.env:{unset[roles + 'ref.log_prob_use_dynamic_bsz']}}}'}}\n",
        encoding="utf-8")
    status, out, err = cli("--from-config", str(config), "--gpu", "a100", "--gpus", "4")
    problems = [line for line in out.splitlines() if line.startswith("  but: ")]
    assert status == 0 and len(problems) == len(set(problems)) == len(unset), (out, err)
    for path, variable in unset.items():
        assert sum(line.startswith(f"  but: cannot check {path}: environment variable {variable} is not set")
                   for line in problems) == 1, path


def test_a_config_whose_sp_does_not_divide_its_trainer_gpus_hears_it_once(cli, tmp_path: Path):
    # 4 GPUs less a rollout engine leave 3 trainer GPUs, which SP=2 does not divide: the verdict says so, and the
    # checks do not say it again in other words.
    config = tmp_path / "trinity.yaml"
    config.write_text("model:\n  model_path: Qwen/Qwen3-4B\n  max_model_len: 8192\n"
                      "cluster:\n  node_num: 1\n  gpu_per_node: 4\n"
                      "explorer:\n  rollout_model:\n    engine_num: 1\n    tensor_parallel_size: 1\n"
                      "trainer:\n  ulysses_sequence_parallel_size: 2\n", encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100")
    assert status == 0 and " ".join(out.split()).count("does not divide") == 1, out
    assert ("it breaks a rule: SP=2 does not divide 3 GPUs (Trinity stops on it as it loads the config on verl before "
            "0.8, PyTorch's device mesh as the trainer starts on 0.8 or later: the config as written is refused). The "
            "best plan follows.") in " ".join(out.split())


def test_a_verdict_beside_an_answer_out_of_time_does_not_say_no_plan_exists(cli, monkeypatch: pytest.MonkeyPatch):
    real = solver.api.answer_query

    def out_of_time(query, catalog, explain=False):
        return tuple(answer.model_copy(update={"status": "unknown", "plans": (), "reason": "no plan found within the "
                                               "time limit of 10 s"}) for answer in real(query, catalog, explain=explain))

    monkeypatch.setattr(solver.api, "answer_query", out_of_time)
    example = Path(__file__).parent.parent / "docs" / "examples" / "trinity.yaml"
    status, out, _ = cli("--from-config", str(example), "--gpu", "h20")
    assert status == 1 and "No plan was found within the time limit." in " ".join(out.split())
    assert "nor does any plan" not in out


def test_trinity_version_goes_with_the_view_and_with_emit(cli, tmp_path: Path):
    assert cli("--model", "4B", "--len", "8k", "--trinity-version", "0.6")[0] == 0  # its apply lines follow it
    assert cli("--model", "4B", "--len", "8k", "--gpu", "a100", "--emit", "trinity", "--trinity-version", "0.6")[0] == 0


def test_a_config_judged_at_another_length_says_so(cli):
    example = Path(__file__).parent.parent / "docs" / "examples" / "trinity.yaml"  # its max_model_len is 32768
    status, out, _ = cli("--from-config", str(example), "--gpu", "h20", "--len", "60k")
    assert status == 0 and " ".join(out.split()).startswith(
        "H20-96GB · Qwen3-8B · cheapest plan for 61440 tokens on exactly 6 GPUs: optimal trinity.yaml's settings would "
        "run vanilla on 6 trainer GPUs at 61440 tokens (--len; Env off, PYTORCH_CUDA_ALLOC_CONF unset in this "
        "shell): ")
    status, out, _ = cli("--from-config", str(example), "--gpu", "h20", "--len", "60k", "--json")
    assert json.loads(out)[0]["current"]["length_given"] is False


def test_a_config_for_trinity_05_with_06s_trainer_flags_is_told_and_written_for_05(cli, tmp_path: Path):
    # Trinity 0.5 refuses trainer.param_offload and the rest: the verdict says the config does not load and reads
    # the roles' flags (none here, so no Offload), --write removes them and sets the roles', and the apply block
    # leaves them out.
    config, patched = tmp_path / "c2.yaml", tmp_path / "p2.yaml"
    config.write_text("algorithm: {algorithm_type: grpo}\n"
                      "model: {model_path: /models/Qwen3-14B, max_model_len: 40960}\n"
                      "cluster: {node_num: 1, gpu_per_node: 8}\n"
                      "explorer: {rollout_model: {engine_num: 1, tensor_parallel_size: 4}}\ntrainer:\n"
                      "  trainer_strategy: fsdp2\n  param_offload: true\n  optimizer_offload: true\n"
                      "  offload_policy: true\n"
                      "  ulysses_sequence_parallel_size: 4\n", encoding="utf-8")
    flags = ["--from-config", str(config), "--gpu", "h20"]
    [answer] = json.loads(cli(*flags, "--trinity-version", "0.5", "--json")[1])
    assert (answer["current"]["offload"], answer["current"]["config_problems"]) == (False, [(
        "trainer.param_offload, trainer.optimizer_offload, trainer.offload_policy: keys of Trinity 0.6's trainer, "
        "which Trinity 0.5 refuses (its TrainerConfig has no such key), so the config does not load: remove them and "
        "set the roles' fsdp_config flags (--write does; the verdict reads the roles', as 0.5 would)")])
    [answer] = json.loads(cli(*flags, "--trinity-version", "0.6", "--json")[1])
    assert (answer["current"]["offload"], answer["current"]["config_problems"]) == (True, [])
    status, out, _ = cli(*flags, "--trinity-version", "0.5", "--write", str(patched))
    trainer = yaml.safe_load(patched.read_text(encoding="utf-8"))["trainer"]
    assert status == 0 and not {"param_offload", "optimizer_offload", "offload_policy"} & set(trainer)
    assert trainer["trainer_config"]["actor_rollout_ref"]["actor"]["fsdp_config"]["offload_policy"] is True
    assert "trainer.{param_offload" not in out
    status, out, _ = cli(*flags, "--trinity-version", "0.6")
    assert "# Trinity 0.6 also takes these:\ntrainer.{param_offload, optimizer_offload" in out
    # A key of 0.6's left empty is refused by 0.5 all the same.
    config.write_text("algorithm: {algorithm_type: grpo}\n"
                      "model: {model_path: /models/Qwen3-14B, max_model_len: 40960}\n"
                      "cluster: {node_num: 1, gpu_per_node: 8}\n"
                      "explorer: {rollout_model: {engine_num: 1, tensor_parallel_size: 4}}\ntrainer:\n  param_offload:\n",
                      encoding="utf-8")
    [answer] = json.loads(cli(*flags, "--trinity-version", "0.5", "--json")[1])
    assert answer["current"]["config_problems"][0].startswith("trainer.param_offload: a key of Trinity 0.6's trainer, "
                                                              "which Trinity 0.5 refuses")
    assert "so the config does not load: remove it and set" in answer["current"]["config_problems"][0]


def test_a_fragment_without_roles_flags_does_not_point_its_trainer_flags_at_flags_below(cli, tmp_path: Path):
    # A Trinity 0.6 config with its offload flags under trainer alone, and a plan without Offload: the fragment turns
    # those off and has no fsdp_config flags, so their comment cannot send the reader to flags "below".
    config = tmp_path / "c.yaml"
    config.write_text("algorithm: {algorithm_type: grpo}\n"
                      "model: {model_path: Qwen/Qwen3-4B, max_model_len: 131072}\n"
                      "cluster: {node_num: 2, gpu_per_node: 8}\n"
                      "explorer: {rollout_model: {engine_num: 4, tensor_parallel_size: 2}}\ntrainer:\n"
                      "  trainer_strategy: fsdp2\n  param_offload: true\n  optimizer_offload: true\n"
                      "  offload_policy: true\n"
                      "  ulysses_sequence_parallel_size: 4\n", encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "h200", "--emit", "trinity")
    assert status == 0 and "fsdp_config:" not in out
    assert ("  # these three are Trinity 0.6's (0.5 refuses them: --trinity-version 0.5 leaves them out); on verl\n"
            "  # before 0.8, Trinity 0.6 reads these, not the roles' fsdp_config flags\n"
            "  param_offload: false\n") in out

TRAINER_06_KEYS = ("mode: both\nalgorithm: {algorithm_type: grpo}\n"
                   "model: {model_path: Qwen/Qwen3-8B, max_model_len: 8192}\n"
                   "cluster: {node_num: 1, gpu_per_node: 8}\n"
                   "explorer: {rollout_model: {engine_num: 2, tensor_parallel_size: 1}}\n"
                   "trainer:\n  use_remove_padding: false  # off by hand\n  balance_batch: true\n"
                   "  param_offload: false\n  ulysses_sequence_parallel_size: 1\n")
"""A config with keys of Trinity 0.6.0's TrainerConfig that 0.5.x's lacks: remove padding turned off, batch balancing,
and an offload flag under trainer."""
TRAINER_KEYS_REFUSED = (
    "trainer.use_remove_padding, trainer.balance_batch: keys of Trinity 0.6's trainer, which Trinity 0.5 refuses (its "
    "TrainerConfig has no such key), so the config does not load: remove them (--write does; 0.5 takes remove padding "
    "from trainer.trainer_config.actor_rollout_ref.model.use_remove_padding, on by default)")
TRAINER_OFFLOAD_REFUSED = (
    "trainer.param_offload: a key of Trinity 0.6's trainer, which Trinity 0.5 refuses (its TrainerConfig has no such "
    "key), so the config does not load: remove it and set the roles' fsdp_config flags (--write does; the verdict "
    "reads the roles', as 0.5 would)")
REMOVE_PADDING_OFF = (
    "trainer.use_remove_padding is false: the tables measured with remove padding, Trinity's default, and the verdict "
    "and the plans assume it; without it each micro-batch is padded to its longest sequence, and verl splits no "
    "sequence over Ulysses SP: set it to true")


def test_trinity_05_refuses_the_keys_of_06s_trainer_it_lacks_and_write_removes_them(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    config, patched = tmp_path / "trinity.yaml", tmp_path / "patched.yaml"
    config.write_text(TRAINER_06_KEYS, encoding="utf-8")
    flags = ("--from-config", str(config), "--gpu", "a100-80g")
    verdicts = {}
    for version in ((), ("--trinity-version", "0.6"), ("--trinity-version", "0.5")):
        status, out, _ = cli(*flags, *version, "--json")
        current = json.loads(out)[0]["current"]
        verdicts[version[1:]] = (status, current["refused"], current["config_problem_codes"],
                                 current["config_problems"], cli(*flags, *version, "--check")[0])
    # Trinity 0.6 knows the keys: only remove padding turned off is said, as before.
    assert verdicts[()] == verdicts[("0.6",)] == (0, False, ["remove-padding-off"], [REMOVE_PADDING_OFF], 0)
    # 0.5 refuses them all (and says nothing of a remove padding it never reads there).
    assert verdicts[("0.5",)] == (0, True, ["trainer-offload-keys-refused", "trainer-keys-refused"],
                                  [TRAINER_OFFLOAD_REFUSED, TRAINER_KEYS_REFUSED], 1)
    _, out, _ = cli(*flags, "--trinity-version", "0.5")
    assert (f"refused: {TRAINER_OFFLOAD_REFUSED} refused: {TRAINER_KEYS_REFUSED}" in " ".join(out.split())) is True
    # --write for 0.5 removes them, as it does the offload flags, and says so; remove padding stays unwritten.
    status, _, err = cli(*flags, "--trinity-version", "0.5", "--write", str(patched))
    assert (status, err) == (0, (
        f"solve: note: {patched}: trainer.param_offload, trainer.use_remove_padding, trainer.balance_batch removed: "
        "keys of Trinity 0.6's trainer, which Trinity 0.5 refuses (its TrainerConfig has no such key)\n"))
    assert patched.read_text(encoding="utf-8").split("trainer:\n")[1] == (
        "  ulysses_sequence_parallel_size: 1\n  max_token_len_per_gpu: 16384\n")
    status, out, _ = cli("--from-config", str(patched), "--gpu", "a100-80g", "--trinity-version", "0.5", "--json")
    assert (status, json.loads(out)[0]["current"]["config_problem_codes"]) == (0, [])
    # --write for 0.6 keeps them, and turns remove padding back on.
    status, _, err = cli(*flags, "--trinity-version", "0.6", "--write", str(patched))
    trainer = yaml.safe_load(patched.read_text(encoding="utf-8"))["trainer"]
    assert (status, "removed" in err, trainer["use_remove_padding"], trainer["balance_batch"]) == (0, False, True, True)


BATCH_75 = ("mode: both\nalgorithm: {algorithm_type: grpo}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
            "explorer: {rollout_model: {engine_num: 2, tensor_parallel_size: 1}}\n"
            "model: {model_path: Qwen/Qwen3-8B, max_model_len: 16384}\n"
            "trainer: {ulysses_sequence_parallel_size: 2}\nbuffer: {train_batch_size: %d}\n")
"""6 trainer GPUs at SP 2 (3 data-parallel ranks) and a train batch of the given size."""


@pytest.mark.parametrize(("batch", "version", "codes"), [
    # 3 ranks divide 75, the 6 GPUs do not: 0.5.0 and 0.5.1 refuse it, 0.5.2 takes it; 0.6 checks only the ranks.
    (75, ("--trinity-version", "0.5"), ["batch-divides-trainer-gpus"]),
    (75, ("--trinity-version", "0.6"), []),
    (75, (), []),
    (78, ("--trinity-version", "0.5"), []),  # the 6 GPUs divide it
])
def test_trinity_05_batch_the_trainer_gpus_do_not_divide_is_said_without_refusing(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, batch: int, version: tuple[str, ...], codes: list[str]):
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    config = tmp_path / "trinity.yaml"
    config.write_text(BATCH_75 % batch, encoding="utf-8")
    flags = ("--from-config", str(config), "--gpu", "a100-80g", *version)
    status, out, _ = cli(*flags, "--json")
    current = json.loads(out)[0]["current"]
    assert (status, current["trains"], current["refused"], current["config_problem_codes"]) == (0, True, False, codes)
    said = (
        "a train batch of 75 (buffer.train_batch_size) does not divide by the 6 trainer GPUs, which Trinity 0.5.0 and "
        "0.5.1 refuse (trinity/common/config_validator.py:860 in 0.5.0, :859 in 0.5.1); 0.5.2 takes it, as it needs "
        "only the 3 data-parallel ranks (6 GPUs / SP=2) to divide it (trinity/trainer/verl/verl_config.py:424): for "
        "0.5.0 or 0.5.1, make it a multiple of 6")
    assert current["config_problems"] == ([said] if codes else [])
    _, out, _ = cli(*flags)
    assert (f"{RUNS_16K[0]}it trains ({RUNS_16K[1]}). but: {said}" in " ".join(out.split())) is bool(codes)
    assert cli(*flags, "--check")[0] == 0


def test_fewer_nodes_is_the_best_plan_on_fewer_nodes_not_the_fewest(cli):
    # Three nodes (16 trainer GPUs and a rollout node of 8, 4 asked): two nodes keep the whole length, one halves it.
    status, out, _ = cli("--maximize", "len", "--gpus", "16", "--rollout-gpus", "4", "--model", "8B", "--gpu", "h20")
    assert status == 0 and ("fewer nodes 2 nodes of 8 GPUs instead of 3 nodes: Env + Offload + SP=8 on 8 trainer + 8 "
                            "rollout GPUs, 245760 tokens") in " ".join(out.split())


def test_write_with_aliases_of_aliases_walks_each_once(cli, tmp_path: Path):
    # 24 levels of lists that repeat the one before twice stand for 2**24 items: the anchor warning (which names the
    # keys that repeat an anchor) enters each list once, where walking every alias again took minutes.
    class Counted(list):
        """A list that counts how often it is walked, and stops a walk that would never end."""

        walks = 0

        def __iter__(self):  # type: ignore[no-untyped-def]
            Counted.walks += 1
            assert Counted.walks < 1000, "the walk enters repeated lists again"
            return super().__iter__()

    level: list = Counted([1, 1])
    for _ in range(24):
        level = Counted([level, level])
    target = {"param_offload": True}
    assert _paths_to({"x": level, "actor": target, "ref": target}, target) == [("actor",), ("ref",)]
    assert Counted.walks == 25
    doubling = "".join(f"x{n}: &a{n} [*a{n - 1}, *a{n - 1}]\n" for n in range(1, 25))
    config = tmp_path / "trinity.yaml"
    config.write_text(f"{ANCHORED_OFFLOAD}x0: &a0 [1, 1]\n{doubling}", encoding="utf-8")
    status, _, err = cli("--from-config", str(config), "--gpu", "h20", "--write", str(tmp_path / "patched.yaml"))
    assert status == 0 and "which trainer.trainer_config.actor_rollout_ref.ref.fsdp_config repeats (*offload)" in err


FSDP1_OFFLOAD_NOTE = ("the offload flags are set, but trainer.trainer_strategy is fsdp, not fsdp2: the tables' Offload "
                      "is FSDP2's CPU offload, so the verdict takes Offload as off")


@pytest.mark.parametrize(("trainer", "problems"), [
    # The notes speak of the actor's offload flags (or Trinity 0.6's under trainer) only: the ref's offload_policy
    # under FSDP1 is a problem named on its own.
    ("trainer_config: {actor_rollout_ref: {ref: {fsdp_config: {offload_policy: true}}}}",
     [("trainer.trainer_config.actor_rollout_ref.ref.fsdp_config.offload_policy needs trainer.trainer_strategy "
       "fsdp2, got 'fsdp'")]),
    # The actor's, and Trinity 0.6's trainer.offload_policy, which the note names, are said once.
    ("trainer_config: {actor_rollout_ref: {actor: {fsdp_config: {offload_policy: true}}}}", [FSDP1_OFFLOAD_NOTE]),
    ("offload_policy: true", [FSDP1_OFFLOAD_NOTE]),
], ids=["ref", "actor", "trainer"])
def test_from_config_names_an_offload_policy_without_fsdp2_once(cli, tmp_path: Path, trainer: str,
                                                                problems: list[str]):
    config = tmp_path / "trinity.yaml"
    config.write_text("mode: train\nbuffer: {train_batch_size: 64}\nalgorithm: {algorithm_type: grpo}\n"
                      "model: {model_path: Qwen/Qwen3-4B, max_model_len: 8192}\n"
                      f"cluster: {{node_num: 1, gpu_per_node: 2}}\ntrainer: {{trainer_strategy: fsdp, {trainer}}}\n",
                      encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100", "--json")
    assert status == 0 and json.loads(out)[0]["current"]["config_problems"] == problems


def test_check_exits_1_where_the_configs_own_settings_do_not_train(cli, user_config: Path,
                                                                   monkeypatch: pytest.MonkeyPatch):
    # Vanilla on 6 A100s at 32768 tokens runs out of memory: the answer has a plan (exit 0), but --check fails it.
    assert cli("--from-config", str(user_config), "--gpu", "a100-80g")[0] == 0
    status, out, err = cli("--from-config", str(user_config), "--gpu", "a100-80g", "--check")
    assert (status, err) == (1, "")
    assert "runs vanilla on 6 trainer GPUs at 32768 tokens" in out
    # Env + SP=2 on those GPUs trains (documented): --check passes it.
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    text = user_config.read_text(encoding="utf-8")
    user_config.write_text(text.replace("  use_dynamic_bsz: true\n", "  use_dynamic_bsz: true\n"
                                        "  ulysses_sequence_parallel_size: 2\n"), encoding="utf-8")
    status, out, _ = cli("--from-config", str(user_config), "--gpu", "a100-80g", "--check", "--json")
    assert (status, json.loads(out)[0]["current"]["trains"]) == (0, True)
    # On every GPU type with tables, it must train on each: the H20's table says so too; a note names them.
    status, _, err = cli("--from-config", str(user_config), "--check")
    assert (status, err) == (0, (f"solve: note: --check without --gpu judged {user_config.name} on A100-80GB and "
                                 "H20-96GB, as a Trinity config names no GPU type; give --gpu TYPE to judge it on the "
                                 "GPUs it runs on\n"))


def test_check_with_emit_says_on_stderr_why_it_exits_1(cli, user_config: Path, monkeypatch: pytest.MonkeyPatch):
    """``--check --emit trinity`` prints the fragment alone: where it exits 1, the verdict and the problems it points
    to go to stderr (before, nothing said why), and where the config trains, nothing more."""
    flags = ("--from-config", "docs/examples/trinity.yaml", "--gpu", "a100-80g", "--check", "--emit", "trinity")
    status, out, err = cli(*flags, "--len", "48k")
    said = [line for line in err.splitlines() if line.startswith("solve: A100-80GB: --check: ")]
    assert (status, out.startswith("# Trinity-RFT settings"), len(said)) == (1, True, 2)
    assert said[0].endswith("The config judged at this length is refused too (the problem that refuses it says why). "
                            "The best plan follows.")
    assert said[1].startswith("solve: A100-80GB: --check: model.rope_scaling: --len's 49152 is beyond Qwen3-8B's")
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")  # Env + SP=2 trains (documented)
    text = user_config.read_text(encoding="utf-8")
    user_config.write_text(text.replace("  use_dynamic_bsz: true\n", "  use_dynamic_bsz: true\n"
                                        "  ulysses_sequence_parallel_size: 2\n"), encoding="utf-8")
    status, _, err = cli("--from-config", str(user_config), *flags[2:])
    assert (status, "--check" in err) == (0, False)

REFUSING_HEAD = ("mode: both\nalgorithm: {algorithm_type: grpo}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
                 "explorer: {rollout_model: {engine_num: 2, tensor_parallel_size: 1}}\n")
"""A config's head for the refused verdicts: 6 trainer GPUs beside 2 rollout GPUs, GRPO (no critic line)."""
MODEL_8K = "model: {model_path: Qwen/Qwen3-8B, max_model_len: 8192}\n"
OVER_8K = MODEL_8K.replace("8192}", "8192, max_prompt_tokens: 4096, max_response_tokens: 8192}")
REF_SP = ("model: {model_path: Qwen/Qwen3-8B, max_model_len: 16384}\ntrainer: {ulysses_sequence_parallel_size: 2, "
          "trainer_config: {actor_rollout_ref: {ref: {ulysses_sequence_parallel_size: %d}}}}\n")
"""A ref's own SP beside the trainer's 2, which Trinity 0.5 checks as the actor's."""
CONFIG_PATH = "trainer: {trainer_config_path: v.yaml}\n"
ACTOR_TYPO = "trainer: {trainer_config: {actor_rollout_ref: {actor: {ulysses_sequence_paralel_size: 2}}}}\n"
"""A misspelt key under trainer_config: Trinity 0.5 refuses it, 0.6 on verl before 0.8 drops it."""
ENV_ON = "Env on, read from this shell's PYTORCH_CUDA_ALLOC_CONF"
RUNS_8K = (f"runs Env on 6 trainer GPUs at 8192 tokens ({ENV_ON}): ",
           ("inferred: the A100-80GB table for 6 GPUs says 'vanilla' at 8192, and this plan includes that setting"))
RUNS_16K = (f"runs Env + SP=2 on 6 trainer GPUs at 16384 tokens ({ENV_ON}): ",
            ("inferred: the A100-80GB table for 6 GPUs says 'Env' at 16384, and this plan includes that setting"))
"""What a verdict says the config runs, and its evidence, at 8192 and 16384 tokens."""


def refused_verdict(runs: tuple[str, str], lines: str) -> str:
    """The verdict on settings that fit (`runs`: what they are, and the evidence) in a config Trinity refuses (`lines`:
    the but: lines that say why)."""
    return f"{runs[0]}it fits in memory ({runs[1]}), but the config as written is refused ({lines})"


@pytest.mark.parametrize(("config_text", "flags", "alloc_conf", "code", "verdict"), [
    # Trinity 0.5 checks the ref's own SP as the actor's: 4 does not divide 6 trainer GPUs (0.6 only notes it) ...
    (REFUSING_HEAD + REF_SP % 4, ("--trinity-version", "0.5"), "expandable_segments:True", "sp-divides-gpus",
     refused_verdict(RUNS_16K, "the problem that refuses it says why")),
    # ... and 3 does not divide its 32 attention heads.
    (REFUSING_HEAD + REF_SP % 3, ("--trinity-version", "0.5"), "expandable_segments:True", "sp-model-heads",
     refused_verdict(RUNS_16K, "the problem that refuses it says why")),
    (REFUSING_HEAD + OVER_8K, (), "expandable_segments:True", "prompt-response-over-length",
     refused_verdict(RUNS_8K, "the problem that refuses it says why")),
    # mode train without buffer.train_batch_size (PPO's critic, Trinity's default, left out, is a second line).
    ("mode: train\nbuffer: {batch_size: 32}\ncluster: {node_num: 1, gpu_per_node: 6}\n" + MODEL_8K,
     ("--critic", "none"),
     "expandable_segments:True", "train-batch-required",
     refused_verdict(RUNS_8K, "the problem that refuses it says why")),
    (REFUSING_HEAD + MODEL_8K + "trainer: {param_offload: true}\n", ("--trinity-version", "0.5"),
     "expandable_segments:True", "trainer-offload-keys-refused",
     refused_verdict(RUNS_8K, "the problem that refuses it says why")),
    (REFUSING_HEAD + MODEL_8K + CONFIG_PATH, ("--trinity-version", "0.5"), "expandable_segments:True",
     "config-path-refused", refused_verdict(RUNS_8K, "the problem that refuses it says why")),
    # Two refusing lines of three (PPO's critic, left out, refuses nothing): the verdict names them.
    (REFUSING_HEAD.replace("algorithm: {algorithm_type: grpo}\n", "") + OVER_8K + CONFIG_PATH,
     ("--trinity-version", "0.5", "--critic", "none"), "expandable_segments:True", "config-path-refused",
     refused_verdict(RUNS_8K, "the 2 problems that refuse it say why")),
    # Every release refuses a flag that is not a boolean under trainer itself (its typed Config) ...
    (REFUSING_HEAD + MODEL_8K + "trainer: {use_dynamic_bsz: maybe}\n", (), "expandable_segments:True",
     "flag-not-boolean-refused", refused_verdict(RUNS_8K, "the problem that refuses it says why")),
    # ... and Trinity 0.5 a misspelt key under trainer_config (its typed veRLConfig) ...
    (REFUSING_HEAD + MODEL_8K + ACTOR_TYPO, ("--trinity-version", "0.5"), "expandable_segments:True",
     "misspelt-key-refused", refused_verdict(RUNS_8K, "the problem that refuses it says why")),
    # ... and ranks of the ref at its own SP 1, 6 GPUs / 1, that do not divide the train batch of 75 (0.5.2 checks
    # them; 0.5.0 and 0.5.1 refuse a batch the 6 GPUs do not divide).
    (REFUSING_HEAD + REF_SP % 1 + "buffer: {train_batch_size: 75}\n", ("--trinity-version", "0.5"),
     "expandable_segments:True", "batch-divides", refused_verdict(RUNS_16K, "the problem that refuses it says why")),
    (REFUSING_HEAD + MODEL_8K, (), "expandable_segments:true", "alloc-conf-refused", refused_verdict(
        ("runs vanilla on 6 trainer GPUs at 8192 tokens (Env off, read from this shell's PYTORCH_CUDA_ALLOC_CONF): ",
         "documented: the A100-80GB table for 6 GPUs says 'vanilla' at 8192"), "the problem that refuses it says why")),
])
def test_where_trinity_refuses_the_config_the_verdict_says_so_and_check_exits_1(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config_text: str, flags: tuple[str, ...],
        alloc_conf: str, code: str, verdict: str):
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", alloc_conf)
    config = tmp_path / "trinity.yaml"
    config.write_text(config_text, encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100-80g", *flags, "--json")
    current = json.loads(out)[0]["current"]
    assert (status, current["trains"], current["refused"], code in current["config_problem_codes"]) == (
        0, True, True, True)
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100-80g", *flags)
    said = " ".join(out.split())
    assert (status, f"trinity.yaml {verdict}" in said, "it trains" in said) == (0, True, False)
    assert cli("--from-config", str(config), "--gpu", "a100-80g", *flags, "--check", "--json")[0] == 1


PPO_HEAD = REFUSING_HEAD.replace("algorithm: {algorithm_type: grpo}\n", "")
"""`REFUSING_HEAD` without its algorithm: Trinity's PPO, whose critic is a but: line that refuses nothing."""
OVER_LINE = ("  refused: model.max_prompt_tokens 4096 + model.max_response_tokens 8192 = 12288, above "
             "model.max_model_len 8192, which Trinity refuses to load: lower them, or\n"
             "           plan for 12288 tokens or more (--len 12288)\n")
"""`OVER_8K`'s line as a pipe shows it, marked refused:."""
CRITIC_WORDS = ("PPO, Trinity's algorithm where algorithm.algorithm_type is unset, trains a critic model beside the "
                "actor on the same trainer GPUs; --critic none{}leaves{}it out: the verdict and the plans are for the "
                "actor alone, though the run trains it (its flags hold its states resident)\n")
"""PPO's critic line, left out (--critic none), as a pipe shows it, without its mark, at either of its two wraps: a
but: line's (`CRITIC_LINES`), or one beside a refused: line, indented more (`CRITIC_LINES_INDENTED`)."""
CRITIC_LINES = CRITIC_WORDS.format(" ", "\n       ")
CRITIC_LINES_INDENTED = CRITIC_WORDS.format("\n           ", " ")
FITS_8K = ("trinity.yaml runs Env on 6 trainer GPUs at 8192 tokens (Env on, read from this shell's "
           "PYTORCH_CUDA_ALLOC_CONF): it fits in memory (inferred: the A100-80GB\ntable for 6 GPUs says 'vanilla' at "
           "8192, and this plan includes that setting), but the config as written is refused ")


@pytest.mark.parametrize(("config_text", "alloc_conf", "shown"), [
    # None refuses: it trains, and the critic's line is a but: line.
    (PPO_HEAD + MODEL_8K, "expandable_segments:True",
     ("trinity.yaml runs Env on 6 trainer GPUs at 8192 tokens (Env on, read from this shell's "
      "PYTORCH_CUDA_ALLOC_CONF): it trains (inferred: the A100-80GB table for 6\nGPUs says 'vanilla' at 8192, and this "
      f"plan includes that setting).\n  but: {CRITIC_LINES}")),
    # Some refuse: the refusing line is marked refused:, which the verdict names; the others stay but:.
    (PPO_HEAD + OVER_8K, "expandable_segments:True",
     f"{FITS_8K}(the problem that refuses it says why).\n{OVER_LINE}  but:     {CRITIC_LINES_INDENTED}"),
    # All refuse.
    (REFUSING_HEAD + OVER_8K + CONFIG_PATH, "expandable_segments:True",
     (f"{FITS_8K}(the 2 problems that refuse it say why).\n{OVER_LINE}"
      "  refused: trainer.trainer_config_path is deprecated, and trainer.trainer_config is empty: Trinity 0.5 "
      "refuses the config; move its settings under\n           trainer.trainer_config\n")),
    # The settings do not train, and the config would not load had they the memory: the verdict says both.
    (REFUSING_HEAD + OVER_8K.replace("8192", "32768"), "",
     ("trinity.yaml runs vanilla on 6 trainer GPUs at 32768 tokens (Env off, read from this shell's "
      "PYTORCH_CUDA_ALLOC_CONF): the A100-80GB table for 6 GPUs says 'Env'\nat 16384, so vanilla ran out of memory "
      "there. At 32768 tokens each GPU holds more than at 16384. The config as written is refused too (the problem "
      "that refuses\nit says why). The best plan follows.\n"
      "  refused: model.max_prompt_tokens 4096 + model.max_response_tokens 32768 = 36864, above model.max_model_len "
      "32768, which Trinity refuses to load: lower them,\n"
      "           or plan for 36864 tokens or more (--len 36864)\n")),
], ids=["none-refuses", "some-refuse", "all-refuse", "no-memory-and-refused"])
def test_a_pipe_shows_the_verdict_and_marks_the_lines_that_refuse_the_config(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config_text: str, alloc_conf: str, shown: str):
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", alloc_conf)
    config = tmp_path / "trinity.yaml"
    config.write_text(config_text, encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100-80g", "--trinity-version", "0.5", "--critic",
                         "none")
    assert (status, out.split("\n", 1)[1].split("plan           ")[0]) == (0, shown)
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100-80g", "--trinity-version", "0.5", "--critic",
                         "none", "--json")
    assert (status, json.loads(out)[0]["current"]["refused"]) == (0, "refused:" in shown)


@pytest.mark.parametrize(("config_text", "flags", "code"), [
    # A negative max_prompt_tokens: Trinity's _check_model_len checks only the sum.
    (REFUSING_HEAD + MODEL_8K.replace("8192}", "8192, max_prompt_tokens: -5}"), (), "value-out-of-range"),
    # Trinity 0.6 refuses trainer_config_path on verl before 0.8 only.
    (REFUSING_HEAD + MODEL_8K + CONFIG_PATH, ("--trinity-version", "0.6"), "deprecated-config-path"),
    # Trinity 0.6 on verl before 0.8 builds trainer_config unchecked (build_dataclass_from_mapping): it takes a flag
    # as written and drops a key it does not know; without a version, 0.6 may be the release.
    (REFUSING_HEAD + MODEL_8K + ACTOR_TYPO, ("--trinity-version", "0.6"), "misspelt-key"),
    (REFUSING_HEAD + MODEL_8K + ACTOR_TYPO, (), "misspelt-key"),
    (REFUSING_HEAD + MODEL_8K + ACTOR_TYPO.replace("ulysses_sequence_paralel_size: 2", "use_dynamic_bsz: maybe"), (),
     "flag-not-boolean"),
])
def test_a_problem_that_refuses_nothing_keeps_it_trains(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config_text: str, flags: tuple[str, ...], code: str):
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    config = tmp_path / "trinity.yaml"
    config.write_text(config_text, encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100-80g", *flags, "--json")
    current = json.loads(out)[0]["current"]
    assert (status, current["trains"], current["refused"], current["config_problem_codes"]) == (0, True, False, [code])
    _, out, _ = cli("--from-config", str(config), "--gpu", "a100-80g", *flags)
    assert f"trinity.yaml {RUNS_8K[0]}it trains ({RUNS_8K[1]}). but: " in " ".join(out.split())
    assert cli("--from-config", str(config), "--gpu", "a100-80g", *flags, "--check")[0] == 0


def _padded_check(tmp_path: Path, dynamic: str, actor_size: str) -> tuple[str, ...]:
    """The flags of ``--check --json`` on a config of InternLM2 (``--model-config``, one padded sequence per
    micro-batch) with remove padding off, the trainer's ``use_dynamic_bsz`` and the actor's micro-batch size per GPU
    as written (`dynamic`, `actor_size`: YAML), the ref's and the rollout's 1."""
    config = tmp_path / "trinity.yaml"
    config.write_text("model: {model_path: Qwen/Qwen3-8B, max_model_len: 8192}\n" + REFUSING_HEAD + (
        f"trainer: {{use_dynamic_bsz: {dynamic}, use_remove_padding: false, trainer_config: {{actor_rollout_ref: {{"
        f"model: {{use_remove_padding: false}}, actor: {{ppo_micro_batch_size_per_gpu: {actor_size}}}, "
        "ref: {log_prob_micro_batch_size_per_gpu: 1}, rollout: {log_prob_micro_batch_size_per_gpu: 1}}}}\n"),
        encoding="utf-8")
    internlm2 = str(Path(__file__).parent / "data" / "hf-configs" / "internlm2-7b.json")
    return "--from-config", str(config), "--model-config", internlm2, "--gpu", "h100", "--check", "--json"


def test_a_padded_models_unreadable_micro_batch_size_is_unread_as_any_models(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # budgetrule87: InternLM2 (--model-config) trains one padded sequence per micro-batch, so it reads no token budget;
    # but how many tokens a pass takes per GPU still depends on the micro-batch size: unread here (an unset variable),
    # it is in unread_keys and the verdict is unknown, so --check fails (it said "it trains" and passed)
    size = "trainer.trainer_config.actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu"
    flags = _padded_check(tmp_path, "false", "'${oc.env:S}'")
    monkeypatch.delenv("S", raising=False)
    status, out, _ = cli(*flags)
    current = json.loads(out)[0]["current"]
    assert (status, current["trains"], current["unread_keys"], current["plan"]) == (1, False, [size], None)
    assert (f"whether it trains is unknown: the tokens per GPU it takes depend on {size}, which cannot be read here "
            "(set it as the run will, and judge again)") in current["verdict"]
    monkeypatch.setenv("S", "1")  # as the run will: one sequence per micro-batch, which trains
    status, out, _ = cli(*flags)
    assert (status, json.loads(out)[0]["current"]["unread_keys"]) == (0, [])


def test_a_padded_models_unreadable_dynamic_batch_flag_is_unread(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # padded88: for InternLM2 (one padded sequence per micro-batch) use_dynamic_bsz on fills a padded micro-batch past
    # the one sequence the verdict counts, whatever its sizes: unread here, it is in unread_keys and --check fails (it
    # said "it trains", its sizes all 1, and passed)
    flags = _padded_check(tmp_path, "'${oc.env:DYN}'", "1")
    monkeypatch.delenv("DYN", raising=False)
    status, out, _ = cli(*flags)
    current = json.loads(out)[0]["current"]
    assert (status, current["trains"], current["unread_keys"]) == (1, False, ["trainer.use_dynamic_bsz"])
    monkeypatch.setenv("DYN", "false")  # as the run will: one sequence per micro-batch, which trains
    assert cli(*flags)[0] == 0


def test_write_names_the_variables_its_check_needs_and_notes_an_interpolation_it_replaces(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # unread87: keys that decide the tokens per GPU read unset variables, so the written copy's check (its header's
    # command) exits 1 as unknown: a note names the variables to set; an interpolation the plan's value replaces
    # (SP 4 in this shell, the plan's 1) was replaced unsaid, where one kept gets a note
    config, written = tmp_path / "trinity.yaml", tmp_path / "written.yaml"
    config.write_text(MODEL_8K + REFUSING_HEAD + (
        "trainer: {use_dynamic_bsz: '${oc.env:DYN}', ulysses_sequence_parallel_size: '${oc.env:SP,4}', "
        "trainer_config: {actor_rollout_ref: {actor: {ppo_micro_batch_size_per_gpu: '${oc.env:MB}'}}}}\n"),
        encoding="utf-8")
    for variable in ("DYN", "SP", "MB"):
        monkeypatch.delenv(variable, raising=False)
    status, _, err = cli("--from-config", str(config), "--gpu", "h100", "--write", str(written))
    actor = "trainer.trainer_config.actor_rollout_ref.actor"
    assert status == 0
    assert (f"solve: note: {written}: whether it trains depends on trainer.use_dynamic_bsz and "
            f"{actor}.ppo_micro_batch_size_per_gpu, which cannot be read here: set DYN and MB as the run will, then "
            "check it (its header's command)\n") in err
    assert (f"solve: note: {written}: trainer.ulysses_sequence_parallel_size ${{oc.env:SP,4}} replaced by the plan's "
            "1: the interpolation gives another value here, or none, and the patch writes the value the plan holds "
            "for\n") in err
    assert "ulysses_sequence_parallel_size: 1," in written.read_text(encoding="utf-8")


def test_a_configs_whole_number_written_as_a_float_is_refused_with_how_to_write_it_as_the_clis(cli, tmp_path: Path):
    # unread87: --gpus 8.0 is refused "(write 8.0 as 8)"; cluster.gpu_per_node: 8.0 gave no such hint. wording88: in
    # the same words, parenthesised (it said "; write 8.0 as 8"), as the config checks' keys are told too
    config = tmp_path / "trinity.yaml"
    config.write_text(MODEL_8K + "cluster: {node_num: 1, gpu_per_node: 8.0}\n", encoding="utf-8")
    assert cli("--from-config", str(config), "--gpu", "h100", "--check") == (2, "", (
        f"solve: error: --from-config {config}: cluster.gpu_per_node must be a whole number, got 8.0 (write 8.0 as 8)"
        "\n"))
    assert cli("--gpus", "8.0")[2].endswith("got '8.0' (write 8.0 as 8)\n")


@pytest.mark.parametrize(("written", "said"), [("-2.0", "must be at least 1, got -2.0"),
                                               ("1e9", "must be at most 16, got 1000000000.0"),
                                               ("32", "must be at most 16, got 32")])  # one host, as --node-gpus
def test_a_configs_whole_number_written_as_a_float_out_of_range_is_told_its_bound_not_how_to_write_it(
        cli, tmp_path: Path, written: str, said: str):
    # words89: cluster.gpu_per_node: -2.0 was told "(write -2.0 as -2)", and -2 then refused: the bound, once, as
    # --gpus -2.0 is told its range
    config = tmp_path / "trinity.yaml"
    config.write_text(MODEL_8K + f"cluster: {{node_num: 1, gpu_per_node: {written}}}\n", encoding="utf-8")
    assert cli("--from-config", str(config), "--gpu", "h100", "--check") == (
        2, "", f"solve: error: --from-config {config}: cluster.gpu_per_node {said}\n")
    assert cli("--gpus", "-2.0")[2].endswith("expected a whole number from 1 to 65536, got '-2.0'\n")


def test_check_says_where_it_exits_1_in_one_wording_in_its_help_and_docs(cli):
    # budgetrule87: the --check line and the exit-status summary said "do not train", leaving out the settings the
    # verdict cannot vouch for (a key unread here, a budget above its own), which exit 1 too: one wording, as
    # docs/cli.md's exit-status table gives it
    where = ("the config's own settings are not shown to train (they do not fit, a key that decides their tokens per "
             "GPU cannot be read here, or the config lets a GPU take more tokens than the verdict's budget on some verl "
             "line where a setting fits every line) or Trinity refuses the config")
    # --help says it short (session 93), docs/cli.md's option reference in full
    status, out, _ = cli("--help")
    shown = " ".join(out.split())
    assert status == 0 and ("--check with --from-config: exit 1 also where its settings are not shown to train, or "
                            "Trinity refuses it (for CI)") in shown
    assert "1 some answer has none (or --check found the config's settings not shown to train)" in shown
    assert f"--check: with --from-config: exit 1 also where {where} (for CI)" in option_reference()
    table = (Path(__file__).parent.parent / "docs" / "cli.md").read_text(encoding="utf-8")
    assert f"with `--from-config` and `--check`, also where {where} (a `refused:` line" in table


def test_a_roles_own_budget_read_before_verl_0_8_alone_fails_check_and_trinity_md_says_why(cli, tmp_path: Path):
    # budgetrule87: Trinity 0.6 on verl 0.8 or later ignores the actor's own budget, but verl before 0.8 takes it, and
    # lowered to the verdict's it fits both lines: so it fails --check, as docs/trinity.md's verdict says, and why
    config = tmp_path / "trinity.yaml"
    config.write_text("model: {model_path: Qwen/Qwen3-8B, max_model_len: 8192}\n" + REFUSING_HEAD + (
        "trainer: {trainer_config: {actor_rollout_ref: {actor: {ppo_max_token_len_per_gpu: 131072}}}}\n"),
        encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "h100", "--trinity-version", "0.6", "--check")
    shown = " ".join(out.split())
    assert status == 1 and f"more tokens per GPU than the verdict assumes ({ROLE_KEYS_IGNORED})" in shown
    assert "it fits in memory at 16384 tokens per GPU" in shown and "whether it trains there is unknown" in shown
    verdict = " ".join((Path(__file__).parent.parent / "docs" / "trinity.md").read_text(encoding="utf-8").split())
    assert ("The rule: `--check` fails where some verl line the release may run takes more tokens per GPU than the "
            "verdict vouches for and a setting exists that fits every line. So a role's own budget fails it even "
            "where only verl before 0.8 reads it (Trinity 0.6 on verl 0.8 or later takes the trainer's; the line says "
            "so): whether the release runs verl 0.7 or 0.8 is the installed verl's to decide, not the config's, and "
            "the role's budget lowered to the verdict's fits both.") in verdict


def test_check_needs_a_config_and_a_length_to_judge_it_at(cli, user_config: Path):
    assert cli("--model", "4B", "--len", "4k", "--check") == (
        2, "", ("solve: error: --check judges the config of --from-config FILE: give it (a plan asked by flags alone "
                "has no config to judge)\n"))
    text = user_config.read_text(encoding="utf-8")
    lines = [line for line in text.splitlines(keepends=True)
             if not line.lstrip().startswith(("max_model_len:", "max_prompt_tokens:", "max_response_tokens:"))]
    user_config.write_text("".join(lines), encoding="utf-8")
    status, out, err = cli("--from-config", str(user_config), "--maximize", "len", "--check")
    assert (status, out) == (2, "")
    assert err == ("solve: error: --check needs a length to judge trinity.yaml at: it sets no model.max_model_len "
                   "(nor max_prompt_tokens and max_response_tokens); give --len L\n")
    # With --len, it is judged at that length: vanilla on 6 A100s trains Qwen3-8B at 4096 tokens (documented).
    status, out, _ = cli("--from-config", str(user_config), "--gpu", "a100", "--len", "4k", "--check", "--json")
    assert (status, json.loads(out)[0]["current"]["trains"]) == (0, True)


def test_check_exits_1_where_the_config_does_not_train_on_one_gpu_type_of_several(cli, user_config: Path,
                                                                                  monkeypatch: pytest.MonkeyPatch):
    # Vanilla on 6 GPUs at 16384 tokens: the H20's table says it trains, the A100's that it runs out of memory.
    monkeypatch.setenv("MAX_MODEL_LEN", "16384")
    status, out, _ = cli("--from-config", str(user_config), "--check", "--json")
    trains = {answer["gpu"]: (answer["current"]["trains"], bool(answer["plans"])) for answer in json.loads(out)}
    assert (status, trains) == (1, {"A100-80GB": (False, True), "H20-96GB": (True, True)})
    assert cli("--from-config", str(user_config), "--gpu", "h20", "--check")[0] == 0


def test_a_verdict_that_trains_is_green_and_yellow_where_the_config_has_a_problem(cli, tmp_path: Path, coloured_screen):
    # Both configs' settings train (vanilla on 7 A100s at 8192 tokens); the megatron one's "but:" line makes its
    # verdict a warning.
    config = "model: {model_path: Qwen/Qwen3-8B, max_model_len: 8192}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
    plain, megatron = tmp_path / "plain.yaml", tmp_path / "megatron.yaml"
    plain.write_text(config + "algorithm: {algorithm_type: grpo}\n", encoding="utf-8")
    megatron.write_text(config + "algorithm: {algorithm_type: grpo}\ntrainer: {trainer_strategy: megatron}\n",
                        encoding="utf-8")
    assert [cli("--from-config", str(path), "--gpu", "a100")[0] for path in (plain, megatron)] == [0, 0]
    shown = coloured_screen.getvalue().splitlines()
    verdicts = [line.split(" runs ")[0] for line in shown if " runs vanilla on" in line]
    assert verdicts == ["\x1b[32mplain.yaml", "\x1b[33mmegatron.yaml"]
    assert coloured_screen.getvalue().count("but:") == 1


def test_a_config_written_for_a_lowered_budget_is_read_back_at_that_budget_and_trains(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # Qwen3-8B on 4 of 8 A100s, its roles' budgets at 16384 (what --write left at 32768 tokens, SP=4). At 131072
    # tokens, --token-budget auto plans Env + Offload + SP=4 at 50176 tokens per GPU; the patched config raises the
    # roles' budgets to that, so reading it back gives the same plan, with its figures, and --check passes (the roles
    # at 16384 would hold no sequence: its verdict would find no plan).
    config = tmp_path / "trinity.yaml"
    config.write_text("algorithm: {algorithm_type: grpo}\n"
                      "model:\n  model_path: Qwen/Qwen3-8B\n  max_model_len: 32768\ncluster:\n  node_num: 1\n"
                      "  gpu_per_node: 8\nexplorer:\n  rollout_model:\n    engine_num: 4\ntrainer:\n"
                      "  ulysses_sequence_parallel_size: 4\n  trainer_config:\n    actor_rollout_ref:\n      actor:\n"
                      "        ppo_max_token_len_per_gpu: 16384  # by hand\n      ref:\n"
                      "        log_prob_max_token_len_per_gpu: 16384\n", encoding="utf-8")
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    patched = tmp_path / "patched.yaml"
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100", "--len", "131072", "--token-budget", "auto",
                         "--write", str(patched))
    assert status == 0 and "max_token_len_per_gpu = 50176" in out
    written = patched.read_text(encoding="utf-8")
    assert ("        ppo_max_token_len_per_gpu: 50176  # by hand\n" in written
            and "        log_prob_max_token_len_per_gpu: 50176\n" in written)
    status, out, _ = cli("--from-config", str(patched), "--gpu", "a100", "--check")
    assert status == 0 and ("runs Env + Offload + SP=4 on 4 trainer GPUs at 131072 tokens (Env on, read from "
                            "this shell's PYTORCH_CUDA_ALLOC_CONF): it trains (estimated: the memory model predicts "
                            "72.4 GiB per GPU, 1.2 GiB to spare)") in " ".join(out.split())


@pytest.mark.parametrize(("version", "said"), [((), True), (("--trinity-version", "0.5"), True),
                                               (("--trinity-version", "0.6"), False)])
def test_write_notes_that_trinity_050_undoes_a_lowered_budget(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              version: tuple[str, ...], said: bool):
    # The plan lowers the budget to 50176 (Trinity's default at SP=4 is 65536): Trinity 0.5.0 raises it back, which
    # --write's notes say (in the fragment comment's words) unless the config is for Trinity 0.6.
    config, patched = tmp_path / "trinity.yaml", tmp_path / "patched.yaml"
    config.write_text("algorithm: {algorithm_type: grpo}\nmodel: {model_path: Qwen/Qwen3-8B, max_model_len: 32768}\n"
                      "cluster: {node_num: 1, gpu_per_node: 8}\nexplorer: {rollout_model: {engine_num: 4}}\n",
                      encoding="utf-8")
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    status, _, err = cli("--from-config", str(config), "--gpu", "a100", "--len", "131072", "--token-budget", "auto",
                         *version, "--write", str(patched))
    note = (f"solve: note: {patched}: trainer.max_token_len_per_gpu 50176 is below Trinity's default "
            "ceil(2 x 131072 / 4) = 65536: Trinity 0.5.0 raises it back to the default: use 0.5.1 or later\n")
    assert status == 0 and (note in err) is said and ("0.5.0" in err) is said


_LONGER_STEPS = ((32768, (), {"env": False, "offload": False, "sp": 4, "max_token_len_per_gpu": 16384}),
                 (65536, (), {"env": True, "offload": True, "sp": 4, "max_token_len_per_gpu": 32768}),
                 (131072, ("--token-budget", "auto"),
                  {"env": True, "offload": True, "sp": 4, "max_token_len_per_gpu": 50176}))
"""Qwen3-8B on 4 of 8 A100s at longer and longer lengths: the best plan's setting and token budget at each."""


def test_configs_written_step_by_step_to_longer_lengths_get_the_plan_a_fresh_config_gets(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # The user's config at 16384 tokens, its roles' budgets at 32768 by hand; --write takes it to 32768, then 65536,
    # then 131072 (--token-budget auto). Each --write sets trainer.max_token_len_per_gpu and the roles' budgets to the
    # plan's Trinity default (16384, then 32768): those say no limit of the user's, and the next step plans as for a
    # config without them (at 65536, the table's Env + Offload + SP=4 at 32768, not Env + SP=4 at a budget lowered
    # to 25600 with the estimate's 3.1 GiB to spare). Each written config, read back, gets the fresh config's plan.
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    head = ("model:\n  model_path: Qwen/Qwen3-8B\n  max_model_len: 16384\ncluster:\n  node_num: 1\n  gpu_per_node: 8\n"
            "buffer: {batch_size: 32}\nalgorithm: {algorithm_type: grpo, repeat_times: 8}\n"
            "explorer:\n  rollout_model:\n    engine_num: 4\ntrainer:\n  ulysses_sequence_parallel_size: 2\n")
    fresh, config = tmp_path / "fresh.yaml", tmp_path / "16k.yaml"
    fresh.write_text(head, encoding="utf-8")
    config.write_text(head + "  trainer_config:\n    actor_rollout_ref:\n"
                      "      actor: {ppo_max_token_len_per_gpu: 32768}\n"
                      "      ref: {log_prob_max_token_len_per_gpu: 32768}\n", encoding="utf-8")

    def best(*flags: str) -> dict:
        status, out, _ = cli(*flags, "--gpu", "a100", "--json")
        assert status == 0
        return json.loads(out)[0]["plans"][0]

    for length, flags, expected in _LONGER_STEPS:
        written = tmp_path / f"{length}.yaml"
        planned = best("--from-config", str(config), "--len", str(length), *flags)
        assert {key: planned[key] for key in expected} == expected
        assert planned == best("--from-config", str(fresh), "--len", str(length), *flags)
        status, _, _ = cli("--from-config", str(config), "--gpu", "a100", "--len", str(length), *flags,
                           "--write", str(written))
        text = written.read_text(encoding="utf-8")
        assert status == 0 and f"  max_token_len_per_gpu: {expected['max_token_len_per_gpu']}\n" in text
        assert best("--from-config", str(written), *flags) == planned
        config = written


def test_role_budgets_set_by_hand_below_the_trainers_still_count_as_the_users(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # The 32768-token config --write leaves (trainer and roles at 16384, Trinity's default there), at 40960 tokens:
    # its budgets follow the length, as unset ones would, and the verdict is at the default, 20480. With the roles at
    # 12288 by hand (not the trainer's), they are the user's own lower budget: the verdict is at 12288, and it caps
    # the plans' (s80: SP=4 at 12288, where before Env + SP=2 raised it to 27648, and SP=2 holds no sequence at it).
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    roles = ("  trainer_config:\n    actor_rollout_ref:\n      actor: {{ppo_max_token_len_per_gpu: {0}}}\n"
             "      ref: {{log_prob_max_token_len_per_gpu: {0}}}\n")
    head = ("algorithm: {algorithm_type: grpo}\n"
            "model:\n  model_path: Qwen/Qwen3-8B\n  max_model_len: 32768\ncluster:\n  node_num: 1\n  gpu_per_node: 8\n"
            "explorer:\n  rollout_model:\n    engine_num: 4\ntrainer:\n  ulysses_sequence_parallel_size: 4\n"
            "  max_token_len_per_gpu: 16384\n")
    config = tmp_path / "trinity.yaml"
    config.write_text(head + roles.format(16384), encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100", "--len", "40960", "--json")
    answer = json.loads(out)[0]
    assert status == 0 and answer["current"]["max_token_len_per_gpu"] is None
    assert [answer["plans"][0][key] for key in ("env", "sp", "max_token_len_per_gpu")] == [False, 4, 20480]
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100", "--len", "40960")
    assert ("but: trainer.max_token_len_per_gpu, "
            "trainer.trainer_config.actor_rollout_ref.actor.ppo_max_token_len_per_gpu and "
            "trainer.trainer_config.actor_rollout_ref.ref.log_prob_max_token_len_per_gpu 16384: what Trinity gives "
            "them unset at the config's own 32768 tokens, so read as unset at 40960 tokens too (the verdict is at "
            "20480 tokens per GPU); as written, Trinity keeps 16384 there, fewer tokens per GPU than the verdict "
            "assumes (on every verl line: Trinity 0.6 on verl 0.8 or later runs every pass at the trainer's; verl "
            "before 0.8 each role at its own where set, else at the trainer's); applying the plan leaves them at its "
            "budget") in " ".join(out.split())
    config.write_text(head + roles.format(12288), encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100", "--len", "40960", "--json")
    answer = json.loads(out)[0]
    # the trainer's 16384, which Trinity keeps as written (verl 0.8 takes it), is above: trains false (s87)
    assert status == 0 and answer["current"]["max_token_len_per_gpu"] == 12288 and not answer["current"]["trains"]
    assert [answer["plans"][0][key] for key in ("env", "sp", "max_token_len_per_gpu", "token_budget_cap")] == [
        False, 4, 12288, 12288]


def test_a_key_that_decides_the_tokens_per_gpu_and_cannot_be_read_leaves_the_verdict_unknown(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # Qwen3-8B, Env + SP=2 on 6 of 8 A100s at 32768 tokens, a cell that trains. With trainer.use_dynamic_bsz from an
    # unset variable, verl may fill the actor's micro-batches with its 4 sequences (65536 tokens per GPU) or read the
    # budget (32768): whether it trains is unknown, and --check fails. Its micro-batch size unset, one sequence fits
    # either way: the verdict stands.
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    monkeypatch.delenv("DYN", raising=False)
    config = tmp_path / "trinity.yaml"

    def current(actor: str) -> tuple[int, dict[str, object]]:
        config.write_text("model: {model_path: Qwen/Qwen3-8B, max_model_len: 32768}\n"
                          "cluster: {node_num: 1, gpu_per_node: 8}\nexplorer: {rollout_model: {engine_num: 2}}\n"
                          "algorithm: {algorithm_type: grpo}\n"
                          "trainer: {ulysses_sequence_parallel_size: 2, use_dynamic_bsz: '${oc.env:DYN}', "
                          f"trainer_config: {{actor_rollout_ref: {{actor: {{{actor}}}}}}}}}\n", encoding="utf-8")
        status, out, _ = cli("--from-config", str(config), "--gpu", "a100", "--check", "--json")
        return status, json.loads(out)[0]["current"]

    status, unknown = current("ppo_micro_batch_size_per_gpu: 4")
    assert (status, unknown["trains"], unknown["plan"], unknown["unread_keys"]) == (
        1, False, None, ["trainer.use_dynamic_bsz"])
    assert unknown["verdict"] == (
        "trinity.yaml runs Env + SP=2 on 6 trainer GPUs at 32768 tokens (Env on, read from this shell's "
        "PYTORCH_CUDA_ALLOC_CONF): whether it trains is unknown: the tokens per GPU it takes depend on "
        "trainer.use_dynamic_bsz, which cannot be read here (set it as the run will, and judge again). The best plan "
        "follows.")
    status, one_sequence = current("ppo_epochs: 1")
    assert (status, one_sequence["trains"], one_sequence["unread_keys"]) == (0, True, [])


def test_the_rollouts_own_budget_bounds_the_actors_recompute_and_is_judged_as_the_roles_are(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # rollout.log_prob_max_token_len_per_gpu bounds the actor's log-prob recompute on verl before 0.8 (Trinity fills it
    # from the actor's, and never raises it to hold a sequence): above the verdict's budget, a but: line; below the
    # length, the rule it breaks; --write sets it to the plan's. Qwen3-8B, SP=4 on 4 of 8 A100s at 32768 tokens, with
    # rollout_correction.bypass_mode false, so that the recompute runs (checks90: by default it does not, and the
    # verdict counts no budget of the rollout's).
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    key = "trainer.trainer_config.actor_rollout_ref.rollout.log_prob_max_token_len_per_gpu"
    config, patched = tmp_path / "trinity.yaml", tmp_path / "patched.yaml"

    def verdict(rollout: int, bypass: str = "    algorithm: {rollout_correction: {bypass_mode: false}}\n"
                ) -> tuple[dict[str, object], str]:
        config.write_text("model: {model_path: Qwen/Qwen3-8B, max_model_len: 32768}\n"
                          "cluster: {node_num: 1, gpu_per_node: 8}\nexplorer: {rollout_model: {engine_num: 4}}\n"
                          "algorithm: {algorithm_type: grpo}\ntrainer:\n  ulysses_sequence_parallel_size: 4\n"
                          f"  trainer_config:\n{bypass}"
                          "    actor_rollout_ref:\n"
                          f"      rollout: {{log_prob_max_token_len_per_gpu: {rollout}}}\n", encoding="utf-8")
        status, out, err = cli("--from-config", str(config), "--gpu", "a100", "--json", "--write", str(patched),
                               "--check")
        current = json.loads(out)[0]["current"]
        assert status == (0 if current["trains"] and not current["refused"] else 1)  # --check: as its words say
        return current, err

    current, err = verdict(32768)
    assert current["config_problem_codes"] == ["token-budget-above-verdict"]
    # At the default's 16384 tokens per GPU the settings fit, but the config lets a GPU take more: no "it trains", and
    # --check fails (exit 1, trains false), the plan at the verdict's budget kept for its evidence.
    assert not current["trains"] and current["plan"]["max_token_len_per_gpu"] == 16384
    assert current["verdict"].endswith(
        "it fits in memory at 16384 tokens per GPU (inferred: the A100-80GB table for 4 GPUs says 'SP=4' at 32768, "
        "and this plan includes that setting), but the config lets a GPU take more, which this verdict does not "
        "vouch for: whether it trains there is unknown (the problem on its tokens per GPU says how many).")
    assert current["config_problems"] == [(
        f"{key} 32768 is above Trinity's default ceil(2 x 32768 / 4) = 16384, which the tables measured: more tokens "
        f"per GPU than the verdict assumes ({ROLE_KEYS_IGNORED})")]
    assert f"solve: note: {patched}: {key} 32768 lowered to the plan's 16384" in err
    assert "      rollout: {log_prob_max_token_len_per_gpu: 16384}\n" in patched.read_text(encoding="utf-8")
    current, _ = verdict(4096)
    assert current["config_problems"] == [(
        f"{key} 4096 x SP 4 is below model.max_model_len 32768: in the actor's log-prob recompute verl before 0.8 "
        "stops at the first step whose batch holds a sequence longer than that (Trinity 0.5.2 and 0.6) or is padded "
        "wider than that, to its longest prompt plus its longest response (0.5.0 and 0.5.1), and Trinity 0.6 on verl "
        "0.8 or later ignores the key")]
    # bypass90: bypass_mode unset (Trinity's true) runs no recompute: no line on the rollout's, which --write leaves
    current, err = verdict(4096, "")
    assert (current["config_problems"], current["trains"]) == ([], True) and key not in err
    assert "      rollout: {log_prob_max_token_len_per_gpu: 4096}\n" in patched.read_text(encoding="utf-8")


def test_budget_keys_read_as_unset_that_already_hold_the_plans_budget_are_not_said_to_be_set(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # The roles' budgets at 16384, what Trinity gives them unset at the config's 32768 tokens at SP=4: at 16384 tokens
    # they are read as unset (the verdict on SP=4 is at 8192), and the plan, SP=2, takes 16384 too, so the apply block
    # has no line for them: the but: line says applying the plan leaves them at its budget, not that it sets them.
    # Only the trainer's key is named without the note that Trinity 0.6 on verl 0.8 ignores the roles' own. GRPO
    # trains no critic (s74: with PPO's resident critic, less its gradients, the config's own SP=4 trains).
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    head = ("algorithm: {algorithm_type: grpo}\n"
            "model:\n  model_path: Qwen/Qwen3-8B\n  max_model_len: 32768\ncluster:\n  node_num: 1\n  gpu_per_node: 8\n"
            "explorer:\n  rollout_model:\n    engine_num: 4\ntrainer:\n  ulysses_sequence_parallel_size: 4\n")
    config = tmp_path / "trinity.yaml"
    config.write_text(head + "  trainer_config:\n    actor_rollout_ref:\n"
                      "      actor: {ppo_max_token_len_per_gpu: 16384}\n", encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100", "--len", "16384")
    shown = " ".join(out.split())
    assert status == 0 and "max_token_len_per_gpu = 16384 (ceil(2 x 16384 / SP 2))" in shown
    assert "ppo_max_token_len_per_gpu:" not in out  # no apply line for it
    assert ("but: trainer.trainer_config.actor_rollout_ref.actor.ppo_max_token_len_per_gpu 16384: what Trinity gives "
            "it unset at the config's own 32768 tokens, so read as unset at 16384 tokens too (the verdict is at 8192 "
            f"tokens per GPU); as written, Trinity keeps 16384 there, more tokens per GPU than the verdict assumes "
            f"({ROLE_KEYS_IGNORED}); applying the plan leaves it at its budget") in shown
    config.write_text(head + "  max_token_len_per_gpu: 16384\n", encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100", "--len", "16384")
    assert status == 0 and ("but: trainer.max_token_len_per_gpu 16384: what Trinity gives it unset at the config's "
                            "own 32768 tokens, so read as unset at 16384 tokens too (the verdict is at 8192 tokens "
                            "per GPU); as written, Trinity keeps 16384 there, more tokens per GPU than the verdict "
                            "assumes (Trinity 0.6 on verl 0.8 or later runs every pass at it; verl before 0.8 each "
                            "role without a budget of its own); applying the plan leaves it at its budget") in " ".join(
                                out.split())


GRPO_8B_ON_4_OF_8 = ("algorithm: {algorithm_type: grpo}\nmodel:\n  model_path: Qwen/Qwen3-8B\n  max_model_len: 16384\n"
                     "cluster:\n  node_num: 1\n  gpu_per_node: 8\nexplorer:\n  rollout_model:\n    engine_num: 4\n"
                     "trainer:\n")
"""A GRPO config of Qwen3-8B on a node of 8 GPUs, 4 of them the rollout's, up to its ``trainer:`` key."""


def test_the_apply_block_ends_with_the_configs_own_keys_the_plan_changes_too(cli, tmp_path: Path):
    # Qwen3-8B at 32768 on 4 A100s: SP=4 at 16384 tokens per GPU, no Offload. The plan's own apply lines set the
    # length, SP and budget; the config's own actor budget (32768) and offload flag (on) would stay as they are: the
    # apply block ends with them, under a comment, each with its value now as a comment (every line pastes); with
    # --write too, whose copy sets them. Where --emit carries them, and with --json, they are not added; nothing goes
    # to stderr.
    config = tmp_path / "trinity.yaml"
    config.write_text(GRPO_8B_ON_4_OF_8 + "  ulysses_sequence_parallel_size: 2\n  trainer_config:\n"
                      "    actor_rollout_ref:\n      actor:\n        ppo_max_token_len_per_gpu: 32768\n"
                      "        fsdp_config: {param_offload: true}\n", encoding="utf-8")
    actor = "trainer.trainer_config.actor_rollout_ref.actor"
    status, out, err = cli("--from-config", str(config), "--gpu", "a100", "--len", "32768")
    assert status == 0 and "plan           SP=4 on 4 of 4 GPUs" in out and "trinity.yaml" not in err
    assert out.endswith(
        "model.max_model_len: 32768\ntrainer.ulysses_sequence_parallel_size: 4\ntrainer.max_token_len_per_gpu: 16384\n"
        f"# and these keys of {config.name}, which the plan changes too (after each, its value now):\n"
        f"{actor}.ppo_max_token_len_per_gpu: 16384  # now 32768\n{actor}.fsdp_config.param_offload: false  # now true\n"
        "\n")
    status, fragment, _ = cli("--from-config", str(config), "--gpu", "a100", "--len", "32768", "--emit", "trinity")
    assert status == 0 and "# and these keys" not in fragment
    assert "        ppo_max_token_len_per_gpu: 16384\n" in fragment and "          param_offload: false\n" in fragment
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100", "--len", "32768", "--json")
    assert status == 0 and "# and these keys" not in out and "# now" not in out
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100", "--len", "32768", "--write",
                         str(tmp_path / "patched.yaml"))
    assert status == 0 and f"{actor}.fsdp_config.param_offload: false  # now true\n" in out


def test_a_dpo_fragments_batch_note_counts_the_pairs_micro_batch_its_keys_write(cli):
    # Qwen3-8B, DPO at 8192 on 8 A100s: the keys turn dynamic batch sizes off and write the actor's pair (1 on 0.5,
    # which Trinity doubles; 2 where the release may be 0.6, for verl 0.8 or later, with 1 to write before 0.8), and
    # Trinity asserts that each rank's share of the batch holds whole micro-batches: the note said "a multiple of 8" for
    # a batch of 72, which a config with these keys fails (the check's dpo-mini-batch-split: a multiple of 16). Since
    # dpobatch92 the plan keeps the batch to twice its ranks: 72 moves it to SP 2 (4 ranks, 18 per GPU).
    status, out, _ = cli("--model", "8B", "--gpu", "A100-80GB", "--gpus", "8", "--len", "8k", "--dpo",
                         "--rollout-gpus", "0", "--train-batch-size", "72", "--trinity-version", "0.5.2",
                         "--emit", "trinity")
    assert status == 0 and "  train_batch_size: 72" in out
    assert ("Planned for a train batch of 72 (buffer.train_batch_size, by default batch_size x repeat_times), "
            "which its 4 data-parallel ranks (trainer GPUs / SP) divide; DPO's micro-batch below, one pair, 2 "
            "sequences per GPU (the actor's 1, doubled by Trinity before verl 0.8), must divide each rank's share too: "
            "keep your batch a multiple of 8. #") in " ".join(
                line.removeprefix("# ") for line in out.splitlines() if line.startswith("#"))
    # where the release may be 0.6, the 2 written is one pair on verl 0.8 or later, and the 1 to write before 0.8 one
    # pair once doubled: 48 keeps the plan's rule (twice the 8 ranks divide it) on both lines, so the note keeps it too
    # (it said a multiple of 32, counting the 2 doubled, and that the trainer fails as it starts)
    status, out, _ = cli("--model", "8B", "--gpu", "A100-80GB", "--gpus", "8", "--len", "8k", "--dpo",
                         "--rollout-gpus", "0", "--train-batch-size", "48", "--emit", "trinity")
    assert status == 0 and ("which its 8 data-parallel ranks (trainer GPUs / SP) divide; DPO's micro-batch below, one "
                            "pair, 2 sequences per GPU (the actor's 2 on verl 0.8 or later; before 0.8 write 1 there, "
                            "which Trinity doubles), must divide each rank's share too: keep your batch a multiple of "
                            "16. #") in " ".join(
                                line.removeprefix("# ") for line in out.splitlines() if line.startswith("#"))


def test_a_quoted_flag_the_plan_sets_is_shown_quoted_in_its_now_comment(cli, tmp_path: Path):
    # The actor's param_offload is the text 'false' (OmegaConf's bool field reads it as false); --write writes the
    # boolean, so the line lists it, and its comment gave "# now false", the same as the value beside it: the user
    # saw a change to nothing. The comment shows the text as written, quoted. (checks92: the ref's fsdp_size '8', read
    # as Trinity's int field reads it, shards over all 4 trainer GPUs as -1 does, so the plan leaves it as written.)
    config = tmp_path / "trinity.yaml"
    config.write_text(GRPO_8B_ON_4_OF_8 + "  trainer_config:\n    actor_rollout_ref:\n      actor:\n"
                      "        fsdp_config: {param_offload: 'false', fsdp_size: '2'}\n"
                      "      ref: {fsdp_config: {fsdp_size: '8'}}\n", encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100", "--len", "32768")
    fsdp = "trainer.trainer_config.actor_rollout_ref.actor.fsdp_config"
    assert status == 0
    assert out.endswith(f"{fsdp}.fsdp_size: -1  # now '2'\n{fsdp}.param_offload: false  # now 'false'\n\n")


def test_the_config_keys_in_the_apply_block_come_per_gpu_type_and_read_the_environment_and_the_trinity_version(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # Qwen3-8B at 32768, no Offload: the plan turns off the config's trainer-level offload_policy (Trinity 0.6's
    # flags: the two it lacks are named as unset) and the actor's param_offload, an interpolation of $OFFLOAD.
    config = tmp_path / "trinity.yaml"
    config.write_text("algorithm: {algorithm_type: grpo}\n"
                      "model:\n  model_path: Qwen/Qwen3-8B\n  max_model_len: 16384\ncluster:\n  node_num: 1\n"
                      "  gpu_per_node: 8\nexplorer:\n  rollout_model:\n    engine_num: 4\ntrainer:\n"
                      "  offload_policy: true\n  ulysses_sequence_parallel_size: 2\n  trainer_config:\n"
                      "    actor_rollout_ref:\n      actor:\n"
                      "        fsdp_config: {param_offload: '${oc.decode:${oc.env:OFFLOAD,true}}'}\n", encoding="utf-8")
    heading = f"# and these keys of {config.name}, which the plan changes too (after each, its value now):\n"
    trainer = ("trainer.param_offload: false  # now unset\ntrainer.optimizer_offload: false  # now unset\n"
               "trainer.offload_policy: false  # now true\n")
    actor = ("trainer.trainer_config.actor_rollout_ref.actor.fsdp_config.param_offload: false  # now "
             "${oc.decode:${oc.env:OFFLOAD,true}}\n")
    # Each GPU type's apply block ends with them, where the answers are for more than one.
    status, out, _ = cli("--from-config", str(config), "--len", "32768")
    assert status == 0 and out.count(f"{heading}{trainer}{actor}") == 2
    # $OFFLOAD false: the actor's flag is off already, and the patch keeps its interpolation.
    monkeypatch.setenv("OFFLOAD", "false")
    status, out, _ = cli("--from-config", str(config), "--len", "32768", "--gpu", "a100")
    assert status == 0 and out.endswith(f"{heading}{trainer}\n")
    # Trinity 0.5 has no trainer-level flags: only the actor's is named.
    monkeypatch.delenv("OFFLOAD")
    status, out, _ = cli("--from-config", str(config), "--len", "32768", "--gpu", "a100", "--trinity-version", "0.5")
    assert status == 0 and out.endswith(f"{heading}{actor}\n")


def test_trinity_05_judges_the_unset_trainer_budget_as_it_fills_it_at_the_trainers_own_sp(cli, tmp_path: Path):
    # Trinity 0.5 runs the trainer at the actor's SP, but fills an unset trainer.max_token_len_per_gpu at the trainer's
    # own (config_validator.py:1170), which the actor then takes: judged as that budget set by hand would be. Qwen3-8B,
    # 4 of 8 A100s, 32768 tokens.
    def verdict(trainer: str, actor_sp: int) -> dict:
        status, _ = config_verdict(cli, tmp_path, (
            "model: {model_path: Qwen/Qwen3-8B, max_model_len: 32768}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
            f"explorer: {{rollout_model: {{engine_num: 4}}}}\ntrainer:\n{trainer}  trainer_config:\n"
            f"    actor_rollout_ref:\n      actor: {{ulysses_sequence_parallel_size: {actor_sp}}}\n"), "a100")
        assert status == 0
        status, out, _ = cli("--from-config", str(tmp_path / "trinity.yaml"), "--gpu", "a100", "--json",
                             "--trinity-version", "0.5")
        assert status == 0
        return json.loads(out)[0]["current"]

    def budget_lines(current: dict) -> list[tuple[str, str]]:
        return [(code, words) for code, words in zip(current["config_problem_codes"], current["config_problems"])
                if code.startswith(("token-budget", "lowered"))]

    # Filled at SP 1, 65536: above the verdict's 16384 at SP 4, as a hand-set 65536 at SP 4 is; the verdict stands
    # at the default, and vouches for neither (s87: trains false).
    filled = verdict("", 4)
    by_hand = verdict("  ulysses_sequence_parallel_size: 4\n  max_token_len_per_gpu: 65536\n", 4)
    assert (filled["trains"], filled["max_token_len_per_gpu"], by_hand["trains"]) == (False, None, False)
    assert budget_lines(filled) == [("token-budget-above-verdict", (
        "the unset trainer.max_token_len_per_gpu, which Trinity 0.5 fills at the trainer's SP 1 with ceil(2 x 32768 / "
        "1) = 65536, is above Trinity's default ceil(2 x 32768 / 4) = 16384, which the tables measured: more tokens "
        "per GPU than the verdict assumes"))]
    assert budget_lines(by_hand) == [("token-budget-above-verdict", (
        "trainer.max_token_len_per_gpu 65536 is above Trinity's default ceil(2 x 32768 / 4) = 16384, which the tables "
        "measured: more tokens per GPU than the verdict assumes"))]
    # Filled at SP 2, 32768: below the verdict's 65536 at SP 1 yet holding a sequence, which 0.5.0 raises to its
    # default all the same: the verdict stays at it (raise05; it was at 32768, which 0.5.1 and 0.5.2 keep).
    lowered = verdict("  ulysses_sequence_parallel_size: 2\n", 1)
    assert (lowered["sp"], lowered["max_token_len_per_gpu"]) == (1, None)
    assert budget_lines(lowered) == [("token-budget-below-verdict", (
        "the unset trainer.max_token_len_per_gpu, which Trinity 0.5 fills at the trainer's SP 2 with ceil(2 x 32768 / "
        "2) = 32768, is below Trinity's default ceil(2 x 32768 / 1) = 65536, which the tables measured: Trinity "
        "0.5.0 raises it to 65536, the verdict's budget (any budget below twice the length over its role's SP), as "
        "the verdict counts; 0.5.1 and 0.5.2 keep it, fewer tokens per GPU than the verdict assumes (so it is "
        "cautious; each step takes more micro-batches)"))]
    # Filled at SP 4, 16384: no sequence fits at SP 1, so Trinity raises the actor's; the verdict stays at 65536.
    raised = verdict("  ulysses_sequence_parallel_size: 4\n", 1)
    assert (raised["sp"], raised["max_token_len_per_gpu"]) == (1, None)
    assert budget_lines(raised) == [("token-budget-below-verdict", (
        "the unset trainer.max_token_len_per_gpu, which Trinity 0.5 fills at the trainer's SP 4 with ceil(2 x 32768 / "
        "4) = 16384, holds no sequence of 32768 tokens at the actor's SP 1: Trinity 0.5 raises the actor's to "
        "ceil(32768 / 1) = 32768 (0.5.0 to ceil(2 x 32768 / 1) = 65536), no more tokens per GPU than the verdict "
        "assumes (so it is cautious)")),
        ("token-budget-below-length", PADDED_051.format(budget="the actor's budget", least=32768, sp=1, tokens=32768))]
    # Without the release (or with 0.6) the trainer's SP is the verdict's, and no budget line is said.
    status, current = config_verdict(cli, tmp_path, (tmp_path / "trinity.yaml").read_text(encoding="utf-8"), "a100")
    assert (status, current["sp"], budget_lines(current)) == (0, 4, [])


def test_trinity_05_raises_an_unset_budget_filled_below_the_actors_sp_to_the_length_per_sp_rank(cli, tmp_path: Path):
    # 8 of 16 A100s train, the trainer at SP 8 and the actor at SP 2: the fill ceil(2 x 32768 / 8) = 8192 holds no
    # sequence, Trinity 0.5 raises the actor's to ceil(32768 / 2) = 16384, and 0.5.1's verl checks a padded batch
    # against that budget x the actor's SP 2: 32768 tokens, not 16384.
    config_verdict(cli, tmp_path, (
        "model: {model_path: Qwen/Qwen3-8B, max_model_len: 32768}\ncluster: {node_num: 2, gpu_per_node: 8}\n"
        "explorer: {rollout_model: {engine_num: 8}}\ntrainer:\n  ulysses_sequence_parallel_size: 8\n"
        "  trainer_config:\n    actor_rollout_ref:\n      actor: {ulysses_sequence_parallel_size: 2}\n"), "a100")
    status, out, _ = cli("--from-config", str(tmp_path / "trinity.yaml"), "--gpu", "a100", "--json",
                         "--trinity-version", "0.5")
    current = json.loads(out)[0]["current"]
    assert (status, current["sp"], current["trains"]) == (0, 2, True)
    lines = dict(zip(current["config_problem_codes"], current["config_problems"]))
    assert lines["token-budget-below-verdict"] == (
        "the unset trainer.max_token_len_per_gpu, which Trinity 0.5 fills at the trainer's SP 8 with ceil(2 x 32768 / "
        "8) = 8192, holds no sequence of 32768 tokens at the actor's SP 2: Trinity 0.5 raises the actor's to "
        "ceil(32768 / 2) = 16384 (0.5.0 to ceil(2 x 32768 / 2) = 32768), no more tokens per GPU than the verdict "
        "assumes (so it is cautious)")
    padded = PADDED_051.format(budget="the actor's budget", least=16384, sp=2, tokens=32768)
    assert lines["token-budget-below-length"] == padded


PPO_CONFIG = (
    "mode: both\nalgorithm: {algorithm_type: ppo, repeat_times: 1}\n"
    "model: {model_path: Qwen/Qwen3-8B, max_model_len: 16384}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
    "buffer: {batch_size: 48, train_batch_size: 48}\n"
    "explorer: {rollout_model: {engine_num: 2, tensor_parallel_size: 1}}\n"
    "trainer:\n  ulysses_sequence_parallel_size: 2\n  trainer_config:\n"
    "    critic: {ulysses_sequence_parallel_size: 4, ppo_max_token_len_per_gpu: 2048}\n")
"""A PPO config whose critic sets its own SP and token budget (Trinity 0.5 checks them as the ref's)."""


def test_trinity_05_refuses_a_critic_sp_that_does_not_divide_the_trainer_gpus(cli, tmp_path: Path):
    # Trinity 0.5 checks the critic's own SP as the actor's (_check_parallel_config on the critic): 4 does not divide
    # the 6 trainer GPUs, so it refuses the config and --check exits 1; its budget, 2048 x SP 4, holds no sequence of
    # 16384 tokens there, which Trinity 0.5 raises. Trinity 0.6 on verl before 0.8 reads the critic's SP as 0.5 does
    # (and refuses it); on verl 0.8 or later it runs the critic at the trainer's SP 2 and ignores its budget: with 0.6
    # a role-sp-differs line, which refuses nothing, and its budget judged at SP 4 (criticsp, s83: before, at SP 2).
    config = tmp_path / "trinity.yaml"
    config.write_text(PPO_CONFIG, encoding="utf-8")
    key = "trainer.trainer_config.critic"
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100-80g", "--json", "--trinity-version", "0.5")
    current = json.loads(out)[0]["current"]
    assert (status, current["trains"]) == (0, True)
    assert current["config_problem_codes"] == ["sp-divides-gpus", *["token-budget-below-length"] * 2,
                                               "critic-trained"]
    assert current["config_problems"][:3] == [
        (f"{key}.ulysses_sequence_parallel_size: SP=4 does not divide 6 GPUs (the trainer's), and Trinity 0.5 checks "
         "the critic's SP as the actor's: it refuses the config"),
        (f"{key}.ppo_max_token_len_per_gpu 2048 x SP 4 (the critic's) is below model.max_model_len 16384: Trinity 0.5 "
         "raises it to ceil(16384 / 4) = 4096 (Trinity 0.5.0 to its default, ceil(2 x 16384 / 4) = 8192)"
        ), PADDED_051.format(budget=f"{key}.ppo_max_token_len_per_gpu (the critic's)", least=4096, sp=4, tokens=16384)]
    assert cli("--from-config", str(config), "--gpu", "a100-80g", "--check", "--trinity-version", "0.5")[0] == 1
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100-80g", "--trinity-version", "0.6")
    assert status == 0
    shown = " ".join(out.split("\n       "))
    assert (f"  but: {key}.ulysses_sequence_parallel_size 4 is not trainer.ulysses_sequence_parallel_size 2: Trinity "
            "0.6 on verl before 0.8 checks the critic's SP as the actor's and refuses the config (SP=4 does not "
            "divide 6 GPUs); Trinity 0.6 on verl 0.8 or later ignores the key and runs the critic at SP 2; the verdict "
            "and the plans count the critic at SP 2: set them alike (--write does)\n") in shown
    assert (f"  but: {key}.ppo_max_token_len_per_gpu 2048 x SP 4 (the critic's) is below model.max_model_len 16384: "
            "Trinity 0.6 on verl before 0.8 raises it to ceil(16384 / 4) = 4096, and on verl 0.8 or later ignores the "
            "key\n") in shown
    assert cli("--from-config", str(config), "--gpu", "a100-80g", "--check", "--trinity-version", "0.6")[0] == 0


def test_trinity_05_ref_above_the_actors_sp_takes_its_budget_times_its_sp_over_the_actors_groups(
        cli, tmp_path: Path):
    # Trinity 0.5 sizes the ref's micro-batches at its own SP (verl's dp_actor: budget x SP tokens) but runs its
    # forward in the actor's SP groups (its worker builds them from the actor's SP): 32768 x 4 tokens over 2 GPUs
    # each take 65536 tokens, twice the verdict's 32768, where the ref's budget alone is the verdict's.
    key = "trainer.trainer_config.actor_rollout_ref.ref.log_prob_max_token_len_per_gpu"
    config = tmp_path / "trinity.yaml"
    text = ("algorithm: {algorithm_type: grpo}\nmodel: {model_path: Qwen/Qwen3-8B, max_model_len: 32768}\n"
            "cluster: {node_num: 1, gpu_per_node: 8}\nexplorer: {rollout_model: {engine_num: 4}}\ntrainer:\n"
            "  ulysses_sequence_parallel_size: 2\n  trainer_config:\n    actor_rollout_ref:\n"
            "      ref: {ulysses_sequence_parallel_size: 4, log_prob_max_token_len_per_gpu: 32768}\n")
    config.write_text(text, encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100-80g", "--json", "--trinity-version", "0.5")
    current = json.loads(out)[0]["current"]
    assert (status, current["config_problem_codes"]) == (0, ["role-sp-differs", "token-budget-above-verdict"])
    assert current["config_problems"][1] == (
        f"{key} 32768, at the ref's SP 4: each of the ref's micro-batches holds 32768 x 4 tokens, but Trinity 0.5 runs "
        "its forward in the actor's SP groups of 2 GPUs, so each GPU takes 32768 x 4 / 2 = 65536 tokens there, more "
        "than the verdict's 32768: set the ref's SP to the actor's (--write does)")
    # Half that budget takes the verdict's 32768 per GPU: no budget line (it was said to be cautious).
    config.write_text(text.replace("log_prob_max_token_len_per_gpu: 32768", "log_prob_max_token_len_per_gpu: 16384"),
                      encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100-80g", "--json", "--trinity-version", "0.5")
    assert json.loads(out)[0]["current"]["config_problem_codes"] == ["role-sp-differs"]
    # Without a budget of its own the ref takes the trainer's (Trinity's default, 32768), alike.
    config.write_text(text.replace(", log_prob_max_token_len_per_gpu: 32768", ""), encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100-80g", "--json", "--trinity-version", "0.5")
    assert json.loads(out)[0]["current"]["config_problems"][1].startswith(
        "the unset trainer.max_token_len_per_gpu, which Trinity fills with 32768 and the ref takes, at the ref's SP 4: "
        "each of the ref's micro-batches holds 32768 x 4 tokens")
    # Trinity 0.6 on verl 0.8 or later runs the ref at the trainer's SP, but on verl before 0.8 as 0.5 does
    # (verl_legacy/fsdp_workers.py:158-180): the line, saying both (test_legacyref_s85).
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100-80g", "--json", "--trinity-version", "0.6")
    assert json.loads(out)[0]["current"]["config_problems"][1].endswith(
        "but Trinity 0.6 on verl before 0.8 runs its forward in the actor's SP groups of 2 GPUs, so each GPU takes "
        "32768 x 4 / 2 = 65536 tokens there, more than the verdict's 32768; Trinity 0.6 on verl 0.8 or later runs it "
        "at SP 2: set the ref's SP to the actor's (--write does)")


def test_trinity_05_fills_the_rollout_budget_from_the_raised_actors(cli, tmp_path: Path):
    # The actor's 8192 x SP 2 holds no sequence of 32768: Trinity 0.5 raises it (0.5.1 and 0.5.2 to 16384, 0.5.0 to
    # its default 32768) before filling the rollout's from it, so the most any role takes is the raised one, 0.5.0's
    # taken, not the ref's 20480: the verdict is at the default. Without a release (or with 0.6) it is at 20480.
    config = tmp_path / "trinity.yaml"
    config.write_text(
        "algorithm: {algorithm_type: grpo}\nmodel: {model_path: Qwen/Qwen3-8B, max_model_len: 32768}\n"
        "cluster: {node_num: 1, gpu_per_node: 8}\nexplorer: {rollout_model: {engine_num: 4}}\ntrainer:\n"
        "  ulysses_sequence_parallel_size: 2\n  trainer_config:\n    actor_rollout_ref:\n"
        "      actor: {ppo_max_token_len_per_gpu: 8192}\n      ref: {log_prob_max_token_len_per_gpu: 20480}\n",
        encoding="utf-8")
    verdicts = {}
    for version in ("0.5", "0.6"):
        status, out, _ = cli("--from-config", str(config), "--gpu", "a100-80g", "--json", "--trinity-version", version)
        current = json.loads(out)[0]["current"]
        verdicts[version] = (status, current["max_token_len_per_gpu"], current["config_problem_codes"])
        if version == "0.5":  # no word of Trinity 0.6's verl 0.8 path on the ref's own budget
            assert current["config_problems"][2] == (  # raise05: 0.5.0 raises the 20480 too, which holds a sequence
                "trainer.trainer_config.actor_rollout_ref.ref.log_prob_max_token_len_per_gpu 20480 is below Trinity's "
                "default ceil(2 x 32768 / 2) = 32768, which the tables measured: Trinity 0.5.0 raises it to 32768, the "
                "verdict's budget (any budget below twice the length over its role's SP), as the verdict counts; 0.5.1 "
                "and 0.5.2 keep it, fewer tokens per GPU than the verdict assumes (so it is cautious; each step takes "
                "more micro-batches)")
    assert verdicts == {"0.5": (0, None, ["token-budget-below-length"] * 2 + ["token-budget-below-verdict"]),
                        "0.6": (0, 20480, ["token-budget-below-length", "lowered-token-budget"])}


def test_trinity_05_checks_the_refs_own_budget_at_the_refs_own_sp(cli, tmp_path: Path):
    # Trinity 0.5 (and 0.6 on verl before 0.8) raises the ref's budget to hold a sequence at the ref's own SP
    # (_adjust_token_len_if_needed on the ref's config), not the actor's: 16384 holds 32768 tokens at the actor's SP 4,
    # not at the ref's SP 1.
    key = "trainer.trainer_config.actor_rollout_ref.ref.log_prob_max_token_len_per_gpu"
    config = tmp_path / "trinity.yaml"
    config.write_text(
        "algorithm: {algorithm_type: grpo}\nmodel: {model_path: Qwen/Qwen3-8B, max_model_len: 32768}\n"
        "cluster: {node_num: 1, gpu_per_node: 8}\nexplorer: {rollout_model: {engine_num: 4}}\ntrainer:\n"
        "  ulysses_sequence_parallel_size: 4\n  trainer_config:\n    actor_rollout_ref:\n"
        "      actor: {ulysses_sequence_parallel_size: 4}\n"
        "      ref: {ulysses_sequence_parallel_size: 1, log_prob_max_token_len_per_gpu: 16384}\n", encoding="utf-8")
    codes = {}
    for version in ("0.5", "0.6"):
        status, out, _ = cli("--from-config", str(config), "--gpu", "a100", "--json", "--trinity-version", version)
        current = json.loads(out)[0]["current"]
        assert (status, current["trains"]) == (0, True)
        codes[version] = current["config_problem_codes"]
        if version == "0.5":
            assert current["config_problems"][0] == (
                f"{key} 16384 x SP 1 (the ref's) is below model.max_model_len 32768: Trinity 0.5 raises it to "
                "ceil(32768 / 1) = 32768 (Trinity 0.5.0 to its default, ceil(2 x 32768 / 1) = 65536)"
                )
            assert current["config_problems"][1] == PADDED_051.format(budget=f"{key} (the ref's)", least=32768, sp=1,
                                                                      tokens=32768)
        else:  # 0.6 on verl before 0.8 alike (s84: verl_legacy/verl_config.py:577, :586 in 0.6.0); 0.8 ignores it
            assert current["config_problems"][0] == (
                f"{key} 16384 x SP 1 (the ref's) is below model.max_model_len 32768: Trinity 0.6 on verl before 0.8 "
                "raises it to ceil(32768 / 1) = 32768, and on verl 0.8 or later ignores the key")
    assert codes == {"0.5": ["token-budget-below-length"] * 2 + ["role-sp-differs"],
                     "0.6": ["token-budget-below-length", "role-sp-differs"]}


def test_write_on_an_amd_gpu_says_what_rocms_pytorch_reads_beside_the_env_export(cli, tmp_path: Path):
    # The caution above it and the fragment's comment say it; the --write note had no ROCm word (s56). On an NVIDIA
    # GPU the note stays as it was.
    config = tmp_path / "grpo.yaml"
    config.write_text("model: {model_path: Qwen/Qwen3-32B, max_model_len: 32768}\n"
                      "cluster: {node_num: 1, gpu_per_node: 8}\n", encoding="utf-8")
    patched = tmp_path / "patched.yaml"
    export = (f"solve: note: {patched} needs Env, which a config cannot set: export "
              "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True before Ray starts")
    status, _, err = cli("--from-config", str(config), "--gpu", "mi300x", "--maximize", "len", "--write", str(patched))
    assert (status, err.splitlines()[-1]) == (0, (
        f"{export}. On ROCm, PyTorch reads PYTORCH_HIP_ALLOC_CONF too: set it the same, or not at all; a build "
        "without expandable segments ignores them with a warning (then plan with --no-env)."))
    status, _, err = cli("--from-config", str(config), "--gpu", "h200", "--maximize", "len", "--write", str(patched))
    assert (status, err.splitlines()[-1]) == (0, export)


def test_budget_keys_that_write_out_the_default_are_said_before_those_set_by_hand(cli, tmp_path: Path):
    # At --len 8192, the trainer's 32768 only writes out Trinity's default at the config's own 16384 (read as unset),
    # and the actor's 20000 is set by hand: the line on the first comes first, as the keys the plan leaves alone.
    config = tmp_path / "trinity.yaml"
    config.write_text("model:\n  model_path: Qwen/Qwen3-8B\n  max_model_len: 16384\nalgorithm: {algorithm_type: grpo}\n"
                      "cluster: {node_num: 1, gpu_per_node: 8}\nbuffer: {train_batch_size: 64}\n"
                      "explorer: {rollout_model: {engine_num: 4}}\ntrainer:\n  max_token_len_per_gpu: 32768\n"
                      "  trainer_config:\n    actor_rollout_ref:\n      actor: {ppo_max_token_len_per_gpu: 20000}\n",
                      encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100-80g", "--trinity-version", "0.6", "--len", "8192",
                         "--json")
    current = json.loads(out)[0]["current"]
    assert status == 0 and list(zip(current["config_problem_codes"], current["config_problems"], strict=True)) == [
        ("token-budget-above-verdict", (
            "trainer.max_token_len_per_gpu 32768: what Trinity gives it unset at the config's own 16384 tokens, so "
            "read as unset at 8192 tokens too (the verdict is at 16384 tokens per GPU); as written, Trinity keeps "
            "32768 there, more tokens per GPU than the verdict assumes (Trinity 0.6 on verl 0.8 or later runs every "
            "pass at it; verl before 0.8 each role without a budget of its own); applying the plan leaves it at its "
            "budget")),
        ("token-budget-above-verdict", (
            "trainer.trainer_config.actor_rollout_ref.actor.ppo_max_token_len_per_gpu 20000 is above Trinity's default "
            "ceil(2 x 8192 / 1) = 16384, which the tables measured: more tokens per GPU than the verdict assumes (on "
            "verl before 0.8 only: Trinity 0.6 on verl 0.8 or later ignores the roles' own token budgets and "
            "dynamic-batch keys, taking the trainer's)"))]


def test_from_config_view_makes_no_round_trip_it_does_not_print(cli, user_config: Path,
                                                                monkeypatch: pytest.MonkeyPatch):
    # At 16384 the config runs the best plan's GPUs, SP and length, but --write would set its keys to other values
    # (`sets_another_value`): the apply row offers the copy without patching one to compare, and a plan without YaRN
    # prints no model.rope_scaling, so the config's own mapping is not read with ruamel's round trip either.
    def refused(text: str) -> None:
        raise AssertionError("a round trip the view does not print")

    monkeypatch.setattr(solver.trinity.patch, "_round_trip_yaml", refused)
    status, out, err = cli("--from-config", str(user_config), "--gpu", "a100-80g", "--len", "16384")
    assert (status, err) == (0, "")
    assert f"{APPLY_HEADING}; --write FILE writes a copy of trinity.yaml with the plan applied" in " ".join(out.split())
    assert not [line for line in out.splitlines() if line.startswith("model.rope_scaling")]  # no apply line
