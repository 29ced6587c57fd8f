"""qizhong's MQTT wire contract (DESIGN.md §4), shared by node, station, simulator and tools.

``messages``: topics, the pydantic models of every payload, encode/decode. ``broker``: the one
broker configuration (``mqtt://`` / ``mqtts://`` URL, TLS files, credentials) and the one MQTT
client factory. ``wallclock``: the wall-clock milliseconds every ``ts`` carries.
"""
