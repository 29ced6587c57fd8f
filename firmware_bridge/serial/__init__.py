"""The serial clock protocol stack (docs/protocol.md), codec to face."""
