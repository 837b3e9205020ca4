"""qcli: the command line on top of qcore."""
