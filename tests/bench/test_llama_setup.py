"""How `make local-model` builds llama-server for this machine (bench/llama_setup.py): the machine's own instruction
sets, never AMX, which a virtual machine may list without the kernel granting it (SIGILL on `tilezero`)."""

from __future__ import annotations

from bench.llama_setup import cpu_flags

AMX_MACHINE = "processor : 0\nflags : fpu sse4_2 avx avx2 fma f16c bmi2 avx512f avx512_vnni amx_tile amx_int8 amx_bf16\n"


def test_the_machines_instruction_sets_without_amx():
    flags = cpu_flags(AMX_MACHINE)
    assert "-DGGML_NATIVE=OFF" in flags and "-DGGML_AVX2=ON" in flags and "-DGGML_AVX512=ON" in flags
    assert "-DGGML_AVX512_VBMI=OFF" in flags  # not listed: off
    assert {"-DGGML_AMX_TILE=OFF", "-DGGML_AMX_INT8=OFF", "-DGGML_AMX_BF16=OFF"} <= set(flags)
    assert not any(f.startswith("-DGGML_AMX") and f.endswith("=ON") for f in flags)


def test_no_x86_flags_leaves_ggmls_own_native_build():
    assert cpu_flags("processor : 0\nFeatures : fp asimd evtstrm\n") == []
    assert cpu_flags("") == []
