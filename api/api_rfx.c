/*
** api/api_rfx.c: writing a compiled program as a .rfx file through the
** library (`redfox compile`): its schema, Harmony, GPU plans and PTX.
**
** Owns: rf_program_write_rfx. The sections and their layout are
** docs/RFX.md's; the writer (aside, then renamed) is rfx/'s.
*/
#include "api_internal.h"
#include "rf_gpu_codegen.h"
#include "rf_rfx.h"
#include "rf_rt_gpu.h"

#include <stdlib.h>
#include <string.h>

/* SCHM: the inputs and outputs, readable without decoding the program. */
static rf_status schema_section(const rf_hir_program *p, rf_buf *schm)
{
    int32_t n = 0;
    for (int32_t i = 0; i < p->nvars; i++)
        n += p->vars[i]->role == RF_HIR_ROLE_INPUT || p->vars[i]->role == RF_HIR_ROLE_OUTPUT;
    rf_rfx_put_u32(schm, 1);
    rf_rfx_put_u32(schm, (uint32_t)n);
    for (int32_t i = 0; i < p->nvars; i++) {
        const rf_hir_var *v = p->vars[i];
        if (v->role != RF_HIR_ROLE_INPUT && v->role != RF_HIR_ROLE_OUTPUT) continue;
        rf_rfx_put_u8(schm, v->role == RF_HIR_ROLE_INPUT ? 0 : 1);
        rf_rfx_put_cstr(schm, v->name);
        rf_rfx_put_cstr(schm, v->role == RF_HIR_ROLE_INPUT ? v->input_file : v->output_name);
        rf_rfx_put_u32(schm, (uint32_t)v->ncols);
        for (int32_t c = 0; c < v->ncols; c++) {
            rf_rfx_put_u8(schm, (uint8_t)v->types[c]);
            rf_rfx_put_cstr(schm, v->colnames[c] ? v->colnames[c] : "");
        }
    }
    return schm->oom ? RF_ENOMEM : RF_OK;
}

/* GPLN and PTX0: the GPU plans, made once here so that runs only read them,
** and their code; a program the GPU backend cannot take gets neither (it
** runs on the CPU), unless NVRTC is present: then that is an error, as always. */
static rf_status gpu_sections(const rf_hir_program *p, const rf_compile_options *o, rf_buf *gpln, rf_buf *ptx0,
                              rf_diags *d)
{
    rf_diags quiet;
    rf_diags_init(&quiet);
    int gpu_ok = rf_gpu_plan_check(p, &quiet) == RF_OK;
    rf_diags_free(&quiet);
    char why[8];
    if (!gpu_ok) return rf_gpu_nvrtc_available(why, sizeof why) ? rf_gpu_plan_check(p, d) : RF_OK;
    rf_gpu_plan *plan = NULL;
    rf_status st = rf_gpu_plan_build(p, 1, &plan, d);
    if (!st) st = rf_gpu_plan_encode(p, plan, gpln);
    rf_gpu_nvrtc_opts go = {o->gpu_arch, o->cache_dir, o->no_fuse, 0};
    if (!st) st = rf_gpu_make_ptx0(p, plan, &go, ptx0, d);
    rf_gpu_plan_free(plan);
    return st;
}

static rf_status write_rfx(const rf_hir_program *p, const char *path, const rf_compile_options *o, rf_diags *d)
{
    rf_buf hirs, schm, gpln, ptx0;
    rf_buf_init(&hirs);
    rf_buf_init(&schm);
    rf_buf_init(&gpln);
    rf_buf_init(&ptx0);
    rf_status st = rf_hir_serialize(p, &hirs);
    if (!st && hirs.oom) st = RF_ENOMEM;
    if (!st) st = schema_section(p, &schm);
    if (!st) st = gpu_sections(p, o, &gpln, &ptx0, d);
    rf_rfx_writer *w = st ? NULL : rf_rfx_writer_new();
    if (!st && !w) st = RF_ENOMEM;
    if (!st) st = rf_rfx_writer_add(w, RF_RFX_TAG_SCHEMA, schm.data, (uint64_t)schm.len);
    if (!st) st = rf_rfx_writer_add(w, RF_RFX_TAG_HARMONY, hirs.data, (uint64_t)hirs.len);
    if (!st && gpln.len) st = rf_rfx_writer_add(w, RF_RFX_TAG_GPU_PLAN, gpln.data, (uint64_t)gpln.len);
    if (!st && ptx0.len) st = rf_rfx_writer_add(w, RF_RFX_TAG_PTX, ptx0.data, (uint64_t)ptx0.len);
    if (!st) st = rf_rfx_writer_write_file(w, path, d);
    /* on a machine with a GPU, its cubin too, into the JIT cache: the
    ** file's first run then skips the driver's JIT (a run would make it) */
    if (!st && ptx0.len) (void)rf_rt_gpu_link_ptx0(ptx0.data, (uint64_t)ptx0.len, o->cache_dir);
    rf_rfx_writer_free(w);
    rf_buf_free(&hirs);
    rf_buf_free(&schm);
    rf_buf_free(&gpln);
    rf_buf_free(&ptx0);
    return st;
}

int rf_program_write_rfx(rf_program *prog, const char *path, const rf_compile_options *opt)
{
    if (!prog) return REDFOX_MISUSE;
    api_diags_clear(&prog->diags);
    rf_compile_options o;
    if (!api_compile_options(opt, &o)) {
        api_diags_error(&prog->diags, "rf_program_write_rfx: the options were not set up with rf_compile_options_init");
        return REDFOX_MISUSE;
    }
    if (!path || !*path || !prog->hir) {
        api_diags_error(&prog->diags, "rf_program_write_rfx: %s",
                        !path || !*path                 ? "no path"
                        : prog->stage != REDFOX_STAGE_ALL ? "the program was compiled with stop_after"
                                                          : "the program did not compile");
        return REDFOX_MISUSE;
    }
    if (o.gpu_arch && !rf_gpu_arch_valid(o.gpu_arch)) {
        api_diags_error(&prog->diags,
                        "unknown GPU architecture `%s` (gpu_arch, `redfox compile --gpu-arch`): give compute_NN or "
                        "sm_NN, as compute_80 or sm_90",
                        o.gpu_arch);
        return REDFOX_MISUSE;
    }
    rf_diags d;
    rf_diags_init(&d);
    rf_status st = write_rfx(prog->hir, path, &o, &d);
    st = rf_diags_status(&d, st); /* a bug exits 3 */
    rf_status dst = api_diags_set(&prog->diags, &d);
    rf_diags_free(&d);
    if (!st && dst) st = dst;
    if (st && !prog->diags.errmsg)
        api_diags_error(&prog->diags, "%s", st == RF_ENOMEM ? "out of memory" : "the program could not be written");
    return api_code(st);
}
