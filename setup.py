"""Build configuration of jointbus's one optional C extension (the rest is in pyproject.toml).

``jointbus.codec._cdr_accel`` is the compiled core of the CDR fast path (see
``src/jointbus/codec/_cdr_accel.c``). It is ``optional``: without a C compiler ``pip install``
still succeeds and the codec runs in pure Python (same results, slower).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "jointbus.codec._cdr_accel",
            sources=["src/jointbus/codec/_cdr_accel.c"],
            optional=True,
        )
    ]
)
