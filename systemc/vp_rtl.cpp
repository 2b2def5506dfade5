// vp_rtl.cpp - the "systemc-rtl" backend: the reference virtual platform of
// vp.cpp around the cycle-accurate module (npu_ca.cpp), compiled with the
// verilated model of one configuration into
// build/hw/NAME/libloom_systemc_rtl.so (Makefile: systemc-rtl), which
// also exports that configuration's fingerprint for hw/hw.c to check.
#define LOOM_VP_RTL 1
#include "vp.cpp"

extern "C" {
#include "loom_cfg.h"
}

extern "C" __attribute__((visibility("default"))) const uint32_t loom_rtl_fingerprint;
const uint32_t loom_rtl_fingerprint = LOOM_CFG_FINGERPRINT;
