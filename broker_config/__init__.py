"""broker_config — the venue's Mosquitto: roster in, locked-down broker directory out.

``write_broker_config(roster, dir)`` writes mosquitto.conf, the hashed password file, an
explicit per-user ACL and one credentials file per account; ``MosquittoProcess`` runs a
private broker from such a directory (tests, demo, benchmarks). See docs/broker.md.
"""

from broker_config.errors import BrokerConfigError, MosquittoError, RosterError, RosterProblem
from broker_config.files import BrokerFiles, Credentials, Listener, write_broker_config
from broker_config.mosquitto_conf import queue_size
from broker_config.roster import Roster
from broker_config.runner import MosquittoProcess, free_port

__all__ = [
    "BrokerConfigError",
    "BrokerFiles",
    "Credentials",
    "Listener",
    "MosquittoError",
    "MosquittoProcess",
    "Roster",
    "RosterError",
    "RosterProblem",
    "free_port",
    "queue_size",
    "write_broker_config",
]
