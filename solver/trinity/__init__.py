"""Plans to Trinity-RFT configs and back: emit a YAML fragment, read a user's config, patch it in place.

Pure functions on text: nothing here prints or touches files (the CLI reads and writes them). The keys
and their meaning are Trinity-RFT's (``trinity/common/config.py``):

- ``model.max_model_len``, and ``model.rope_scaling`` (YaRN, ``factor = max_model_len / native context``)
  beyond the model's native context (not for a model with a RoPE scaling of its own, such as Llama 3.1's
  ``llama3``, which YaRN would replace);
- ``trainer.ulysses_sequence_parallel_size`` and ``trainer.max_token_len_per_gpu`` (``ceil(2L/sp)``);
- with Offload: ``trainer.trainer_strategy: fsdp2``, ``param_offload``, ``optimizer_offload`` and
  ``offload_policy`` under ``trainer.trainer_config.actor_rollout_ref.{actor,ref}.fsdp_config`` and, for
  Trinity 0.6, under ``trainer`` itself (in a fragment made for no config, or where a config has them), and
  ``trainer.save_hf_checkpoint: never``;
- Env is the environment variable ``PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True``, set before Ray
  starts: it is not a config key, so the fragment says it in a comment and the patch leaves it to the
  caller;
- the GPU split: ``cluster.node_num * cluster.gpu_per_node`` GPUs, of which
  ``explorer.rollout_model.engine_num * tensor_parallel_size`` (plus auxiliary models) roll out and the
  rest train.

The modules, each using only those above it: `keys` (the keys and paths they all share, `ConfigError`),
`interpolation` (references to keys, ``${oc.env:...}`` and ``${oc.decode:...}``, as OmegaConf resolves them),
`reader` (a config's text as nested mappings and its values as Trinity reads them), `config` (`read_trinity_config`;
a LoRA config's ``target_modules`` matched as PEFT matches it is `solver.tables.peft_match`, which the memory model
counts an adapter on too),
`checks` (`check_trinity_config`; `trinity_config_problems` with codes; `check_environment`, the variables they
read), `plan_keys` (the keys a plan sets, and the comments on it that both the fragment and the patch write),
`settings` (`plan_settings`: the fragment's keys, in its order, and as data, `TrinitySettings`, which ``solve
--json``'s ``apply`` carries, checked against Trinity's rules; `settings_for`, the same of a `SettingsArguments`),
`fragment` (`trinity_fragment`: those keys as YAML text, with its header; `fragment_for`, of a `SettingsArguments`)
and `patch` (`patch_trinity_config`; `patched_trinity_config` with the keys it removed; `patched_config_problems`,
what ``--write`` warns of the patched config). The names other
packages use are imported from here, each on first use (`keys`, `plan_keys` and `settings` import no ruamel: importing
`plan_settings` loads none, making settings does, for their check); the rest from their modules.

What rft-solver says of a config comes from four places: `config` refuses what it cannot read or plan with
(`ConfigError`); `checks` lists what breaks Trinity's or verl's rules (`check_trinity_config`, where a new rule
goes); `solver.api` adds what a verdict on the config's own settings assumes (`with_config_verdicts`); and the
command refuses what is at odds with its other flags (`solver.cli.trinity_options.check_planner_config`).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "CHECK_PLACEHOLDER": "solver.trinity.patch",
    "ROLE_KEYS_IGNORED": "solver.trinity.keys",
    "TRINITY_06_OFFLOAD": "solver.trinity.keys",
    "ColocateRefused": "solver.trinity.keys",
    "ConfigError": "solver.trinity.keys",
    "EngineError": "solver.trinity.settings",
    "PatchedConfig": "solver.trinity.patch",
    "TrinityConfig": "solver.query",
    "TrinitySettings": "solver.results",
    "adapter_unkept": "solver.trinity.plan_keys",
    "aliases_written_out": "solver.trinity.patch",
    "anchored_keys": "solver.trinity.patch",
    "check_config_arguments": "solver.trinity.reader",
    "check_environment": "solver.trinity.checks",
    "check_flags": "solver.trinity.fragment",
    "check_trinity_config": "solver.trinity.checks",
    "config_key_changes": "solver.trinity.patch",
    "config_keys_changed": "solver.trinity.patch",
    "config_keys_kept": "solver.trinity.patch",
    "critic_budget_note": "solver.trinity.keys",
    "critic_run_sps": "solver.trinity.checks",
    "critic_sp_counted_words": "solver.trinity.checks",
    "fragment_for": "solver.trinity.fragment",
    "kept_interpolated_keys": "solver.trinity.patch",
    "kept_interpolations": "solver.trinity.patch",
    "keys_05_refuses": "solver.trinity.keys",
    "keys_05_refuses_why": "solver.trinity.keys",
    "keys_05_refuses_words": "solver.trinity.keys",
    "load_config_mapping": "solver.trinity.reader",
    "lora_rank_unkept": "solver.trinity.patch",
    "lora_unkept": "solver.trinity.patch",
    "other_catalogue_model": "solver.trinity.patch",
    "overlong_sequences": "solver.trinity.reader",
    "patch_trinity_config": "solver.trinity.patch",
    "patched_config_problems": "solver.trinity.patch",
    "patched_trinity_config": "solver.trinity.patch",
    "placed_on_words": "solver.trinity.fragment",
    "moved_from_words": "solver.trinity.fragment",
    "moving_words": "solver.trinity.fragment",
    "running_now_words": "solver.trinity.fragment",
    "plan_fragment": "solver.trinity.fragment",
    "plan_settings": "solver.trinity.settings",
    "read_trinity_config": "solver.trinity.config",
    "rope_scaling_written": "solver.trinity.patch",
    "settings_for": "solver.trinity.settings",
    "trainer_level_offload": "solver.trinity.keys",
    "trinity_config_problems": "solver.trinity.checks",
    "trinity_fragment": "solver.trinity.fragment",
    "unused_length": "solver.trinity.reader",
    "yarn_trainer_words": "solver.trinity.keys",
}
__all__ = [*_EXPORTS]  # noqa: PLE0604 (strings: the keys of _EXPORTS)

if TYPE_CHECKING:  # the names in _EXPORTS, for type checkers (tests/test_jsonapply2_s64.py checks that they agree)
    from solver.query import TrinityConfig as TrinityConfig
    from solver.results import TrinitySettings as TrinitySettings
    from solver.trinity.checks import check_environment as check_environment
    from solver.trinity.checks import check_trinity_config as check_trinity_config
    from solver.trinity.checks import critic_run_sps as critic_run_sps
    from solver.trinity.checks import critic_sp_counted_words as critic_sp_counted_words
    from solver.trinity.checks import trinity_config_problems as trinity_config_problems
    from solver.trinity.config import read_trinity_config as read_trinity_config
    from solver.trinity.fragment import check_flags as check_flags
    from solver.trinity.fragment import fragment_for as fragment_for
    from solver.trinity.fragment import moved_from_words as moved_from_words
    from solver.trinity.fragment import moving_words as moving_words
    from solver.trinity.fragment import placed_on_words as placed_on_words
    from solver.trinity.fragment import plan_fragment as plan_fragment
    from solver.trinity.fragment import running_now_words as running_now_words
    from solver.trinity.fragment import trinity_fragment as trinity_fragment
    from solver.trinity.keys import ROLE_KEYS_IGNORED as ROLE_KEYS_IGNORED
    from solver.trinity.keys import TRINITY_06_OFFLOAD as TRINITY_06_OFFLOAD
    from solver.trinity.keys import ColocateRefused as ColocateRefused
    from solver.trinity.keys import ConfigError as ConfigError
    from solver.trinity.keys import critic_budget_note as critic_budget_note
    from solver.trinity.keys import keys_05_refuses as keys_05_refuses
    from solver.trinity.keys import keys_05_refuses_why as keys_05_refuses_why
    from solver.trinity.keys import keys_05_refuses_words as keys_05_refuses_words
    from solver.trinity.keys import trainer_level_offload as trainer_level_offload
    from solver.trinity.keys import yarn_trainer_words as yarn_trainer_words
    from solver.trinity.patch import CHECK_PLACEHOLDER as CHECK_PLACEHOLDER
    from solver.trinity.patch import PatchedConfig as PatchedConfig
    from solver.trinity.patch import aliases_written_out as aliases_written_out
    from solver.trinity.patch import anchored_keys as anchored_keys
    from solver.trinity.patch import config_key_changes as config_key_changes
    from solver.trinity.patch import config_keys_changed as config_keys_changed
    from solver.trinity.patch import config_keys_kept as config_keys_kept
    from solver.trinity.patch import kept_interpolated_keys as kept_interpolated_keys
    from solver.trinity.patch import kept_interpolations as kept_interpolations
    from solver.trinity.patch import lora_rank_unkept as lora_rank_unkept
    from solver.trinity.patch import lora_unkept as lora_unkept
    from solver.trinity.patch import other_catalogue_model as other_catalogue_model
    from solver.trinity.patch import patch_trinity_config as patch_trinity_config
    from solver.trinity.patch import patched_config_problems as patched_config_problems
    from solver.trinity.patch import patched_trinity_config as patched_trinity_config
    from solver.trinity.patch import rope_scaling_written as rope_scaling_written
    from solver.trinity.plan_keys import adapter_unkept as adapter_unkept
    from solver.trinity.reader import check_config_arguments as check_config_arguments
    from solver.trinity.reader import load_config_mapping as load_config_mapping
    from solver.trinity.reader import overlong_sequences as overlong_sequences
    from solver.trinity.reader import unused_length as unused_length
    from solver.trinity.settings import EngineError as EngineError
    from solver.trinity.settings import plan_settings as plan_settings
    from solver.trinity.settings import settings_for as settings_for
else:  # hidden from type checkers, which would otherwise take any misspelt name for Any

    def __getattr__(name: str) -> Any:
        if name in _EXPORTS:
            return getattr(import_module(_EXPORTS[name]), name)
        raise AttributeError(f"module 'solver.trinity' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
