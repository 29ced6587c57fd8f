"""Provisioning: inventory, offline bundle, Pi roots, `qizhong deploy`."""
