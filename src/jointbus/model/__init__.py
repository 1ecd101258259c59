"""jointbus.model."""
