"""The domain: the Station and what it does for the tournament."""
