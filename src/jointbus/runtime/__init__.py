"""jointbus.runtime."""
