"""venue_station — the central station; see README.md.

The station is built in wings, one folder each, listed here from the top down. A module imports
its own wing and the wings below it, never one above; the package root (``errors``, ``config``,
``auth``, ``resources``) is the ground every wing stands on and imports no wing.
tests/system/test_station_layers.py reads this order from here and each module's wing from its
folder.
"""

#: The wings from the top down (the layer rule; see the module docstring).
WINGS = ("web", "domain", "intake", "live", "store")
