#!/bin/sh
# rtl_exports_test.sh LIB - the rtl backend's library (build/hw/NAME/
# libloom_rtl.so) exports its entry point and its configuration's
# fingerprint and no other function or data: the verilated model and the
# harness are built with hidden visibility (Makefile, VERILATOR_CFLAGS), so
# the model's calls between its own functions are direct, not through the
# PLT. (Weak and unique symbols the C++ runtime merges are not counted.)
lib=$1
syms=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDRB]$/ {print $3}' | sort | tr '\n' ' ')
echo "exported: $syms"
[ "$syms" = "loom_rtl_fingerprint loom_rtl_open " ]
