"""Write your own controller: take over from the control node at 500 Hz, squat, hand control back.

Run the robot in one terminal (``make demo``, or ``jointbus bridge`` + ``jointbus control``), wait
until it stands, then in another::

    python examples/own_controller.py --duration 8

What happens — the bridge's command arbitration, nothing special in this program:

1. The program joins the robot's bus over Zenoh (the same no-flags scheme as ``jointbus topic``)
   and waits for the first ``/hb50/bridge_data`` frame: the squat starts from the measured pose.
2. It publishes a ``JointCommand`` with ``source_node="squat_controller"`` every 2 ms: the
   measured pose, held, until the bridge gives it the actuators — after 0.4 s of steady commands
   (the arbitration's rule for any source, however fast): ``owner: squat_controller`` in
   ``/hb50/bridge_state``. The control node keeps running; its commands wait. Why hold until
   then: a squat started at the first command would be 0.4 s along when it took over, and the
   legs would jump to that point.
3. The legs' set-points go down ``--depth`` metres and back up, in whole squats of about
   ``--period`` seconds from the takeover, so the last command is the pose it started from. The
   body sinks a little further under its weight than the set-points (7.6 cm for the default
   6 cm, measured by the simulator's ground truth). Should the bridge take the actuators back
   meanwhile (this program stalled: the robot's host starved it), it holds the measured pose
   again and starts its squat anew when it has them back, rather than jump to where its clock
   says the squat would be — if the robot still stands: a squat adds its bend to the measured
   pose, so from a sitting robot (the bridge's fallback sits it down when a controller stays
   silent) it would drive the knees into their limits. Finding the robot not standing (a joint
   more than ``STANDING_TOLERANCE_RAD`` from its standing angle), at the start or when it gets
   the actuators back, it says which joint and stops. Not given the
   actuators within ``TAKEOVER_TIMEOUT_S`` (another custom source owns them, or the bridge
   refuses the commands: its ``/hb50/status`` says why), it stops and says so.
4. It stops publishing — at the end, or at once on Ctrl-C (SIGINT or SIGTERM). 100 ms later the
   bridge gives control back to ``control_node`` — also when this program is killed, which is the
   point: a crashed custom controller never leaves the robot without commands. It waits for
   ``/hb50/bridge_state`` to name the new owner and only then prints that control is back (at
   most ``HANDBACK_TIMEOUT_S``; it says so if the bridge did not confirm).

The joint targets come from the same leg inverse kinematics the control node uses
(:class:`jointbus.robots.hb50.legged.stand_pose.StandPose`): the difference between the
standing pose at the robot's stand height and at the squat height, added to the measured start pose.
"""

from __future__ import annotations

import argparse
import math
import os
import signal
import sys
import threading
import time

import numpy as np

from jointbus.bus import MAB_RT, Bus, ZenohConfig
from jointbus.model.yaml_loader import load_robot
from jointbus.robots.hb50.legged.stand_pose import BodyPose, StandPose
from jointbus.robots.hb50.messages import BridgeData, BridgeState, JointCommand
from jointbus.runtime import CycleInfo, LoopRun, Node

NAME = "squat_controller"
#: How long to wait for the bridge to confirm that control is back (s): its 100 ms fallback,
#: with room for a loaded host.
HANDBACK_TIMEOUT_S = 2.0
#: How long to wait for the first ``/hb50/bridge_data`` frame by default (s, ``--wait``) before
#: saying nothing is there.
FIRST_FRAME_TIMEOUT_S = 10.0
#: How long to offer the measured pose for the bridge to give us the actuators (s): its 0.4 s
#: takeover rule, with room for a loaded host.
TAKEOVER_TIMEOUT_S = 5.0
#: How far a measured joint may be from its standing angle for the robot to count as standing
#: (rad): a standing hb50 measured 0.08 rad at most (its knees sag under its weight), a sitting
#: one 1.9 rad.
STANDING_TOLERANCE_RAD = 0.3
_SAID = threading.Lock()


def say(line: str) -> None:
    """Print one whole line at once: the loop and the bus's callbacks print from different
    threads, and ``print`` writes the text and its newline separately (two lines ran into one)."""
    with _SAID:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


class SquatController(Node):
    """A 500 Hz controller node: a slow squat from the measured pose, for ``duration`` s."""

    def __init__(self, bus: Bus, *, duration: float, period: float, depth: float) -> None:
        super().__init__(NAME, bus)
        model = load_robot("hb50")
        params = {p.name: float(p.default) for p in model.parameters}
        self.kp, self.kd = params["kp"], params["kd"]  # N·m/rad, N·m·s/rad: the stand gains
        stand = StandPose(model)
        height = params["stand_height"]  # m
        self.standing = stand.solve(BodyPose(height))  # rad, actuator order
        self.delta = stand.solve(BodyPose(height - depth)) - self.standing
        self.model = model
        self.lower = self.upper = np.zeros(0)  # rad, actuator order: set with the first frame
        self.squats = max(1, round(duration / period))
        self.period = duration / self.squats  # s: whole squats, so the motion ends where it began
        self.duration = duration
        self.frame: BridgeData | None = None
        self.start_pose: np.ndarray | None = None
        self.names: tuple[str, ...] = ()
        self.t0 = 0.0  # monotonic s: the first frame, then the takeover (the squat's start)
        self.squatting = False
        self.took_over = False
        self.first_frame = threading.Event()
        self.done = threading.Event()
        self.owner = ""
        self.handed_back = threading.Event()  # set by the bridge_state that names another owner
        self.not_standing = ""  # why it stopped without squatting: the joint farthest from standing
        self.create_subscription("bridge_data", BridgeData, self.on_frame, MAB_RT, realtime=True)
        # every cycle's state (500 Hz), not the 10 Hz mirror: the owner change is seen within a
        # cycle, so "control is back" is printed when it is, not up to 100 ms later
        self.create_subscription("bridge_state", BridgeState, self.on_state, MAB_RT, realtime=True)
        self.commands = self.create_publisher("joint_command", JointCommand, MAB_RT)
        self.create_rate_loop(500.0, self.step, name="squat")

    def on_frame(self, frame: BridgeData) -> None:
        self.frame = frame  # newest feedback; the loop reads it
        self.first_frame.set()

    def on_state(self, state: BridgeState) -> None:
        owner = next((s[len("owner: ") :] for s in state.status if s.startswith("owner: ")), "")
        if owner != self.owner:
            self.owner = owner
            say(f"owner: {owner}")
        if self.done.is_set() and owner and owner != NAME:
            self.handed_back.set()

    def _not_standing(self, pose: np.ndarray) -> str:
        """Why ``pose`` (rad, actuator order) is no standing robot's, or "" when it is one."""
        off = np.abs(pose - self.standing)
        worst = int(np.argmax(off))
        if off[worst] <= STANDING_TOLERANCE_RAD:
            return ""
        return (
            f"joint {self.names[worst]} (index {worst}) is at {pose[worst]:.3f} rad, "
            f"{off[worst]:.2f} rad from its standing angle {self.standing[worst]:.3f} "
            f"(at most {STANDING_TOLERANCE_RAD:g})"
        )

    def _stop_not_standing(self, pose: np.ndarray, when: str) -> bool:
        """Stop (and say why) if the robot does not stand; whether it stopped."""
        why = self._not_standing(pose)
        if why:
            self.not_standing = why
            say(f"the robot is not standing {when}: {why}; not squatting (stand it up first)")
            self.done.set()
        return bool(why)

    def step(self, _cycle: CycleInfo) -> None:
        frame = self.frame
        if frame is None or self.done.is_set():
            return  # no feedback yet: command nothing rather than guess the pose
        now = time.monotonic()
        if self.start_pose is None:
            self.names = frame.joint_name
            limits = self.model.limits_for(self.names)
            self.lower = np.array([lim.position_min for lim in limits])
            self.upper = np.array([lim.position_max for lim in limits])
            # A measured joint at its end reads a hair past it (sensor noise): the bridge refuses
            # a whole command with one target outside the limits, so keep every target inside.
            self.start_pose = np.clip(np.array(frame.joint_position), self.lower, self.upper)
            self.t0 = now
            if self._stop_not_standing(self.start_pose, "at the start"):
                return
            say("holding the measured pose until the bridge gives us the actuators")
        if self.squatting and self.owner != NAME:  # the bridge took the actuators back
            self.squatting = False
            self.start_pose = np.clip(np.array(frame.joint_position), self.lower, self.upper)
            self.t0 = now
            say("lost the actuators: holding the measured pose until the bridge gives them back")
        if not self.squatting:
            if self.owner == NAME:  # the bridge applies our commands from now on
                self.took_over = True
                pose = np.clip(np.array(frame.joint_position), self.lower, self.upper)
                if self._stop_not_standing(pose, "now that we have the actuators"):
                    return  # done: the bridge hands it back to the control node in 100 ms
                self.squatting = True
                self.t0 = now
                say(f"squatting {self.squats} x {self.period:.1f} s")
            elif now - self.t0 > TAKEOVER_TIMEOUT_S:
                say(
                    f"the bridge did not give us the actuators within {TAKEOVER_TIMEOUT_S:g} s "
                    f"(owner {self.owner or 'unknown'!r}; see /hb50/status for why)"
                )
                self.done.set()
                return
        t = now - self.t0 if self.squatting else 0.0
        if t >= self.duration:
            self.done.set()  # stop publishing: the bridge hands control back after 100 ms
            return
        w = 2.0 * math.pi / self.period
        s = 0.5 * (1.0 - math.cos(w * t))  # 0 → 1 → 0 per squat
        ds = 0.5 * w * math.sin(w * t)  # 1/s
        n = len(self.names)
        # Stamped with the frame it answers, as the control node stamps its commands: the bridge
        # then knows the answer's age (bridge_state's ``command age p99``) and drops answers to
        # frames older than its watchdog time (a backlog after a stall) instead of applying them.
        self.commands.publish(
            JointCommand(
                frame.header,
                NAME,
                self.names,
                (self.kp,) * n,
                (0.0,) * n,
                (self.kd,) * n,
                tuple(np.clip(self.start_pose + s * self.delta, self.lower, self.upper).tolist()),
                tuple((ds * self.delta).tolist()),  # rad/s
                (0.0,) * n,
                (False,) * n,
            )
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=8.0, help="seconds of squatting")
    parser.add_argument("--period", type=float, default=4.0, help="seconds per squat (about)")
    parser.add_argument(
        "--wait",
        type=float,
        default=FIRST_FRAME_TIMEOUT_S,
        help="seconds to wait for the robot's first /hb50/bridge_data frame",
    )
    parser.add_argument(
        "--depth",
        type=float,
        default=0.06,
        help="how far the legs' set-points go down (m; the body sinks a little further)",
    )
    parser.add_argument(
        "--hub-port",
        type=int,
        default=int(os.environ.get("JOINTBUS_HUB_PORT", "7447")),
        help="loopback port of the local jointbus hub (env JOINTBUS_HUB_PORT)",
    )
    args = parser.parse_args()
    # Ctrl-C ends the squat even when a script started us in the background (the shell then
    # hands us SIGINT ignored, and Python keeps an ignored SIGINT ignored); SIGTERM (a process
    # manager stopping us) ends it the same way
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    with (
        Bus(name=NAME, zenoh=ZenohConfig(hub_port=args.hub_port)) as bus,
        SquatController(
            bus, duration=args.duration, period=args.period, depth=args.depth
        ) as controller,
    ):
        say("waiting for /hb50/bridge_data")
        controller.start()
        interrupted = False
        try:
            if not controller.first_frame.wait(args.wait):
                say(
                    f"no /hb50/bridge_data within {args.wait:g} s on hub port "
                    f"{args.hub_port}: is the robot running there (make demo; "
                    "JOINTBUS_HUB_PORT / --hub-port pick the port)?"
                )
                return 1
            controller.done.wait()
            if controller.not_standing and not controller.took_over:
                return 1  # said why; never commanded the robot
        except KeyboardInterrupt:
            controller.done.set()  # stop publishing now: the bridge's fallback starts counting
            interrupted = True
            say("interrupted: stopped commanding")
        if not controller.took_over:  # never commanded the robot: nothing to hand back
            return 0 if interrupted else 1
        try:
            back = controller.owner != NAME or controller.handed_back.wait(HANDBACK_TIMEOUT_S)
        except KeyboardInterrupt:
            back = False
        owner = controller.owner
        if back:  # printed as the bridge says it, before this program's own shutdown
            say(f"stopped: control is back with {owner or 'the control node'}")
        else:
            say(
                f"stopped; the bridge did not confirm the hand-back within "
                f"{HANDBACK_TIMEOUT_S:g} s (owner still {owner!r})"
            )
        # What its own 500 Hz loop achieved: on a loaded host, at normal priority, it ran at
        # 287-382 Hz in a user's trial and said nothing of it (2026-12-07)
        loop = LoopRun.of(controller.rate_loops["squat"].stats())
        say(f"its 500 Hz loop {loop.describe()}")
    return 1 if controller.not_standing else 0  # found it not standing: no squat was done


if __name__ == "__main__":
    sys.exit(main())
