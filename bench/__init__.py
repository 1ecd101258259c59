"""jointbus benchmarks: ``python -m bench.run`` (or ``make bench``) runs every ``bench_*.py``.

Each module defines ``run(quick: bool) -> list[dict]``; every row compares one of our numbers with
an anchor library measured in the same run (ratios, not absolute times), against a goal.
"""
