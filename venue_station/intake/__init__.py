"""The intake: what the boards say, from the broker into the store."""
