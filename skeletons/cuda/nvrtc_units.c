/*
** skeletons/cuda/nvrtc_units.c: a large generated source compiled by NVRTC
** as several units at once, and their PTX put together into one text.
**
** Owns: where the source is cut (at RF_GPU_UNIT_MARK lines, by a rule that
** depends on the source alone, so that the PTX is the same on every
** machine whatever its cores), the processes that compile the units, and
** the merge of their PTX.
**
** Why: NVRTC's optimizer spends 10-70 ms on each kernel of a unit, one
** kernel after another; a program of hundreds of rules has hundreds of
** kernels (`redfox compile` of 500 one-filter rules took 25 s on one
** core). The kernels do not call one another and every device function is
** inlined into them, so a unit's PTX is its kernels' entries alone, and
** units compile independently. Every unit holds the head of the source
** (the skeletons and the key classes' structs: templates, which cost a
** unit about 0.2 s of parsing) and a run of kernels.
**
** The merge keeps the first unit's header lines (.version, .target,
** .address_size), checks that the others' are the same, and appends each
** other unit's declarations after its header, behind a comment line
** "// redfox: unit N". A one-line declaration that an earlier unit made
** the same (a static constexpr member of a class template two units
** instantiate alike) is left out; any other name that two units declare
** at the top level (a device function NVRTC chose not to inline would be
** one) makes the merge refuse, and the source is then compiled whole, as
** it is when small.
*/
#include "nvrtc_internal.h"
#include "rf_sys.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

/* A unit's weight: its kernels' text in bytes, plus UNIT_KERNEL_WEIGHT a
** kernel (a one-line kernel of a skeleton instantiates as much as 1 KB of
** generated code costs NVRTC: about 12 ms). A unit closes once it weighs
** UNIT_WEIGHT (about 0.6 s of NVRTC on one core); the last, where it
** weighs less than half that, joins the one before; a source of less than
** two units' weight compiles whole. */
#define UNIT_KERNEL_WEIGHT 1024
#define UNIT_WEIGHT (48 * 1024)

typedef struct unit {
    char *text; /* the unit's source: the head, then its kernels (owned) */
    rf_gpu_nv_result r;
} unit;

static uint64_t count_kernels(const char *a, const char *b)
{
    uint64_t n = 0;
    const char *k = "__global__";
    size_t kl = strlen(k);
    for (const char *p = a; p + kl <= b && (p = memmem(p, (size_t)(b - p), k, kl)) != NULL; p += kl) n++;
    return n;
}

/* ---- the units' processes --------------------------------------------------------- */

/* NVRTC serializes much of a compilation inside one process (on a 16-core
** host, threads compiling units at once kept about 3 cores busy), so each
** unit compiles in a child process of its own, forked, which writes its
** result to a pipe: u64 stage, rc, PTX length, log length, then the PTX
** and the log. The child dies with its parent (PR_SET_PDEATHSIG): an
** interrupted compile leaves nothing running. */
static int write_all(int fd, const void *p, uint64_t n)
{
    const char *c = p;
    while (n > 0) {
        ssize_t w = write(fd, c, n > (1u << 30) ? (1u << 30) : (size_t)n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        c += w;
        n -= (uint64_t)w;
    }
    return 0;
}

static void child_main(const unit *u, int nopts, const char *const *opts, int fd)
{
#ifdef PR_SET_PDEATHSIG
    prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
    signal(SIGPIPE, SIG_DFL);
    rf_gpu_nv_result r;
    rf_gpu_nvrtc_run(u->text, nopts, opts, &r);
    uint64_t h[4] = {(uint64_t)r.stage, (uint64_t)(int64_t)r.rc, r.ptx ? r.len : 0, r.log ? strlen(r.log) : 0};
    int bad = write_all(fd, h, sizeof h) || write_all(fd, r.ptx, h[2]) || write_all(fd, r.log, h[3]);
    _exit(bad ? 1 : 0);
}

typedef struct child {
    pid_t pid;
    int fd;
    int32_t unit;
    rf_buf got;
} child;

/* The result a child wrote (got), or why there is none. */
static void child_result(child *c, int status, rf_gpu_nv_result *r)
{
    memset(r, 0, sizeof *r);
    uint64_t h[4];
    int whole = !c->got.oom && c->got.len >= (int64_t)sizeof h;
    if (whole) memcpy(h, c->got.data, sizeof h);
    whole = whole && h[2] <= (uint64_t)c->got.len && h[3] <= (uint64_t)c->got.len &&
            (uint64_t)c->got.len == sizeof h + h[2] + h[3] && h[0] <= RF_GPU_NV_PROCESS;
    if (c->got.oom) {
        r->stage = RF_GPU_NV_NOMEM;
    } else if (!whole || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        r->stage = RF_GPU_NV_PROCESS;
        if (WIFSIGNALED(status))
            r->log = rf_sprintf("it ended by signal %d", WTERMSIG(status));
        else
            r->log = rf_sprintf("it ended with status %d after %lld bytes of its result",
                                WIFEXITED(status) ? WEXITSTATUS(status) : -1, (long long)c->got.len);
    } else {
        r->stage = (rf_gpu_nv_stage)h[0];
        r->rc = (int)(int64_t)h[1];
        const char *at = c->got.data + sizeof h;
        if (h[2] && (r->ptx = rf_strndup(at, (size_t)h[2])) != NULL) r->len = h[2];
        if (h[3]) r->log = rf_strndup(at + h[2], (size_t)h[3]);
        if ((h[2] && !r->ptx) || (h[3] && !r->log)) {
            rf_gpu_nv_result_free(r);
            r->stage = RF_GPU_NV_NOMEM;
        }
    }
}

/* Compiles u[0..n) in up to nt processes at once (nt <= 64); where nt is 1,
** or no process can start, in this one. */
static void compile_units(unit *u, int32_t n, int nopts, const char *const *opts, int nt)
{
    child ch[64];
    int32_t next = 0;
    unsigned active = 0; /* at most 64 */
    while (next < n || active > 0) {
        while (nt > 1 && active < (unsigned)nt && active < 64 && next < n) {
            int pfd[2];
            pid_t pid = -1;
            if (pipe(pfd) == 0) {
                pid = fork();
                if (pid == 0) {
                    close(pfd[0]);
                    child_main(&u[next], nopts, opts, pfd[1]);
                }
                close(pfd[1]);
                if (pid < 0) close(pfd[0]);
            }
            if (pid < 0) break; /* no process: the unit compiles here, below */
            child *c = &ch[active++];
            c->pid = pid;
            c->fd = pfd[0];
            c->unit = next++;
            rf_buf_init(&c->got);
        }
        if (active == 0) {
            rf_gpu_nvrtc_run(u[next].text, nopts, opts, &u[next].r);
            next++;
            continue;
        }
        struct pollfd pf[64];
        for (unsigned i = 0; i < active; i++) pf[i] = (struct pollfd){.fd = ch[i].fd, .events = POLLIN};
        if (poll(pf, (nfds_t)active, -1) < 0) continue; /* EINTR */
        for (int i = (int)active - 1; i >= 0; i--) {
            if (!pf[i].revents) continue;
            child *c = &ch[i];
            char buf[65536];
            ssize_t got = read(c->fd, buf, sizeof buf);
            if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
            if (got > 0) {
                rf_buf_append(&c->got, buf, (int64_t)got);
                continue;
            }
            close(c->fd);
            int status = 0;
            while (waitpid(c->pid, &status, 0) < 0 && errno == EINTR) {
            }
            child_result(c, status, &u[c->unit].r);
            rf_buf_free(&c->got);
            ch[i] = ch[--active];
        }
    }
}

/* ---- the merge ------------------------------------------------------------------- */

/* The end of the header lines (.version, .target, .address_size) of a
** PTX text, after the .address_size line; NULL where it has none. */
static const char *header_end(const char *ptx)
{
    const char *a = strstr(ptx, "\n.address_size");
    if (!a) return NULL;
    const char *e = strchr(a + 1, '\n');
    return e ? e + 1 : a + strlen(a);
}

/* The line starting with key in [a, b), as a copy in out (or "" when none). */
static void header_line(const char *a, const char *b, const char *key, char *out, size_t n)
{
    out[0] = 0;
    size_t kl = strlen(key);
    for (const char *p = a; p < b;) {
        const char *e = memchr(p, '\n', (size_t)(b - p));
        if (!e) e = b;
        if ((size_t)(e - p) >= kl && !memcmp(p, key, kl)) {
            size_t l = (size_t)(e - p) < n - 1 ? (size_t)(e - p) : n - 1;
            memcpy(out, p, l);
            out[l] = 0;
            return;
        }
        p = e + 1;
    }
}

/* The name a top-level PTX declaration line declares (directives,
** numbers and parenthesized parameter lists skipped), into name; 0 where
** the line declares nothing. */
static int decl_name(const char *p, const char *e, char *name, size_t n)
{
    while (p < e) {
        if (*p == ' ' || *p == '\t') {
            p++;
        } else if (*p == '(') {
            int depth = 0;
            for (; p < e; p++) {
                depth += *p == '(';
                depth -= *p == ')';
                if (!depth) break;
            }
            p++;
        } else if (*p == '.' || (*p >= '0' && *p <= '9')) {
            while (p < e && *p != ' ' && *p != '\t' && *p != '(') p++;
        } else {
            size_t l = 0;
            while (p + l < e && p[l] != '(' && p[l] != '[' && p[l] != ';' && p[l] != ' ' && p[l] != '\t' &&
                   p[l] != '=' && p[l] != ',')
                l++;
            if (!l || l >= n) return 0;
            memcpy(name, p, l);
            name[l] = 0;
            return 1;
        }
    }
    return 0;
}

/* The top-level declarations met so far: name, and the whole line. */
typedef struct names {
    char **name, **line;
    int64_t n, cap;
} names;

static void names_free(names *ns)
{
    for (int64_t i = 0; i < ns->n; i++) {
        free(ns->name[i]);
        free(ns->line[i]);
    }
    free(ns->name);
    free(ns->line);
}

/* Appends unit text [a, b) to out, line by line, recording the names its
** top-level lines declare. A name declared again is left out where both
** lines are the same one-line declaration (a constant of a class template
** the units share, such as a static constexpr member: the same value
** wherever it is instantiated); any other repeat sets *why. */
static void take_unit(names *ns, const char *a, const char *b, rf_buf *out, const char **why)
{
    int depth = 0;
    for (const char *p = a; p < b && !*why;) {
        const char *e = memchr(p, '\n', (size_t)(b - p));
        if (!e) e = b;
        size_t ll = (size_t)(e - p);
        char name[512];
        int keep = 1;
        if (depth == 0 && *p == '.' && decl_name(p, e, name, sizeof name)) {
            int64_t i = 0;
            while (i < ns->n && strcmp(ns->name[i], name)) i++;
            if (i < ns->n) {
                int same = strlen(ns->line[i]) == ll && !memcmp(ns->line[i], p, ll) && ll > 0 && p[ll - 1] == ';';
                if (!same) *why = "a name declared in two units";
                keep = 0;
            } else {
                if (ns->n == ns->cap) {
                    int64_t nc = ns->cap ? 2 * ns->cap : 256;
                    char **g = rf_realloc(ns->name, (size_t)nc * sizeof *g), **h = g ? rf_realloc(ns->line, (size_t)nc * sizeof *h) : NULL;
                    if (g) ns->name = g;
                    if (!g || !h) {
                        out->oom = 1;
                        return;
                    }
                    ns->line = h;
                    ns->cap = nc;
                }
                ns->name[ns->n] = rf_strdup(name);
                ns->line[ns->n] = rf_strndup(p, ll);
                if (!ns->name[ns->n] || !ns->line[ns->n]) {
                    free(ns->name[ns->n]);
                    free(ns->line[ns->n]);
                    out->oom = 1;
                    return;
                }
                ns->n++;
            }
        }
        if (keep) {
            rf_buf_append(out, p, (int64_t)ll);
            rf_buf_putc(out, '\n');
        }
        for (const char *q = p; q < e; q++) depth += (*q == '{') - (*q == '}');
        p = e + 1;
    }
}

static void merge(unit *u, int32_t n, rf_gpu_nv_result *r)
{
    memset(r, 0, sizeof *r);
    const char *why = NULL;
    names ns = {0};
    rf_buf out;
    rf_buf_init(&out);
    char version[128], target[128], v[128], t[128];
    const char *h0 = header_end(u[0].r.ptx);
    if (!h0) {
        why = "the first unit's PTX has no header";
    } else {
        header_line(u[0].r.ptx, h0, ".version", version, sizeof version);
        header_line(u[0].r.ptx, h0, ".target", target, sizeof target);
        rf_buf_append(&out, u[0].r.ptx, (int64_t)(h0 - u[0].r.ptx));
        take_unit(&ns, h0, u[0].r.ptx + u[0].r.len, &out, &why);
    }
    for (int32_t i = 1; i < n && !why && !out.oom; i++) {
        const char *h = header_end(u[i].r.ptx);
        if (!h) {
            why = "a unit's PTX has no header";
            break;
        }
        header_line(u[i].r.ptx, h, ".version", v, sizeof v);
        header_line(u[i].r.ptx, h, ".target", t, sizeof t);
        if (strcmp(v, version) || strcmp(t, target)) {
            why = "the units' PTX headers differ";
            break;
        }
        rf_buf_printf(&out, "\n// redfox: unit %d\n", (int)i); /* where it came from, for a reader */
        take_unit(&ns, h, u[i].r.ptx + u[i].r.len, &out, &why);
    }
    names_free(&ns);
    if (out.oom) {
        rf_buf_free(&out);
        r->stage = RF_GPU_NV_NOMEM;
    } else if (why) {
        rf_buf_free(&out);
        r->stage = RF_GPU_NV_MERGE;
        r->log = rf_strdup(why);
    } else {
        r->len = (uint64_t)out.len;
        r->ptx = rf_buf_take(&out);
        if (!r->ptx) r->stage = RF_GPU_NV_NOMEM;
    }
}

/* ---- cutting and compiling -------------------------------------------------------- */

void rf_gpu_nvrtc_units(const char *src, uint64_t len, int nopts, const char *const *opts, int threads,
                        rf_gpu_nv_result *r)
{
    memset(r, 0, sizeof *r);
    const char *mark = RF_GPU_UNIT_MARK, *end = src + len;
    size_t ml = strlen(mark);
    const char *first = strstr(src, mark);
    /* the cuts: cuts[0] the first mark, then each unit's end */
    int64_t ncuts = 0, capcuts = 0;
    const char **cuts = NULL;
    uint64_t last_weight = 0;
    int oom = 0;
    if (first) {
        uint64_t wsum = 0;
        for (const char *p = first; p && p < end;) {
            const char *next = strstr(p + ml, mark);
            if (!next) next = end;
            wsum += (uint64_t)(next - p) + UNIT_KERNEL_WEIGHT * count_kernels(p, next);
            if (wsum >= UNIT_WEIGHT || next == end) {
                if (ncuts + 2 > capcuts) {
                    int64_t nc = capcuts ? 2 * capcuts : 16;
                    const char **g = rf_realloc(cuts, (size_t)nc * sizeof *g);
                    if (!g) {
                        oom = 1;
                        break;
                    }
                    cuts = g;
                    capcuts = nc;
                }
                if (!ncuts) cuts[ncuts++] = first;
                cuts[ncuts++] = next;
                last_weight = wsum;
                wsum = 0;
            }
            p = next < end ? next : NULL;
        }
    }
    if (oom) {
        free(cuts);
        r->stage = RF_GPU_NV_NOMEM;
        return;
    }
    int32_t n = ncuts > 1 ? (int32_t)(ncuts - 1) : 0;
    if (n >= 2 && last_weight < UNIT_WEIGHT / 2) { /* a light last unit joins the one before */
        cuts[ncuts - 2] = cuts[ncuts - 1];
        ncuts--;
        n--;
    }
    if (n < 2) {
        free(cuts);
        rf_gpu_nvrtc_run(src, nopts, opts, r);
        return;
    }
    unit *u = rf_calloc((size_t)n, sizeof *u);
    if (!u) {
        free(cuts);
        r->stage = RF_GPU_NV_NOMEM;
        return;
    }
    int headlen = (int)(first - src);
    for (int32_t i = 0; i < n && !oom; i++) {
        u[i].text = rf_sprintf("%.*s%.*s", headlen, src, (int)(cuts[i + 1] - cuts[i]), cuts[i]);
        if (!u[i].text) oom = 1;
    }
    free(cuts);
    if (!oom) {
        int nt = threads > 0 ? threads : rf_online_cpus();
        if (nt > n) nt = n;
        if (nt > 64) nt = 64;
        if (nt < 1) nt = 1;
        compile_units(u, n, nopts, opts, nt);
        /* the first unit's failure in the source's order is the one reported */
        int32_t bad = -1;
        for (int32_t i = 0; i < n && bad < 0; i++)
            if (u[i].r.stage != RF_GPU_NV_OK) bad = i;
        if (bad >= 0) {
            *r = u[bad].r;
            memset(&u[bad].r, 0, sizeof u[bad].r);
        } else {
            merge(u, n, r);
        }
    }
    for (int32_t i = 0; i < n; i++) {
        free(u[i].text);
        rf_gpu_nv_result_free(&u[i].r);
    }
    free(u);
    if (oom) {
        r->stage = RF_GPU_NV_NOMEM;
        return;
    }
    if (r->stage == RF_GPU_NV_MERGE) { /* see the file comment: whole, then */
        rf_gpu_nv_result_free(r);
        rf_gpu_nvrtc_run(src, nopts, opts, r);
    }
}
