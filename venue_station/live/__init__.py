"""What each stored event becomes at once: outcomes, alerts, the fan-out, counters."""
