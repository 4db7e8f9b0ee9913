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
`reader` (a config's text as nested mappings and its values as Trinity reads them), `config` (`read_trinity_config`), `checks`
(`check_trinity_config`; `trinity_config_problems` with codes), `plan_keys` (the keys a plan sets, and the comments
on it that both the fragment and the patch write), `fragment`
(`trinity_fragment`, and the same keys as data: `TrinitySettings`) and `patch` (`patch_trinity_config`;
`patched_trinity_config` with the keys it removed; `patched_config_problems`, what ``--write`` warns of the patched
config). The names other packages use are imported from here; the rest from their modules.

What rft-solver says of a config comes from four places: `config` refuses what it cannot read or plan with
(`ConfigError`); `checks` lists what breaks Trinity's or verl's rules (`check_trinity_config`, where a new rule
goes); `solver.api` adds what a verdict on the config's own settings assumes (`with_config_verdicts`); and the
command refuses what is at odds with its other flags (`solver.cli.trinity_options.check_planner_config`).
"""

from solver.query import TrinityConfig
from solver.results import TrinitySettings
from solver.trinity.checks import check_trinity_config, trinity_config_problems
from solver.trinity.config import TRINITY_06_OFFLOAD, read_trinity_config
from solver.trinity.fragment import EngineError, check_flags, plan_fragment, trinity_fragment
from solver.trinity.keys import (
    ROLE_KEYS_IGNORED,
    YARN_TRAINER,
    ConfigError,
    critic_budget_note,
    keys_05_refuses,
    keys_05_refuses_why,
    keys_05_refuses_words,
    trainer_level_offload,
)
from solver.trinity.patch import (
    CHECK_PLACEHOLDER,
    PatchedConfig,
    anchored_keys,
    config_keys_changed,
    kept_interpolations,
    patch_trinity_config,
    patched_config_problems,
    patched_trinity_config,
)
from solver.trinity.reader import check_config_arguments, load_config_mapping, overlong_sequences, unused_length

__all__ = [
    "CHECK_PLACEHOLDER",
    "ROLE_KEYS_IGNORED",
    "TRINITY_06_OFFLOAD",
    "YARN_TRAINER",
    "ConfigError",
    "EngineError",
    "PatchedConfig",
    "TrinityConfig",
    "TrinitySettings",
    "anchored_keys",
    "check_config_arguments",
    "check_flags",
    "check_trinity_config",
    "config_keys_changed",
    "critic_budget_note",
    "kept_interpolations",
    "keys_05_refuses",
    "keys_05_refuses_why",
    "keys_05_refuses_words",
    "load_config_mapping",
    "overlong_sequences",
    "patch_trinity_config",
    "patched_config_problems",
    "patched_trinity_config",
    "plan_fragment",
    "read_trinity_config",
    "trainer_level_offload",
    "trinity_config_problems",
    "trinity_fragment",
    "unused_length",
]
