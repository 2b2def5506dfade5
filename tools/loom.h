/* loom.h - shared declarations of the loom CLI: one function per
 * subcommand (tools/cmd_NAME.c), each taking the arguments after the
 * subcommand name and returning the process exit status. */
#ifndef LOOM_TOOLS_H
#define LOOM_TOOLS_H

int cmd_cosim(int argc, char **argv);  /* loom cosim --hw CFG --count N --seed S */
int cmd_demo(int argc, char **argv);   /* loom demo [--hw CFG] [--backend B] */

#endif
