"""federation_hub — beyond one venue: the federation centre's hub (`qizhong hub`).

Reads the venues' bridged reports from NATS JetStream (durable pull consumers shared by every
hub process), stores each event once in PostgreSQL and serves a read-only page and API. Also
writes the centre's nats-server.conf (accounts: FED for venues and hubs, PUBLIC for viewers).
See docs/federation.md.
"""

from federation_hub.errors import FederationError, HubConfigError, RecordError

__all__ = ["FederationError", "HubConfigError", "RecordError"]
