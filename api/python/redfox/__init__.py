"""redfox: LogiQL (Datalog) programs run on NVIDIA GPUs or the CPU, from Python.

Owns: the Python binding of libredfox (include/redfox.h), written with
ctypes over the shared library: no compiled extension, so one installed
module works with every Python 3 version and needs no Python headers to
build. Relations come back as lists of tuples, or through the Arrow PyCapsule
interface (__arrow_c_array__ / __arrow_c_stream__) that pyarrow, polars and
DuckDB read without copying through text.

    import redfox
    prog = redfox.compile('''
        edge(a, b) -> int(a), int(b).
        lang:input[`edge] = "edge.csv".
        reach(a, b) <- edge(a, b).
        reach(a, c) <- reach(a, b), edge(b, c).
        lang:output[`reach] = "reach".''')
    db = redfox.Database()                  # or Database("data/") for files
    db.put("edge", [(1, 2), (2, 3)], ["int", "int"])
    print(db.run(prog)["reach"].rows())     # [(1, 2), (1, 3), (2, 3)]

A redfox database (`redfox import`) is kept up to date by transactions:

    db = redfox.Database("bank.db")
    res = db.exec(prog, redfox.Batch().insert("edge", [(3, 4)], ["int", "int"]))
    res.transaction.incremental            # True: derived predicates maintained by delta rules

Several MPI ranks (a script started by `mpirun -np N python3 app.py`) run
one program together: w = redfox.World.mpi(), then db.run(prog, world=w) on
every rank (rank 0's result holds the outputs), and w.end() at the end.

Values: int -> int, float -> float, decimal -> decimal.Decimal, string ->
str, boolean -> bool, date -> datetime.date; a total's 128-bit decimal
(column type "decimal128", results only) -> decimal.Decimal. Errors raise redfox.Error (its
.diagnostics: file, line, column, severity, message); compile errors raise
redfox.CompileError. Objects are not for concurrent use from several threads
(a Database runs one program at a time).
"""

import codecs
import ctypes
import datetime
import decimal
import io
import operator
import os
from collections import namedtuple

from ._libpath import LIBRARY

__all__ = ["Error", "CompileError", "Diagnostic", "Program", "Database", "Batch", "Transaction", "Result", "Relation",
           "World", "compile", "compile_files", "compile_buffers", "run", "version", "api_level", "device_info", "TYPES"]

_lib = ctypes.CDLL(LIBRARY if os.path.isabs(LIBRARY)
                   else os.path.join(os.path.dirname(os.path.abspath(__file__)), LIBRARY))

TYPES = ("int", "float", "decimal", "string", "boolean", "date", "decimal128")  # indexed by REDFOX_INT ... REDFOX_DECIMAL128
_DEVICES = {"auto": 0, "cpu": 1, "gpu": 2}
_FORMATS = {"table": 0, "tbl": 1, "csv": 2}
_EPOCH = datetime.date(1970, 1, 1)
_SCALE = decimal.Decimal(1000000)
# Decimal arithmetic rounds to its context's precision (28 digits by default):
# conversions use one wide enough for any value redfox holds (39 digits and 6
# after the point), so they are exact.
_EXACT = decimal.Context(prec=80)
_INT64 = (-(1 << 63), (1 << 63) - 1)

# ---- the C declarations -----------------------------------------------------

c_int, c_int32, c_int64, c_uint32, c_double = ctypes.c_int, ctypes.c_int32, ctypes.c_int64, ctypes.c_uint32, ctypes.c_double
c_char_p, c_void_p, c_size_t, POINTER = ctypes.c_char_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER


class _Diag(ctypes.Structure):
    _fields_ = [("severity", c_int), ("file", c_char_p), ("line", c_int32), ("column", c_int32), ("message", c_char_p)]


class _Progress(ctypes.Structure):
    _fields_ = [("size", c_size_t), ("kind", c_int), ("done", c_int), ("seconds", c_double), ("round", c_int64),
                ("npreds", c_int32), ("more", c_int32), ("preds", POINTER(c_char_p)), ("rows", POINTER(c_int64)),
                ("input", c_char_p), ("path", c_char_p), ("phase", c_char_p), ("bytes_done", c_int64),
                ("bytes_total", c_int64)]


_ProgressFn = ctypes.CFUNCTYPE(None, c_void_p, POINTER(_Progress))
_WriteFn = ctypes.CFUNCTYPE(c_int, c_void_p, c_void_p, c_int64)


class _RunOptions(ctypes.Structure):
    _fields_ = [("size", c_size_t), ("device", c_int), ("threads", c_int), ("max_iterations", c_int64),
                ("no_fuse", c_int), ("profile", c_int), ("settings", c_char_p),
                ("trace_file", c_char_p),
                # API level 2
                ("progress", _ProgressFn), ("progress_user", c_void_p), ("cache_dir", c_char_p),
                ("gpu_memory", ctypes.c_uint64), ("trace", c_void_p), ("process_exits", c_int),
                # API level 3
                ("world", c_void_p),
                # the runs ahead
                ("runs", c_int64), ("later", c_void_p), ("nlater", ctypes.c_int32), ("later_runs", c_int64),
                # API level 5: totals of decimals as decimal128 (rf_run_options_init_v2 sets 1)
                ("decimal128", c_int)]


class _RunStats(ctypes.Structure):  # API level 4: rf_run_stats
    _fields_ = [("size", c_size_t), ("device", c_char_p), ("gpu_fell_back", c_int), ("rank", c_int32),
                ("nranks", c_int32), ("load_seconds", c_double), ("run_seconds", c_double),
                ("device_seconds", c_double), ("program_seconds", c_double), ("read_seconds", c_double),
                ("copy_seconds", c_double), ("output_seconds", c_double), ("input_rows", c_int64),
                ("input_bytes", c_int64), ("kernel_bytes_in", c_int64), ("kernel_bytes_out", c_int64),
                ("cpu_fused", c_int64), ("h2d_bytes", c_int64), ("d2h_bytes", c_int64),
                ("gpu_peak_bytes", c_int64), ("gpu_fused", c_int64), ("gpu_memory_cap", c_int64),
                ("gpu_values_moved", c_int64), ("gpu_kernels_in_ranges", c_int64),
                ("gpu_kernels_in_partitions", c_int64), ("gpu_cache_hits", c_int64), ("gpu_cache_misses", c_int64),
                ("gpu_cache_hit_bytes", c_int64), ("gpu_cache_miss_bytes", c_int64)]


class _CompileOptions(ctypes.Structure):
    _fields_ = [("size", c_size_t), ("no_lftj", c_int), ("no_exists", c_int), ("no_opt", c_int),
                # API level 3
                ("stop_after", c_int), ("no_fuse", c_int), ("gpu_arch", c_char_p), ("cache_dir", c_char_p)]


class _ExecOptions(ctypes.Structure):  # API level 4
    _fields_ = [("size", c_size_t), ("device", c_int), ("threads", c_int), ("settings", c_char_p),
                ("cache_dir", c_char_p), ("init", c_int), ("recompute", c_int), ("profile", c_int),
                ("profile_kernels", c_int), ("show_programs", c_int), ("log", _WriteFn), ("log_user", c_void_p),
                ("start", c_double), ("incremental", c_int), ("level4_end", c_int),
                # API level 5: totals of decimals as decimal128 (rf_exec_options_init sets 1)
                ("decimal128", c_int)]


class ArrowSchema(ctypes.Structure):
    pass


ArrowSchema._fields_ = [("format", c_char_p), ("name", c_char_p), ("metadata", c_char_p), ("flags", c_int64),
                        ("n_children", c_int64), ("children", POINTER(POINTER(ArrowSchema))),
                        ("dictionary", POINTER(ArrowSchema)), ("release", c_void_p), ("private_data", c_void_p)]


class ArrowArray(ctypes.Structure):
    pass


ArrowArray._fields_ = [("length", c_int64), ("null_count", c_int64), ("offset", c_int64), ("n_buffers", c_int64),
                       ("n_children", c_int64), ("buffers", POINTER(c_void_p)),
                       ("children", POINTER(POINTER(ArrowArray))), ("dictionary", POINTER(ArrowArray)),
                       ("release", c_void_p), ("private_data", c_void_p)]


class ArrowArrayStream(ctypes.Structure):
    pass


_GetSchema = ctypes.CFUNCTYPE(c_int, POINTER(ArrowArrayStream), POINTER(ArrowSchema))
_GetNext = ctypes.CFUNCTYPE(c_int, POINTER(ArrowArrayStream), POINTER(ArrowArray))
_LastError = ctypes.CFUNCTYPE(c_char_p, POINTER(ArrowArrayStream))
ArrowArrayStream._fields_ = [("get_schema", _GetSchema), ("get_next", _GetNext), ("get_last_error", _LastError),
                             ("release", c_void_p), ("private_data", c_void_p)]
_ReleaseSchema = ctypes.CFUNCTYPE(None, POINTER(ArrowSchema))
_ReleaseArray = ctypes.CFUNCTYPE(None, POINTER(ArrowArray))
_ReleaseStream = ctypes.CFUNCTYPE(None, POINTER(ArrowArrayStream))


def _fn(name, restype, *argtypes):
    f = getattr(_lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


_P = c_void_p
rf_libversion = _fn("rf_libversion", c_char_p)
rf_free = _fn("rf_free", None, _P)
rf_open = _fn("rf_open", c_int, c_char_p, POINTER(_P))
rf_close = _fn("rf_close", None, _P)
rf_errmsg = _fn("rf_errmsg", c_char_p, _P)
rf_database_diag_count = _fn("rf_database_diag_count", c_int64, _P)
rf_database_diag = _fn("rf_database_diag", POINTER(_Diag), _P, c_int64)
rf_database_put_rows = _fn("rf_database_put_rows", c_int, _P, c_char_p, c_int32, POINTER(c_int), c_int64,
                           POINTER(c_void_p))
rf_database_put_arrow = _fn("rf_database_put_arrow", c_int, _P, c_char_p, POINTER(ArrowSchema), POINTER(ArrowArray))
rf_database_put_arrow_stream = _fn("rf_database_put_arrow_stream", c_int, _P, c_char_p, POINTER(ArrowArrayStream))
rf_database_drop = _fn("rf_database_drop", c_int, _P, c_char_p)
rf_compile = _fn("rf_compile", c_int, c_char_p, c_int64, c_char_p, POINTER(_P))
rf_compile_files = _fn("rf_compile_files", c_int, POINTER(c_char_p), c_int32, POINTER(_P))
rf_program_free = _fn("rf_program_free", None, _P)
rf_program_errmsg = _fn("rf_program_errmsg", c_char_p, _P)
rf_program_diag_count = _fn("rf_program_diag_count", c_int64, _P)
rf_program_diag = _fn("rf_program_diag", POINTER(_Diag), _P, c_int64)
rf_program_input_count = _fn("rf_program_input_count", c_int32, _P)
rf_program_input_name = _fn("rf_program_input_name", c_char_p, _P, c_int32)
rf_program_input_file = _fn("rf_program_input_file", c_char_p, _P, c_int32)
rf_program_output_count = _fn("rf_program_output_count", c_int32, _P)
rf_program_output_name = _fn("rf_program_output_name", c_char_p, _P, c_int32)
rf_run_options_init_v2 = _fn("rf_run_options_init_v2", None, POINTER(_RunOptions), c_size_t)
rf_compile_options_init = _fn("rf_compile_options_init", None, POINTER(_CompileOptions), c_size_t)
rf_compile_buffers = _fn("rf_compile_buffers", c_int, POINTER(c_char_p), POINTER(c_char_p), POINTER(c_int64), c_int32,
                         POINTER(_P))
rf_compile_buffers_v2 = _fn("rf_compile_buffers_v2", c_int, POINTER(c_char_p), POINTER(c_char_p), POINTER(c_int64),
                            c_int32, POINTER(_CompileOptions), POINTER(_P))
rf_compile_files_v2 = _fn("rf_compile_files_v2", c_int, POINTER(c_char_p), c_int32, POINTER(_CompileOptions),
                          POINTER(_P))
rf_program_is_compiled = _fn("rf_program_is_compiled", c_int, _P)
rf_program_write_rfx = _fn("rf_program_write_rfx", c_int, _P, c_char_p, POINTER(_CompileOptions))
rf_program_dump = _fn("rf_program_dump", c_int, _P, c_int, c_int, POINTER(_CompileOptions), _WriteFn, c_void_p)
rf_database_keep_inputs = _fn("rf_database_keep_inputs", c_int, _P, c_int)
rf_result_write = _fn("rf_result_write", c_int, _P, c_int32, c_int, c_void_p)
rf_result_write_to = _fn("rf_result_write_to", c_int, _P, c_int32, c_int, _WriteFn, c_void_p)
rf_result_profile_write = _fn("rf_result_profile_write", c_int, _P, c_void_p)
rf_run = _fn("rf_run", c_int, _P, _P, POINTER(_RunOptions), POINTER(_P))
rf_result_free = _fn("rf_result_free", None, _P)
rf_result_device = _fn("rf_result_device", c_char_p, _P)
rf_result_load_seconds = _fn("rf_result_load_seconds", c_double, _P)
rf_result_run_seconds = _fn("rf_result_run_seconds", c_double, _P)
rf_result_count = _fn("rf_result_count", c_int32, _P)
rf_result_name = _fn("rf_result_name", c_char_p, _P, c_int32)
rf_result_rows = _fn("rf_result_rows", c_int64, _P, c_int32)
rf_result_columns = _fn("rf_result_columns", c_int32, _P, c_int32)
rf_result_column_name = _fn("rf_result_column_name", c_char_p, _P, c_int32, c_int32)
rf_result_column_type = _fn("rf_result_column_type", c_int, _P, c_int32, c_int32)
rf_result_column_data = _fn("rf_result_column_data", c_void_p, _P, c_int32, c_int32)
rf_result_string_code = _fn("rf_result_string_code", c_void_p, _P, c_uint32, POINTER(c_int64))
rf_result_text = _fn("rf_result_text", c_int, _P, c_int32, c_int, POINTER(c_void_p), POINTER(c_int64))
rf_result_arrow = _fn("rf_result_arrow", c_int, _P, c_int32, POINTER(ArrowSchema), POINTER(ArrowArray))
rf_result_arrow_stream = _fn("rf_result_arrow_stream", c_int, _P, c_int32, POINTER(ArrowArrayStream))
rf_api_level = _fn("rf_api_level", c_int)
# API level 4: transactions
if rf_api_level() >= 4:
    rf_batch_new = _fn("rf_batch_new", c_void_p)
    rf_batch_free = _fn("rf_batch_free", None, _P)
    rf_batch_add_file = _fn("rf_batch_add_file", c_int, _P, c_char_p)
    rf_batch_add_text = _fn("rf_batch_add_text", c_int, _P, c_char_p, c_char_p, c_int64)
    rf_batch_insert = _fn("rf_batch_insert", c_int, _P, c_char_p, c_int32, POINTER(c_int), c_int64, POINTER(c_void_p))
    rf_batch_delete = _fn("rf_batch_delete", c_int, _P, c_char_p, c_int32, POINTER(c_int), c_int64, POINTER(c_void_p))
    rf_batch_errmsg = _fn("rf_batch_errmsg", c_char_p, _P)
    rf_exec_options_init = _fn("rf_exec_options_init", None, POINTER(_ExecOptions), c_size_t)
    rf_exec = _fn("rf_exec", c_int, _P, _P, _P, POINTER(_ExecOptions), POINTER(_P))
    rf_result_exec_incremental = _fn("rf_result_exec_incremental", c_int, _P)
    rf_result_exec_why = _fn("rf_result_exec_why", c_char_p, _P)
    rf_result_exec_inserted = _fn("rf_result_exec_inserted", c_int64, _P)
    rf_result_exec_deleted = _fn("rf_result_exec_deleted", c_int64, _P)
    rf_result_exec_derived_count = _fn("rf_result_exec_derived_count", c_int32, _P)
    rf_result_exec_derived = _fn("rf_result_exec_derived", c_char_p, _P, c_int32, POINTER(c_int64), POINTER(c_int64),
                                 POINTER(c_char_p))
    rf_result_exec_profile = _fn("rf_result_exec_profile", c_char_p, _P)
# API level 3: ranks
rf_world_mpi = _fn("rf_world_mpi", c_int, c_void_p, c_void_p, POINTER(_P))
rf_world_rank = _fn("rf_world_rank", c_int, _P)
rf_world_size = _fn("rf_world_size", c_int, _P)
rf_world_local_size = _fn("rf_world_local_size", c_int, _P)
rf_world_errmsg = _fn("rf_world_errmsg", c_char_p, _P)
rf_world_diag_count = _fn("rf_world_diag_count", c_int64, _P)
rf_world_diag = _fn("rf_world_diag", POINTER(_Diag), _P, c_int64)
rf_world_end = _fn("rf_world_end", None, _P, c_int)
# API level 4: a run's figures, the devices, kept inputs' GPU copies
rf_result_stats = _fn("rf_result_stats", c_int, _P, POINTER(_RunStats))
rf_device_info = _fn("rf_device_info", c_int, c_int, c_char_p, c_size_t)
rf_database_forget_device = _fn("rf_database_forget_device", c_int, _P)

# ---- capsules (the Arrow PyCapsule interface) ---------------------------------

_libc = ctypes.CDLL(None)
_libc.malloc.restype = c_void_p
_libc.malloc.argtypes = [c_size_t]
_libc.free.restype = None
_libc.free.argtypes = [c_void_p]
_libc.fdopen.restype = c_void_p
_libc.fdopen.argtypes = [c_int, c_char_p]
_libc.fclose.restype = c_int
_libc.fclose.argtypes = [c_void_p]
_libc.open_memstream.restype = c_void_p
_libc.open_memstream.argtypes = [POINTER(c_void_p), POINTER(c_size_t)]
_CapsuleDestructor = ctypes.CFUNCTYPE(None, c_void_p)
_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [c_void_p, c_char_p, _CapsuleDestructor]
# PyCapsule_GetPointer twice: on a capsule being destroyed (a raw address) and on a live one.
_capsule_ptr_raw = ctypes.PYFUNCTYPE(c_void_p, c_void_p, c_char_p)(("PyCapsule_GetPointer", ctypes.pythonapi))
_capsule_ptr = ctypes.PYFUNCTYPE(c_void_p, ctypes.py_object, c_char_p)(("PyCapsule_GetPointer", ctypes.pythonapi))
_capsule_is_valid = ctypes.PYFUNCTYPE(c_int, ctypes.py_object, c_char_p)(("PyCapsule_IsValid", ctypes.pythonapi))

# The names must outlive every capsule: module constants.
_SCHEMA_NAME, _ARRAY_NAME, _STREAM_NAME = b"arrow_schema", b"arrow_array", b"arrow_array_stream"


def _make_destructor(name, struct, release_type):
    def destroy(capsule):
        ptr = _capsule_ptr_raw(capsule, name)
        if not ptr:
            return
        s = struct.from_address(ptr)
        if s.release:  # not moved out by a consumer: released here
            release_type(s.release)(ctypes.cast(ptr, POINTER(struct)))
        _libc.free(ptr)
    return _CapsuleDestructor(destroy)


_destroy_schema = _make_destructor(_SCHEMA_NAME, ArrowSchema, _ReleaseSchema)
_destroy_array = _make_destructor(_ARRAY_NAME, ArrowArray, _ReleaseArray)
_destroy_stream = _make_destructor(_STREAM_NAME, ArrowArrayStream, _ReleaseStream)


def _alloc(struct):
    ptr = _libc.malloc(ctypes.sizeof(struct))
    if not ptr:
        raise MemoryError("redfox: out of memory")
    ctypes.memset(ptr, 0, ctypes.sizeof(struct))
    return ptr


# ---- errors -------------------------------------------------------------------

Diagnostic = namedtuple("Diagnostic", "severity file line column message")
_SEVERITIES = ("error", "warning", "note")


class Error(Exception):
    """A failed call: code (REDFOX_* number), message, diagnostics (a list of Diagnostic)."""

    def __init__(self, code, message, diagnostics=()):
        super().__init__(message)
        self.code = code
        self.message = message
        self.diagnostics = list(diagnostics)


class CompileError(Error):
    """The program did not compile; .diagnostics say where and why."""


def _diags(count, get, handle):
    out = []
    for i in range(count(handle)):
        d = get(handle, i).contents
        out.append(Diagnostic(_SEVERITIES[d.severity], d.file.decode(), d.line, d.column, d.message.decode()))
    return out


def version():
    """The library's version, "0.1.0"."""
    return rf_libversion().decode()


def api_level():
    """The library's interface level (rf_api_level): 4 has World, Result.stats(),
    Database.forget_device() and device_info()."""
    return rf_api_level()


def device_info(device):
    """(usable, text) for device "cpu" or "gpu" (rf_device_info): whether a run
    can use it, and its name and figures, or why there is no usable GPU. The
    first call for the GPU starts its driver."""
    if device not in ("cpu", "gpu"):
        raise Error(2, "redfox: device_info: device is 'cpu' or 'gpu', not %r" % (device,))
    buf = ctypes.create_string_buffer(512)
    ok = rf_device_info(_DEVICES[device], buf, len(buf))
    return bool(ok), buf.value.decode(errors="replace")


# ---- ranks ----------------------------------------------------------------------

class World:
    """The MPI ranks this process runs with: World.mpi() joins the ranks
    `mpirun -np N` started (a process mpirun did not start is a world of one
    rank, and MPI is not started). Give it to Database.run(..., world=w) on
    every rank with the same program and data: rank 0's result holds the
    outputs' rows (the other ranks' list the same outputs, empty). end() once every run is over: it
    ends MPI; a world not ended is ended when the object is collected. One
    world per process, made and ended on one thread."""

    def __init__(self, handle):
        self._h = handle

    @classmethod
    def mpi(cls):
        h = c_void_p()
        code = rf_world_mpi(None, None, ctypes.byref(h))
        if code:
            msg = rf_world_errmsg(h).decode() if h else "out of memory"
            diags = _diags(rf_world_diag_count, rf_world_diag, h) if h else []
            rf_world_end(h, 0)
            raise Error(code, msg, diags)
        return cls(h)

    @property
    def rank(self):
        """This process's rank in [0, size)."""
        return rf_world_rank(self._h)

    @property
    def size(self):
        """The ranks' count."""
        return rf_world_size(self._h)

    @property
    def local_size(self):
        """The ranks on this host (they share its cores: divide threads among them)."""
        return rf_world_local_size(self._h)

    def end(self, exit_code=0, _end=rf_world_end):
        """Ends the world (MPI_Finalize). When a run's exchange timed out, every
        rank is aborted with exit_code instead (this call does not return)."""
        if getattr(self, "_h", None):
            h, self._h = self._h, None
            _end(h, exit_code)

    __del__ = end

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.end()


# ---- programs -----------------------------------------------------------------

class Program:
    """A compiled program (immutable). Made by compile() or compile_files()."""

    def __init__(self, handle):
        self._h = handle
        self.diagnostics = _diags(rf_program_diag_count, rf_program_diag, handle)
        self.inputs = [(rf_program_input_name(handle, i).decode(), rf_program_input_file(handle, i).decode())
                       for i in range(rf_program_input_count(handle))]
        self.outputs = [rf_program_output_name(handle, i).decode() for i in range(rf_program_output_count(handle))]
        self.compiled = bool(rf_program_is_compiled(handle))  # from a .rfx file

    def _fail(self, code):
        raise Error(code, (rf_program_errmsg(self._h) or b"").decode(),
                    _diags(rf_program_diag_count, rf_program_diag, self._h))

    def write_rfx(self, path, no_fuse=False, gpu_arch=None, cache_dir=None):
        """Writes the program as a compiled program file (.rfx), as `redfox compile
        -o path [--no-fuse] [--gpu-arch A] [--cache-dir DIR]` does; compile_files(path)
        reads it back. Returns the write's warnings (a list of Diagnostic)."""
        o = _compile_options(False, False, False, always=True)
        o.no_fuse = int(bool(no_fuse))
        o.gpu_arch = gpu_arch.encode() if gpu_arch else None
        o.cache_dir = os.fsencode(cache_dir) if cache_dir is not None else None
        code = rf_program_write_rfx(self._h, os.fsencode(path), ctypes.byref(o))
        if code:
            self._fail(code)
        return _diags(rf_program_diag_count, rf_program_diag, self._h)

    def dump(self, what, format="text", no_fuse=False):
        """An intermediate form as `redfox dump --WHAT --format FORMAT` prints it (a str):
        what is "ast", "rules", "plan", "harmony", "fused", "cuda" or "ptx"; format
        "text", "yaml" (ast, plan) or "dot" (plan). ast, rules and plan need a program
        compiled from LogiQL (stop_after at least that far), the others a complete one."""
        if what not in _DUMPS or format not in _DUMP_FORMATS:
            raise Error(2, "redfox: dump: unknown form %r or format %r" % (what, format))
        o = _compile_options(False, False, False, always=True)
        o.no_fuse = int(bool(no_fuse))
        pieces = []

        def piece(_user, data, n):
            pieces.append(ctypes.string_at(data, n))
            return 0
        code = rf_program_dump(self._h, _DUMPS.index(what), _DUMP_FORMATS.index(format), ctypes.byref(o),
                               _WriteFn(piece), None)
        if code:
            self._fail(code)
        return b"".join(pieces).decode()

    def __del__(self, _free=rf_program_free):  # bound now: module globals may be gone at exit
        if getattr(self, "_h", None):
            _free(self._h)
            self._h = None


def _program(code, handle):
    if code:
        msg = (rf_program_errmsg(handle) or b"").decode() if handle else "out of memory"
        diags = _diags(rf_program_diag_count, rf_program_diag, handle) if handle else []
        rf_program_free(handle)
        raise CompileError(code, msg, diags)
    return Program(handle)


_DUMPS = ("ast", "rules", "plan", "harmony", "fused", "cuda", "ptx")
_DUMP_FORMATS = ("text", "yaml", "dot")
_STAGES = (None, "ast", "rules", "plan")


def _compile_options(no_lftj, no_exists, no_opt, stop_after=None, always=False):
    """The rf_compile_options of the keyword switches, or None when all are off (unless always)."""
    if stop_after not in _STAGES:
        raise Error(2, "redfox: stop_after is one of 'ast', 'rules', 'plan' (None: all)")
    if not (no_lftj or no_exists or no_opt or stop_after or always):
        return None
    o = _CompileOptions()
    rf_compile_options_init(ctypes.byref(o), ctypes.sizeof(o))
    o.no_lftj, o.no_exists, o.no_opt = int(bool(no_lftj)), int(bool(no_exists)), int(bool(no_opt))
    o.stop_after = _STAGES.index(stop_after)
    return o


def compile(text, name=None, no_lftj=False, no_exists=False, no_opt=False, stop_after=None):
    """Compiles LogiQL source text; name (default "<string>") is what diagnostics call it.
    no_lftj, no_exists, no_opt: the plan switches of `redfox run --no-lftj / --no-exists`
    and `redfox dump --no-opt` (they change how the program computes, never what).
    stop_after "ast", "rules" or "plan": only that far, for Program.dump."""
    o = _compile_options(no_lftj, no_exists, no_opt, stop_after)
    if o is not None:
        return compile_buffers([(name or "<string>", text)], no_lftj=no_lftj, no_exists=no_exists, no_opt=no_opt,
                               stop_after=stop_after)
    data = text.encode() if isinstance(text, str) else bytes(text)
    h = c_void_p()
    code = rf_compile(data, len(data), name.encode() if name else None, ctypes.byref(h))
    return _program(code, h)


def compile_files(*paths, no_lftj=False, no_exists=False, no_opt=False, stop_after=None):
    """Compiles .logic files as one program, or loads one .rfx file."""
    arr = (c_char_p * len(paths))(*[os.fsencode(p) for p in paths])
    h = c_void_p()
    o = _compile_options(no_lftj, no_exists, no_opt, stop_after)
    if o is None:
        code = rf_compile_files(arr, len(paths), ctypes.byref(h))
    else:
        code = rf_compile_files_v2(arr, len(paths), ctypes.byref(o), ctypes.byref(h))
    return _program(code, h)


def compile_buffers(sources, no_lftj=False, no_exists=False, no_opt=False, stop_after=None):
    """Compiles programs held in memory: sources is a list of (name, text or
    bytes), LogiQL texts compiled as one program, or one compiled program's
    bytes (.rfx: told by a name ending in .rfx or by its magic bytes), such
    as a program read from a pipe or a socket."""
    sources = list(sources)
    if not sources:
        raise Error(2, "redfox: compile_buffers: no programs")
    datas = [t.encode() if isinstance(t, str) else bytes(t) for _, t in sources]
    names = (c_char_p * len(sources))(*[n.encode() if n else None for n, _ in sources])
    texts = (c_char_p * len(sources))(*datas)
    lens = (c_int64 * len(sources))(*[len(d) for d in datas])
    h = c_void_p()
    o = _compile_options(no_lftj, no_exists, no_opt, stop_after)
    if o is None:
        code = rf_compile_buffers(names, texts, lens, len(sources), ctypes.byref(h))
    else:
        code = rf_compile_buffers_v2(names, texts, lens, len(sources), ctypes.byref(o), ctypes.byref(h))
    return _program(code, h)


# ---- values in ------------------------------------------------------------------

class _BadValue(Exception):
    """A value a column cannot take: code 1 (REDFOX_ERROR) for bad data, 2
    (REDFOX_MISUSE) for a Python type the column does not take, and why."""

    def __init__(self, code, why):
        super().__init__(why)
        self.code = code
        self.why = why


def _decimal_units(v):
    if isinstance(v, float):
        d = decimal.Decimal(repr(v))
    elif isinstance(v, (int, str, decimal.Decimal)):
        try:
            d = decimal.Decimal(v)
        except (ArithmeticError, ValueError):
            raise _BadValue(1, "%r is not a decimal number" % (v,)) from None
    else:
        raise _BadValue(2, "a %s where decimal takes a decimal.Decimal, int, float or str" % type(v).__name__)
    if not d.is_finite():
        raise _BadValue(1, "%r is not a finite decimal (redfox has no NaN or infinity)" % (v,))
    u = d.scaleb(6, _EXACT)
    if u != u.to_integral_value():
        raise _BadValue(1, "%r has more than 6 digits after the point" % (v,))
    if not -_INT64[1] <= u <= _INT64[1]:  # (decimal's range is symmetric)
        raise _BadValue(1, "%r is beyond decimal's range (18 digits before the point)" % (v,))
    return int(u)


def _int64(v):
    try:
        v = operator.index(v)  # ints (and bool, numpy's ints), never a float or a str
    except TypeError:
        raise _BadValue(2, "a %s where int takes an int" % type(v).__name__) from None
    # (ctypes would keep the low 64 bits of a bigger int without a word)
    if not _INT64[0] <= v <= _INT64[1]:
        raise _BadValue(1, "%r is beyond int's range (64 bits)" % (v,))
    return v


def _float(v):
    # (float() would also read a str: a number in a string column's place is a mistake)
    if isinstance(v, (str, bytes)) or not hasattr(v, "__float__"):
        raise _BadValue(2, "a %s where float takes a float or int" % type(v).__name__)
    try:
        return float(v)
    except OverflowError:
        raise _BadValue(1, "%r is beyond float's range" % (v,)) from None


def _utf8(v):
    if not isinstance(v, str):
        raise _BadValue(2, "a %s where string takes a str" % type(v).__name__)
    # the C API takes NUL-terminated strings: a NUL would cut the string there
    if "\0" in v:
        raise _BadValue(1, "a string with a NUL character (strings may not contain NUL bytes, as in a file)")
    try:
        return v.encode()
    except UnicodeEncodeError:
        raise _BadValue(1, "%r is not valid UTF-8 (a lone surrogate)" % (v,)) from None


def _days(v):
    if not isinstance(v, datetime.date) or isinstance(v, datetime.datetime):
        raise _BadValue(2, "a %s where date takes a datetime.date" % type(v).__name__)
    return (v - _EPOCH).days


def _bool(v):
    # (never by truth: "false" and "no" are true, None false)
    if isinstance(v, bool):
        return 1 if v else 0
    if type(v).__module__ == "numpy" and hasattr(v, "item"):  # numpy's bool_ and ints
        return _bool(v.item())
    try:
        i = operator.index(v)
    except TypeError:
        raise _BadValue(2, "a %s where boolean takes a bool" % type(v).__name__) from None
    if i not in (0, 1):
        raise _BadValue(1, "%r is not a boolean (True or False, 1 or 0)" % (v,))
    return i


_CONVERT = {"int": (c_int64, _int64), "float": (c_double, _float), "decimal": (c_int64, _decimal_units),
            "string": (c_char_p, _utf8), "boolean": (ctypes.c_uint8, _bool),
            "date": (c_int32, _days)}


def _column(values, tname, where, c):
    """Column c (0-based) of the rows given for where, converted for the C
    API; a value it cannot take raises redfox.Error naming the column and
    the row (counted from 1, as the library counts them)."""
    if tname == "decimal128":
        raise Error(2, "redfox: decimal128 is a type of results only (totals of decimals); give decimal")
    if tname not in _CONVERT:
        raise Error(2, "redfox: unknown type %r (one of %s)" % (tname, ", ".join(t for t in TYPES if t != "decimal128")))
    ctype, convert = _CONVERT[tname]
    out = []
    for r, v in enumerate(values):
        try:
            out.append(convert(v))
        except _BadValue as e:
            raise Error(e.code, "redfox: %s: column %d (%s), row %d: %s" % (where, c + 1, tname, r + 1, e.why)) from None
    return (ctype * len(out))(*out)


def _row_columns(rows, types, where):
    """Rows (tuples of the given type names) as the C API's arguments: the
    column count, the type codes, the row count and the column pointers,
    then the columns themselves, which must live as long as the call. where:
    the relation's name in errors."""
    rows = list(rows)
    ncols = len(types)
    for r, row in enumerate(rows):
        if len(row) != ncols:
            raise Error(2, "redfox: %s: row %d has %d values where %d types were given" % (where, r + 1, len(row), ncols))
    cols = [_column([row[c] for row in rows], t, where, c) for c, t in enumerate(types)]
    ptrs = (c_void_p * ncols)(*[ctypes.cast(c, c_void_p) for c in cols])
    tcodes = (c_int * ncols)(*[TYPES.index(t) for t in types])
    return ncols, tcodes, len(rows), ptrs, cols


def _option(name, v, lo, hi):
    """An integer option checked against its C field's range: ctypes keeps
    the low bits of a bigger int without a word (max_iterations=2**64 + 1
    became 1)."""
    try:
        v = operator.index(v)
    except TypeError:
        raise Error(2, "redfox: %s takes an int, not a %s" % (name, type(v).__name__)) from None
    if not lo <= v <= hi:
        raise Error(2, "redfox: %s %d is out of range (%d to %d)" % (name, v, lo, hi))
    return v


_C_INT = (-(1 << 31), (1 << 31) - 1)


def _text_arg(what, v):
    """A str argument (a relation's or predicate's name, a batch's text) as
    UTF-8 bytes; another type raises redfox.Error code 2 naming the argument
    (it raised AttributeError: 'int' object has no attribute 'encode')."""
    if not isinstance(v, str):
        raise Error(2, "redfox: %s is a str, not a %s" % (what, type(v).__name__))
    return v.encode()


# ---- batches (transactions, API level 4) -----------------------------------------

class Batch:
    """Inserts and deletes for Database.exec, applied in the order added, as
    one transaction: rows (lists of tuples of the given type names),
    transaction files and transaction text (docs/TRANSACTIONS.md)."""

    def __init__(self):
        if rf_api_level() < 4:
            raise Error(2, "redfox: the library is older than API level 4 (no transactions)")
        self._h = rf_batch_new()
        if not self._h:
            raise Error(4, "redfox: out of memory")

    def close(self, _free=rf_batch_free if rf_api_level() >= 4 else None):  # bound now, as Program's
        """Frees the batch."""
        if getattr(self, "_h", None):
            _free(self._h)
            self._h = None

    __del__ = close

    def _check(self, code):
        if code:
            raise Error(code, rf_batch_errmsg(self._h).decode())
        return self

    def _open(self):
        """The handle; a closed batch raises (its calls failed with no message,
        and Database.exec took it as no batch: nothing applied)."""
        if not getattr(self, "_h", None):
            raise Error(2, "redfox: the batch is closed")
        return self._h

    def _rows(self, fn, pred, rows, types):
        h = self._open()
        cols = _row_columns(rows, types, pred)
        return self._check(fn(h, _text_arg("the predicate", pred), *cols[:4]))

    def insert(self, pred, rows, types):
        """Rows inserted into base predicate pred (a row already there: nothing)."""
        return self._rows(rf_batch_insert, pred, rows, types)

    def delete(self, pred, rows, types):
        """Rows deleted from base predicate pred (a row not there: nothing)."""
        return self._rows(rf_batch_delete, pred, rows, types)

    def add_file(self, path):
        """A transaction file, read when the batch is applied."""
        return self._check(rf_batch_add_file(self._open(), os.fsencode(path)))

    def add_text(self, text, name=None):
        """Transaction text (`+pred(v, ...).` / `-pred(v, ...).` lines)."""
        h = self._open()
        data = _text_arg("the text", text)
        return self._check(rf_batch_add_text(h, _text_arg("the name", name) if name is not None else None, data,
                                             len(data)))


# What a transaction did (Result.transaction): incremental (bool), why it was
# recomputed (None when incremental), base rows inserted and deleted, each
# derived predicate as (name, rows before, rows after, how its table was
# stored), and the profile's text (exec with profile=True, else None).
Transaction = namedtuple("Transaction", "incremental why inserted deleted derived profile")


# ---- databases ------------------------------------------------------------------

class Database:
    """Where a run's inputs come from: a folder of text files or a redfox
    database (path; None: the current folder), and relations given here."""

    def __init__(self, path=None):
        h = c_void_p()
        code = rf_open(os.fsencode(path) if path is not None else None, ctypes.byref(h))
        self._h = h
        if code:
            msg = rf_errmsg(h).decode() if h else "out of memory"
            self.close()
            raise Error(code, msg)

    def close(self, _close=rf_close):
        """Frees the database and the relations given to it (results stay valid)."""
        if getattr(self, "_h", None):
            _close(self._h)
            self._h = None

    __del__ = close

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _check(self, code):
        if code:
            raise Error(code, rf_errmsg(self._h).decode(), _diags(rf_database_diag_count, rf_database_diag, self._h))

    def put(self, name, rows, types):
        """Gives input relation name (its lang:input file name or its
        predicate's name) as a list of tuples of the given type names."""
        key = _text_arg("the relation's name", name)
        cols = _row_columns(rows, types, name)
        self._check(rf_database_put_rows(self._h, key, *cols[:4]))

    def put_arrow(self, name, data):
        """Gives input relation name from any object of the Arrow PyCapsule
        interface (__arrow_c_array__, or __arrow_c_stream__: a pyarrow Table of
        any number of chunks), or a (schema capsule, array capsule) pair. An
        array is moved in (int64, double and date32 columns without a copy);
        a stream's batches are copied."""
        key = _text_arg("the relation's name", name)
        if not (hasattr(data, "__arrow_c_stream__") or hasattr(data, "__arrow_c_array__") or
                (isinstance(data, tuple) and len(data) == 2)):
            raise Error(2, "redfox: put_arrow takes an object with __arrow_c_array__ or __arrow_c_stream__, or a "
                           "(schema capsule, array capsule) pair, not a %s" % type(data).__name__)
        if hasattr(data, "__arrow_c_stream__") and not hasattr(data, "__arrow_c_array__"):
            stream_cap = data.__arrow_c_stream__()
            sp = _capsule_ptr(stream_cap, _STREAM_NAME)
            self._check(rf_database_put_arrow_stream(self._h, key, ctypes.cast(sp, POINTER(ArrowArrayStream))))
            return
        schema_cap, array_cap = data.__arrow_c_array__() if hasattr(data, "__arrow_c_array__") else data
        sp = _capsule_ptr(schema_cap, _SCHEMA_NAME)
        ap = _capsule_ptr(array_cap, _ARRAY_NAME)
        self._check(rf_database_put_arrow(self._h, key, ctypes.cast(sp, POINTER(ArrowSchema)),
                                          ctypes.cast(ap, POINTER(ArrowArray))))

    def drop(self, name):
        """Forgets a relation given by put or put_arrow: runs read its file again."""
        self._check(rf_database_drop(self._h, _text_arg("the relation's name", name)))

    def forget_device(self):
        """Frees what the GPU holds of the kept inputs (rf_database_forget_device):
        the next run copies them to the device again, as a first run does."""
        self._check(rf_database_forget_device(self._h))

    def keep_inputs(self, on=True):
        """Keeps the inputs runs read for the runs after them (rf_database_keep_inputs):
        a program run repeatedly reads its files once; off forgets them."""
        self._check(rf_database_keep_inputs(self._h, 1 if on else 0))

    def run(self, program, device="auto", threads=0, max_iterations=0, no_fuse=False, settings=None, trace=None,
            profile=False, progress=None, cache_dir=None, gpu_memory=0, world=None):
        """Runs program (a Program, or LogiQL text) and returns its Result.
        trace: a file path for the run's timeline (Chrome trace-event JSON).
        profile: collect per-kernel statistics (Result.profile_text()).
        progress: called as progress(dict) while a long fixpoint or input load
        runs (kind "fixpoint" or "load", done, seconds, and round, preds, rows
        or input, path, phase, bytes_done, bytes_total).
        cache_dir: where --device auto's placement model and the GPU's code
        cache live ("": none). gpu_memory: cap the GPU memory, in bytes.
        world: a World; every rank runs the same program on the same data and
        rank 0's result holds the outputs."""
        if isinstance(program, str):
            program = compile(program)
        o = _RunOptions()
        rf_run_options_init_v2(ctypes.byref(o), ctypes.sizeof(o))
        if device not in _DEVICES:
            raise Error(2, "redfox: unknown device %r (auto, cpu or gpu)" % (device,))
        o.device = _DEVICES[device]
        o.threads = _option("threads", threads, *_C_INT)
        o.max_iterations = _option("max_iterations", max_iterations, *_INT64)
        o.no_fuse = 1 if no_fuse else 0
        o.profile = 1 if profile else 0
        if settings:
            o.settings = ",".join("%s=%s" % kv for kv in settings.items()).encode() \
                if isinstance(settings, dict) else settings.encode()
        if trace:
            o.trace_file = os.fsencode(trace)
        if cache_dir is not None:
            o.cache_dir = os.fsencode(cache_dir)
        o.gpu_memory = _option("gpu_memory", gpu_memory, 0, (1 << 64) - 1)
        if world is not None:
            if not isinstance(world, World) or not world._h:
                raise Error(2, "redfox: world is a World not yet ended")
            o.world = world._h
        errors = []
        if progress is not None:
            def relay(_user, p):
                p = p.contents
                r = {"kind": "fixpoint" if p.kind == 0 else "load", "done": bool(p.done), "seconds": p.seconds}
                if p.kind == 0:
                    r.update(round=p.round, more=p.more,
                             preds=[p.preds[i].decode() for i in range(p.npreds)],
                             rows=[p.rows[i] for i in range(p.npreds)])
                else:
                    r.update(input=(p.input or b"").decode(), path=(p.path or b"").decode(),
                             phase=(p.phase or b"").decode(), bytes_done=p.bytes_done, bytes_total=p.bytes_total)
                try:
                    progress(r)
                except Exception as e:  # raised again after the run: never through C
                    errors.append(e)
            o.progress = _ProgressFn(relay)  # alive through o for the call
        h = c_void_p()
        self._check(rf_run(self._h, program._h, ctypes.byref(o), ctypes.byref(h)))
        result = Result(h, _diags(rf_database_diag_count, rf_database_diag, self._h))
        if errors:
            raise errors[0]
        return result


    def exec(self, program, batch=None, device="auto", threads=0, settings=None, cache_dir=None, init=False,
             recompute=False, profile=False, incremental=False):
        """One transaction over this redfox database (`redfox exec`): batch (a
        Batch; None: no updates) applied to program's base predicates, all or
        nothing; its derived predicates, stored in the database, brought up to
        date (incrementally where the program allows); the new state
        committed. Returns the program's outputs after it, a Result whose
        .transaction says what was done. init / recompute: recompute every
        derived predicate instead. incremental: maintain them incrementally
        whatever the batch's size (`--incremental`; by default a batch changing
        more than an eighth of the stored base rows recomputes what diffs keep).
        profile: Result.transaction.profile holds `redfox exec --profile`'s
        lines.""" 
        if rf_api_level() < 4:
            raise Error(2, "redfox: the library is older than API level 4 (no transactions)")
        if isinstance(program, str):
            program = compile(program)
        o = _ExecOptions()
        rf_exec_options_init(ctypes.byref(o), ctypes.sizeof(o))
        if device not in _DEVICES:
            raise Error(2, "redfox: unknown device %r (auto, cpu or gpu)" % (device,))
        o.device = _DEVICES[device]
        o.threads = _option("threads", threads, *_C_INT)
        o.init = 1 if init else 0
        o.recompute = 1 if recompute else 0
        o.incremental = 1 if incremental else 0
        o.profile = 1 if profile else 0
        if settings:
            o.settings = ",".join("%s=%s" % kv for kv in settings.items()).encode() \
                if isinstance(settings, dict) else settings.encode()
        if cache_dir is not None:
            o.cache_dir = os.fsencode(cache_dir)
        h = c_void_p()
        if batch is not None and not isinstance(batch, Batch):
            raise Error(2, "redfox: batch is a Batch (or None), not a %s" % type(batch).__name__)
        self._check(rf_exec(self._h, program._h, batch._open() if batch is not None else None, ctypes.byref(o),
                            ctypes.byref(h)))
        return Result(h, _diags(rf_database_diag_count, rf_database_diag, self._h))


# ---- results --------------------------------------------------------------------

class Result:
    """The outputs of one run: result["name"] or result[0] is a Relation."""

    def __init__(self, handle, diagnostics=()):
        self._h = handle
        self.diagnostics = list(diagnostics)
        self.device = rf_result_device(handle).decode()
        self.load_seconds = rf_result_load_seconds(handle)
        self.run_seconds = rf_result_run_seconds(handle)
        self._rels = [Relation(self, i) for i in range(rf_result_count(handle))]
        self.transaction = None  # Database.exec's: what the transaction did
        if rf_api_level() >= 4 and (rf_result_exec_incremental(handle) or rf_result_exec_why(handle)):
            derived = []
            for i in range(rf_result_exec_derived_count(handle)):
                before, after, stored = c_int64(), c_int64(), c_char_p()
                name = rf_result_exec_derived(handle, i, ctypes.byref(before), ctypes.byref(after), ctypes.byref(stored))
                derived.append((name.decode(), before.value, after.value, (stored.value or b"").decode() or None))
            why, prof = rf_result_exec_why(handle), rf_result_exec_profile(handle)
            self.transaction = Transaction(bool(rf_result_exec_incremental(handle)), why.decode() if why else None,
                                           rf_result_exec_inserted(handle), rf_result_exec_deleted(handle), derived,
                                           prof.decode() if prof else None)

    def __del__(self, _free=rf_result_free):
        if getattr(self, "_h", None):
            _free(self._h)
            self._h = None

    def names(self):
        return [r.name for r in self._rels]

    def stats(self):
        """The run's figures (rf_result_stats) as a dict: device, gpu_fell_back,
        rank, nranks, load_seconds, run_seconds, the load's phases (device_,
        program_, read_, copy_, output_seconds), input_rows, input_bytes,
        kernel_bytes_in/out (-1 unless run with profile=True), and the GPU's
        copies, peak memory and input cache (docs/API.md)."""
        s = _RunStats()
        s.size = ctypes.sizeof(s)
        code = rf_result_stats(self._h, ctypes.byref(s))
        if code:
            raise Error(code, "redfox: cannot read the run's figures")
        out = {}
        for name, _ in _RunStats._fields_[1:]:
            if _RunStats.__dict__[name].offset + _RunStats.__dict__[name].size > s.size:
                break  # an older library: fields it does not know
            v = getattr(s, name)
            out[name] = v.decode() if isinstance(v, bytes) else bool(v) if name == "gpu_fell_back" else v
        return out

    def profile_text(self):
        """The profile as `redfox run --profile` prints it (run with profile=True
        for the kernel table)."""
        buf, size = c_void_p(), c_size_t()
        f = _libc.open_memstream(ctypes.byref(buf), ctypes.byref(size))
        if not f:
            raise Error(4, "redfox: out of memory")
        code = rf_result_profile_write(self._h, f)
        _libc.fclose(f)
        try:
            text = ctypes.string_at(buf, size.value).decode()
        finally:
            _libc.free(buf)
        if code:
            raise Error(code, "redfox: cannot write the profile")
        return text

    def __len__(self):
        return len(self._rels)

    def __iter__(self):
        return iter(self._rels)

    def __getitem__(self, key):
        if isinstance(key, int):
            return self._rels[key]
        for r in self._rels:
            if r.name == key:
                return r
        raise KeyError(key)


class Relation:
    """One output relation; keeps its Result alive."""

    def __init__(self, result, index):
        self._result, self._i = result, index
        h = result._h
        self.name = rf_result_name(h, index).decode()
        n = rf_result_columns(h, index)
        self.columns = [rf_result_column_name(h, index, c).decode() for c in range(n)]
        self.types = [TYPES[rf_result_column_type(h, index, c)] for c in range(n)]

    def __len__(self):
        return rf_result_rows(self._result._h, self._i)

    def column(self, c):
        """Column c (index or name) as a list of Python values."""
        if isinstance(c, str):
            c = self.columns.index(c)
        c = operator.index(c)
        if c < 0:  # from the end, as a list's index (it reached the library as -1: a bare TypeError)
            c += len(self.columns)
        if not 0 <= c < len(self.columns):
            raise IndexError("redfox: %s has no column %d (%d columns)" % (self.name, c, len(self.columns)))
        h, i, n = self._result._h, self._i, len(self)
        if n == 0:
            return []
        ptr = rf_result_column_data(h, i, c)
        t = self.types[c]
        if t == "int":
            return list((c_int64 * n).from_address(ptr))
        if t == "float":
            return list((c_double * n).from_address(ptr))
        if t == "decimal":
            return [decimal.Decimal(v).scaleb(-6, _EXACT) for v in (c_int64 * n).from_address(ptr)]
        if t == "decimal128":  # a total of decimals: 16 bytes, two's complement, little-endian
            raw = bytes((ctypes.c_ubyte * (16 * n)).from_address(ptr))
            return [decimal.Decimal(int.from_bytes(raw[16 * k:16 * k + 16], "little", signed=True)).scaleb(-6, _EXACT)
                    for k in range(n)]
        if t == "boolean":
            return [bool(v) for v in (ctypes.c_uint8 * n).from_address(ptr)]
        if t == "date":
            return [_EPOCH + datetime.timedelta(days=v) for v in (c_int32 * n).from_address(ptr)]
        strings, out, ln = {}, [], c_int64()
        for code in (c_uint32 * n).from_address(ptr):
            s = strings.get(code)
            if s is None:
                p = rf_result_string_code(h, code, ctypes.byref(ln))
                s = strings[code] = ctypes.string_at(p, ln.value).decode()
            out.append(s)
        return out

    def rows(self):
        """The rows as a list of tuples, in the output's order."""
        return list(zip(*[self.column(c) for c in range(len(self.columns))])) if len(self) else []

    def __iter__(self):
        return iter(self.rows())

    def text(self, format="csv"):
        """The relation as `redfox run --format` prints it (csv, tbl or table)."""
        p, n = c_void_p(), c_int64()
        if format not in _FORMATS:
            raise Error(2, "redfox: unknown format %r (csv, tbl or table)" % (format,))
        code = rf_result_text(self._result._h, self._i, _FORMATS[format], ctypes.byref(p), ctypes.byref(n))
        if code:
            raise Error(code, "redfox: cannot render %s as %s" % (self.name, format))
        try:
            return ctypes.string_at(p, n.value).decode()
        finally:
            rf_free(p)

    def write(self, file, format="csv"):
        """Writes the relation to file as text() gives it, at the file's
        position: a binary file with a descriptor through rf_result_write
        (its FILE *), any other object with write() (a text file, in its
        own encoding and newlines; io.StringIO, io.BytesIO) through
        rf_result_write_to."""
        if format not in _FORMATS:
            raise Error(2, "redfox: unknown format %r (csv, tbl or table)" % (format,))
        binary = isinstance(file, (io.RawIOBase, io.BufferedIOBase)) or "b" in getattr(file, "mode", "")
        fd = None
        if binary:
            try:
                fd = file.fileno()
            except (AttributeError, OSError, ValueError):
                fd = None
        if fd is not None:
            file.flush()
            dup = os.dup(fd)
            # "w" (never "a": glibc's fdopen would set O_APPEND on the caller's
            # open file, so that its later writes went to the end after a seek)
            f = _libc.fdopen(dup, b"wb")
            if not f:
                os.close(dup)
                raise Error(5, "redfox: cannot write to %r" % (file,))
            code = rf_result_write(self._result._h, self._i, _FORMATS[format], f)
            if _libc.fclose(f) and not code:
                code = 5
            try:  # the file object goes on after what was written under it
                if file.seekable():
                    file.seek(os.lseek(fd, 0, os.SEEK_CUR))
            except (AttributeError, OSError, ValueError):
                pass
        else:
            utf8 = codecs.getincrementaldecoder("utf-8")()  # a piece may end inside a character

            def piece(_user, p, n):
                try:
                    b = ctypes.string_at(p, n)
                    file.write(b if binary else utf8.decode(b))
                    return 0
                except Exception:
                    return 1
            code = rf_result_write_to(self._result._h, self._i, _FORMATS[format], _WriteFn(piece), None)
        if code:
            raise Error(code, "redfox: cannot write %s as %s" % (self.name, format))

    def __arrow_c_array__(self, requested_schema=None):
        """(schema capsule, array capsule): the relation as an Arrow struct array."""
        sp, ap = _alloc(ArrowSchema), _alloc(ArrowArray)
        schema_cap = _capsule_new(sp, _SCHEMA_NAME, _destroy_schema)
        array_cap = _capsule_new(ap, _ARRAY_NAME, _destroy_array)
        code = rf_result_arrow(self._result._h, self._i, ctypes.cast(sp, POINTER(ArrowSchema)),
                               ctypes.cast(ap, POINTER(ArrowArray)))
        if code:
            raise Error(code, "redfox: cannot export %s to Arrow" % self.name)
        return schema_cap, array_cap

    def __arrow_c_stream__(self, requested_schema=None):
        """A stream capsule of one batch: the relation as an Arrow stream."""
        p = _alloc(ArrowArrayStream)
        cap = _capsule_new(p, _STREAM_NAME, _destroy_stream)
        code = rf_result_arrow_stream(self._result._h, self._i, ctypes.cast(p, POINTER(ArrowArrayStream)))
        if code:
            raise Error(code, "redfox: cannot export %s to Arrow" % self.name)
        return cap


def run(program, data=None, device="auto", **options):
    """Compiles (when text) and runs program over the folder data; returns
    {output name: list of tuples}."""
    with Database(data) as db:
        res = db.run(program, device=device, **options)
        return {r.name: r.rows() for r in res}
