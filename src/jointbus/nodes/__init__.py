"""jointbus.nodes."""
