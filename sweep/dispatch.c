/* dispatch.c - the coordinator of loom sweep (sweep.h): writes the sweep's
 * spec and every valid point's configuration (DIR/configs/POINT.cfg, so
 * `--hw DIR/configs/POINT.cfg` rebuilds any point), finds the (point,
 * model) pairs without a current result (point.c's cache), prepares the
 * models that have some (prep.c: once per model), verilates each
 * configuration a --rtl sweep needs once, then hands the pending work to
 * one of three engines, each running the same unit of work:
 *   local     --jobs N worker processes forked after the preparation (they
 *             share it, calibration included), taking pairs from a shared
 *             counter; 1 runs in this process;
 *   parallel  GNU parallel over the hosts of --parallel-sshloginfile FILE,
 *             one `loom sweep --run-point DIR POINT` per pending point (the
 *             hosts see DIR and the loom tree at the same paths);
 *   slurm     a Slurm job array (sbatch --array), each task running
 *             --run-point on its share of the pending points, watched with
 *             squeue until none of its tasks is left.
 * Progress: the local workers report each pair on a pipe; for the other
 * two the coordinator counts the results as they appear. */
#include "sweep/sweep.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct work {
	int pt, m;
} work;

typedef struct run {
	const char *dir;
	const sweep_spec *s;
	const sweep_point *pts;
	work *w;
	long nw;
	sweep_prep *prep; /* per model (layers NULL: its workers read DIR/models/) */
	const sweep_run_opts *o;
} run;

static int mkdir_p(const char *dir, char *err, size_t len)
{
	char p[4096];
	snprintf(p, sizeof p, "%s", dir);
	for (char *c = p + 1; *c; c++)
		if (*c == '/') {
			*c = 0;
			mkdir(p, 0777);
			*c = '/';
		}
	struct stat st;
	if (mkdir(p, 0777) && (stat(p, &st) || !S_ISDIR(st.st_mode))) {
		snprintf(err, len, "-o %s: %s", dir, strerror(errno));
		return -1;
	}
	return 0;
}

static void progress(const run *r, long done)
{
	if (r->o->progress)
		r->o->progress(r->o->ctx, done, r->nw);
}

/* ------------------------------------------------------------------ local workers */

/* a unit of local work: pairs [first, first + n) of r->w, one model's
 * points of one group (sweep_same_group), evaluated together */
typedef struct unit {
	long first;
	int n;
} unit;

/* r->w reordered so that each unit's pairs are contiguous; the units */
static unit *make_units(run *r, long *nu)
{
	enum { MAXU = 64 }; /* points per unit: groups split so the workers share them evenly */
	work *w = malloc((size_t)r->nw * sizeof *w);
	unit *u = calloc((size_t)r->nw + 1, sizeof *u);
	char *taken = calloc((size_t)r->nw + 1, 1);
	long k = 0, n = 0;
	for (long i = 0; w && u && taken && i < r->nw; i++) {
		if (taken[i])
			continue;
		const sweep_point *a = &r->pts[r->w[i].pt];
		long start = k;
		for (long j = i; j < r->nw; j++) {
			const sweep_point *b = &r->pts[r->w[j].pt];
			if (taken[j] || r->w[j].m != r->w[i].m || a->valid != b->valid ||
			    (a->valid && !sweep_same_group(&a->cfg, &b->cfg)))
				continue;
			taken[j] = 1;
			w[k++] = r->w[j];
		}
		for (long f = start; f < k; f += MAXU)
			u[n++] = (unit){f, (int)(k - f < MAXU ? k - f : MAXU)};
	}
	free(taken);
	if (!w || !u) {
		free(w);
		free(u);
		return NULL;
	}
	memcpy(r->w, w, (size_t)r->nw * sizeof *w);
	free(w);
	*nu = n;
	return u;
}

typedef struct tick {
	const run *r;
	long done;
	int fd;       /* a worker's pipe to the coordinator, or -1 */
} tick;

static void on_done(void *ctx)
{
	tick *t = ctx;
	if (t->fd >= 0) {
		char b = 1;
		if (write(t->fd, &b, 1) != 1)
			t->fd = -1;
	} else {
		progress(t->r, ++t->done);
	}
}

/* one unit; a failure to write its results on stderr */
static int do_unit(const run *r, const unit *u, tick *t)
{
	char err[1024];
	const sweep_point *pts[64];
	int m = r->w[u->first].m;
	for (int i = 0; i < u->n; i++)
		pts[i] = &r->pts[r->w[u->first + i].pt];
	sweep_prep *p = r->prep[m].layers ? &r->prep[m] : NULL;
	if (sweep_points_run(r->dir, r->s, m, pts, u->n, p, on_done, t, err, sizeof err)) {
		fprintf(stderr, "loom sweep: %s: %s\n", r->s->models[m].name, err);
		return -1;
	}
	return 0;
}

static int run_local(run *r)
{
	long nu = 0;
	unit *u = make_units(r, &nu);
	if (!u) {
		fprintf(stderr, "loom sweep: out of memory\n");
		return -1;
	}
	int jobs = r->o->jobs < 1 ? 1 : r->o->jobs, bad = 0;
	if (jobs > nu)
		jobs = (int)nu;
	tick t = {.r = r, .fd = -1};
	if (jobs <= 1) {
		for (long i = 0; i < nu; i++)
			bad |= do_unit(r, &u[i], &t);
		free(u);
		return bad ? -1 : 0;
	}
	long *next = mmap(NULL, sizeof *next, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int fd[2];
	if (next == MAP_FAILED || pipe(fd)) {
		perror("loom sweep: workers");
		free(u);
		return -1;
	}
	*next = 0;
	fflush(stdout);
	fflush(stderr);
	pid_t pid[256];
	if (jobs > 256)
		jobs = 256;
	for (int k = 0; k < jobs; k++) {
		pid[k] = fork();
		if (pid[k] == 0) {
			close(fd[0]);
			t.fd = fd[1];
			long i;
			while ((i = __atomic_fetch_add(next, 1, __ATOMIC_SEQ_CST)) < nu)
				bad |= do_unit(r, &u[i], &t);
			_exit(bad || t.fd < 0);
		}
		bad |= pid[k] < 0;
	}
	close(fd[1]);
	long done = 0;
	char buf[256];
	ssize_t n;
	while ((n = read(fd[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
		if (n > 0)
			progress(r, done += n);
	close(fd[0]);
	for (int k = 0; k < jobs; k++) {
		int st;
		if (pid[k] > 0 && (waitpid(pid[k], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)))
			bad = 1;
	}
	munmap(next, sizeof *next);
	free(u);
	return bad ? -1 : 0;
}

/* ------------------------------------------------------------------ external engines */

/* pairs of r with a current result */
static long count_done(const run *r)
{
	long n = 0;
	for (long i = 0; i < r->nw; i++)
		n += sweep_point_cached(r->dir, r->s, r->w[i].m, &r->pts[r->w[i].pt]);
	return n;
}

/* argv started with stdout and stderr into log: its pid, or -1 */
static pid_t spawn(char *const argv[], const char *log)
{
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0666);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execvp(argv[0], argv);
		fprintf(stderr, "%s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	return pid;
}

static void nap(long ms)
{
	struct timespec ts = {ms / 1000, ms % 1000 * 1000000};
	nanosleep(&ts, NULL);
}

/* the end of pid, counting results meanwhile (count: 1): its exit status, -1 when killed */
static int wait_for(const run *r, pid_t pid, int count)
{
	int st = 0;
	for (;;) {
		pid_t w = waitpid(pid, &st, WNOHANG);
		if (w == pid || (w < 0 && errno != EINTR))
			break;
		if (count)
			progress(r, count_done(r));
		nap(count ? 300 : 20);
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* argv to its end (output in log), counting results meanwhile */
static int run_engine(const run *r, char *const argv[], const char *log, char *err, size_t len)
{
	pid_t pid = spawn(argv, log);
	int st = pid < 0 ? -1 : wait_for(r, pid, 1);
	progress(r, count_done(r));
	if (st) {
		snprintf(err, len, "%s exited with status %d (its output: %s)%s", argv[0], st, log,
			 st == 127 ? ": not installed? (sh scripts/setup.sh cluster)" : "");
		return -1;
	}
	return 0;
}

/* the distinct points of the pending pairs, in order */
static int pending_points(const run *r, int *idx)
{
	int n = 0;
	for (long i = 0; i < r->nw; i++)
		if (!n || idx[n - 1] != r->w[i].pt)
			idx[n++] = r->w[i].pt;
	return n;
}

static int run_parallel(const run *r, char *err, size_t len)
{
	char list[4200], log[4200], joblog[4200], cmd[8192];
	snprintf(list, sizeof list, "%s/work", r->dir);
	mkdir(list, 0777);
	snprintf(list, sizeof list, "%s/work/points.txt", r->dir);
	snprintf(log, sizeof log, "%s/work/parallel.out", r->dir);
	snprintf(joblog, sizeof joblog, "%s/work/parallel.joblog", r->dir);
	int *idx = calloc((size_t)r->nw + 1, sizeof *idx);
	FILE *f = idx ? fopen(list, "w") : NULL;
	if (!f) {
		free(idx);
		snprintf(err, len, "%s: %s", list, strerror(errno));
		return -1;
	}
	int np = pending_points(r, idx);
	for (int i = 0; i < np; i++)
		fprintf(f, "%s\n", r->pts[idx[i]].name);
	free(idx);
	if (fclose(f)) {
		snprintf(err, len, "%s: %s", list, strerror(errno));
		return -1;
	}
	const char *root = loom_root_dir();
	snprintf(cmd, sizeof cmd, "LOOM_ROOT='%s' '%s' sweep --run-point '%s'", root, r->o->loom, r->dir);
	char *argv[] = {"parallel", "--will-cite", "--sshloginfile", (char *)r->o->sshloginfile, "--halt", "never",
			"--joblog", joblog, cmd, "::::", list, NULL};
	return run_engine(r, argv, log, err, len);
}

/* a path in single quotes for sh */
static void shq(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++)
		if (*s == '\'')
			fputs("'\\''", f);
		else
			fputc(*s, f);
	fputc('\'', f);
}

static int run_slurm(const run *r, char *err, size_t len)
{
	char sd[4200], tasks[4300], job[4300], log[4300], outp[4300], arr[64];
	snprintf(sd, sizeof sd, "%s/slurm", r->dir);
	mkdir(sd, 0777);
	snprintf(tasks, sizeof tasks, "%s/tasks.txt", sd);
	snprintf(job, sizeof job, "%s/job.sh", sd);
	snprintf(log, sizeof log, "%s/sbatch.out", sd);
	snprintf(outp, sizeof outp, "--output=%s/task-%%a.out", sd);
	int *idx = calloc((size_t)r->nw + 1, sizeof *idx);
	FILE *ft = idx ? fopen(tasks, "w") : NULL, *fj = ft ? fopen(job, "w") : NULL;
	if (!fj) {
		if (ft)
			fclose(ft);
		free(idx);
		snprintf(err, len, "%s: %s", sd, strerror(errno));
		return -1;
	}
	/* at most 1000 tasks (Slurm's default MaxArraySize is 1001): points in chunks */
	int np = pending_points(r, idx), ntask = np < 1000 ? np : 1000, per = (np + ntask - 1) / ntask;
	ntask = (np + per - 1) / per;
	for (int t = 0; t < ntask; t++) {
		for (int i = t * per; i < np && i < (t + 1) * per; i++)
			fprintf(ft, "%s%s", i > t * per ? " " : "", r->pts[idx[i]].name);
		fprintf(ft, "\n");
	}
	free(idx);
	fprintf(fj, "#!/bin/sh\n# loom sweep: array task N computes the points of line N+1 of tasks.txt\nLOOM_ROOT=");
	shq(fj, loom_root_dir());
	fprintf(fj, "\nexport LOOM_ROOT\nexec ");
	shq(fj, r->o->loom);
	fprintf(fj, " sweep --run-point ");
	shq(fj, r->dir);
	fprintf(fj, " $(sed -n \"$((SLURM_ARRAY_TASK_ID + 1))p\" ");
	shq(fj, tasks);
	fprintf(fj, ")\n");
	if (fclose(ft) | fclose(fj) || chmod(job, 0755)) {
		snprintf(err, len, "%s: %s", job, strerror(errno));
		return -1;
	}
	snprintf(arr, sizeof arr, "--array=0-%d", ntask - 1);
	char *argv[64] = {"sbatch", "--parsable", "--job-name=loom-sweep", arr, outp};
	int n = 5;
	char extra[1024];
	snprintf(extra, sizeof extra, "%s", r->o->slurm_args ? r->o->slurm_args : "");
	for (char *t = strtok(extra, " "); t && n < 62; t = strtok(NULL, " "))
		argv[n++] = t;
	argv[n++] = job;
	argv[n] = NULL;
	if (run_engine(r, argv, log, err, len))
		return -1;
	/* the job array's id; then until squeue lists none of its tasks */
	char id[64] = "", qlog[4400];
	FILE *f = fopen(log, "r");
	if (f) {
		if (!fgets(id, sizeof id, f))
			id[0] = 0;
		fclose(f);
	}
	id[strspn(id, "0123456789")] = 0;
	if (!id[0]) {
		snprintf(err, len, "sbatch printed no job id (%s)", log);
		return -1;
	}
	snprintf(qlog, sizeof qlog, "%s/squeue.out", sd);
	char *q[] = {"squeue", "-h", "-j", id, "-o", "%i", NULL};
	for (;;) {
		progress(r, count_done(r));
		pid_t pid = spawn(q, qlog);
		struct stat st;
		if (pid < 0 || wait_for(r, pid, 0) || stat(qlog, &st) || st.st_size == 0)
			break;
		nap(500);
	}
	progress(r, count_done(r));
	return 0;
}

/* ------------------------------------------------------------------ the coordinator */

/* DIR/configs/POINT.cfg of every valid point */
static int write_configs(const char *dir, const sweep_point *pts, int n, char *err, size_t len)
{
	char p[4400];
	snprintf(p, sizeof p, "%s/configs", dir);
	mkdir(p, 0777);
	for (int i = 0; i < n; i++) {
		if (!pts[i].valid)
			continue;
		snprintf(p, sizeof p, "%s/configs/%s.cfg", dir, pts[i].name);
		if (loom_hwcfg_write(&pts[i].cfg, p, err, len))
			return -1;
	}
	return 0;
}

/* the models' preparations the pending pairs need (with --rtl and local
 * workers, their calibration too), and each RTL configuration built once */
static int prepare(run *r, char *err, size_t len)
{
	int local = r->o->engine == SWEEP_LOCAL;
	for (int m = 0; m < r->s->nmodels; m++) {
		int need = 0;
		for (long i = 0; i < r->nw && !need; i++)
			need = r->w[i].m == m && r->pts[r->w[i].pt].valid;
		if (!need)
			continue;
		char e2[1024];
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		if (sweep_prep_get(r->dir, r->s, m, r->s->rtl && local, &r->prep[m], e2, sizeof e2)) {
			/* its points say why (point.c); the other models go on */
			fprintf(stderr, "loom sweep: %s: %s\n", r->s->models[m].name, e2);
			sweep_prep_free(&r->prep[m]);
			continue;
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		double dt = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
		if (!r->o->quiet && r->prep[m].compiled)
			fprintf(stderr, "loom sweep: prepared %s in %.2f s (import, calibration, quantization, lowering: "
					"once per model)\n", r->s->models[m].name, dt);
		else if (!r->o->quiet && r->prep[m].from_cache)
			fprintf(stderr, "loom sweep: %s prepared before (the user's cache)\n", r->s->models[m].name);
	}
	for (long i = 0; r->s->rtl && i < r->nw; i++) {
		const sweep_point *pt = &r->pts[r->w[i].pt];
		int seen = !pt->valid;
		for (long j = 0; j < i && !seen; j++)
			seen = r->pts[r->w[j].pt].valid && r->pts[r->w[j].pt].cfg.fingerprint == pt->cfg.fingerprint;
		if (!seen && sweep_rtl_prepare(pt, err, len))
			return -1;
	}
	return 0;
}

int sweep_run(const char *dir, sweep_spec *s, const sweep_run_opts *o, sweep_counts *c, char *err, size_t len)
{
	memset(c, 0, sizeof *c);
	sweep_point *pts = NULL;
	int npts = 0;
	if (mkdir_p(dir, err, len) || sweep_model_keys(s, err, len) || sweep_spec_write(dir, s, err, len) ||
	    sweep_points(s, &pts, &npts, err, len))
		return -1;
	run r = {.dir = dir, .s = s, .pts = pts, .o = o};
	r.w = calloc((size_t)npts * s->nmodels + 1, sizeof *r.w);
	r.prep = calloc(SWEEP_MAX_MODELS, sizeof *r.prep);
	int rc = -1;
	if (!r.w || !r.prep) {
		snprintf(err, len, "out of memory");
		goto out;
	}
	if (write_configs(dir, pts, npts, err, len))
		goto out;
	for (int i = 0; i < npts; i++)
		for (int m = 0; m < s->nmodels; m++) {
			c->work++;
			if (sweep_point_cached(dir, s, m, &pts[i]))
				c->cached++;
			else
				r.w[r.nw++] = (work){i, m};
		}
	if (r.nw && prepare(&r, err, len))
		goto out;
	if (r.nw) {
		progress(&r, 0);
		int bad = o->engine == SWEEP_PARALLEL ? run_parallel(&r, err, len)
			  : o->engine == SWEEP_SLURM  ? run_slurm(&r, err, len)
						      : run_local(&r);
		if (bad && o->engine != SWEEP_LOCAL)
			fprintf(stderr, "loom sweep: %s\n", err);
	}
	c->computed = count_done(&r);
	c->failed = r.nw - c->computed;
	rc = 0;
out:
	for (int m = 0; r.prep && m < SWEEP_MAX_MODELS; m++)
		sweep_prep_free(&r.prep[m]);
	free(r.prep);
	free(r.w);
	free(pts);
	return rc;
}
