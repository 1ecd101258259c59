"""Build configuration of jointbus's optional C extensions (the rest is in pyproject.toml).

``jointbus.codec._cdr_accel`` is the compiled core of the CDR fast path (see
``src/jointbus/codec/_cdr_accel.c``); ``jointbus.robots.hb50.messages._frame_accel`` builds the
bridge's ``BridgeData`` fields from the driver's arrays in one pass (``_frame_accel.c``);
``jointbus.drivers._limit_accel`` is the drive's limit guard in one pass. All are
``optional``: without a C compiler ``pip install`` still succeeds and the same code runs in pure
Python (same results, slower).
"""

from setuptools import Extension, setup

setup(
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
        # jointbus.drivers.limit_guard has the numpy reference).
        Extension(
            "jointbus.drivers._limit_accel",
            sources=["src/jointbus/drivers/_limit_accel.c"],
            optional=True,
        ),
    ]
)
