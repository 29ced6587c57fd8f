"""qizhong — the command line that ties the parts together (``qizhong --help``)."""

__version__ = "0.1.0"
