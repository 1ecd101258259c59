"""jointbus.drivers."""
