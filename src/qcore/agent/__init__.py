"""The agent loop: what a session is built from (config), the session and its turns (a loop over one
step), the scheduler that runs tool calls, what the model reads of their results, the loop guard, stats."""
