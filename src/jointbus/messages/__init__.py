"""jointbus.messages."""
