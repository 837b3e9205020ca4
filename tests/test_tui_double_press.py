"""The timing of the app's double presses (Ctrl+C twice leaves, Esc twice rewinds), without an app."""

from __future__ import annotations

from qcli.tui.keys import DoublePress


def test_a_second_press_within_the_window_counts_and_uses_the_pair_up() -> None:
    keys = DoublePress(0.6)
    assert not keys.press(10.0)
    assert keys.press(10.5)
    assert not keys.press(10.7)  # the pair was used: this one starts a new one
    assert keys.press(11.2)


def test_a_press_after_the_window_starts_afresh() -> None:
    keys = DoublePress(2.0)
    assert not keys.press(1.0)
    assert not keys.press(3.5)
    assert keys.press(5.0)
