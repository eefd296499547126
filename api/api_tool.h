/*
** api/api_tool.h: what libredfox gives the `redfox` command (tools/) beyond
** include/redfox.h. The command is being rebuilt on the public API (issue
** 25): `redfox run` compiles through rf_compile_buffers; its run still goes
** through the runtime directly, because the run needs what is command-line
** business or not yet public (several MPI ranks' world, the terminal's
** progress display, the trace's compile and output phases, the --profile
** report's fields). Until rf_run takes those, the command reads the
** compiled program through this header.
**
** Owns: nothing but these declarations; tools/ links the library's objects
** (rf_api) statically. Not installed, not exported from libredfox.so.
*/
#ifndef RF_API_TOOL_H
#define RF_API_TOOL_H

#include "redfox.h"
#include "rf_common.h"
#include "rf_harmony.h"

/* A compiled program as the runtime runs it: its Harmony program (NULL when
** the compile failed), and a .rfx file's sections (empty for LogiQL): the
** GPU code (PTX0) and the GPU plans (GPLN). Owned by p. */
typedef struct api_tool_program {
    const rf_hir_program *hir;
    const rf_buf *ptx0, *gpln;
    const char *rfx_name; /* the .rfx file's name as messages give it; NULL for LogiQL */
} api_tool_program;
api_tool_program api_tool_program_of(const rf_program *p);

#endif
