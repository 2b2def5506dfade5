/* cli.h - shared declarations of the loom CLI: one function per
 * subcommand (tools/cmd_NAME.c), each taking the arguments after the
 * subcommand name and returning the process exit status. */
#ifndef LOOM_TOOLS_CLI_H
#define LOOM_TOOLS_CLI_H

int cmd_cosim(int argc, char **argv);  /* loom cosim --hw CFG --count N --seed S */
int cmd_demo(int argc, char **argv);   /* loom demo [--hw CFG] [--backend B] */
int cmd_eval(int argc, char **argv);   /* loom eval MODEL.onnx --data DIR --labels FILE [--backend B] [--compare B] */
int cmd_selftest(int argc, char **argv); /* loom selftest --backend B [--hw CFG] [--fw ELF] */
int cmd_run(int argc, char **argv);      /* loom run [--backend B] --cosim-seed S | --insns FILE ... | MODEL.onnx */
int cmd_test_onnx(int argc, char **argv); /* loom test-onnx CASE_DIR... [--backend ref] */
int cmd_run_onnx(int argc, char **argv);  /* loom run MODEL.onnx --backend ref (tools/cmd_test_onnx.c) */

int cmd_compile(int argc, char **argv);   /* loom compile MODEL.onnx -o MODEL.loom [--hw CFG] ... */
void cli_tune_heap(void);                 /* malloc kept and on huge pages (tools/cli.c; loom compile) */
int cmd_objdump(int argc, char **argv);   /* loom objdump MODEL.loom */
int cmd_ops(int argc, char **argv);       /* loom ops [--markdown | --check FILE | --write FILE] */
int cmd_run_model(int argc, char **argv); /* loom run MODEL.loom --backend cmodel|rtl (tools/cmd_run_model.c) */
int cmd_bench(int argc, char **argv);     /* loom bench MODEL.loom --iterations N --inflight K (tools/cmd_bench.c) */
int cmd_sweep(int argc, char **argv);     /* loom sweep MODEL.onnx ... -o DIR (tools/cmd_sweep.c) */
int sweep_validate_main(int argc, char **argv); /* loom sweep --validate (tools/cmd_sweep_validate.c) */

/* tools/cli.c: shared by the model commands */
#include <stddef.h>
#include "ir/ir.h"
#include "loom/loom.h"
typedef struct tool_metrics_t {
	double max_abs;     /* max |got - want| */
	double cos;         /* cosine similarity */
	double top1;        /* argmax agreement over the last dimension, per row (rows > 0) */
	double ref_absmax;  /* max |want| */
	long long rows;
} tool_metrics_t;
/* the tensors DIR/PREFIX_0.pb, PREFIX_1.pb, ... (ONNX test data) into t[]
 * (TOOL_MAX_IO entries): their count, or -1 with a message */
#define TOOL_MAX_IO 64
int tool_load_tensors(const char *dir, const char *prefix, loom_tensor *t, char *err, size_t len);
/* open a device, load build/firmware/loom_fw.elf and boot it: 0 or -1 + message */
int tool_dev_open(const char *backend, const char *hw, loom_dev **out, char *err, size_t len);
/* the same with the backend's options (DRAM timing, waveforms; NULL: none) */
int tool_dev_open_opts(const char *backend, const char *hw, const loom_hw_opts *hw_opts, loom_dev **out, char *err,
		       size_t len);
/* a NumPy .npy file (little-endian C-order float32, int64, int32, uint8 or
 * int8; tools/npy.c) into *t (name NULL, data owned by t): 0, or -1 with a
 * message naming the file */
int tool_load_npy(const char *path, loom_tensor *t, char *err, size_t len);
/* put input tensors (by name, else by position, with a warning on stderr
 * when the tensor's name is no graph input's) into the graph inputs; a
 * missing, extra, wrongly typed or shaped tensor is an error naming the
 * input, the expected and the given type and shape; NaN and infinities
 * are warned about (count, input name) on stderr. flags: TOOL_BIND_SHAPE,
 * the input tensors' shapes replace the graph's (same element count);
 * TOOL_BIND_QUIET, no warnings (the same tensors were bound before) */
#define TOOL_BIND_SHAPE 1
#define TOOL_BIND_QUIET 2
int tool_bind_inputs(loom_graph *g, const loom_tensor *in, int nin, const char *where, int flags, char *err,
		     size_t len);
/* the same checks and errors, without binding or warnings */
int tool_check_inputs(const loom_graph *g, const loom_tensor *in, int nin, const char *where, char *err, size_t len);
/* a loom_open spec for exactly this configuration: its name when configs/NAME.cfg
 * has every parameter the same, else "key=value,..." of every parameter */
#include "loom/hwcfg.h"
/* --backend NAME of loom CMD: 0 when NAME is one of choices ("ref|cmodel|rtl"),
 * else -1 after "loom CMD: unknown backend 'NAME' (choices: ...)" on stderr */
int tool_check_backend(const char *cmd, const char *name, const char *choices);
/* --hw SPEC of loom CMD into *cfg: 0, or -1 after "loom CMD: --hw SPEC: why"
 * on stderr (an unknown name lists the known configurations) */
int tool_load_hw(const char *cmd, const char *spec, loom_hwcfg *cfg);
void tool_cfg_spec(const loom_hwcfg *c, char *buf, size_t len);
/* loom compile --sensitivity (tools/cmd_compile_sens.c) */
#include <stdio.h>
#include "compiler/compile.h"
#include "compiler/onnx.h"
/* the warning, on stderr whatever -q says, when rep says the model was
 * calibrated on random inputs (and has no QDQ scales of its own) */
void tool_warn_calib(const char *model, const loom_compile_report *rep);
int tool_sensitivity(const char *path, const loom_input_shape *shp, int nshp, const loom_hwcfg *cfg,
		     const loom_compile_opts *base, const char *data, FILE *f, char *err, size_t len);
/* loom compile --accuracy COS (tools/cmd_compile_acc.c): the options that
 * reach cosine COS on the calibration set (C model), and the report */
typedef struct tool_cos {
	double mean, min;        /* cosine with the float model over the calibration samples */
} tool_cos;
typedef struct tool_accuracy_result {
	char *tensor_methods;    /* loom_compile_opts.tensor_methods, or NULL */
	int bias_correction, equalize;
	char *keep_float;        /* the user's --keep-float and the nodes the search added, or NULL */
	tool_cos cos_start, cos_final;
	int reached, ntensors, nsteps;
	double seconds;
	char *text, *json;       /* the report's accuracy section */
} tool_accuracy_result;
int tool_accuracy(const char *path, const loom_input_shape *shp, int nshp, const loom_hwcfg *cfg,
		  const loom_compile_opts *base, double target, tool_accuracy_result *res, char *err, size_t len);
void tool_accuracy_free(tool_accuracy_result *res);
/* loom run MODEL.loom (tools/cmd_run_prof.c): the per-layer profile table
 * and time split, the same as CSV, the Chrome-trace / Perfetto timeline,
 * from the last run's records (times at mhz) */
#include "runtime/exec.h"
void run_model_usage(FILE *f); /* tools/cmd_run_model.c, also in `loom run --help` */
void run_print_profile(const loom_model *m, const loom_exec_stats *st, double mhz);
int run_write_csv(const char *path, const loom_model *m, const loom_exec_stats *st, double mhz, char *err,
		  size_t len);
int run_write_trace(const char *path, const loom_model *m, const loom_exec_stats *st, const char *backend,
		    double mhz, char *err, size_t len);
/* element i of t as a double; every output's shape and first values */
double tool_elem_f(const loom_tensor *t, int64_t i);
void tool_print_outputs(const loom_graph *g);
/* a whole file, NUL-terminated (*len bytes, len may be NULL), or NULL */
char *tool_read_file(const char *path, size_t *len);
void tool_metrics(const loom_tensor *got, const loom_tensor *want, tool_metrics_t *m);
/* loom objdump (tools/objdump.c): a model's header, tensors, layers,
 * steps and disassembly */
#include "ir/model.h"
void loom_model_dump(const loom_model *m, FILE *f);
/* A progress bar with ETA on stderr for long loops (bench, run --repeat,
 * test-onnx): drawn only when stderr is a terminal and the loop has run for
 * TOOL_PROGRESS_AFTER_S seconds, at most a few times a second; clear it
 * before printing to stdout, end it when done (erases the bar). */
#define TOOL_PROGRESS_AFTER_S 2.0
typedef struct tool_progress {
	const char *what;
	long total;
	double t0, last;
	int tty, shown;
} tool_progress;
void tool_progress_start(tool_progress *p, const char *what, long total);
void tool_progress_update(tool_progress *p, long done);
void tool_progress_clear(tool_progress *p);
void tool_progress_end(tool_progress *p);
#endif
