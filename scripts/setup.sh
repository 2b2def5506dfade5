#!/bin/sh
# setup.sh - installs the Debian packages Loom needs to build and test,
# when something is missing. Idempotent: does nothing when all is there.
# Called by make (through build/.setup-stamp); safe to run by hand.
set -e
need=""
have_cmd() { command -v "$1" >/dev/null 2>&1; }
have_hdr() { [ -e "$1" ]; }
have_cmd gcc         || need="$need gcc"
have_cmd g++         || need="$need g++"
have_cmd make        || need="$need make"
have_cmd verilator   || need="$need verilator"
have_cmd yosys       || need="$need yosys"
have_cmd cppcheck    || need="$need cppcheck"
have_cmd ccache      || need="$need ccache"
have_hdr /usr/include/zlib.h || need="$need zlib1g-dev"
# the NPU as a SystemC TLM-2.0 module (systemc/, make systemc)
have_hdr /usr/include/systemc.h || need="$need libsystemc-dev"
# the control core's firmware and test programs, and ELF reading in libloom
have_cmd riscv64-unknown-elf-gcc || need="$need gcc-riscv64-unknown-elf"
have_hdr /usr/lib/picolibc/riscv64-unknown-elf/picolibc.specs || need="$need picolibc-riscv64-unknown-elf"
have_hdr /usr/include/gelf.h || need="$need libelf-dev"
# loom compile: ONNX models read with protobuf-c (C code generated from
# Debian's onnx.proto), and the ONNX test models its tests load
have_cmd protoc-c    || need="$need protobuf-c-compiler"
have_hdr /usr/include/protobuf-c/protobuf-c.h || need="$need libprotobuf-c-dev"
have_hdr /usr/include/onnx/onnx.proto || need="$need libonnx-dev"
have_hdr /usr/share/libonnx-testdata/data/node || need="$need libonnx-testdata"
# scripts/export_models.py: real model architectures exported by PyTorch
# (Debian's Python packages, seen by /usr/bin/python3 only)
# (found, not imported: importing torch takes seconds, and every build waits
# for this script)
have_py() { /usr/bin/python3 -c "import importlib.util as u, sys; sys.exit(0 if all(u.find_spec(m) for m in sys.argv[1:]) else 1)" "$@" >/dev/null 2>&1; }
if ! have_py torch torchvision onnx sklearn; then
	need="$need python3 python3-torch python3-torchvision python3-onnx python3-sklearn"
fi
# loom sweep's plots: Debian's matplotlib for /usr/bin/python3, which
# scripts/sweep_plot.py uses (an external program; loom itself runs no Python)
have_py matplotlib || need="$need python3-matplotlib"
# `sh scripts/setup.sh fuzz` (make fuzz, make test-full): clang and its
# libFuzzer runtime for the fuzz targets of tests/fuzz
if [ "$1" = fuzz ]; then
	have_cmd clang || need="$need clang"
	[ -n "$(ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a 2>/dev/null)" ] ||
		need="$need libclang-rt-14-dev"
fi
# `sh scripts/setup.sh cluster` (make test, make test-full): the engines loom
# sweep hands its points to, GNU parallel and Slurm (with munge), for
# --parallel-sshloginfile and --slurm and their tests (scripts/slurm_local.sh
# starts a single-node cluster of them; no daemon is started here)
if [ "$1" = cluster ]; then
	have_cmd parallel || need="$need parallel"
	have_cmd munged || [ -x /usr/sbin/munged ] || need="$need munge"
	{ have_cmd slurmctld || [ -x /usr/sbin/slurmctld ]; } && have_cmd sbatch || need="$need slurm-wlm"
fi
if [ -n "$need" ]; then
	echo "setup: installing$need"
	if [ "$(id -u)" != 0 ]; then
		echo "setup: need root to install:$need (run: sudo apt-get install$need)" >&2
		exit 1
	fi
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q || true
	# shellcheck disable=SC2086
	apt-get install -y -q --no-install-recommends $need
fi
exit 0
