"""One prompt without a UI (``qcli -p``): the run, and the plain-terminal approver."""
