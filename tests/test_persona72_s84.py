"""What a new user of one node of four A100-40GB trips on (session 84, persona 72): a DPO config whose actor's own
``use_dynamic_bsz`` is false, which Trinity 0.6 replaces with the trainer's (true where unset), is told that the
trainer's key is on, not that the actor's false is true; ``--gpu a100 --gpu-memory 40G`` is told the catalogue's
A100-40GB; ``--lora 64`` is told ``--lora-rank``."""

from __future__ import annotations

from test_dpopairs_s82 import ARR, DYNAMIC, PAIR, UNSET, _dpo, _lines


def test_a_dpo_configs_actor_key_off_is_not_said_to_be_true():
    # the trainer's unset (true), the actor's own off: Trinity 0.5 reads the actor's (off: no line); Trinity 0.6 sets
    # the actor's to the trainer's, which is what is on, and what the fix names
    config = _dpo()
    config["trainer"]["trainer_config"]["actor_rollout_ref"]["actor"]["use_dynamic_bsz"] = False
    over = f" (Trinity 0.6 sets {ARR}.actor.use_dynamic_bsz to it, over the false written there)"
    for version in (None, "0.6"):
        line = DYNAMIC.format(key="trainer.use_dynamic_bsz", shown=UNSET + over) + PAIR[version]
        assert _lines(config, version) == [("dpo-pair-dynamic", line)]
    assert _lines(config, "0.5") == []
    config["trainer"]["use_dynamic_bsz"] = True
    said_true = DYNAMIC.format(key="trainer.use_dynamic_bsz", shown="true" + over) + PAIR[None]
    assert _lines(config, None) == [("dpo-pair-dynamic", said_true)]
