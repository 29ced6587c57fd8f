"""board_nodes — see README.md."""
