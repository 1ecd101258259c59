"""Build configuration of jointbus's optional C extensions (the rest is in pyproject.toml).

``jointbus.codec._cdr_accel`` is the compiled core of the CDR fast path (see
``src/jointbus/codec/_cdr_accel.c``); ``jointbus.robots.hb50.messages._frame_accel`` builds the
bridge's ``BridgeData`` fields from the driver's arrays in one pass (``_frame_accel.c``);
``jointbus.robots.hb50.legged._leg_accel`` does the control step's per-leg arithmetic (leg
kinematics, IK, stance forces: ``_leg_accel.c``),
``jointbus.robots.hb50.legged._estimate_accel`` is the walking estimator's step (contacts, leg
odometry, the velocity filter: ``_estimate_accel.c``),
``jointbus.robots.hb50.messages._robot_state_accel`` builds the control node's ``RobotState``
in one pass (``_robot_state_accel.c``) and ``jointbus.drivers._limit_accel`` is the drive's limit
guard in one pass (``_limit_accel.c``). All are ``optional``: without a C compiler ``pip
install`` still succeeds and the same code runs in pure Python (same results, slower).
"""

import sys

from setuptools import Extension, setup

#: No fused multiply-add: the compiled leg and estimator arithmetic rounds as its Python reference
#: does (on CPUs with FMA, e.g. the ARM cores of a Raspberry Pi or a Jetson, compilers contract
#: a*b + c).
STRICT_FP = [] if sys.platform == "win32" else ["-ffp-contract=off"]

setup(
    # The seven extensions compile side by side (one per core): `make venv` builds them on every
    # fresh clone.
    options={"build_ext": {"parallel": True}},
    ext_modules=[
        Extension(
            "jointbus.codec._cdr_accel",
            sources=["src/jointbus/codec/_cdr_accel.c"],
            optional=True,
        ),
        # BridgeData's per-joint fields in one pass (the bridge's 500/1000 Hz frame); optional as
        # well: jointbus.robots.hb50.messages.frame_fields has the numpy reference.
        Extension(
            "jointbus.robots.hb50.messages._frame_accel",
            sources=["src/jointbus/robots/hb50/messages/_frame_accel.c"],
            optional=True,
        ),
        # The drive's limit guard, every control cycle of sim:// and can:// (optional:
        # jointbus.drivers.limit_guard has the numpy reference, which it equals value for value).
        Extension(
            "jointbus.drivers._limit_accel",
            sources=["src/jointbus/drivers/_limit_accel.c"],
            extra_compile_args=STRICT_FP,
            optional=True,
        ),
        # JointCommand's float fields in one pass (the control node's frame); optional:
        # jointbus.robots.hb50.messages.command_fields has the Python reference.
        Extension(
            "jointbus.robots.hb50.messages._command_accel",
            sources=["src/jointbus/robots/hb50/messages/_command_accel.c"],
            optional=True,
        ),
        # RobotState from the estimate's arrays in one pass (the control node's frame); optional:
        # RobotState.from_estimate_arrays_python is the reference.
        Extension(
            "jointbus.robots.hb50.messages._robot_state_accel",
            sources=["src/jointbus/robots/hb50/messages/_robot_state_accel.c"],
            optional=True,
        ),
        # the control step's per-leg arithmetic; optional: leg_kinematics.py and
        # stance_forces.py have the pure-Python reference methods.
        Extension(
            "jointbus.robots.hb50.legged._leg_accel",
            sources=["src/jointbus/robots/hb50/legged/_leg_accel.c"],
            extra_compile_args=STRICT_FP,
            optional=True,
        ),
        # the walking estimator's step (every control step while walking); optional:
        # WalkingEstimator.update_python is the reference, which it equals bit for bit.
        Extension(
            "jointbus.robots.hb50.legged._estimate_accel",
            sources=["src/jointbus/robots/hb50/legged/_estimate_accel.c"],
            extra_compile_args=STRICT_FP,
            optional=True,
        ),
    ]
)
