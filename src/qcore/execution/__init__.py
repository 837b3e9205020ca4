"""Running things: processes and their tracker, the shell runner, the sandbox, the Python kernel, git run safely, and the environment children get."""
