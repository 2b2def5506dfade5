/* loom.h - shared declarations of the loom CLI: one function per
 * subcommand (tools/cmd_NAME.c), each taking the arguments after the
 * subcommand name and returning the process exit status. */
#ifndef LOOM_TOOLS_H
#define LOOM_TOOLS_H

int cmd_cosim(int argc, char **argv);  /* loom cosim --hw CFG --count N --seed S */
int cmd_demo(int argc, char **argv);   /* loom demo [--hw CFG] [--backend B] */
int cmd_selftest(int argc, char **argv); /* loom selftest --backend B [--hw CFG] [--fw ELF] */
int cmd_run(int argc, char **argv);      /* loom run [--backend B] --cosim-seed S | --insns FILE ... | MODEL.onnx */
int cmd_test_onnx(int argc, char **argv); /* loom test-onnx CASE_DIR... [--backend ref] */
int cmd_run_onnx(int argc, char **argv);  /* loom run MODEL.onnx --backend ref (tools/cmd_test_onnx.c) */

#endif
