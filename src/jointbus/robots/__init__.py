"""jointbus.robots: one package per robot, on top of the generic core.

Where it sits: the top of the library, below only :mod:`jointbus.stack` and :mod:`jointbus.cli`
(DESIGN.md §4b). The core (``math``, ``codec``, ``messages``, ``bus``, ``model``, ``runtime``,
``drivers``) and the generic nodes (:mod:`jointbus.nodes`: the array node and its safety
components) know no particular robot; a robot package adds what only that robot has — its wire
messages, its nodes, its controllers — and converts its messages to the core's joint-space arrays
at its edge. The ``generic core knows no particular robot`` import-linter contract in
``pyproject.toml`` keeps it that way.

- :mod:`jointbus.robots.hb50` — Honey Badger 5.0: its ``hb50_commons`` messages, the 500 Hz
  bridge and the control node (standing, walking).

The simulated ``arm6`` and ``rover`` need no package: the array node (``jointbus serve``) serves
them with the generic Beam Bots, Player and Rock messages.
"""
