"""The agent loop: a session's turns, the scheduler that runs tool calls, the loop guard, stats."""
