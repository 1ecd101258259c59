"""jointbus.bus."""
