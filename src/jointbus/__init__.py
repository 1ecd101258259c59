"""jointbus: state and command traffic for robot actuator arrays.

Layers, lowest first (a module only imports from its own layer or lower ones):
``errors`` → ``math`` → ``codec`` → ``messages`` → ``model`` → ``bus`` → ``runtime`` →
``drivers`` → ``nodes`` → ``cli``. See ``docs/`` and the README for the data flow.
"""

__version__ = "0.1.0"
__all__ = ["__version__"]
