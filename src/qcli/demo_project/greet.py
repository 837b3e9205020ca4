"""A tiny module for the qcli demo to work on."""


def greet(name: str) -> str:
    """Return a friendly greeting for ``name``."""
    return "Hello, " + name


if __name__ == "__main__":
    print(greet("world"))
