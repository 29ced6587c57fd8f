"""firmware_bridge — see README.md."""
