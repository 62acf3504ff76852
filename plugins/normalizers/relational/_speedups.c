/*
 * The relational engine's per-value hot path, in C.
 *
 * Why: normalizing a GitHub event touches several hundred leaf values, and in Python each of
 * them costs a handful of dict operations and a branch on its type. Profiling the engine over
 * a 32 MB chunk put 85% of its time in two loops: flattening a source dict into a row
 * (`flatten`) and placing each value of the row into the table's column lists (`fill`). Both
 * are transliterations of the pure-Python reference (rows.py, row_typing.py), which stays the spec: the
 * engine's tests run every case through both and compare the output. Only the common case is
 * handled here; anything that needs a decision (a new column, a coercion, a variant, a
 * contract) is handed back to Python exactly where the Python loop would have handled it.
 *
 * Contracts (all arguments are exact dicts/lists/tuples as the Python engine builds them):
 *
 * flatten(prefix_names, name_of, data, prefix, depth, max_nesting, out, table_types, pending)
 *     rows.RowFlattener.flatten: source keys of `data` become columns of `out`; nested dicts
 *     are flattened after this level's own keys, last one first; lists go to `pending` as
 *     (parts, list, depth + 1). `name_of(names, prefix, key)` is called for a key not yet in
 *     `prefix_names[prefix]` and returns (parts, column).
 *
 * fill(raw, exact, columns, n, pos, seq) -> int | (pos, column, value, seq)
 *     row_typing.RowTyper.type_row's fast path over `raw` from dict position `pos`: a value
 *     whose Python type is `exact[column]` (ints within 64 bits) is placed in row `n` of the
 *     column's (rows, values) lists; None is skipped. The first other value is returned with
 *     the position to resume from and the visit counter `seq`; at the end, `seq` alone.
 *     `exact[column]` may also be ISO_TIMESTAMP_TEXT (a timestamp column): a str of the
 *     shape APIs emit, `YYYY-MM-DD[T ]HH:MM:SS[.fff|.ffffff][Z|+00:00|-00:00]`, is placed as
 *     the UTC datetime Python's coercion gives it; any other text is handed back.
 *
 * scatter(rows, values, n) -> list
 *     A sparse column (values at `rows`) as a row-long list with None elsewhere.
 *
 * text_buffers(rows, values, n) -> (validity | None, offsets, data) | None
 *     The three buffers of an Arrow `string` array of `n` rows holding the str `values` at
 *     `rows` (rows None: every row, in order) and nulls elsewhere: what pyarrow.array would
 *     build, without converting each value through pyarrow's generic object path. None when
 *     a value is not a str, cannot be encoded (a lone surrogate), or the data outgrows 32-bit
 *     offsets: the caller then asks pyarrow, which reports such values its own way.
 *
 * fixed_buffers(rows, values, n, kind) -> (validity | None, data) | None
 *     The two buffers of an Arrow array of `n` rows of a fixed-width `kind`: 0 int64 (exact
 *     ints within 64 bits), 1 float64 (exact floats), 2 bool (True/False, bit-packed), 3
 *     timestamp[us] of datetimes whose tzinfo is datetime.timezone.utc (what fill's ISO
 *     parse and Python's UTC coercion give). None for any other value: the caller asks
 *     pyarrow, whose generic per-object conversion was 4% of a chunk's CPU on GitHub events.
 *
 * scan_line(raw) -> (brackets, keys, digits19, marked)
 *     `raw`: bytes or any contiguous buffer (the engine passes memoryview slices of a chunk).
 *     json_lines.scan_line in one pass over a line's bytes instead of five: the count of `[` plus
 *     `{`, the count of `":`, whether a run of digits orjson may not keep exact is there (20
 *     or more, or 19 after a minus: has_19_digits), and whether
 *     the line holds extract's type mark (U+F8E0, UTF-8 EF A3 A0). Python's `bytes in bytes`
 *     took 6% of a chunk's CPU for that last check alone; memchr finds the rare 0xEF at memory
 *     speed.
 *
 * release_cells(columns)
 *     Empties each (rows, values) cell of a written table's buffer, freeing the values with
 *     the objects a few ahead fetched (dropping the lists freed them one cache miss at a time).
 *
 * new_row(width) -> dict
 *     An empty dict with room for `width` keys: a row as wide as its table's last one.
 *
 * keep_arenas(limit_bytes)
 *     From then on this process keeps up to `limit_bytes` of the arenas pymalloc frees, for
 *     its next ones (a pool worker's next chunk reuses resident pages; see worker_memory.py).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <datetime.h>
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "iso_text.h"

static int
is_json_type(PyObject *table_types, PyObject *column, int *result)
{
    *result = 0;
    if (table_types == Py_None) {
        return 0;
    }
    PyObject *declared = PyDict_GetItemWithError(table_types, column);
    if (declared == NULL) {
        return PyErr_Occurred() ? -1 : 0;
    }
    if (PyUnicode_Check(declared) && PyUnicode_CompareWithASCIIString(declared, "json") == 0) {
        *result = 1;
    }
    return 0;
}

static int
flatten_into(PyObject *prefix_names, PyObject *name_of, PyObject *data, PyObject *prefix,
             long depth, long max_nesting, PyObject *out, PyObject *table_types,
             PyObject *pending)
{
    if (!PyDict_Check(data)) {
        PyErr_SetString(PyExc_TypeError, "flatten: data must be a dict");
        return -1;
    }
    if (Py_EnterRecursiveCall(" while flattening a nested item")) {
        return -1;
    }
    int status = -1;
    PyObject *deferred = NULL;
    PyObject *names = PyDict_GetItemWithError(prefix_names, prefix);
    if (names == NULL) {
        if (PyErr_Occurred()) {
            goto done;
        }
        names = PyDict_New();
        if (names == NULL) {
            goto done;
        }
        if (PyDict_SetItem(prefix_names, prefix, names) < 0) {
            Py_DECREF(names);
            goto done;
        }
    }
    else {
        Py_INCREF(names);
    }
    const int expand = depth < max_nesting;
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    while (PyDict_Next(data, &pos, &key, &value)) {
        PyObject *entry = PyDict_GetItemWithError(names, key);
        PyObject *owned = NULL;
        if (entry == NULL) {
            if (PyErr_Occurred()) {
                goto fail;
            }
            owned = PyObject_CallFunctionObjArgs(name_of, names, prefix, key, NULL);
            if (owned == NULL) {
                goto fail;
            }
            entry = owned;
        }
        if (!PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) != 2) {
            Py_XDECREF(owned);
            PyErr_SetString(PyExc_TypeError, "flatten: a name entry must be (parts, column)");
            goto fail;
        }
        PyObject *parts = PyTuple_GET_ITEM(entry, 0);
        PyObject *column = PyTuple_GET_ITEM(entry, 1);
        PyTypeObject *kind = Py_TYPE(value);
        if (expand && (kind == &PyDict_Type || kind == &PyList_Type)) {
            int kept_whole;
            if (is_json_type(table_types, column, &kept_whole) < 0) {
                Py_XDECREF(owned);
                goto fail;
            }
            if (!kept_whole) {
                PyObject *item;
                if (kind == &PyDict_Type) {
                    if (deferred == NULL && (deferred = PyList_New(0)) == NULL) {
                        Py_XDECREF(owned);
                        goto fail;
                    }
                    item = PyTuple_Pack(2, value, parts);
                }
                else {
                    PyObject *next_depth = PyLong_FromLong(depth + 1);
                    item = next_depth ? PyTuple_Pack(3, parts, value, next_depth) : NULL;
                    Py_XDECREF(next_depth);
                }
                int appended = item ? PyList_Append(kind == &PyDict_Type ? deferred : pending, item)
                                    : -1;
                Py_XDECREF(item);
                Py_XDECREF(owned);
                if (appended < 0) {
                    goto fail;
                }
                continue;
            }
        }
        int stored = PyDict_SetItem(out, column, value);
        Py_XDECREF(owned);
        if (stored < 0) {
            goto fail;
        }
    }
    if (deferred != NULL) {
        for (Py_ssize_t i = PyList_GET_SIZE(deferred) - 1; i >= 0; i--) {
            PyObject *pair = PyList_GET_ITEM(deferred, i);
            if (flatten_into(prefix_names, name_of, PyTuple_GET_ITEM(pair, 0),
                             PyTuple_GET_ITEM(pair, 1), depth + 1, max_nesting, out,
                             table_types, pending) < 0) {
                goto fail;
            }
        }
    }
    status = 0;
fail:
    Py_XDECREF(deferred);
    Py_DECREF(names);
done:
    Py_LeaveRecursiveCall();
    return status;
}

static PyObject *
speedups_flatten(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 9) {
        PyErr_SetString(PyExc_TypeError, "flatten takes 9 arguments");
        return NULL;
    }
    PyObject *prefix_names = args[0], *name_of = args[1], *data = args[2], *prefix = args[3];
    PyObject *out = args[6], *table_types = args[7], *pending = args[8];
    if (!PyDict_Check(prefix_names) || !PyDict_Check(out) || !PyList_Check(pending) ||
        (table_types != Py_None && !PyDict_Check(table_types))) {
        PyErr_SetString(PyExc_TypeError, "flatten: prefix_names/out/table_types must be dicts, "
                                         "pending a list");
        return NULL;
    }
    long depth = PyLong_AsLong(args[4]);
    if (depth == -1 && PyErr_Occurred()) {
        return NULL;
    }
    long max_nesting = PyLong_AsLong(args[5]);
    if (max_nesting == -1 && PyErr_Occurred()) {
        return NULL;
    }
    if (flatten_into(prefix_names, name_of, data, prefix, depth, max_nesting, out, table_types,
                     pending) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

/* the sentinel of timestamp columns in `exact` (no Python type matches it) */
static PyObject *iso_timestamp_text = NULL;

/* The UTC datetime of an ISO timestamp in the common shape, or NULL (no error set) for any
 * other text: data_types.parse_iso_timestamp decides those. */
static PyObject *
common_iso_timestamp(PyObject *value)
{
    if (!PyUnicode_IS_ASCII(value)) {
        return NULL;
    }
    int f[7];
    if (!iso_common_fields((const char *)PyUnicode_DATA(value),
                           (size_t)PyUnicode_GET_LENGTH(value), f)) {
        return NULL;
    }
    PyObject *moment = PyDateTimeAPI->DateTime_FromDateAndTime(
        f[0], f[1], f[2], f[3], f[4], f[5], f[6], PyDateTime_TimeZone_UTC,
        PyDateTimeAPI->DateTimeType);
    if (moment == NULL) {
        PyErr_Clear(); /* an impossible date: Python's parser says what it is */
    }
    return moment;
}

/* table_buffers.put: place `value` in row `n` of `column` (a later value wins). */
static int
put_value(PyObject *columns, PyObject *column, Py_ssize_t n, PyObject *n_obj, PyObject *value)
{
    PyObject *cell = PyDict_GetItemWithError(columns, column);
    if (cell == NULL) {
        if (PyErr_Occurred()) {
            return -1;
        }
        PyObject *rows = PyList_New(1);
        PyObject *values = PyList_New(1);
        if (rows == NULL || values == NULL) {
            Py_XDECREF(rows);
            Py_XDECREF(values);
            return -1;
        }
        Py_INCREF(n_obj);
        PyList_SET_ITEM(rows, 0, n_obj);
        Py_INCREF(value);
        PyList_SET_ITEM(values, 0, value);
        PyObject *pair = PyTuple_Pack(2, rows, values);
        Py_DECREF(rows);
        Py_DECREF(values);
        if (pair == NULL) {
            return -1;
        }
        int stored = PyDict_SetItem(columns, column, pair);
        Py_DECREF(pair);
        return stored;
    }
    if (!PyTuple_Check(cell) || PyTuple_GET_SIZE(cell) != 2) {
        PyErr_SetString(PyExc_TypeError, "fill: a column cell must be (rows, values)");
        return -1;
    }
    PyObject *rows = PyTuple_GET_ITEM(cell, 0);
    PyObject *values = PyTuple_GET_ITEM(cell, 1);
    if (!PyList_Check(rows) || !PyList_Check(values)) {
        PyErr_SetString(PyExc_TypeError, "fill: a column cell must hold two lists");
        return -1;
    }
    Py_ssize_t count = PyList_GET_SIZE(rows);
    if (count > 0) {
        Py_ssize_t last = PyLong_AsSsize_t(PyList_GET_ITEM(rows, count - 1));
        if (last == -1 && PyErr_Occurred()) {
            return -1;
        }
        if (last == n) {
            Py_ssize_t at = PyList_GET_SIZE(values) - 1;
            Py_INCREF(value);
            return PyList_SetItem(values, at, value);
        }
    }
    if (PyList_Append(rows, n_obj) < 0) {
        return -1;
    }
    return PyList_Append(values, value);
}

static PyObject *
speedups_fill(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError, "fill takes 6 arguments");
        return NULL;
    }
    PyObject *raw = args[0], *exact = args[1], *columns = args[2], *n_obj = args[3];
    if (!PyDict_Check(raw) || !PyDict_Check(exact) || !PyDict_Check(columns)) {
        PyErr_SetString(PyExc_TypeError, "fill: raw, exact and columns must be dicts");
        return NULL;
    }
    Py_ssize_t n = PyLong_AsSsize_t(n_obj);
    if (n == -1 && PyErr_Occurred()) {
        return NULL;
    }
    Py_ssize_t pos = PyLong_AsSsize_t(args[4]);
    if (pos == -1 && PyErr_Occurred()) {
        return NULL;
    }
    long long seq = PyLong_AsLongLong(args[5]);
    if (seq == -1 && PyErr_Occurred()) {
        return NULL;
    }
    PyObject *column, *value;
    while (PyDict_Next(raw, &pos, &column, &value)) {
        seq++;
        PyTypeObject *kind = Py_TYPE(value);
        PyObject *expected = PyDict_GetItemWithError(exact, column);
        if (expected == NULL && PyErr_Occurred()) {
            return NULL;
        }
        if (expected == (PyObject *)kind) {
            int fits = 1;
            if (kind == &PyLong_Type) {
                int overflow = 0;
                long long as_int = PyLong_AsLongLongAndOverflow(value, &overflow);
                if (as_int == -1 && !overflow && PyErr_Occurred()) {
                    return NULL;
                }
                fits = !overflow;
            }
            if (fits) {
                if (put_value(columns, column, n, n_obj, value) < 0) {
                    return NULL;
                }
                continue;
            }
        }
        else if (value == Py_None) {
            continue;
        }
        else if (expected == iso_timestamp_text && kind == &PyUnicode_Type) {
            PyObject *moment = common_iso_timestamp(value);
            if (moment != NULL) {
                int placed = put_value(columns, column, n, n_obj, moment);
                Py_DECREF(moment);
                if (placed < 0) {
                    return NULL;
                }
                continue;
            }
        }
        return Py_BuildValue("(nOOL)", pos, column, value, seq);
    }
    return PyLong_FromLongLong(seq);
}

static PyObject *
speedups_scatter(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "scatter takes 3 arguments");
        return NULL;
    }
    PyObject *rows = args[0], *values = args[1];
    if (!PyList_Check(rows) || !PyList_Check(values) ||
        PyList_GET_SIZE(rows) != PyList_GET_SIZE(values)) {
        PyErr_SetString(PyExc_TypeError, "scatter: rows and values must be lists of one length");
        return NULL;
    }
    Py_ssize_t n = PyLong_AsSsize_t(args[2]);
    if (n == -1 && PyErr_Occurred()) {
        return NULL;
    }
    if (n < 0) {
        PyErr_SetString(PyExc_ValueError, "scatter: n must not be negative");
        return NULL;
    }
    PyObject *full = PyList_New(n);
    if (full == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_INCREF(Py_None);
        PyList_SET_ITEM(full, i, Py_None);
    }
    Py_ssize_t count = PyList_GET_SIZE(rows);
    for (Py_ssize_t i = 0; i < count; i++) {
        Py_ssize_t row = PyLong_AsSsize_t(PyList_GET_ITEM(rows, i));
        if (row == -1 && PyErr_Occurred()) {
            Py_DECREF(full);
            return NULL;
        }
        if (row < 0 || row >= n) {
            Py_DECREF(full);
            PyErr_Format(PyExc_IndexError, "scatter: row %zd outside 0..%zd", row, n - 1);
            return NULL;
        }
        PyObject *value = PyList_GET_ITEM(values, i);
        Py_INCREF(value);
        PyList_SetItem(full, row, value);
    }
    return full;
}

/* The arguments every *_buffers function takes: `rows` (None: every row, in order) and
   `values` of one length, `n` rows in all. Sets *n and *count; -1 with an exception. */
static int
sparse_cells(const char *name, PyObject *rows, PyObject *values, PyObject *n_obj,
             Py_ssize_t *n, Py_ssize_t *count)
{
    if (!PyList_Check(values) || (rows != Py_None && (!PyList_Check(rows) ||
                                                      PyList_GET_SIZE(rows) !=
                                                          PyList_GET_SIZE(values)))) {
        PyErr_Format(PyExc_TypeError, "%s: rows (or None) and values must be lists of one length",
                     name);
        return -1;
    }
    *n = PyLong_AsSsize_t(n_obj);
    if (*n == -1 && PyErr_Occurred()) {
        return -1;
    }
    *count = PyList_GET_SIZE(values);
    if (*n < 0 || (rows == Py_None && *count != *n) || *count > *n) {
        PyErr_Format(PyExc_ValueError, "%s: n does not match the values", name);
        return -1;
    }
    return 0;
}

/* An all-null validity bitmap of n rows when some rows are null (count < n), else None in
   *validity; 0, or -1 with an exception */
static int
new_validity(Py_ssize_t count, Py_ssize_t n, PyObject **validity, uint8_t **bits)
{
    *validity = NULL;
    *bits = NULL;
    if (count >= n) {
        return 0;
    }
    *validity = PyBytes_FromStringAndSize(NULL, (n + 7) / 8);
    if (*validity == NULL) {
        return -1;
    }
    *bits = (uint8_t *)PyBytes_AS_STRING(*validity);
    memset(*bits, 0, (size_t)((n + 7) / 8));
    return 0;
}

/* The row of the i-th value: i itself, or rows[i], which must ascend past *next within n;
   -1 with an exception */
static Py_ssize_t
row_of(const char *name, PyObject *rows, Py_ssize_t i, Py_ssize_t next, Py_ssize_t n)
{
    if (rows == Py_None) {
        return i;
    }
    Py_ssize_t row = PyLong_AsSsize_t(PyList_GET_ITEM(rows, i));
    if (row == -1 && PyErr_Occurred()) {
        return -1;
    }
    if (row < next || row >= n) {
        PyErr_Format(PyExc_ValueError, "%s: rows must ascend within 0..%zd", name, n - 1);
        return -1;
    }
    return row;
}

/* how many values ahead text_buffers fetches a string object into the cache */
#define TEXT_PREFETCH 8

static PyObject *
speedups_text_buffers(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "text_buffers takes 3 arguments");
        return NULL;
    }
    PyObject *rows = args[0], *values = args[1];
    Py_ssize_t n, count;
    if (sparse_cells("text_buffers", rows, values, args[2], &n, &count) < 0) {
        return NULL;
    }
    /* one pass: each string is visited once (a second, sizing pass missed the cache on every
       string again); the data grows by doubling, and the objects a few values ahead are
       fetched while this one is copied */
    PyObject *result = NULL;
    PyObject *offsets = PyBytes_FromStringAndSize(NULL, (n + 1) * (Py_ssize_t)sizeof(int32_t));
    PyObject *data = PyByteArray_FromStringAndSize(NULL, count * 16 + 64);
    PyObject *validity = NULL;
    uint8_t *bits = NULL;
    if (offsets == NULL || data == NULL || new_validity(count, n, &validity, &bits) < 0) {
        goto fail;
    }
    int32_t *offset = (int32_t *)PyBytes_AS_STRING(offsets);
    Py_ssize_t capacity = PyByteArray_GET_SIZE(data);
    char *out = PyByteArray_AS_STRING(data);
    Py_ssize_t at = 0;
    Py_ssize_t next = 0; /* the next row to write an offset for */
    for (Py_ssize_t i = 0; i < count; i++) {
        if (i + TEXT_PREFETCH < count) {
            /* the object's first 256 bytes: its header and the text of most values of API
               data (URLs, names, dates); a prefetch past an object's end never faults.
               Measured against the first 64 bytes only: worker CPU 7.73-7.88 -> 7.51-7.54 s */
            const char *ahead = (const char *)PyList_GET_ITEM(values, i + TEXT_PREFETCH);
            __builtin_prefetch(ahead);
            __builtin_prefetch(ahead + 64);
            __builtin_prefetch(ahead + 128);
            __builtin_prefetch(ahead + 192);
        }
        PyObject *value = PyList_GET_ITEM(values, i);
        Py_ssize_t size;
        const char *text = PyUnicode_CheckExact(value) ? PyUnicode_AsUTF8AndSize(value, &size)
                                                       : NULL;
        if (text == NULL || at + size > INT32_MAX) { /* not all text: pyarrow's to convert */
            PyErr_Clear();
            goto not_text;
        }
        Py_ssize_t row = row_of("text_buffers", rows, i, next, n);
        if (row < 0) {
            goto fail;
        }
        while (next < row) { /* null rows before this one: empty slots */
            offset[next++] = (int32_t)at;
        }
        if (at + size > capacity) {
            capacity = at + size > 2 * capacity ? at + size : 2 * capacity;
            if (PyByteArray_Resize(data, capacity) < 0) {
                goto fail;
            }
            out = PyByteArray_AS_STRING(data);
        }
        offset[next++] = (int32_t)at;
        memcpy(out + at, text, (size_t)size);
        at += size;
        if (bits != NULL) {
            bits[row >> 3] |= (uint8_t)(1u << (row & 7));
        }
    }
    while (next <= n) {
        offset[next++] = (int32_t)at;
    }
    if (PyByteArray_Resize(data, at) < 0) {
        goto fail;
    }
    result = PyTuple_Pack(3, validity ? validity : Py_None, offsets, data);
    goto done;
not_text:
    result = Py_NewRef(Py_None);
done:
fail: /* result stays NULL: the exception is set */
    Py_XDECREF(validity);
    Py_XDECREF(offsets);
    Py_XDECREF(data);
    return result;
}

/* one value of a fixed-width kind into slot `row` of `out`; 0 placed, 1 not this kind */
static int
put_fixed(PyObject *value, int kind, char *out, Py_ssize_t row)
{
    switch (kind) {
    case 0: {
        if (!PyLong_CheckExact(value)) {
            return 1;
        }
        int overflow = 0;
        long long number = PyLong_AsLongLongAndOverflow(value, &overflow);
        if (overflow || (number == -1 && PyErr_Occurred())) {
            PyErr_Clear();
            return 1;
        }
        int64_t wide = (int64_t)number;
        memcpy(out + row * 8, &wide, 8);
        return 0;
    }
    case 1: {
        if (!PyFloat_CheckExact(value)) {
            return 1;
        }
        double real = PyFloat_AS_DOUBLE(value);
        memcpy(out + row * 8, &real, 8);
        return 0;
    }
    case 2:
        if (value == Py_True) {
            ((uint8_t *)out)[row >> 3] |= (uint8_t)(1u << (row & 7));
            return 0;
        }
        return value == Py_False ? 0 : 1;
    default: {
        if (!PyDateTime_CheckExact(value) || !_PyDateTime_HAS_TZINFO(value) ||
            PyDateTime_DATE_GET_TZINFO(value) != PyDateTime_TimeZone_UTC) {
            return 1;
        }
        long long days = iso_days_from_civil(PyDateTime_GET_YEAR(value),
                                         (unsigned)PyDateTime_GET_MONTH(value),
                                         (unsigned)PyDateTime_GET_DAY(value));
        int64_t micros = (int64_t)((((days * 24 + PyDateTime_DATE_GET_HOUR(value)) * 60 +
                                     PyDateTime_DATE_GET_MINUTE(value)) * 60 +
                                    PyDateTime_DATE_GET_SECOND(value)) * 1000000LL +
                                   PyDateTime_DATE_GET_MICROSECOND(value));
        memcpy(out + row * 8, &micros, 8);
        return 0;
    }
    }
}

static PyObject *
speedups_fixed_buffers(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "fixed_buffers takes 4 arguments");
        return NULL;
    }
    PyObject *rows = args[0], *values = args[1];
    Py_ssize_t n, count;
    if (sparse_cells("fixed_buffers", rows, values, args[2], &n, &count) < 0) {
        return NULL;
    }
    long kind = PyLong_AsLong(args[3]);
    if (kind == -1 && PyErr_Occurred()) {
        return NULL;
    }
    if (kind < 0 || kind > 3) {
        PyErr_SetString(PyExc_ValueError, "fixed_buffers: kind must be 0 to 3");
        return NULL;
    }
    Py_ssize_t size = kind == 2 ? (n + 7) / 8 : n * 8;
    PyObject *data = PyBytes_FromStringAndSize(NULL, size);
    PyObject *validity = NULL;
    uint8_t *bits = NULL;
    if (data == NULL || new_validity(count, n, &validity, &bits) < 0) {
        goto fail;
    }
    char *out = PyBytes_AS_STRING(data);
    memset(out, 0, (size_t)size); /* null slots hold zeros, as pyarrow writes them */
    Py_ssize_t next = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        Py_ssize_t row = row_of("fixed_buffers", rows, i, next, n);
        if (row < 0) {
            goto fail;
        }
        next = row + 1;
        if (put_fixed(PyList_GET_ITEM(values, i), (int)kind, out, row)) {
            Py_XDECREF(validity);
            Py_DECREF(data);
            Py_RETURN_NONE;
        }
        if (bits != NULL) {
            bits[row >> 3] |= (uint8_t)(1u << (row & 7));
        }
    }
    PyObject *result = PyTuple_Pack(2, validity ? validity : Py_None, data);
    Py_XDECREF(validity);
    Py_DECREF(data);
    return result;
fail:
    Py_XDECREF(validity);
    Py_XDECREF(data);
    return NULL;
}

/* `[` and `{` (brackets), and `":` pairs (keys: a `:` right after a `"`), in one pass of
   16-byte compares (SSE2, in every x86-64): memchr per hit was slower on API data, where these
   bytes are frequent. Byte-wide counters take at most 255 blocks before they are summed. */
static void
count_structure(const unsigned char *start, Py_ssize_t size, Py_ssize_t *brackets,
                Py_ssize_t *keys)
{
    Py_ssize_t open = 0, pairs = 0, i = 0;
#if defined(__SSE2__)
    const __m128i square = _mm_set1_epi8('['), curly = _mm_set1_epi8('{');
    const __m128i colon = _mm_set1_epi8(':'), quote = _mm_set1_epi8('"');
    const __m128i zero = _mm_setzero_si128();
    i = 1; /* a block's previous bytes are one to its left */
    while (i + 16 <= size) {
        __m128i open_acc = zero, pair_acc = zero;
        for (int block = 0; block < 255 && i + 16 <= size; block++, i += 16) {
            __m128i here = _mm_loadu_si128((const __m128i *)(start + i));
            __m128i before = _mm_loadu_si128((const __m128i *)(start + i - 1));
            __m128i is_open = _mm_or_si128(_mm_cmpeq_epi8(here, square), _mm_cmpeq_epi8(here, curly));
            __m128i is_pair = _mm_and_si128(_mm_cmpeq_epi8(here, colon), _mm_cmpeq_epi8(before, quote));
            open_acc = _mm_sub_epi8(open_acc, is_open); /* a match is -1 */
            pair_acc = _mm_sub_epi8(pair_acc, is_pair);
        }
        __m128i open_sum = _mm_sad_epu8(open_acc, zero), pair_sum = _mm_sad_epu8(pair_acc, zero);
        open += _mm_cvtsi128_si32(open_sum) + _mm_extract_epi16(open_sum, 4);
        pairs += _mm_cvtsi128_si32(pair_sum) + _mm_extract_epi16(pair_sum, 4);
    }
    if (size > 0) { /* byte 0, which no block covered */
        open += start[0] == '[' || start[0] == '{';
    }
#endif
    for (; i < size; i++) {
        open += start[i] == '[' || start[i] == '{';
        pairs += i > 0 && start[i] == ':' && start[i - 1] == '"';
    }
    *brackets = open;
    *keys = pairs;
}

/* a digit run orjson may not keep exact: 20 or more digits, or 19 after a minus (orjson is
   exact from -2^63 to 2^64 - 1, and every 19-digit number below 10^19 is within that). Any
   run of 19 or more holds a position that is a multiple of 19, so only those are looked at,
   and a digit there is measured both ways */
static int
has_19_digits(const char *start, const char *end)
{
    Py_ssize_t size = end - start;
    for (Py_ssize_t i = 18; i < size; i += 19) {
        if (start[i] < '0' || start[i] > '9') {
            continue;
        }
        Py_ssize_t left = i, right = i;
        while (left > 0 && start[left - 1] >= '0' && start[left - 1] <= '9') {
            left--;
        }
        while (right + 1 < size && start[right + 1] >= '0' && start[right + 1] <= '9') {
            right++;
        }
        Py_ssize_t run = right - left + 1;
        if (run >= 20 || (run == 19 && left > 0 && start[left - 1] == '-')) {
            return 1;
        }
    }
    return 0;
}

/* extract's type mark U+F8E0 as UTF-8: EF A3 A0 */
static int
has_mark(const char *p, const char *end)
{
    while ((p = memchr(p, '\xef', (size_t)(end - p))) != NULL) {
        if (end - p >= 3 && p[1] == '\xa3' && p[2] == '\xa0') {
            return 1;
        }
        p++;
    }
    return 0;
}

static PyObject *
speedups_scan_line(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 1) {
        PyErr_SetString(PyExc_TypeError, "scan_line(raw: bytes | memoryview)");
        return NULL;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0) {
        return NULL;
    }
    const char *start = view.buf;
    const char *end = start + view.len;
    Py_ssize_t brackets, keys;
    count_structure((const unsigned char *)start, end - start, &brackets, &keys);
    int digits19 = has_19_digits(start, end);
    int marked = has_mark(start, end);
    PyBuffer_Release(&view);
    return Py_BuildValue("(nnOO)", brackets, keys, digits19 ? Py_True : Py_False,
                         marked ? Py_True : Py_False);
}

/* a dict with room for `width` keys: a row about as wide as its table's last one is filled
   without the resizes (each a rehash of every key so far) a dict growing from empty takes */
static PyObject *
speedups_new_row(PyObject *module, PyObject *arg)
{
    Py_ssize_t width = PyLong_AsSsize_t(arg);
    if (width == -1 && PyErr_Occurred()) {
        return NULL;
    }
    return _PyDict_NewPresized(width < 0 ? 0 : width);
}

/* --- freeing a flushed table's values ------------------------------------------------
   Dropping a column list decrefs its values one after another, each a pointer to an object
   not in the cache; freeing them here fetches the objects a few values ahead. */

#define RELEASE_PREFETCH 8

static void
clear_list(PyObject *list)
{
    PyListObject *self = (PyListObject *)list;
    Py_ssize_t size = Py_SIZE(self);
    PyObject **items = self->ob_item;
    if (items == NULL) {
        return;
    }
    /* the list is empty before any value is freed, as list.clear() leaves it */
    self->ob_item = NULL;
    Py_SET_SIZE(self, 0);
    self->allocated = 0;
    for (Py_ssize_t i = 0; i < size; i++) {
        if (i + RELEASE_PREFETCH < size) {
            __builtin_prefetch(items[i + RELEASE_PREFETCH]);
        }
        Py_XDECREF(items[i]);
    }
    PyMem_Free(items);
}

static PyObject *
speedups_release_cells(PyObject *module, PyObject *columns)
{
    if (!PyDict_Check(columns)) {
        PyErr_SetString(PyExc_TypeError, "release_cells(columns: dict)");
        return NULL;
    }
    PyObject *key, *cell;
    Py_ssize_t pos = 0;
    while (PyDict_Next(columns, &pos, &key, &cell)) {
        if (!PyTuple_Check(cell)) {
            continue;
        }
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(cell); i++) {
            PyObject *part = PyTuple_GET_ITEM(cell, i);
            if (PyList_CheckExact(part)) {
                clear_list(part);
            }
        }
    }
    Py_RETURN_NONE;
}

/* --- a cache of pymalloc's arenas ------------------------------------------------------
   A chunk's Python objects (parsed dicts, their strings, the column lists) take several
   times the chunk's bytes; pymalloc frees an arena to the system as soon as it is empty and
   maps a fresh one for the next chunk, whose every page then faults in again (zeroed by the
   kernel). Kept arenas are reused as they are: same size, already resident. */

static struct {
    PyObjectArenaAllocator system; /* the allocator that was in place: maps and unmaps */
    void **kept;
    size_t count;
    size_t slots;
    size_t limit; /* bytes kept at most */
    size_t size;  /* pymalloc's arena size, learnt from the first free */
} arenas;

static void *
kept_arena_alloc(void *ctx, size_t size)
{
    (void)ctx;
    if (arenas.count > 0 && size == arenas.size) {
        return arenas.kept[--arenas.count];
    }
    return arenas.system.alloc(arenas.system.ctx, size);
}

static void
kept_arena_free(void *ctx, void *ptr, size_t size)
{
    (void)ctx;
    if (arenas.size == 0) {
        arenas.size = size;
    }
    if (size == arenas.size && arenas.count < arenas.slots &&
        (arenas.count + 1) * size <= arenas.limit) {
        arenas.kept[arenas.count++] = ptr;
        return;
    }
    arenas.system.free(arenas.system.ctx, ptr, size);
}

static PyObject *
speedups_keep_arenas(PyObject *module, PyObject *arg)
{
    size_t limit = PyLong_AsSize_t(arg);
    if (limit == (size_t)-1 && PyErr_Occurred()) {
        return NULL;
    }
    if (arenas.kept != NULL) { /* installed already: only the limit changes */
        arenas.limit = limit;
        Py_RETURN_NONE;
    }
    /* one slot per 256 KiB, the smallest arena pymalloc has used */
    size_t slots = limit / (256 * 1024) + 1;
    arenas.kept = PyMem_RawCalloc(slots, sizeof(void *));
    if (arenas.kept == NULL) {
        return PyErr_NoMemory();
    }
    arenas.slots = slots;
    arenas.limit = limit;
    PyObject_GetArenaAllocator(&arenas.system);
    PyObjectArenaAllocator kept = {NULL, kept_arena_alloc, kept_arena_free};
    PyObject_SetArenaAllocator(&kept);
    Py_RETURN_NONE;
}

static PyMethodDef speedups_methods[] = {
    {"new_row", (PyCFunction)speedups_new_row, METH_O,
     "new_row(width) -> dict: an empty dict with room for width keys"},
    {"release_cells", (PyCFunction)speedups_release_cells, METH_O,
     "release_cells(columns): empty each cell's lists, freeing their values (a flushed table)"},
    {"keep_arenas", (PyCFunction)speedups_keep_arenas, METH_O,
     "keep_arenas(limit_bytes): keep up to limit_bytes of freed pymalloc arenas for reuse "
     "(this process, from now on)"},
    {"fixed_buffers", (PyCFunction)(void (*)(void))speedups_fixed_buffers, METH_FASTCALL,
     "fixed_buffers(rows, values, n, kind) -> (validity, data) | None: Arrow buffers of an "
     "int64, float64, bool or UTC timestamp[us] column"},
    {"scan_line", (PyCFunction)(void (*)(void))speedups_scan_line, METH_FASTCALL,
     "scan_line(raw) -> (brackets, keys, digits19, marked): json_lines.scan_line in one pass"},
    {"flatten", (PyCFunction)(void (*)(void))speedups_flatten, METH_FASTCALL,
     "flatten(prefix_names, name_of, data, prefix, depth, max_nesting, out, table_types, "
     "pending): rows.RowFlattener.flatten"},
    {"fill", (PyCFunction)(void (*)(void))speedups_fill, METH_FASTCALL,
     "fill(raw, exact, columns, n, pos, seq) -> seq | (pos, column, value, seq): the fast "
     "path of row_typing.RowTyper.type_row"},
    {"scatter", (PyCFunction)(void (*)(void))speedups_scatter, METH_FASTCALL,
     "scatter(rows, values, n) -> list: a sparse column as a row-long list"},
    {"text_buffers", (PyCFunction)(void (*)(void))speedups_text_buffers, METH_FASTCALL,
     "text_buffers(rows, values, n) -> (validity, offsets, data) | None: Arrow string "
     "buffers of a column"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef speedups_module = {
    PyModuleDef_HEAD_INIT,
    "_speedups",
    "The relational engine's per-value hot path in C (see rows.py and row_typing.py for the reference).",
    -1,
    speedups_methods,
};

PyMODINIT_FUNC
PyInit__speedups(void)
{
    PyDateTime_IMPORT;
    if (PyDateTimeAPI == NULL) {
        return NULL;
    }
    PyObject *module = PyModule_Create(&speedups_module);
    if (module == NULL) {
        return NULL;
    }
    if (iso_timestamp_text == NULL) {
        iso_timestamp_text = PyObject_CallNoArgs((PyObject *)&PyBaseObject_Type);
        if (iso_timestamp_text == NULL) {
            Py_DECREF(module);
            return NULL;
        }
    }
    Py_INCREF(iso_timestamp_text);
    if (PyModule_AddObject(module, "ISO_TIMESTAMP_TEXT", iso_timestamp_text) < 0) {
        Py_DECREF(iso_timestamp_text);
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
