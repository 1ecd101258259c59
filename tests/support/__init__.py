"""Shared test support: helpers, oracles and strategies the test folders have in common.

Where it sits: ``tests/support`` (not a test folder: no ``test_`` modules). ``tests/conftest.py``
puts ``tests/`` on ``sys.path``, so a test imports ``from support.bus import free_port``; the
child-process scripts (``bus_peer.py``, ``runtime_peer.py``, ``fault_node.py``, …) put it there
themselves. One package instead of a helper per folder, so a helper has one home and one name:

- :mod:`.bus` — free loopback ports, polling, small test messages;
- :mod:`.runtime` — a stepped world for the runtime tests;
- :mod:`.faults` — process and mode-log helpers of the fault tests;
- :mod:`.fuzz` — the fuzz campaigns' corpora and checks;
- :mod:`.cli` / :mod:`.cli_tools` — running ``jointbus`` commands in tests;
- :mod:`.tools` — MCAP files and messages for the tool tests;
- :mod:`.rosbags_oracle` — rosbags' own serializer as the byte-level oracle;
- :mod:`.rosbag2_fixtures` — rosbag2 bags written by rosbags;
- :mod:`.wire_strategies` — hypothesis strategies for the codec;
- :mod:`.hb50_sim` / :mod:`.walking_sim` — Honey Badger in lock-step MuJoCo for the control tests;
- :mod:`.array_server` — a served array for the ``bus://`` tests.
"""
