"""The chaos campaign's parts that know no process: what it drives, what it breaks, what it checks.

Where it sits: :mod:`jointbus.tools` (beside the recorder and the monitor); the campaign that
starts the robot and its processes is :mod:`jointbus.chaos_campaign` (it needs
:class:`~jointbus.stack.Stack`, which tools may not import). One concept per module:

- :mod:`.velocity_script`: the seeded walk (forward, turn, stop, sideways, random steps);
- :mod:`.fault_schedule`: the seeded, overlapping faults and when they happen;
- :mod:`.invariants`: the checker fed with the simulator's ground truth, joints and reports;
- :mod:`.report`: the table per fault kind, the violations and how to replay them;
- :mod:`.velocity_publisher` and :mod:`.bad_input`: the processes the campaign starts beside the
  robot (a velocity stream; bursts of bad commands).
"""
