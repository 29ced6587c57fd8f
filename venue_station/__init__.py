"""venue_station — see README.md."""
