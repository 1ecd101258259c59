"""jointbus.tools — recording, replay, inspection and plots of bus traffic.

Where it sits: beside :mod:`jointbus.nodes`, above :mod:`jointbus.runtime` and :mod:`jointbus.bus`;
the CLI commands ``record``, ``play``, ``info`` and ``plot`` are thin wrappers over it. Modules are
imported on use (nothing is re-exported here) so that ``jointbus info`` never loads Zenoh and
``jointbus record`` never loads matplotlib:

- :mod:`jointbus.tools.recorder` — :class:`~jointbus.tools.recorder.Recorder`, the bus into MCAP;
- :mod:`jointbus.tools.mcap_writer` — the chunked zstd MCAP writer behind it;
- :mod:`jointbus.tools.bag_reader` — MCAP files (also truncated ones) and rosbag2 directories;
- :mod:`jointbus.tools.bag_info` — the ``ros2 bag info``-style summary;
- :mod:`jointbus.tools.message_rate` — the (n − 1) / (t_last − t_first) rate ``info`` and
  ``topic list`` show;
- :mod:`jointbus.tools.player` — republishing a bag with its original timing;
- :mod:`jointbus.tools.plot` — fields over time as a PNG (matplotlib);
- :mod:`jointbus.tools.errors` — the typed errors of all of the above.
"""
