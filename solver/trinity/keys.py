"""The keys of a Trinity-RFT config that reading, checking, the fragment and the patch share, and small helpers on
them (a value's YAML form, a value at a key path). Those `TrinityConfig` needs (the roles' section, their token
budgets, the train batch's key) are `solver.query`'s, where it is, so that its annotations resolve without ruamel,
and so is the node size's key, which `solver.api` names: the modules here import them from there."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

from solver.query import (
    ACTOR_ROLLOUT_REF,
    BYPASS_OLD_LOGPROBS_KEY,
    CRITIC_ENGINE_MICRO_BATCH_SIZES,
    CRITIC_MICRO_BATCH_SIZES,
    CRITIC_REMOVE_PADDING_KEY,
    NODE_SIZE_PATH,
    ROLE_MICRO_BATCH_SIZES,
    ROLE_TOKEN_BUDGETS,
    ROLLOUT_TOKEN_BUDGET,
    TRAIN_BATCH_PATH,
)
from solver.results import Plan
from solver.rules import OptionNames, colocate_words
from solver.tables import GpuType, OneLineError, TrinityVersion, check_types, counted_release
from solver.tables.text import yaml_brief

OFFLOAD_FLAGS = ("param_offload", "optimizer_offload", "offload_policy")
TRINITY_06_TRAINER_KEYS = ("use_remove_padding", "balance_batch", "critic_warmup", "grad_offload", "megatron",
                           "trust_remote_code")
"""The keys of Trinity 0.6.0's ``TrainerConfig`` (``trinity/common/config.py:822`` to ``:844``) that 0.5's (0.5.0,
0.5.1 and 0.5.2: a subset of 0.6.0's) lacks, besides `OFFLOAD_FLAGS`: Trinity 0.5 refuses a config with any of them
under ``trainer`` (`keys_05_refuses`)."""
ROLES = ("actor", "ref")
TRINITY_06_REPLACES = ("Trinity 0.6 on verl before 0.8 replaces the roles' offload flags with trainer.param_offload, "
                       "optimizer_offload and offload_policy (false where unset)")
"""What Trinity 0.6 on verl before 0.8 does with the roles' offload flags (``trainer/verl_legacy/verl_config.py:645``
to ``:648`` in 0.6.0, for the actor and the ref; on verl 0.8 or later a role's own flag wins,
``trainer/verl/config.py``'s merge of ``trainer_config``)."""
TRINITY_06_OFFLOAD = f"{TRINITY_06_REPLACES}: there, set those to true too"
"""What a config with the roles' offload flags alone needs for Trinity 0.6 on verl before 0.8 (Trinity before 0.6
refuses the keys): `--check`'s line on such a config where the release is not named, and the comment on them in a
fragment or --write made for Trinity 0.5 (`written_for_05_comment`). With ``--trinity-version 0.6`` the verdict
takes Offload as off, as verl before 0.8 reads it (`trinity_06_offload_off`)."""


def trinity_06_offload_off(write_does: str) -> str:
    """The line on a config with the roles' offload flags alone, Offload on, for Trinity 0.6 (``--trinity-version
    0.6``): verl before 0.8 runs the actor without Offload (`TRINITY_06_REPLACES`), which the verdict counts, as the
    reading of the two that holds more on the GPUs (as it counts a PPO critic's), and the fix (`write_does`: what
    writes it, as `OptionNames.write_does` says it, `` (--write does)``, or "")."""
    return (f"{TRINITY_06_REPLACES}, so there the actor trains without Offload, which the verdict counts, the reading "
            "that holds more on the GPUs (verl 0.8 or later reads the roles' own flags, with Offload): set "
            f"trainer.param_offload, optimizer_offload and offload_policy to true too{write_does}")


def written_for_05_comment(plan: Plan, option_names: OptionNames, flags: str) -> str:
    """The comment on Offload `plan` written for Trinity 0.5, naming the release of it the plan was counted under, as
    the check command does (`counted_release`: ``0.5.1`` for a plan made for it, else ``0.5``), and the option that
    asks for it (`OptionNames.trinity_release`), whose roles' offload flags (`flags`, as the comment's place names
    them) 0.6 may override: `TRINITY_06_OFFLOAD`."""
    release = counted_release("0.5", plan.expert_layout, plan.trinity_version) or "0.5"  # never None: one is named
    return (f"written for Trinity {release} ({option_names.trinity_release(release)}), which refuses {flags} under "
            f"trainer itself; {TRINITY_06_OFFLOAD}")


REMOTE_ENGINES = ("tinker", "external")
"""Trinity engine types that run on a service elsewhere: they take none of the cluster's GPUs."""


class ConfigError(OneLineError):
    """A Trinity config that cannot be read or resolved; the message is one line naming the key at fault."""


class ColocateRefused(ConfigError):
    """A config refused for running its trainer in Trinity's mode colocate (`solver.rules.colocate_words`): what its
    message says `before` and `after` those words, and the `names` they name options with, so that a caller that
    knows the GPU type words them with the share of its memory left (`on_gpu`)."""

    def __init__(self, before: str, after: str, names: OptionNames) -> None:
        self.before, self.after, self.names = before, after, names
        super().__init__(f"{before}{colocate_words(names)}{after}")

    def on_gpu(self, gpu: GpuType) -> str:
        """The message, the share of `gpu`'s memory left to the trainer given."""
        return f"{self.before}{colocate_words(self.names, gpu)}{self.after}"


TRAINER_MODES = ("both", "train")
"""Trinity's modes that run a trainer of their own, on GPUs rft-solver plans (``both`` is the default)."""
NO_TRAINER_MODES = ("explore", "bench", "serve")
"""Trinity modes that run no trainer."""


def check_mode(mode: object, name: str) -> None:
    """`ConfigError` for a ``mode`` (None: unset, ``both``) Trinity lacks (a typo, or no text), which its validator
    refuses as it loads the config (``Invalid mode``, ``config_validator.py:93`` in 0.6.0). `name` is the config's,
    which the message starts with ("" for none). The one rule of ``read_trinity_config`` and
    ``trinity_config_problems`` alike; the modes Trinity runs that rft-solver does not plan, the former refuses alone
    (the latter judges the rollout of ``explore`` too). A list or a mapping is no text at all, which the typed
    config's str field refuses first (``wrong-type-refused``), so it is left to that check."""
    if isinstance(mode, (list, dict)):
        return
    if mode not in (None, *TRAINER_MODES, *NO_TRAINER_MODES, "colocate"):
        key = f"{name}: mode" if name else "mode"
        raise ConfigError(f"{key} must be one of {', '.join(TRAINER_MODES + NO_TRAINER_MODES)} or colocate, as "
                          f"Trinity takes it, got {yaml_brief(mode)}")


def offload_path(role: str, flag: str, section: str = "fsdp_config") -> tuple[str, ...]:
    """The path of `role`'s offload `flag` under ``trainer.trainer_config.actor_rollout_ref``: in its
    ``fsdp_config``, where Trinity and verl read it, or in another `section` (``engine``, `IGNORED_SECTION`)."""
    return (*ACTOR_ROLLOUT_REF, role, section, flag)


IGNORED_SECTION = "engine"
"""A role's ``engine`` mapping, where some configs put offload flags that nothing reads: Trinity 0.5 refuses the key,
Trinity 0.6 drops it on verl before 0.8, and verl 0.8 and later replaces it with the role's ``fsdp_config``."""


def trainer_level_offload(config: Any) -> bool:
    """Whether `config` (the user's, None for none) has an offload flag under ``trainer`` itself, as Trinity 0.6
    keeps them (``trainer.offload_policy``): it then copies them over the roles' own."""
    return config is not None and any(value_at(config, ("trainer", flag)) is not None for flag in OFFLOAD_FLAGS)


def keys_05_refuses(trainer: Any) -> tuple[str, ...]:
    """The keys of a config's ``trainer`` section (`trainer`; none where it is no mapping) that Trinity 0.5's
    ``TrainerConfig`` lacks, in any value: 0.6's `OFFLOAD_FLAGS` first, then its `TRINITY_06_TRAINER_KEYS`."""
    if not isinstance(trainer, Mapping):
        return ()
    return tuple(key for key in (*OFFLOAD_FLAGS, *TRINITY_06_TRAINER_KEYS) if key in trainer)


class Lacking05(NamedTuple):
    """A section of a newer Trinity or verl whose keys Trinity 0.5's typed config lacks: whose it is (`whose`, in
    words), the class of Trinity 0.5 that lacks them (`schema`), and what 0.5 does instead, which follows "remove it"
    after saying that the patch leaves it to the user (`instead`; none said where empty)."""

    whose: str
    schema: str
    instead: str = ""


TRAINER_06 = Lacking05("Trinity 0.6's trainer", "TrainerConfig")
"""Trinity 0.6's ``trainer``, whose keys `keys_05_refuses` names."""


def keys_05_refuses_why(count: int, lacking: Lacking05 = TRAINER_06) -> str:
    """Why Trinity 0.5 refuses `count` keys of `lacking`'s section, in words: ``a key of Trinity 0.6's trainer, which
    Trinity 0.5 refuses (its TrainerConfig has no such key)``."""
    return (f"{'keys' if count > 1 else 'a key'} of {lacking.whose}, which Trinity 0.5 refuses (its "
            f"{lacking.schema} has no such key)")


def keys_05_refuses_words(keys: Sequence[str], lacking: Lacking05 = TRAINER_06) -> str:
    """That Trinity 0.5 refuses `keys` (of `lacking`'s section, `keys_05_refuses`' by default, as paths) and so does
    not load the config, in words: ``trainer.megatron: a key of Trinity 0.6's trainer, which ... no such key), so the
    config does not load``."""
    return f"{', '.join(keys)}: {keys_05_refuses_why(len(keys), lacking)}, so the config does not load"


YAML_WORDS = ("true", "false", "yes", "no", "on", "off", "null")
"""Words YAML 1.1 (PyYAML's) reads as other than text, which `_flow_item` quotes."""
PLAIN_TEXT = re.compile(r"[A-Za-z_][\w.+/-]*")
"""Text that YAML reads back as the same string where written plain in a flow collection (``fsdp2``, ``never``);
other text there (a regex: ``.*\\.(q_proj|v_proj)``, whose braces or commas would end it) is quoted."""


def yaml_scalar(value: Any) -> str:
    """A config value as YAML writes it (``true``, ``8192``, ``2.5``, ``null``); `TypeError` for any other kind."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, str)):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    raise TypeError(f"no YAML form for {value!r}")


def yaml_flow(value: Any) -> str:
    """A config value as YAML's flow style writes it: a scalar as `yaml_scalar`, a list and a mapping in brackets
    (``[{lora_rank: 16}]``); `TypeError` for any other kind."""
    if isinstance(value, list):
        return "[" + ", ".join(_flow_item(item) for item in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{name}: {_flow_item(item)}" for name, item in value.items()) + "}"
    return yaml_scalar(value)


def _flow_item(value: Any) -> str:
    """A value inside a flow collection (`yaml_flow`): text other than `PLAIN_TEXT` (a regex's braces and commas would
    end the collection) single-quoted, its quotes doubled, which YAML reads back as written, backslashes and all."""
    if isinstance(value, str) and (not PLAIN_TEXT.fullmatch(value) or value.lower() in YAML_WORDS):
        return "'" + value.replace("'", "''") + "'"
    return yaml_flow(value)


CRITIC = ("trainer", "trainer_config", "critic")
"""verl's critic (Trinity's ``ppo``): rft-solver reads its offload flags (where the verdict and the plans count its
states) and its token budget, checks its SP and its token budget as the ref's (`OWN_SP_ROLES`), and sets its offload
flags (and an offloaded one's strategy) for a plan that counts it."""
CRITIC_MODEL_FSDP = (*CRITIC, "model", "fsdp_config")
"""Where Trinity 0.5, and 0.6 on verl before 0.8, read the critic's offload flags: its own, unset false
(``CriticModel.fsdp_config``, ``trainer/verl/verl_config.py:252`` in 0.5.2, ``trainer/verl_legacy/verl_config.py:257``
in 0.6.0; neither copies the trainer's to it: 0.6.0's ``synchronize_config`` sets the actor's and the ref's alone,
``:644-648``), under the critic's strategy (``critic.strategy``, unset the trainer's: ``set_if_none``, ``:605`` in
0.6.0, ``verl_config.py:598`` in 0.5.2)."""
CRITIC_ENGINE = (*CRITIC, "fsdp")
"""Where Trinity 0.6 on verl 0.8 or later reads the critic's offload flags: its FSDP engine (``FSDPCriticConfig.fsdp``,
``workers/config/critic.py:206``, ``:215`` in verl 0.9.1; ``:204``, ``:213`` in 0.8.0), which Trinity builds from the
flags under ``trainer`` (``_build_critic_config``, ``trainer/verl/config.py:483``; ``_build_fsdp_engine_config``,
``:504-506``) and deep-merges this section over (``:204``), under the trainer's strategy (``critic.strategy`` is
frozen, ``:733``). It reads no ``critic.model.fsdp_config``: the trainer builds the critic's model config itself
(``trainer/verl/trainer.py:342-361``). Nor does its ``use_remove_padding`` count, which Trinity builds as the trainer's
(``trainer/verl/config.py:518``) and merges the config's over: the critic's worker puts its model config's over it
(``TrainingWorker.__init__``, ``workers/engine_workers.py:113`` in verl 0.8.0, ``:114`` in 0.9.1) and hands that to each
pass (``:335``, ``:389``; the FSDP engine reads it there too, ``workers/engine/fsdp/transformer_impl.py:125``), which
Trinity builds from ``trainer.use_remove_padding`` (``trainer/verl/trainer.py:360``): rft-solver judges that one.
Trinity 0.5's typed ``Critic`` refuses this key, and 0.6.0 on verl before 0.8 drops it
(``build_dataclass_from_mapping``, ``common/dataclass_utils.py:17``). Read from the code, not run."""
DYNAMIC_BATCH_KEYS = (("trainer", "use_dynamic_bsz"), (*ACTOR_ROLLOUT_REF, "actor", "use_dynamic_bsz"),
                      (*ACTOR_ROLLOUT_REF, "ref", "log_prob_use_dynamic_bsz"))
"""Dynamic batch sizes (Trinity's default, and the role keys of verl it sets): token budgets apply only with them."""
GRADIENT_CHECKPOINTING_KEY = (*ACTOR_ROLLOUT_REF, "model", "enable_gradient_checkpointing")
"""verl's gradient checkpointing (on in Trinity, as the tables measured): without it each layer keeps its
activations."""
REMOVE_PADDING_KEYS = (("trainer", "use_remove_padding"), (*ACTOR_ROLLOUT_REF, "model", "use_remove_padding"))
"""Remove padding (on in Trinity, as the tables measured): Trinity 0.6's own key, and verl's, which Trinity before 0.6
reads and 0.6 sets to the trainer's."""

MICRO_BATCH_UNSET_ON_08 = frozenset((*ROLE_MICRO_BATCH_SIZES, CRITIC_MICRO_BATCH_SIZES[0]))
"""The micro-batch sizes (`ROLE_MICRO_BATCH_SIZES`, `CRITIC_MICRO_BATCH_SIZES`) that Trinity 0.6 on verl 0.8 or later
hands verl as none where the config leaves them unset (``trainer/verl/config.py:286``, ``:358``, ``:400``, ``:459`` in
0.6.0), which verl 0.8.0 refuses with dynamic batch sizes off as the trainer starts (``workers/config/actor.py:207``,
the ref's after ``workers/engine_workers.py:509``; ``:577``; ``workers/config/critic.py:107``); Trinity 0.5 and 0.6 on
verl before 0.8 give them 1 (the rollout's from the actor's: ``common/verl_config.py:155``, ``:189``, ``:664``,
``:264`` in 0.5.0). The critic's value forward is the other way round: Trinity 0.6 on verl 0.8 gives it 1
(``trainer/verl/config.py:480``), 0.5 and 0.6 on verl before 0.8 none (``common/verl_config.py:266`` in 0.5.0,
``verl_legacy/verl_config.py:275``), by which verl 0.7.0's value forward cannot split a batch
(``workers/critic/dp_critic.py:171``)."""
MICRO_BATCH_SIZES_TYPED_INT = frozenset((*ROLE_MICRO_BATCH_SIZES[:2], CRITIC_MICRO_BATCH_SIZES[0]))
"""The micro-batch sizes (`ROLE_MICRO_BATCH_SIZES`, `CRITIC_MICRO_BATCH_SIZES`) that Trinity's verl config for verl
before 0.8 types ``int``, no ``Optional`` (``common/verl_config.py:155``, ``:189``, ``:264`` in 0.5.0;
``trainer/verl_legacy/verl_config.py:157``, ``:196``, ``:273`` in 0.6.0), so every release refuses a null there with
dynamic batch sizes off: Trinity 0.5 as it merges ``trainer.trainer_config`` into that config, 0.6 on verl before 0.8
as the trainer starts (``OmegaConf.structured``, ``verl_legacy/verl_trainer.py:198``; OmegaConf 2.3.0: "Incompatible
value 'None' for field of type 'int'"), and 0.6 on verl 0.8 or later merges the null over its own none
(``_deep_merge``, ``trainer/verl/config.py:819``), which verl refuses as it does the key unset
(`MICRO_BATCH_UNSET_ON_08`; verl 0.9.1 alike: ``workers/config/actor.py:207``, ``workers/engine_workers.py:637``,
``workers/config/critic.py:108``). The rollout's and the critic's forward are ``Optional`` there: a null is as
unset."""
ROLE_KEYS_IGNORED = ("on verl before 0.8 only: Trinity 0.6 on verl 0.8 or later ignores the roles' own token budgets and "
                     "dynamic-batch keys, taking the trainer's")
"""Where the roles' own budgets and the ref's dynamic-batch key count: Trinity 0.6's verl 0.8 path freezes them."""
CRITIC_DYNAMIC_KEY = (*CRITIC, "use_dynamic_bsz")
"""The critic's own dynamic batch size flag, which Trinity 0.5 takes over the trainer's for the critic's passes
(`solver.trinity.reader.sequence_counted_roles`) and 0.6 sets to the trainer's (`SET_TO_TRAINERS_BY_06`)."""
SET_TO_TRAINERS_BY_06: dict[tuple[str, ...], tuple[str, ...]] = {
    DYNAMIC_BATCH_KEYS[1]: DYNAMIC_BATCH_KEYS[0], CRITIC_DYNAMIC_KEY: DYNAMIC_BATCH_KEYS[0],
    REMOVE_PADDING_KEYS[1]: REMOVE_PADDING_KEYS[0], CRITIC_REMOVE_PADDING_KEY: REMOVE_PADDING_KEYS[0]}
"""The roles' flags that Trinity 0.6 sets to the trainer's own, by key, whatever they say: on verl before 0.8
``synchronize_config`` (``trainer/verl_legacy/verl_config.py:701``, ``:704``, ``:708``, ``:711``), on verl 0.8 or
later ``FROZEN_KEYS`` (``trainer/verl/config.py:710``, ``:735``, ``:700``) and the critic's model config, built from
the trainer's (``trainer/verl/trainer.py:360``)."""
CRITIC_TOKEN_BUDGET = (*CRITIC, "ppo_max_token_len_per_gpu")
CRITIC_FORWARD_BUDGET = (*CRITIC, "forward_max_token_len_per_gpu")
CRITIC_BUDGETS = (CRITIC_TOKEN_BUDGET, CRITIC_FORWARD_BUDGET)
"""The critic's own token budgets: its training's (``ppo_max_token_len_per_gpu``) and its value forward's."""
ROLE_BUDGET_KEYS = (*ROLE_TOKEN_BUDGETS, *CRITIC_BUDGETS)
"""The roles' own token budgets that `solver.trinity.checks.check_trinity_config` checks and ``--write`` sets
(`solver.trinity.plan_keys.own_budget_changes`): the actor's, the ref's, the rollout's and the critic's two (each
overrides ``trainer.max_token_len_per_gpu`` for its role, or the budget it is filled from, on verl
before 0.8)."""
CRITIC_SP_KEY = (*CRITIC, "ulysses_sequence_parallel_size")
"""The critic's own SP, which Trinity 0.5 and 0.6 on verl before 0.8 take over the trainer's (`OWN_SP_ROLES`);
Trinity 0.6 on verl 0.8 or later sets it to the trainer's whatever it says (``FROZEN_KEYS``,
``trainer/verl/config.py:478``, ``:740`` in 0.6.0) and runs the critic at its engine's (`CRITIC_ENGINE_SP_KEY`)."""
CRITIC_ENGINE_SP_KEY = (*CRITIC_ENGINE, "ulysses_sequence_parallel_size")
"""The SP Trinity 0.6 on verl 0.8 or later runs the critic at: its FSDP engine's, which Trinity builds as the trainer's
(``_build_fsdp_engine_config``, ``trainer/verl/config.py:514`` in 0.6.0) and deep-merges the config's over (it is no
``FROZEN_KEYS``); verl 0.8.0's critic runs its engine at it (``FSDPCriticConfig.__post_init__``, ``engine = fsdp``,
``workers/config/critic.py:213``, which copies no SP of the critic's own there; ``workers/engine/fsdp/
transformer_impl.py:220``), budget x SP tokens per micro-batch (``workers/engine/utils.py:77``), and Trinity checks it
against nothing. Trinity 0.5's typed ``Critic`` refuses the section; 0.6.0 on verl before 0.8 drops it."""
CRITIC_ENGINE_DYNAMIC_KEY = (*CRITIC_ENGINE, "use_dynamic_bsz")
"""Whether Trinity 0.6 on verl 0.8 or later packs the critic's passes by tokens: its FSDP engine's own flag, which
Trinity builds as ``trainer.use_dynamic_bsz`` (``_build_fsdp_engine_config``, ``trainer/verl/config.py:516`` in 0.6.0)
and deep-merges the config's over (only ``critic.use_dynamic_bsz`` is ``FROZEN_KEYS``, ``:735``). The critic's
worker hands its engine's flag to each pass (``TrainingWorker.train_batch``, ``infer_batch``,
``workers/engine_workers.py:336``, ``:390`` in verl 0.8.0, ``:354``, ``:408`` in 0.9.1), Trinity's
``_compute_values`` and ``_update_critic`` setting none of their own (``trainer/verl/trainer.py:782-835``): true,
verl packs them by the engine's token budget, which Trinity sets to the trainer's
(``critic.ppo_infer_max_token_len_per_gpu``, frozen, ``trainer/verl/trainer.py:368-371``), and reads neither engine
micro-batch size (`CRITIC_ENGINE_MICRO_BATCH_SIZES`); false, it cuts them by those sizes. Trinity 0.5's typed
``Critic`` refuses the section; 0.6.0 on verl before 0.8 drops it. Read from the code, not run."""
ROLLOUT_DYNAMIC_KEY = (*ACTOR_ROLLOUT_REF, "rollout", "log_prob_use_dynamic_bsz")
"""The rollout's own dynamic batch size flag, by which Trinity 0.5, and 0.6 on verl before 0.8, run the actor's
log-prob recompute where set (`ROLE_DYNAMIC_BATCH_KEYS`); 0.6 on verl 0.8 or later freezes it to the trainer's
(``trainer/verl/config.py:401``, ``:729`` in 0.6.0)."""
ROLE_KEY_SCOPES: dict[tuple[str, ...], str] = {
    **{path: f"on Trinity before 0.6 only: Trinity 0.6 sets it to {'.'.join(trainers)} whatever the verl"
       for path, trainers in SET_TO_TRAINERS_BY_06.items()},
    DYNAMIC_BATCH_KEYS[1]: ("on Trinity before 0.6, and on 0.6 with verl before 0.8 for the rollout's log-prob pass "
                            "where the rollout sets no log_prob_use_dynamic_bsz of its own: Trinity 0.6 sets it to "
                            "trainer.use_dynamic_bsz for the actor's update"),
    DYNAMIC_BATCH_KEYS[2]: ROLE_KEYS_IGNORED, ROLLOUT_DYNAMIC_KEY: ROLE_KEYS_IGNORED,
    CRITIC_ENGINE_DYNAMIC_KEY: ("for the critic's passes on Trinity 0.6 with verl 0.8 or later only: 0.6 on verl "
                                "before 0.8 drops the section"),
}
"""Where each of the roles' own flags counts, in words (the trainer's count everywhere): `checks` says it
beside a flag that is off."""
ROLE_DYNAMIC_BATCH_KEYS: dict[str, tuple[str, ...]] = {
    "actor": DYNAMIC_BATCH_KEYS[1], "ref": DYNAMIC_BATCH_KEYS[2],
    "rollout": ROLLOUT_DYNAMIC_KEY, "critic": CRITIC_DYNAMIC_KEY}
"""Each pass's own dynamic batch size key, by role (the rollout's: the actor's log-prob recompute). Trinity 0.5 takes
it where set over ``trainer.use_dynamic_bsz``, the rollout's over the actor's (``synchronize_config``,
``common/verl_config.py:528``, ``:551``, ``:582``, ``:662`` in 0.5.0); Trinity 0.6 on verl before 0.8 likewise the
ref's and the rollout's, but sets the actor's and the critic's to the trainer's
(``trainer/verl_legacy/verl_config.py:572``, ``:692``, ``:701``, ``:704``; the rollout's unset takes the actor's as
written, before that, and with neither set is none, which verl 0.7.1's ``compute_log_prob`` reads as off,
``workers/actor/dp_actor.py:453``, ``:466``), and on verl 0.8 or later gives each the trainer's
(``trainer/verl/config.py:288``, ``:359``, ``:401``, ``:461``)."""
ROLE_BUDGET_PATHS: dict[str, tuple[tuple[str, ...], ...]] = {
    "actor": ROLE_TOKEN_BUDGETS[:1], "ref": ROLE_TOKEN_BUDGETS[1:2], "rollout": ROLE_TOKEN_BUDGETS[2:],
    "critic": CRITIC_BUDGETS}
"""Each role's own token budgets (`ROLE_DYNAMIC_BATCH_KEYS`' roles), read only where its passes run with dynamic batch
sizes."""
DEPRECATED_MICRO_BATCH_SIZES = ((*ACTOR_ROLLOUT_REF, "actor", "ppo_micro_batch_size"),
                                (*ACTOR_ROLLOUT_REF, "ref", "log_prob_micro_batch_size"),
                                (*CRITIC, "ppo_micro_batch_size"))
"""verl's deprecated micro-batch sizes for the whole batch, beside the per-GPU ones (`ROLE_MICRO_BATCH_SIZES`,
`CRITIC_MICRO_BATCH_SIZES`), each read with dynamic batch sizes off. verl before 0.8 replaces the per-GPU size with
it over the data-parallel ranks (Trinity 0.5.0 ``trainer/verl/fsdp_workers.py:223``, ``:256``, ``:1199``; 0.6.0
``verl_legacy/fsdp_workers.py:247``, ``:280``, ``:1318``); verl 0.8 and 0.9.1 refuse it beside the per-GPU size
(``workers/config/actor.py:200``, the ref's after ``workers/engine_workers.py:547``, ``workers/config/critic.py:108``
in 0.9.1), and the actor's alone too (``engine_workers.py:578`` in 0.8.0, ``:637`` in 0.9.1)."""

CRITIC_FORWARD_WHOLE_SIZE = (*CRITIC, "forward_micro_batch_size")
"""The critic's deprecated size for the whole batch of its value forward, beside ``ppo_micro_batch_size``
(`DEPRECATED_MICRO_BATCH_SIZES`): where that is set, the critic worker of Trinity 0.5 and of 0.6 on verl before 0.8
divides both by the data-parallel ranks as it starts, and gives the quotients as the sizes per GPU (0.5.0
``trainer/verl/fsdp_workers.py:1199-1207``, 0.5.2 ``:1216-1224``, 0.6.0 ``verl_legacy/fsdp_workers.py:1318-1326``,
verl 0.7.1's own ``workers/fsdp_workers.py:1340-1348``, whatever ``use_dynamic_bsz``); Trinity leaves it unset
(``Optional``, none: 0.5.0 ``common/verl_config.py:265``, 0.5.2 ``trainer/verl/verl_config.py:268``, 0.6.0
``verl_legacy/verl_config.py:274``) and fills it from nothing, so left unset it fails there (``None //= ranks``, a
``TypeError``). verl's own config fills it from ``ppo_micro_batch_size`` (``trainer/config/critic/dp_critic.yaml:65``
in 0.7.1), which Trinity does not read. Trinity 0.6 on verl 0.8 or later gives it 1 (``trainer/verl/config.py:479``),
and verl 0.9.1's critic divides neither (its engine worker, no ``fsdp_workers.py``)."""


class ForwardBudget(NamedTuple):
    """A token budget that Trinity fills, where unset, from a role's own after raising that one to hold a sequence,
    but never raises itself: the `role` whose SP its forward runs at, and that `forward`, in words."""

    role: str
    forward: str


FORWARD_BUDGETS = {
    ROLLOUT_TOKEN_BUDGET: ForwardBudget("actor", "the actor's log-prob recompute"),
    CRITIC_FORWARD_BUDGET: ForwardBudget("critic", "the critic's value forward"),
}
"""The budgets filled from a raised one but never raised (`ForwardBudget`), by key. Trinity 0.5.0's
``synchronize_config`` raises the actor's and the critic's (``common/verl_config.py:542``, ``:595``), then fills the
rollout's and the critic's forward from them (``:665``, ``:600``); 0.5.2 alike (``trainer/verl/verl_config.py:682``,
``:615``), and 0.6.0 on verl before 0.8 (``trainer/verl_legacy/verl_config.py:691``, ``:622``). verl before 0.8 runs
the forward at its role's SP, budget x SP tokens per micro-batch (the critic's, ``dp_critic.py:168`` in 0.7.0), and
asserts that each step's batch fits, its longest sequence or, with Trinity 0.5.0 and 0.5.1, its padded width
(`micro_batch_stop_words`); Trinity 0.6 on verl 0.8 or later sets both keys itself (``FROZEN_KEYS``,
``trainer/verl/config.py:730``, ``:741``)."""


NO_REFERENCE_ALGORITHMS = {"0.5": ("sft", "asymre", "raft", "sppo", "on_policy_distill", "jsd"),
                           "0.6": ("sft", "cpt", "asymre", "dapo", "raft", "sppo", "on_policy_distill", "jsd")}
"""Per Trinity release, the algorithm types whose ``use_reference`` is false (``algorithm/algorithm.py``: 0.5.0 and
0.5.2, 0.5.0 lacking ``jsd``; 0.6.0, whose list holds 0.5's): their trainer computes no ref log-probs
(``trainer/verl/verl_trainer.py:541`` in 0.5.2). Without a release, 0.6's, which is no guess: the two it adds,
``cpt`` and ``dapo``, are 0.6's own (``algorithm/__init__.py:12``, ``:16`` in 0.6.0); 0.5.0's and 0.5.2's registry
lacks them, and refuses a config naming either as it loads (``ALGORITHM_TYPE.get``, ``utils/registry.py:81`` in 0.5.2:
``Invalid module key``), so no release runs a ref forward for them, and for every other type both lists agree."""


def ref_forward_runs(algorithm: Any, version: TrinityVersion | None) -> bool:
    """Whether Trinity (`version`) computes the ref's log-probs each step for `algorithm` (``algorithm.algorithm_type``,
    None where unset): where its ``use_reference`` is true (not `NO_REFERENCE_ALGORITHMS`), whatever its KL terms
    (``if self.algorithm.use_reference:``, ``trainer/verl/verl_trainer.py:541`` in 0.5.2,
    ``verl_legacy/verl_trainer.py:569`` and ``trainer/verl/trainer.py:533`` in 0.6.0). With LoRA too: the actor
    without its adapter gives them, with the ref's own token budget on verl before 0.8 (``compute_log_prob``'s
    ``config_source = self.config.ref if is_lora``, ``fsdp_workers.py:924`` in 0.5.2,
    ``verl_legacy/fsdp_workers.py:1006`` in 0.6.0), so its budget counts there."""
    return algorithm not in NO_REFERENCE_ALGORITHMS["0.5" if version == "0.5" else "0.6"]


def trains_critic(algorithm: Any) -> bool:
    """Whether Trinity's `algorithm` (``algorithm.algorithm_type``, None where unset) trains a critic: ``ppo``, the one
    whose ``use_critic`` is true, and its default."""
    return algorithm in (None, "ppo")


def critic_of_another_model(value: Callable[[tuple[str, ...]], Any]) -> bool:
    """Whether ``model.critic_model_path`` names another model than ``model.model_path`` (each as `value` reads a
    config's key; unset or empty, the critic is ``model_path``'s): Trinity checks the critic's SP against that model's
    heads, which rft-solver does not know, so the plan's SP is neither checked nor written there."""
    critic = value(("model", "critic_model_path"))
    return critic not in (None, "") and critic != value(("model", "model_path"))


def check_environ(environ: Mapping[str, str] | None) -> None:
    """`QueryError` unless `environ`, where a config's ``${oc.env:...}`` are read (``os.environ``), is a mapping of
    strings, or None where that may be none."""
    check_types(("environ", environ, Mapping | None))
    for key, value in (environ or {}).items():
        check_types(("environ's keys", key, str), ("environ's values", value, str))


def trains_dpo(algorithm: Any) -> bool:
    """Whether Trinity's `algorithm` (``algorithm.algorithm_type``, None where unset) trains DPO: the one reading of
    it that the plans (`solver.trinity.read_trinity_config`'s `TrinityConfig.dpo`, `Query.dpo`), the keys written for
    them (`solver.trinity.plan_keys.config_trains_dpo`) and the checks share."""
    return bool(algorithm == "dpo")


TRAINER_INPUT_PATH = ("buffer", "trainer_input", "experience_buffer", "path")
"""Where an offline trainer's config (``solver.trinity.checks.TRAIN_MODE_ALGORITHMS``) names its dataset: mode train
requires it."""
TRAINER_INPUT_LINES = {"sft": ":73 in 0.5.0 to 0.6.0", "cpt": ":73 in 0.6.0, SFT's, which CPT inherits",
                       "dpo": ":288 in 0.6.0, :245 in 0.5.0 to 0.5.2"}
"""Per offline algorithm type (``solver.trinity.checks.TRAIN_MODE_ALGORITHMS``), the line of
``trinity/algorithm/algorithm.py`` whose ``check_config`` raises, in mode train, where `TRAINER_INPUT_PATH` is unset or
empty."""


def critic_budget_note(key: str, budget: int, above: str, tokens: int, judged: int, raised: str = "",
                       need: str = "", counted_at: str = "") -> str:
    """The note on a critic's own token budget (`key`, one of `CRITIC_BUDGETS`, dotted) `budget`, above `above` (the
    verdict's budget, `judged` tokens per GPU, in words), or `raised` above it (where it holds no sequence: how Trinity
    raises it, in words after the budget): on verl before 0.8 the critic's update (`critic_budget_counted_words`,
    with what it needs at `tokens`, `need`, where known) or its value forward takes `tokens` per GPU, where the memory
    model counts its own update at the verdict's budget (`solver.memory.critic_pass_gib`; Trinity 0.6 on verl 0.8 or
    later gives it that one, ``FROZEN_KEYS``, ``trainer/verl/config.py:736-741`` in 0.6.0), or at `counted_at`
    where given (words: at the critic's own SP, its budget raised there); ``--write`` sets it to the plan's
    (`solver.trinity.plan_keys.own_budget_changes`)."""
    counted = counted_at or f"the verdict's {judged}"
    taken = (critic_budget_counted_words(tokens, judged, need, counted_at) if key == ".".join(CRITIC_TOKEN_BUDGET)
             else f"the critic's value forward takes {tokens} tokens per GPU, where the memory model counts its own "
             f"update at {counted} (and no forward apart: it holds no gradients)")
    return f"{key} {budget}{raised} is above {above}: on verl before 0.8 {taken}; --write sets it to the plan's"


def critic_budget_counted_words(tokens: int, judged: int, need: str = "", counted_at: str = "") -> str:
    """What a critic whose own training budget puts `tokens` per GPU on its update on verl before 0.8 takes, and what
    the memory model counts, in words: its update at the verdict's `judged` tokens per GPU (or at `counted_at`, words,
    where given: at the critic's own SP, its budget raised there), and what it would need at its own (`need`, in words
    after the figure, where the memory model computes it: `solver.api`'s verdict)."""
    counted = counted_at or f"the verdict's {judged}"
    return f"the critic's own update takes {tokens} tokens per GPU, where the memory model counts it at {counted}{need}"


ROLE_SP_KEYS = tuple((*ACTOR_ROLLOUT_REF, role, "ulysses_sequence_parallel_size") for role in ROLES)
"""The roles' own SP: Trinity with verl before 0.8 takes it over the trainer's; Trinity 0.6 on verl 0.8 or later
ignores it."""
TRAINER_SP_KEY = ("trainer", "ulysses_sequence_parallel_size")
ROLE_ENGINE_SP_KEYS = tuple((*ACTOR_ROLLOUT_REF, role, "fsdp_config", "ulysses_sequence_parallel_size")
                            for role in ROLES)
"""The SP of the actor's and the ref's FSDP engine on verl 0.8 or later: Trinity 0.6.0 builds it as the trainer's
(``_build_fsdp_engine_config``, ``trainer/verl/config.py:514``) and deep-merges the config's over it (no
``FROZEN_KEYS``); verl's ``FSDPActorConfig.__post_init__`` takes its engine from it but puts the role's own SP, which
Trinity freezes to the trainer's, over it where that is above 1 (``workers/config/actor.py:313``, ``:320-321`` in verl
0.8.0; ``:321``, ``:328-329`` in 0.9.1). So it runs the role only beside a trainer SP of 1 (`solver.trinity.checks`).
Trinity 0.5's typed ``FSDPConfig`` lacks it (`KEYS_05_LACKS`), and 0.6 drops it on verl before 0.8 (its legacy
``FSDPConfig``, ``verl_legacy/verl_config.py:101``, lacks it too)."""

CRITIC_FSDP_SIZE = (*CRITIC_MODEL_FSDP, "fsdp_size")
"""The critic's FSDP group size that Trinity 0.5, and 0.6 on verl before 0.8, read (`FSDP_SIZE_KEYS`)."""
CRITIC_ENGINE_FSDP_SIZE = (*CRITIC_ENGINE, "fsdp_size")
"""The critic engine's FSDP group size that Trinity 0.6 on verl 0.8 or later reads (`FSDP_SIZE_KEYS`)."""
FSDP_SIZE_KEYS = (*((*ACTOR_ROLLOUT_REF, role, "fsdp_config", "fsdp_size") for role in ROLES),
                  CRITIC_FSDP_SIZE, CRITIC_ENGINE_FSDP_SIZE)
"""The FSDP group size of the actor, the ref, the critic (Trinity 0.5, and 0.6 on verl before 0.8) and the critic's
engine (0.6 on verl 0.8 or later): -1 by default, every trainer GPU. Below the GPUs, where they divide it, verl shards a
role's states over groups of that many GPUs and replicates them across the groups (hybrid sharding,
``create_device_mesh``: ``workers/fsdp_workers.py`` in verl 0.7, ``workers/engine/fsdp/utils.py:40-57`` in 0.8.0), as
a run on that many GPUs holds them, which the verdict counts (`solver.trinity.checks.fsdp_state_groups`). Before verl
0.8 the actor's sizes the mesh of the actor and the ref alike (``verl_legacy/fsdp_workers.py:152-154`` in Trinity 0.6.0,
``trainer/verl/fsdp_workers.py:130-132`` in 0.5.0) and the critic's its own (``:1283-1284``, ``:1164-1165``); Trinity
checks all three as it loads the config (``_check_parallel_config``: ``verl_legacy/verl_config.py:455-464`` in 0.6.0).
verl 0.8 or later builds each engine's mesh from its own (the ref's ``ref.fsdp_config``,
``workers/engine_workers.py:514-524`` in verl 0.8.0)."""


class OwnSpRole(NamedTuple):
    """A role that Trinity 0.5 runs at its own SP, else the trainer's: its `name`, its SP key and its token budget's
    key (its own where set, else ``trainer.max_token_len_per_gpu``)."""

    name: str
    sp_key: tuple[str, ...]
    budget_key: tuple[str, ...]


OWN_SP_ROLES = (OwnSpRole("ref", ROLE_SP_KEYS[1], ROLE_TOKEN_BUDGETS[1]),
                OwnSpRole("critic", CRITIC_SP_KEY, CRITIC_TOKEN_BUDGET))
"""The roles besides the actor whose SP Trinity 0.5 checks as the actor's (``_check_parallel_config``) and at whose
SP it raises their token budget (``_adjust_token_len_if_needed``): the ref and the critic (``synchronize_config``,
``common/verl_config.py:557``, ``:564``, ``:588``, ``:595`` in 0.5.0)."""
MULTIPLIED_AS_LOADED = frozenset((ROLE_TOKEN_BUDGETS[0], ROLE_SP_KEYS[0],
                                  *(key for role in OWN_SP_ROLES for key in (role.budget_key, role.sp_key))))
"""The numbers under ``trainer.trainer_config`` that Trinity 0.6 on verl before 0.8 computes with as it loads the
config, before any typed field reads them: the token budget and SP of the actor, the ref and the critic, each budget
times its SP compared with ``model.max_model_len`` (``_adjust_token_len_if_needed``,
``trainer/verl_legacy/verl_config.py:469``, called at ``:563``, ``:586`` and ``:617`` in 0.6.0).
``build_dataclass_from_mapping`` keeps text there as written, so text (an ``oc.env`` value, a quoted number) stops
the config with a ``TypeError``; Trinity 0.5 merges the section into its typed ``veRLConfig`` first, which reads the
number."""


def sp_key_in_effect(config: Mapping[str, Any], version: TrinityVersion | None) -> tuple[str, ...]:
    """The key of the SP the trainer runs at in `config` (nested mappings): the actor's own (`ROLE_SP_KEYS`) where
    the config sets it and `version` is 0.5, which fills a role's SP from the trainer's only where it is unset and
    builds the trainer's Ulysses groups from the actor's; else `TRAINER_SP_KEY` (Trinity 0.6 on verl 0.8 or later
    freezes the roles' to it, and without `version` the release is not known)."""
    actor = ROLE_SP_KEYS[0]
    return actor if version == "0.5" and value_at(config, actor) is not None else TRAINER_SP_KEY


def yarn_trainer_words(rollout: bool) -> str:
    """Where a config's YaRN takes effect: Trinity 0.6's verl 0.8 path hands it to vLLM only (before 0.6, and on older
    verl, the trainer gets it too), so in a run without a `rollout` (DPO, mode train) it reaches no model there."""
    reach = ("reaches the rollout (vLLM), but on Trinity 0.6 with verl 0.8 or later not the trainer, whose model reads"
             if rollout else
             "reaches no model of this run (it has no rollout) on Trinity 0.6 with verl 0.8 or later: the trainer's "
             "model reads")
    train = "to train with YaRN too" if rollout else "to train with YaRN"
    return (f"model.rope_scaling {reach} the checkpoint's config.json alone: {train}, add the same rope_scaling there, "
            "the way Qwen's model cards add theirs (memory is the same either way)")


def rope_type_key(rope_scaling: Any) -> str:
    """The key a RoPE scaling mapping (`rope_scaling`; any other value has none) names its type with, as a
    config.json's is read: the legacy ``type`` where the mapping has that key and no ``rope_type``, whatever their
    values (vLLM copies ``type`` to ``rope_type`` there: ``patch_rope_parameters_dict``,
    ``vllm/transformers_utils/config.py:444`` in vLLM 0.19.1; transformers 5's ``standardize_rope_params`` alike),
    else ``rope_type``. A Trinity config's reaches vLLM past both, which reads ``rope_type`` alone
    (`solver.trinity.checks.HANDED_PAST_WORDS`)."""
    legacy = isinstance(rope_scaling, Mapping) and "type" in rope_scaling and "rope_type" not in rope_scaling
    return "type" if legacy else "rope_type"


UNTYPED_SECTIONS = (("model", "rope_scaling"),)
"""Sections Trinity hands on as they are (a dict, not a typed field): OmegaConf converts nothing there, so an
``oc.env`` value stays a string."""


MISSING_KEPT_SECTIONS = (("trainer", "trainer_config"), ("model", "rope_scaling"),
                         ("explorer", "rollout_model", "rope_scaling"))
"""The sections of a Trinity config typed as no dataclass (``TrainerConfig.trainer_config: Any``, and the
``rope_scaling: Optional[dict]`` of ``ModelConfig`` and ``InferenceModelConfig``, in every release from 0.5.0 to
0.6.0), inside which OmegaConf's ``???`` stops the config loading. ``load_config`` merges the config into the typed
``Config`` (``OmegaConf.merge``, ``trinity/common/config.py:983`` in 0.5.2, ``:1058`` in 0.6.0): over a typed field,
the section itself too, the merge keeps the field's default (``omegaconf/basecontainer.py:400``, ``:410``, ``:419`` in
OmegaConf 2.3.0), but a key the schema lacks is copied as written, ``???`` too (``:432``); ``OmegaConf.to_object``
(``trinity/common/config.py:984`` in 0.5.2, ``:1059`` in 0.6.0) then converts every value, throwing on a missing one
(``throw_on_missing=True``, ``omegaconf.py:597``), so ``load_config`` raises "Invalid configuration: Missing mandatory
value". Run with ``load_config`` of 0.5.0, 0.5.1, 0.5.2 and 0.6.0 (their other imports stubbed) on OmegaConf 2.3.0:
``???`` under ``trainer.trainer_config`` or ``model.rope_scaling`` refused; as ``model.max_model_len``,
``trainer.trainer_config``, ``model.rope_scaling``, a whole typed section or an ``auxiliary_models`` entry's key, loaded
with the default."""


def value_at(mapping: Mapping[str, Any], path: tuple[str | int, ...]) -> Any:
    """The value at `path` in nested mappings, as written (no interpolation resolved); None where it is absent."""
    node: Any = mapping
    for part in path:
        if not isinstance(node, Mapping):
            return None
        node = node.get(part)
    return node


LORA_CONFIGS = ("model", "lora_configs")
"""Where a config lists its LoRA configs (Trinity takes one)."""
VERL_LORA_RANK = (*ACTOR_ROLLOUT_REF, "model", "lora_rank")
"""verl's own LoRA rank, which Trinity 0.5 reads where ``model.lora_configs`` is unset."""
LORA_KEYS = (LORA_CONFIGS, VERL_LORA_RANK,
             (*ACTOR_ROLLOUT_REF, "model", "lora_adapter_path"))
"""Where a config turns LoRA on for Trinity 0.5's trainer (the first fills the other two, ``verl_config.py:620`` in
0.5.2): its worker then takes the ref's log-probs from the actor without its adapter (``fsdp_workers.py:966``
in 0.5.2)."""
LEGACY_BYPASS_MODE_KEY = ("trainer", "trainer_config", "algorithm", "rollout_correction", "bypass_mode")
"""Whether Trinity 0.6's legacy trainer (verl before 0.8) takes the rollout's log-probs as the old ones, true, its
default (Trinity's own ``_RolloutCorrectionConfig``, ``trainer/verl_legacy/verl_config.py:340``, over verl 0.7.1's
false), or recomputes them with the actor each step, false (``verl_legacy/verl_trainer.py:527-546``): the one pass
that reads the rollout's own keys (`ROLLOUT_DYNAMIC_KEY`)."""
ENTROPY_KEYS = ("entropy_from_logits_with_chunking", "entropy_checkpointing")
"""How verl computes the actor's entropy: in chunks, and checkpointed (under the actor before verl 0.8, under its
``fsdp_config`` from 0.8): read for a note."""
READ_KEYS: dict[tuple[str, ...], tuple[str, ...]] = {
    (): ("mode", "algorithm", "buffer", "model", "cluster", "explorer", "trainer", "stages"),
    ("algorithm",): ("algorithm_type", "repeat_times", "entropy_loss_fn", BYPASS_OLD_LOGPROBS_KEY[-1]),
    ("buffer",): ("batch_size", "train_batch_size", "trainer_input"),
    ("buffer", "trainer_input"): ("experience_buffer",),
    ("buffer", "trainer_input", "experience_buffer"): ("path",),
    ("model",): ("model_path", "max_model_len", "max_prompt_tokens", "max_response_tokens", "rope_scaling",
                 "external_model", "tinker", "critic_model_path", "lora_configs"),
    ("model", "external_model"): ("enable",),
    ("model", "tinker"): ("enable",),
    ("cluster",): ("node_num", "gpu_per_node"),
    ("explorer",): ("rollout_model", "auxiliary_models", "env_vars"),
    ("explorer", "rollout_model"): ("engine_num", "tensor_parallel_size", "engine_type", "data_parallel_size",
                                    "pipeline_parallel_size", "enable_expert_parallel", "gpu_memory_utilization",
                                    "dtype", "max_model_len", "enable_lora", "extra_engine_args"),
    ("trainer",): ("trainer_type", "trainer_strategy", "ulysses_sequence_parallel_size", "max_token_len_per_gpu",
                   "use_dynamic_bsz", "use_remove_padding", "save_hf_checkpoint", "trainer_config", *OFFLOAD_FLAGS),
    ("trainer", "trainer_config"): ("actor_rollout_ref", "critic", LEGACY_BYPASS_MODE_KEY[2]),
    LEGACY_BYPASS_MODE_KEY[:3]: LEGACY_BYPASS_MODE_KEY[3:4],
    LEGACY_BYPASS_MODE_KEY[:4]: LEGACY_BYPASS_MODE_KEY[4:],
    CRITIC: ("model", *(path[-1] for path in CRITIC_BUDGETS), "ulysses_sequence_parallel_size", "use_dynamic_bsz",
             *(path[-1] for path in CRITIC_MICRO_BATCH_SIZES), DEPRECATED_MICRO_BATCH_SIZES[2][-1],
             CRITIC_FORWARD_WHOLE_SIZE[-1], "strategy", CRITIC_ENGINE[-1]),
    (*CRITIC, "model"): ("fsdp_config", CRITIC_REMOVE_PADDING_KEY[-1]),
    CRITIC_MODEL_FSDP: OFFLOAD_FLAGS,
    CRITIC_ENGINE: (*OFFLOAD_FLAGS, CRITIC_ENGINE_SP_KEY[-1], CRITIC_ENGINE_DYNAMIC_KEY[-1],
                    *(path[-1] for path in CRITIC_ENGINE_MICRO_BATCH_SIZES)),
    (*ACTOR_ROLLOUT_REF,): (*ROLES, "model", "rollout"),
    (*ACTOR_ROLLOUT_REF, "model"): ("use_remove_padding", "lora_rank", "lora_adapter_path"),
    (*ACTOR_ROLLOUT_REF, "actor"): ("fsdp_config", "ppo_max_token_len_per_gpu", "use_dynamic_bsz",
                                    "ulysses_sequence_parallel_size", *ENTROPY_KEYS, ROLE_MICRO_BATCH_SIZES[0][-1],
                                    DEPRECATED_MICRO_BATCH_SIZES[0][-1]),
    (*ACTOR_ROLLOUT_REF, "ref"): ("fsdp_config", "log_prob_max_token_len_per_gpu", "log_prob_use_dynamic_bsz",
                                  "ulysses_sequence_parallel_size", ROLE_MICRO_BATCH_SIZES[1][-1],
                                  DEPRECATED_MICRO_BATCH_SIZES[1][-1]),
    (*ACTOR_ROLLOUT_REF, "rollout"): ("log_prob_max_token_len_per_gpu", "log_prob_use_dynamic_bsz",
                                      ROLE_MICRO_BATCH_SIZES[2][-1]),
    offload_path("actor", "")[:-1]: (*OFFLOAD_FLAGS, *ENTROPY_KEYS, ROLE_ENGINE_SP_KEYS[0][-1]),
    offload_path("ref", "")[:-1]: (*OFFLOAD_FLAGS, ROLE_ENGINE_SP_KEYS[1][-1]),
}
"""Per section, the keys of it that rft-solver reads (all that `ConfigReader` reads but the offload flags of a role's
`IGNORED_SECTION`, read only to say nothing reads them there: tests/test_trinity.py checks this): a key beside them
spelt almost as one the section lacks is likely that key misspelt (`check_trinity_config` says so)."""

NUMBER_KEYS = frozenset((
    "max_model_len", "max_prompt_tokens", "max_response_tokens", "batch_size", "train_batch_size", "repeat_times",
    "node_num", "gpu_per_node", "engine_num", "tensor_parallel_size", "data_parallel_size", "pipeline_parallel_size",
    "ulysses_sequence_parallel_size", "max_token_len_per_gpu", "ppo_max_token_len_per_gpu",
    "log_prob_max_token_len_per_gpu", "forward_max_token_len_per_gpu",
    *(path[-1] for path in (*ROLE_MICRO_BATCH_SIZES, *CRITIC_MICRO_BATCH_SIZES, *DEPRECATED_MICRO_BATCH_SIZES,
                            *CRITIC_ENGINE_MICRO_BATCH_SIZES))))
"""The keys of `READ_KEYS` that hold a number (a count of tokens, GPUs, engines, experiences or sequences): each
Trinity types ``int``."""

INT_FIELDS = NUMBER_KEYS | {"lora_rank"}
"""The keys rft-solver reads that Trinity types ``int``: `NUMBER_KEYS`, and the LoRA ranks (``LoRAConfig``'s,
``common/config.py:109`` in 0.5.2, and ``ActorModel``'s, ``trainer/verl/verl_config.py:50``)."""


NOT_OPTIONAL_KEYS: dict[tuple[str, ...], str] = {
    ("mode",): "str",
    ("algorithm", "algorithm_type"): "str",
    ("algorithm", "repeat_times"): "int",
    ("buffer", "batch_size"): "int",
    TRAIN_BATCH_PATH: "int",
    ("model", "critic_model_path"): "str",
    ("model", "tinker", "enable"): "bool",
    ("model", "external_model", "enable"): "bool",
    ("cluster", "node_num"): "int",
    NODE_SIZE_PATH: "int",
    **{("explorer", "rollout_model", key): "int"
       for key in ("engine_num", "tensor_parallel_size", "data_parallel_size", "pipeline_parallel_size")},
    ("explorer", "rollout_model", "engine_type"): "str",
    ("explorer", "rollout_model", "enable_expert_parallel"): "bool",
    ("explorer", "rollout_model", "enable_lora"): "bool",
    ("explorer", "rollout_model", "gpu_memory_utilization"): "float",
    ("explorer", "rollout_model", "dtype"): "str",
    ("trainer", "trainer_type"): "str",
    ("trainer", "trainer_strategy"): "str",
    TRAINER_SP_KEY: "int",
    ("trainer", "use_dynamic_bsz"): "bool",
    ("trainer", "use_remove_padding"): "bool",
    **{("trainer", flag): "bool" for flag in OFFLOAD_FLAGS},
}
"""The keys rft-solver reads that Trinity's own config types plainly (``int``, ``float``, ``bool`` or ``str``, not
``Optional[...]``), by their type: ``Config.mode``, ``AlgorithmConfig``, ``BufferConfig``, ``ModelConfig``'s
``critic_model_path``, ``TinkerConfig`` and ``ExternalModelConfig``'s ``enable``, ``ClusterConfig``,
``InferenceModelConfig`` (the rollout model) and ``TrainerConfig`` (``trinity/common/config.py``: ``:863``, ``:586``,
``:669``, ``:455``, ``:435``, ``:446``, ``:625``, ``:508``, ``:747`` in 0.5.2; ``:938``, ``:618``, ``:708``,
``:460``, ``:440``, ``:451``, ``:664``, ``:513``, ``:804`` in 0.6.0, where the rollout model's ``float``
``gpu_memory_utilization`` and ``str`` ``dtype`` are at ``:537`` and ``:538``, ``:521`` and ``:522`` in 0.5.2, its
``bool`` ``enable_lora`` at ``:607``, ``:575`` in 0.5.2, ``:555`` in 0.5.0;
0.6.0's rollout parallel sizes, ``enable_expert_parallel`` and trainer flags are keys 0.5 lacks). Every release's
``load_config`` merges the config into that schema (``OmegaConf.merge``, ``:983`` in 0.5.2, ``:1058`` in 0.6.0), and
OmegaConf 2.3.0 refuses null in such a field ("Incompatible value 'None' for field of type 'int'", or 'float', 'bool',
'str': checked for the rollout model's three by merging a null into a schema of them), so a null there does not
load. The ``Optional`` ones
rft-solver reads (``model.max_model_len``, ``max_prompt_tokens``, ``max_response_tokens``,
``trainer.max_token_len_per_gpu``, ``algorithm.entropy_loss_fn``, and the roles' token budgets, SP and dynamic-batch
keys under ``trainer.trainer_config``) take null as unset."""


ROLLOUT_MODEL = ("explorer", "rollout_model")


def started_rollout_engine(word: Callable[[tuple[str, ...]], Any],
                           whole: Callable[[tuple[str, ...]], float | None]) -> str | None:
    """The rollout engine a config starts, the one rule the config's reading and its checks share: ``vllm`` for an
    ``explorer.rollout_model.engine_type`` unset or starting ``vllm``, else that ``engine_type``; None where none
    starts: ``mode: train`` (no explorer), or an ``engine_num`` of 0. `word` reads a key's value as its reader does
    and `whole` ``engine_num`` as a whole number, each None where the key is absent or cannot be read (the reader's
    own line says why; such an ``engine_num`` is not taken for 0)."""
    if word(("mode",)) == "train" or whole((*ROLLOUT_MODEL, "engine_num")) == 0:
        return None
    engine = word((*ROLLOUT_MODEL, "engine_type"))
    return "vllm" if engine is None or str(engine).startswith("vllm") else str(engine)


AUXILIARY_MODELS = ("explorer", "auxiliary_models")
ENGINE_KEY_TYPES = {path[-1]: field_type for path, field_type in NOT_OPTIONAL_KEYS.items()
                    if path[:-1] == ROLLOUT_MODEL}
"""The keys of an inference model (``InferenceModelConfig``: the rollout model, and each of
``explorer.auxiliary_models``) that rft-solver reads and Trinity types plainly, by their type (`NOT_OPTIONAL_KEYS`)."""

NOT_OPTIONAL_SECTIONS: dict[tuple[str, ...], str] = {
    **{(section,): "a mapping" for section in ("algorithm", "buffer", "cluster", "explorer", "trainer")},
    ("buffer", "trainer_input"): "a mapping",
    ("model", "tinker"): "a mapping",
    ("model", "external_model"): "a mapping",
    ROLLOUT_MODEL: "a mapping",
    AUXILIARY_MODELS: "a list",
}
"""The sections rft-solver reads that Trinity's own config types as no ``Optional`` (a typed section, or
``auxiliary_models``' list), by what they must be: every release's ``load_config`` refuses a null there ("field
'cluster' is not Optional", "field 'buffer.trainer_input' is not Optional": checked with the ``load_config`` of
Trinity 0.5.0, 0.5.1, 0.5.2 and 0.6.0 on OmegaConf 2.3.0), where rft-solver would read the section as absent.
(``model`` is one too; without it the config has no ``model.model_path``, which rft-solver refuses.
``trainer.trainer_config`` is typed ``Any``, and ``buffer.trainer_input.experience_buffer`` ``Optional``: a null
there loads, as none.)"""


ROLLOUT_PARALLEL_KEYS = ("data_parallel_size", "pipeline_parallel_size")
"""An inference model's parallel sizes besides its tensor-parallel one: Trinity 0.6's (``InferenceModelConfig``,
``trinity/common/config.py:523`` in 0.6.0), which every 0.5 release's lacks (``:508`` in 0.5.2)."""
ENGINE_KEYS_05_LACKS = (*ROLLOUT_PARALLEL_KEYS, "enable_expert_parallel")
"""The keys of an inference model rft-solver reads that every Trinity 0.5 release's lacks: `ROLLOUT_PARALLEL_KEYS` and
``enable_expert_parallel`` (``:525`` in 0.6.0)."""
KEYS_05_LACKS: dict[tuple[str, ...], Lacking05] = {
    **{(*ROLLOUT_MODEL, key): Lacking05(
        "Trinity 0.6's inference model", "InferenceModelConfig",
        "Trinity 0.5 takes an engine's GPUs as its tensor_parallel_size")
       for key in ROLLOUT_PARALLEL_KEYS},
    (*ROLLOUT_MODEL, "enable_expert_parallel"): Lacking05(
        "Trinity 0.6's inference model", "InferenceModelConfig",
        "Trinity 0.5's rollout engines run without expert parallelism"),
    **{(*ACTOR_ROLLOUT_REF, "actor", "fsdp_config", key): Lacking05(
        "verl 0.8's fsdp_config", "FSDPConfig", "verl before 0.8, which Trinity 0.5 runs, reads the "
        "actor's own") for key in ENTROPY_KEYS},
    **{path: Lacking05("verl 0.8's fsdp_config", "FSDPConfig", "verl before 0.8, which Trinity 0.5 runs, reads the "
                       "role's own ulysses_sequence_parallel_size") for path in ROLE_ENGINE_SP_KEYS},
    **{(*ACTOR_ROLLOUT_REF, role, IGNORED_SECTION): Lacking05(
        f"verl 0.8's {role}", role.capitalize(), "Trinity 0.5 reads a role's offload flags "
        "from its fsdp_config") for role in ROLES},
    CRITIC_ENGINE: Lacking05("verl 0.8's critic", "Critic",
                             "Trinity 0.5 reads the critic's offload flags from its model.fsdp_config"),
}
"""The keys rft-solver reads that every Trinity 0.5 release's typed config lacks, besides `keys_05_refuses`' (and each
``explorer.auxiliary_models`` entry's `ENGINE_KEYS_05_LACKS`, as the rollout model's), with the section that has
them: Trinity 0.6's rollout parallel sizes and ``enable_expert_parallel`` (``:525`` in 0.6.0), which 0.5's
``load_config`` refuses ("Key 'data_parallel_size' not in 'InferenceModelConfig'"), and verl 0.8's actor
``fsdp_config`` entropy keys and a role's ``engine``, which 0.5's
``veRLConfig`` lacks (``FSDPConfig``, ``Actor``, ``Ref``: ``trainer/verl/verl_config.py:97``, ``:149``, ``:187`` in
0.5.2), so its merge of ``trainer.trainer_config`` refuses them (``config_validator.py:1185`` in 0.5.2). Each is
refused in any value, null too: checked by running the ``load_config`` of Trinity 0.5.0, 0.5.1 and 0.5.2, then that
merge, their other imports stubbed, on OmegaConf 2.3.0; 0.6.0 loads each. And the critic's engine, `CRITIC_ENGINE`,
which every 0.5 release's ``Critic`` lacks (``common/verl_config.py:257`` in 0.5.0, ``:258`` in 0.5.1,
``trainer/verl/verl_config.py:260`` in 0.5.2), so that merge refuses it: read from the code, not run; and the
actor's and the ref's engine SP (`ROLE_ENGINE_SP_KEYS`), which every 0.5 release's ``FSDPConfig`` lacks (the fields'
table, ``tables/trinity-fields.yaml``): read, not run."""
EXTERNAL_MODEL = ("model", "external_model")
"""Trinity's external rollout model: a key of 0.5.2's ``ModelConfig`` (``trinity/common/config.py:504``) that 0.5.0's
and 0.5.1's lack, so they refuse it in any value ("Key 'external_model' not in 'ModelConfig'", checked as
`KEYS_05_LACKS`)."""

class NullIn06(NamedTuple):
    """What Trinity 0.6 does with a null in a flag under ``trainer.trainer_config``: in `words` (after "Trinity 0.6"),
    and whether that `differs` from the flag left unset on some verl."""

    words: str
    differs: bool


_FAILS_BEFORE_08 = "fails on it as the trainer starts with verl before 0.8"
TRAINER_CONFIG_NULLS: dict[tuple[str, ...], NullIn06] = {
    GRADIENT_CHECKPOINTING_KEY: NullIn06(
        f"{_FAILS_BEFORE_08}, and on verl 0.8 or later reads it as false (gradient checkpointing off, which the "
        "verdict assumes on)", True),
    **{(*ACTOR_ROLLOUT_REF, "actor", key): NullIn06(f"{_FAILS_BEFORE_08} (on verl 0.8 or later it does not read it)",
                                                    True) for key in ENTROPY_KEYS},
    **{offload_path(role, flag): NullIn06(
        f"sets it to trainer.{flag} with verl before 0.8, and on verl 0.8 or later reads it as false (unset, it takes "
        f"trainer.{flag})", True) for role in ROLES for flag in OFFLOAD_FLAGS},
    **{path: NullIn06(f"sets it to {'.'.join(REMOVE_PADDING_KEYS[0])} whatever it says", False)
       for path in (REMOVE_PADDING_KEYS[1], CRITIC_REMOVE_PADDING_KEY)},
    **{(*CRITIC, "model", "fsdp_config", flag): NullIn06(
        f"{_FAILS_BEFORE_08} (what verl 0.8 or later does with it was not checked)", True) for flag in OFFLOAD_FLAGS},
}
"""The flags under ``trainer.trainer_config`` that rft-solver reads and Trinity 0.5 types as ``bool`` (no
``Optional``: ``ActorModel``, ``Actor`` and ``FSDPConfig`` in ``veRLConfig``, ``common/verl_config.py:33``, ``:163``,
``:89`` in 0.5.0, ``trainer/verl/verl_config.py:40``, ``:164``, ``:99`` in 0.5.2), which Trinity 0.5 merges the
section into as it loads the config (``config_validator.py:1185`` in 0.5.2), refusing a null there as OmegaConf 2.3.0
does ("Incompatible value 'None' for field of type 'bool'"); and what Trinity 0.6 does with the null (`NullIn06`).
On verl before 0.8, 0.6.0 keeps it as written (``build_dataclass_from_mapping``, ``common/dataclass_utils.py:40``),
sets the roles' offload flags and remove padding to the trainer's (``verl_legacy/verl_config.py:646``, ``:708``), and
``OmegaConf.structured`` refuses the rest as the trainer starts (``verl_legacy/verl_trainer.py:198``; its ``bool``
fields, ``verl_legacy/verl_config.py:46``, ``:168``). On verl 0.8 or later it deep-merges the null over its own
value, or the trainer's (``trainer/verl/config.py:204``; remove padding is frozen, ``:700``), and hydra builds verl's
config from it as written (``omega_conf_to_dataclass``, ``workers/engine_workers.py:501`` in verl 0.8.0; checked with
hydra-core 1.3.8): the FSDP engine reads None as false (``workers/engine/fsdp/transformer_impl.py:139``, ``:303``,
``:414``) and the actor's own entropy keys not at all (its ``fsdp_config``'s instead, ``:157``). Read from the code,
not run on a GPU. The critic's ``model.fsdp_config`` flags alike with 0.5 (``CriticModel``,
``trainer/verl/verl_config.py:244`` in 0.5.2) and with 0.6.0 on verl before 0.8, which sets only the actor's and the
ref's to the trainer's; what verl 0.8 does with them was not checked. The critic's own remove padding alike with 0.5
(`CRITIC_REMOVE_PADDING_KEY`), which 0.6 sets to the trainer's whatever it says. With 0.5, run as `KEYS_05_LACKS`."""

_FAILS_VALIDATING = ("fails on it as it checks the config with verl before 0.8 (synchronize_config reads the "
                     "section)")
TRAINER_CONFIG_SECTIONS: dict[tuple[str, ...], NullIn06] = {
    ACTOR_ROLLOUT_REF: NullIn06(f"{_FAILS_VALIDATING}, and on verl 0.8 or later drops it, as if unset", True),
    **{path: NullIn06(f"{_FAILS_VALIDATING}, and on verl 0.8 or later hands verl the null in place of the section",
                      True)
       for path in ((*ACTOR_ROLLOUT_REF, "model"), *((*ACTOR_ROLLOUT_REF, role) for role in (*ROLES, "rollout")),
                    *(offload_path(role, "")[:-1] for role in ROLES), CRITIC, (*CRITIC, "model"),
                    (*CRITIC, "model", "fsdp_config"))},
}
"""The sections under ``trainer.trainer_config`` that rft-solver reads keys of, which Trinity 0.5's ``veRLConfig``
types as no ``Optional`` (a dataclass field), and what Trinity 0.6 does with one written null (`NullIn06`). Trinity
0.5 refuses the null as it merges the section in ("field 'actor_rollout_ref' is not Optional": run as
`KEYS_05_LACKS`). 0.6.0 on verl before 0.8 keeps it (``build_dataclass_from_mapping`` returns None for it), and its
``synchronize_config`` reads every one of them (``trainer/verl_legacy/verl_config.py:523`` to ``:648``), so it
fails as the config is checked; on verl 0.8 or later it drops an ``actor_rollout_ref`` that is no mapping
(``_normalize_trainer_config``, ``trainer/verl/config.py:802``) and sets any other section to the null
(``_deep_merge``, ``:838``). Read from the code, not run."""
