"""A simulated venue: the demo, the simulator, the local venue runner."""
