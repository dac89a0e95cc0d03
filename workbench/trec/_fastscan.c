/* The run reader's inner loop in C: an optional accelerator of workbench.trec.runs.

   scan_run(buffer, offset, first_line, previous_qid, docnos, width, hashes, scores, ranks,
            line_numbers, row) reads whole lines of a run file from buffer[offset:] (the last
   ending with a newline) exactly as the numpy reader of workbench.trec.scan does in its
   lenient mode (the mode of `workbench trec-eval`):

   - fields are separated by spaces and the bytes 9 to 13 (\t \n \v \f \r);
   - a line without fields is skipped, and so is a line whose first field starts with '#';
   - a kept line needs at least 6 fields: qid Q0 docno rank score tag (more are ignored);
   - a score of the form [+-]digits[.digits] with 1 to 15 digits and at most 22 after the dot
     is mantissa / 10^k in double precision (correctly rounded, as strtod); any other score is
     left to the Python reader (a "slow" row), and so is a rank with a sign;
   - a rank is its leading digits (C's atol), 0 when it does not start with a digit;
   - each docno's 64-bit hash is workbench.trec.keys.docno_hash's (FNV-style mixing of the
     docno's bytes as native 64-bit words, zero-padded).

   Each kept line becomes row `row`, `row + 1` ... of the caller's writable buffers: docnos
   (`width` bytes a row, zero-padded: numpy's 'S<width>'), hashes (uint64), scores (float64),
   ranks (int64) and line_numbers (int32); ranks and line_numbers may be None.  It stops
   before a line whose docno is wider than `width` or that finds the buffers full, and
   returns (offset reached, lines read, rows written, width needed or 0, segment_rows,
   segment_qids, slow_scores, slow_ranks, tag, error): segment_rows and segment_qids give the
   first row (counted from `row`) and the qid of each run of equal qids (a run continuing
   previous_qid is not a new one); slow_scores and slow_ranks are lists of (row, token, line
   number, line start, line end) and (row, token); tag is the last row's sixth field; error is
   None or (kind, line number, line start, line end) for the first NUL byte ("nul") or the
   first kept line with fewer than 6 fields ("fields"), whichever the numpy reader reports: a
   NUL anywhere first.

   repeated_hashes(hashes, offsets) gives one byte per CSR segment of a uint64 array: 1 when a
   value occurs twice within the segment.

   probe(slots, keys, out) looks each uint64 key up in workbench.metrics._keys.KeyTable's open
   addressing table (slots: a power of two of (key, index + 1) pairs, 0 for an empty slot;
   linear probing from key & (size - 1)) and writes its index, or -1, to out (int64).

   No numpy C API: arrays travel as buffers.
*/
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FIELDS 6

static inline int is_separator(unsigned char c) { return c == 32 || (unsigned char)(c - 9) <= 4; }

static const double POW10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                 1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* 1 and *value set when the token is [+-]digits[.digits] within the exact bounds. */
static int fast_decimal(const unsigned char *s, Py_ssize_t n, double *value) {
    Py_ssize_t i = 0;
    int negative = 0;
    if (s[0] == '-' || s[0] == '+') {
        negative = s[0] == '-';
        i = 1;
    }
    int64_t mantissa = 0;
    int digits = 0, dots = 0, fraction = 0;
    for (; i < n; i++) {
        unsigned char c = s[i];
        if (c >= '0' && c <= '9') {
            if (++digits > 15) return 0;
            mantissa = mantissa * 10 + (c - '0');
            fraction += dots;
        } else if (c == '.') {
            if (++dots > 1) return 0;
        } else {
            return 0;
        }
    }
    if (digits < 1 || fraction > 22) return 0;
    double v = (double)mantissa / POW10[fraction];
    *value = negative ? -v : v;
    return 1;
}

static uint64_t docno_hash(const unsigned char *s, Py_ssize_t n) {
    uint64_t h = 0xCBF29CE484222325ULL;
    for (Py_ssize_t j = 0; j < n; j += 8) {
        uint64_t word = 0;
        memcpy(&word, s + j, (size_t)(n - j < 8 ? n - j : 8));
        uint64_t mixed = (h ^ word) * 0x100000001B3ULL;
        h = mixed ^ (mixed >> 29);
    }
    return h;
}

static PyObject *error_tuple(const char *kind, Py_ssize_t line, Py_ssize_t start, Py_ssize_t end) {
    return Py_BuildValue("(snnn)", kind, line, start, end);
}

static int append_new(PyObject *list, PyObject *item) {
    int failed = !item || PyList_Append(list, item);
    Py_XDECREF(item);
    return failed ? -1 : 0;
}

typedef struct {
    Py_buffer buffer;
    Py_ssize_t items; /* capacity in items of the given size */
} Output;

static int get_output(PyObject *object, Output *out, Py_ssize_t item) {
    out->buffer.obj = NULL;
    out->buffer.buf = NULL;
    out->items = 0;
    if (object == Py_None) return 0;
    if (PyObject_GetBuffer(object, &out->buffer, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0)
        return -1;
    out->items = out->buffer.len / item;
    return 0;
}

static void release_output(Output *out) {
    if (out->buffer.obj) PyBuffer_Release(&out->buffer);
}

static PyObject *scan_run(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer view;
    Py_ssize_t offset, first_line, width, row;
    const char *prev;
    Py_ssize_t prev_len;
    PyObject *docnos_obj, *hashes_obj, *scores_obj, *ranks_obj, *lines_obj;
    if (!PyArg_ParseTuple(args, "y*nnz#OnOOOOn", &view, &offset, &first_line, &prev, &prev_len,
                          &docnos_obj, &width, &hashes_obj, &scores_obj, &ranks_obj, &lines_obj,
                          &row))
        return NULL;
    Output docnos_out, hashes_out, scores_out, ranks_out, lines_out;
    docnos_out.buffer.obj = hashes_out.buffer.obj = scores_out.buffer.obj = NULL;
    ranks_out.buffer.obj = lines_out.buffer.obj = NULL;
    PyObject *result = NULL, *segment_rows = PyList_New(0), *segment_qids = PyList_New(0),
             *slow_scores = PyList_New(0), *slow_ranks = PyList_New(0), *error = NULL,
             *tag = NULL;
    if (!segment_rows || !segment_qids || !slow_scores || !slow_ranks) goto done;
    if (get_output(docnos_obj, &docnos_out, width) || get_output(hashes_obj, &hashes_out, 8) ||
        get_output(scores_obj, &scores_out, 8) || get_output(ranks_obj, &ranks_out, 8) ||
        get_output(lines_obj, &lines_out, 4))
        goto done;
    const unsigned char *buf = view.buf;
    const Py_ssize_t n = view.len, first_row = row;
    char *docnos = docnos_out.buffer.buf;
    uint64_t *hashes = hashes_out.buffer.buf;
    double *scores = scores_out.buffer.buf;
    int64_t *ranks = ranks_out.buffer.buf;
    int32_t *lines = lines_out.buffer.buf;
    Py_ssize_t capacity = scores_out.items, line_number = first_line, wider = 0;
    if (hashes_out.items < capacity) capacity = hashes_out.items;
    if (docnos_out.items < capacity) capacity = docnos_out.items;
    if (ranks && ranks_out.items < capacity) capacity = ranks_out.items;
    if (lines && lines_out.items < capacity) capacity = lines_out.items;

    const unsigned char *nul = memchr(buf + offset, 0, (size_t)(n - offset));
    if (nul) {
        Py_ssize_t at = nul - buf, start = at, end = at, line = first_line;
        while (start > offset && buf[start - 1] != '\n') start--;
        while (end < n && buf[end] != '\n') end++;
        for (const unsigned char *p = buf + offset; (p = memchr(p, '\n', (size_t)(nul - p))); p++)
            line++;
        error = error_tuple("nul", line, start, end);
        goto finish;
    }
    const unsigned char *previous = (const unsigned char *)prev;
    Py_ssize_t previous_len = prev ? prev_len : -1, tag_start = -1, tag_len = 0;
    while (offset < n) {
        const unsigned char *nl = memchr(buf + offset, '\n', (size_t)(n - offset));
        Py_ssize_t line_end = nl ? nl - buf : n;
        Py_ssize_t field_start[FIELDS], field_len[FIELDS];
        int fields = 0;
        Py_ssize_t i = offset;
        while (fields < FIELDS) {
            while (i < line_end && is_separator(buf[i])) i++;
            if (i >= line_end) break;
            field_start[fields] = i;
            while (i < line_end && !is_separator(buf[i])) i++;
            field_len[fields] = i - field_start[fields];
            fields++;
        }
        if (fields > 0 && buf[field_start[0]] != '#') {
            if (fields < FIELDS) {
                error = error_tuple("fields", line_number, offset, line_end);
                goto finish;
            }
            if (field_len[2] > width) {
                wider = field_len[2];
                break;
            }
            if (row >= capacity) break;
            const unsigned char *qid = buf + field_start[0];
            Py_ssize_t qid_len = field_len[0];
            if (qid_len != previous_len || memcmp(qid, previous, (size_t)qid_len) != 0) {
                if (append_new(segment_rows, PyLong_FromSsize_t(row - first_row)) ||
                    append_new(segment_qids,
                               PyBytes_FromStringAndSize((const char *)qid, qid_len)))
                    goto done;
                previous = qid;
                previous_len = qid_len;
            }
            const unsigned char *docno = buf + field_start[2];
            char *slot = docnos + row * width;
            memcpy(slot, docno, (size_t)field_len[2]);
            memset(slot + field_len[2], 0, (size_t)(width - field_len[2]));
            hashes[row] = docno_hash(docno, field_len[2]);
            scores[row] = 0.0;
            if (!fast_decimal(buf + field_start[4], field_len[4], &scores[row]) &&
                append_new(slow_scores, Py_BuildValue("(ny#nnn)", row - first_row,
                                                      buf + field_start[4], field_len[4],
                                                      line_number, offset, line_end)))
                goto done;
            if (ranks) {
                const unsigned char *r = buf + field_start[3];
                int64_t rank = 0;
                if (r[0] == '+' || r[0] == '-') {
                    if (append_new(slow_ranks, Py_BuildValue("(ny#)", row - first_row, r,
                                                             field_len[3])))
                        goto done;
                } else {
                    for (Py_ssize_t k = 0; k < field_len[3] && r[k] >= '0' && r[k] <= '9'; k++)
                        rank = (int64_t)((uint64_t)rank * 10u + (uint64_t)(r[k] - '0'));
                }
                ranks[row] = rank;
            }
            if (lines) lines[row] = (int32_t)line_number;
            tag_start = field_start[5];
            tag_len = field_len[5];
            row++;
        }
        line_number++;
        offset = line_end + 1;
    }
    if (tag_start >= 0 && !(tag = PyBytes_FromStringAndSize((const char *)buf + tag_start, tag_len)))
        goto done;
finish:
    result = Py_BuildValue("(nnnnOOOOOO)", offset, line_number - first_line, row - first_row,
                           wider, segment_rows, segment_qids, slow_scores, slow_ranks,
                           tag ? tag : Py_None, error ? error : Py_None);
done:
    PyBuffer_Release(&view);
    release_output(&docnos_out);
    release_output(&hashes_out);
    release_output(&scores_out);
    release_output(&ranks_out);
    release_output(&lines_out);
    Py_XDECREF(segment_rows);
    Py_XDECREF(segment_qids);
    Py_XDECREF(slow_scores);
    Py_XDECREF(slow_ranks);
    Py_XDECREF(tag);
    Py_XDECREF(error);
    return result;
}

static PyObject *repeated_hashes(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer values, offsets;
    if (!PyArg_ParseTuple(args, "y*y*", &values, &offsets)) return NULL;
    const uint64_t *v = values.buf;
    const int64_t *o = offsets.buf;
    Py_ssize_t segments = offsets.len / 8 - 1, longest = 0;
    PyObject *flags = NULL;
    if (segments < 0) {
        PyBuffer_Release(&values);
        PyBuffer_Release(&offsets);
        PyErr_SetString(PyExc_ValueError, "offsets must hold at least one value");
        return NULL;
    }
    for (Py_ssize_t s = 0; s < segments; s++)
        if (o[s + 1] - o[s] > longest) longest = o[s + 1] - o[s];
    size_t size = 16;
    while (size < 2 * (size_t)longest) size <<= 1;
    uint64_t *slots = PyMem_Calloc(size, sizeof(uint64_t));
    unsigned char *used = PyMem_Calloc(size, 1);
    flags = PyByteArray_FromStringAndSize(NULL, segments);
    if (!slots || !used || !flags) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        Py_CLEAR(flags);
        goto done;
    }
    char *flag = PyByteArray_AS_STRING(flags);
    for (Py_ssize_t s = 0; s < segments; s++) {
        Py_ssize_t lo = o[s], hi = o[s + 1];
        size_t mask = 16 - 1;
        while (mask + 1 < 2 * (size_t)(hi - lo)) mask = 2 * mask + 1;
        flag[s] = 0;
        for (Py_ssize_t i = lo; i < hi && !flag[s]; i++) {
            size_t slot = (size_t)(v[i] ^ (v[i] >> 32)) & mask;
            while (used[slot] && slots[slot] != v[i]) slot = (slot + 1) & mask;
            if (used[slot]) flag[s] = 1;
            used[slot] = 1;
            slots[slot] = v[i];
        }
        memset(used, 0, mask + 1);
    }
done:
    PyMem_Free(slots);
    PyMem_Free(used);
    PyBuffer_Release(&values);
    PyBuffer_Release(&offsets);
    return flags;
}

static PyObject *probe(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer slots, keys, out;
    if (!PyArg_ParseTuple(args, "y*y*w*", &slots, &keys, &out)) return NULL;
    const uint64_t *table = slots.buf, *k = keys.buf;
    int64_t *found = out.buf;
    Py_ssize_t n = keys.len / 8, size = slots.len / 16;
    if (size & (size - 1) || out.len / 8 < n) {
        PyErr_SetString(PyExc_ValueError, "a power-of-two table and an output per key");
    } else {
        const uint64_t mask = (uint64_t)size - 1;
        for (Py_ssize_t i = 0; i < n; i++) {
            uint64_t slot = k[i] & mask;
            found[i] = -1;
            while (table[2 * slot + 1]) {
                if (table[2 * slot] == k[i]) {
                    found[i] = (int64_t)table[2 * slot + 1] - 1;
                    break;
                }
                slot = (slot + 1) & mask;
            }
        }
    }
    PyBuffer_Release(&slots);
    PyBuffer_Release(&keys);
    PyBuffer_Release(&out);
    return PyErr_Occurred() ? NULL : Py_NewRef(Py_None);
}

static PyMethodDef methods[] = {
    {"scan_run", scan_run, METH_VARARGS, "Tokenise one chunk of a run file (see the module)."},
    {"repeated_hashes", repeated_hashes, METH_VARARGS,
     "One byte per CSR segment: 1 when a uint64 value repeats in it."},
    {"probe", probe, METH_VARARGS,
     "Index of each key in a linear-probing table of (key, index + 1) pairs, -1 if absent."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_fastscan", "The run reader's inner loop (see the C source).", -1,
    methods, NULL, NULL, NULL, NULL};

/* Raised with every change of the contract; workbench.trec.native ignores another version (a
   stale build) and reads with numpy. */
#define CONTRACT_VERSION 2

PyMODINIT_FUNC PyInit__fastscan(void) {
    PyObject *m = PyModule_Create(&module);
    if (m && PyModule_AddIntConstant(m, "VERSION", CONTRACT_VERSION) < 0) Py_CLEAR(m);
    return m;
}
