"""The Agent Client Protocol server (``qcli --acp``): the agent, its sessions, the editor as host, and the updates sent to it."""
