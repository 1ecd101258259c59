"""Two publishers fighting over /hb50/velocity_command are told from one joystick by how often
the command reverses sign (issue 20 item 27)."""

from __future__ import annotations

from jointbus.robots.hb50.control.velocity_conflict import MAX_REVERSALS, VelocityConflict


def test_alternating_commands_beside_a_stream_are_two_sources_and_clear_once_quiet() -> None:
    vc = VelocityConflict()
    reports = []
    t = 0.0
    for i in range(400):  # ±1 m/s at 200 Hz, a 0.5 m/s stream at 20 Hz in between
        t = i * 0.005
        r = vc.update(t, 1.0 if i % 2 else -1.0, 0.0, 0.0)
        if i % 10 == 0:
            r = vc.update(t, 0.5, 0.0, 0.0) or r
        if r is not None:
            reports.append(r)
    assert len(reports) == 1 and reports[0].conflict
    assert "two sources" in reports[0].text and "linear.x" in reports[0].text
    assert "-1.00" in reports[0].text and "+1.00" in reports[0].text
    for i in range(1, 60):  # the stream alone for 3 s
        r = vc.update(t + i * 0.05, 0.5, 0.0, 0.0)
        if r is not None:
            reports.append(r)
    assert len(reports) == 2 and not reports[1].conflict


def test_a_joystick_reversing_by_hand_and_centre_noise_are_not_a_conflict() -> None:
    vc = VelocityConflict()
    for i in range(200):  # 10 s at 20 Hz: back and forth once a second, noise at the centre
        t = i * 0.05
        x = 0.8 if (i // 10) % 2 else -0.8
        assert vc.update(t, x, 0.03 * (-1) ** i, 0.0) is None
    assert not vc.conflict
    assert MAX_REVERSALS > 2
