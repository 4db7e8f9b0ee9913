"""How a setting looks in every view: its shade by cost (the source's escalation order) and its short label."""

from __future__ import annotations

from bisect import bisect_left

from solver.tables import ESCALATION_ORDER, Setting

SHADES = (
    "black on #e8f5e9",
    "black on #c8e6c9",
    "black on #fff59d",
    "black on #ffe082",
    "black on #ffcc80",
    "black on #ffab91",
    "white on #e53935",
    "white on #c62828",
    "white on #8e0000",
)
"""Cell shades, lightest to darkest, one per step of the source's escalation order."""
NO_SETTING_STYLE = "bold white on grey23"

_ESCALATION_KEYS = [setting.escalation_key for setting in ESCALATION_ORDER]


def setting_style(setting: Setting | None) -> str:
    """The shade for a cell: the further along the source's escalation order, the darker."""
    if setting is None:
        return NO_SETTING_STYLE
    step = bisect_left(_ESCALATION_KEYS, setting.escalation_key)
    return SHADES[min(step, len(SHADES) - 1)]


def short_label(setting: Setting) -> str:
    """A setting in a few characters: ``E+O+SP4`` for Env + Offload + SP=4, ``van`` for vanilla."""
    parts = [name for name, on in (("E", setting.env), ("O", setting.offload)) if on]
    parts += [f"SP{setting.sp}"] if setting.sp > 1 else []
    return "+".join(parts) or "van"
