# firmware.mk - the control-core firmware (firmware/, docs/FIRMWARE.md):
#   build/firmware/loom_fw.elf   the ELF libloom loads into the TCMs
#   build/firmware/loom_fw.lst   its disassembly, for reading
# Included by the top Makefile (`make firmware`); also works alone from the
# repository root: make -f firmware/firmware.mk
# Options: FW_TEST_HANG=0 builds without LOOM_JOB_F_TEST_HANG (and does not
# advertise LOOM_FW_CAP_TEST_HANG); FW_VERSION=0xMMmmpp sets fw_version.

BUILD        ?= build
FW_DIR       := $(BUILD)/firmware
FW_ELF       := $(FW_DIR)/loom_fw.elf
FW_LST       := $(FW_DIR)/loom_fw.lst
FW_CC        ?= riscv64-unknown-elf-gcc
FW_OBJDUMP   ?= riscv64-unknown-elf-objdump
FW_TEST_HANG ?= 1
FW_DEFS      := -DLOOM_FW_TEST_HANG=$(FW_TEST_HANG) $(if $(FW_VERSION),-DLOOM_FW_VERSION=$(FW_VERSION)u)
FW_ARCH      := -march=rv32im_zicsr -mabi=ilp32
FW_CFLAGS    := $(FW_ARCH) -Os -g -std=gnu11 -ffreestanding -fno-common -fno-builtin \
                -Wall -Wextra -Werror -Iinclude -Ifirmware $(FW_DEFS) -MMD -MP
FW_LDFLAGS   := $(FW_ARCH) -nostdlib -nostartfiles -static -Wl,-T,firmware/link.ld \
                -Wl,--fatal-warnings -Wl,-Map,$(FW_DIR)/loom_fw.map
FW_OBJS      := $(FW_DIR)/start.o $(FW_DIR)/main.o

.PHONY: firmware
firmware: $(FW_ELF) $(FW_LST)

$(FW_DIR)/start.o: firmware/start.S $(lastword $(MAKEFILE_LIST)) | $(SETUP)
	@mkdir -p $(dir $@)
	$(FW_CC) $(FW_CFLAGS) -Wa,--fatal-warnings -c $< -o $@
$(FW_DIR)/main.o: firmware/main.c $(lastword $(MAKEFILE_LIST)) | $(SETUP)
	@mkdir -p $(dir $@)
	$(FW_CC) $(FW_CFLAGS) -c $< -o $@

$(FW_ELF): $(FW_OBJS) firmware/link.ld
	$(FW_CC) $(FW_LDFLAGS) -o $@ $(FW_OBJS) -lgcc
	@riscv64-unknown-elf-size $@ | tail -1 | awk '{printf "firmware: %s text %d B, data %d B, bss %d B\n", "$@", $$1, $$2, $$3}'
$(FW_LST): $(FW_ELF)
	$(FW_OBJDUMP) -d -S -j .text $< > $@ || { rm -f $@; exit 1; }

-include $(wildcard $(FW_DIR)/*.d)
