"""The command line: `qizhong` and its subcommands' entry points."""
