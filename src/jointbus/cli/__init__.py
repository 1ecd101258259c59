"""jointbus.cli."""
