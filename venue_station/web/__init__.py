"""The web: HTTP routes, pages, the server and the launcher."""
