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
   segment_qids, slow_scores, slow_ranks, tag, error, irregular): segment_rows and
   segment_qids give the first row (counted from `row`) and the qid of each run of equal qids (a run continuing
   previous_qid is not a new one); slow_scores and slow_ranks are lists of (row, token, line
   number, line start, line end) and (row, token); tag is the last row's sixth field; error is
   None or (kind, line number, line start, line end) for the first NUL byte ("nul") or the
   first kept line with fewer than 6 fields ("fields"), whichever the numpy reader reports: a
   NUL anywhere first; irregular is 0, or the number of the first kept line that is not in the
   plain form an import's strict reading takes without a closer look: exactly 6 fields, each
   of ASCII bytes, the second at most 1024 bytes, the rank 1 to 18 digits, the tag that of
   the call's first row, or a comment line of ASCII bytes (the strict reader then reads the
   file with numpy).

   repeated_hashes(hashes, offsets) gives one byte per CSR segment of a uint64 array: 1 when a
   value occurs twice within the segment.

   topic_tables(hashes, offsets) builds, for the qrels' docno hashes grouped by topic (CSR
   offsets), one open-addressing table per topic: (slots, starts), slots a bytearray of (hash,
   row + 1) uint64 pairs (0: empty), topic t's table slots starts[t] to starts[t + 1] - 1 (a
   power of two, at least twice its judgements; linear probing from hash & (size - 1)), so that
   the probes of one topic stay within its small table.

   lookup_rels(slots, starts, hashes, docnos, width, qrels_docnos, qrels_width, grades, q_topic,
               offsets, order, order_size, rel, rel_size, first, last) is
   workbench.metrics.ranked._ranked_rels for the run topics first to last - 1 (CSR offsets):
   position i of a topic (its row, or lo + order[i - lo] in trec order, order of int32 or int64
   as order_size says) gets, when the topic has qrels (q_topic >= 0) and its docno hash is in
   that qrels topic's table with the same docno bytes, that judgement's grade (-2 for a
   negative one) in rel (of rel_size bytes); other positions are left as they are.

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
    Py_ssize_t capacity = scores_out.items, line_number = first_line, wider = 0, irregular = 0;
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
    Py_ssize_t first_tag = -1, first_tag_len = 0;
    while (offset < n) {
        const unsigned char *nl = memchr(buf + offset, '\n', (size_t)(n - offset));
        Py_ssize_t line_end = nl ? nl - buf : n;
        Py_ssize_t field_start[FIELDS], field_len[FIELDS];
        int fields = 0;
        unsigned char high = 0; /* any byte >= 0x80 in the fields */
        Py_ssize_t i = offset;
        while (fields < FIELDS) {
            while (i < line_end && is_separator(buf[i])) i++;
            if (i >= line_end) break;
            field_start[fields] = i;
            while (i < line_end && !is_separator(buf[i])) high |= buf[i++];
            field_len[fields] = i - field_start[fields];
            fields++;
        }
        if (fields > 0 && buf[field_start[0]] != '#') {
            if (fields < FIELDS) {
                error = error_tuple("fields", line_number, offset, line_end);
                goto finish;
            }
            if (!irregular) {
                while (i < line_end && is_separator(buf[i])) i++;
                const unsigned char *r = buf + field_start[3];
                int plain_rank = field_len[3] <= 18;
                for (Py_ssize_t k = 0; k < field_len[3] && plain_rank; k++)
                    plain_rank = r[k] >= '0' && r[k] <= '9';
                if (first_tag < 0) {
                    first_tag = field_start[5];
                    first_tag_len = field_len[5];
                }
                if (i < line_end || (high & 0x80) || field_len[1] > 1024 || !plain_rank ||
                    field_len[5] != first_tag_len ||
                    memcmp(buf + field_start[5], buf + first_tag, (size_t)first_tag_len) != 0)
                    irregular = line_number;
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
        } else if (fields > 0 && !irregular) { /* a comment: UTF-8 is checked on import */
            for (Py_ssize_t k = offset; k < line_end && !irregular; k++)
                if (buf[k] & 0x80) irregular = line_number;
        }
        line_number++;
        offset = line_end + 1;
    }
    if (tag_start >= 0 && !(tag = PyBytes_FromStringAndSize((const char *)buf + tag_start, tag_len)))
        goto done;
finish:
    result = Py_BuildValue("(nnnnOOOOOOn)", offset, line_number - first_line, row - first_row,
                           wider, segment_rows, segment_qids, slow_scores, slow_ranks,
                           tag ? tag : Py_None, error ? error : Py_None, irregular);
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

static PyObject *topic_tables(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer hashes, offsets;
    if (!PyArg_ParseTuple(args, "y*y*", &hashes, &offsets)) return NULL;
    const uint64_t *h = hashes.buf;
    const int64_t *off = offsets.buf;
    const Py_ssize_t topics = offsets.len / 8 - 1;
    PyObject *slots = NULL, *starts = NULL, *result = NULL;
    if (topics < 0) {
        PyErr_SetString(PyExc_ValueError, "offsets must hold at least one value");
        goto done;
    }
    starts = PyByteArray_FromStringAndSize(NULL, (topics + 1) * 8);
    if (!starts) goto done;
    int64_t *start = (int64_t *)PyByteArray_AS_STRING(starts);
    start[0] = 0;
    for (Py_ssize_t t = 0; t < topics; t++) {
        int64_t size = 2;
        while (size < 2 * (off[t + 1] - off[t])) size *= 2;
        start[t + 1] = start[t] + size;
    }
    slots = PyByteArray_FromStringAndSize(NULL, start[topics] * 16);
    if (!slots) goto done;
    uint64_t *table = (uint64_t *)PyByteArray_AS_STRING(slots);
    memset(table, 0, (size_t)(start[topics] * 16));
    for (Py_ssize_t t = 0; t < topics; t++) {
        const uint64_t mask = (uint64_t)(start[t + 1] - start[t]) - 1;
        uint64_t *sub = table + 2 * start[t];
        for (int64_t i = off[t]; i < off[t + 1]; i++) {
            uint64_t slot = h[i] & mask;
            while (sub[2 * slot + 1]) slot = (slot + 1) & mask;
            sub[2 * slot] = h[i];
            sub[2 * slot + 1] = (uint64_t)i + 1;
        }
    }
    result = Py_BuildValue("(OO)", slots, starts);
done:
    Py_XDECREF(slots);
    Py_XDECREF(starts);
    PyBuffer_Release(&hashes);
    PyBuffer_Release(&offsets);
    return result;
}

static int same_text(const char *a, Py_ssize_t wa, const char *b, Py_ssize_t wb) {
    if (wa == wb) return memcmp(a, b, (size_t)wa) == 0; /* both zero-padded to one width */
    Py_ssize_t la = 0, lb = 0;
    while (la < wa && a[la]) la++;
    while (lb < wb && b[lb]) lb++;
    return la == lb && memcmp(a, b, (size_t)la) == 0;
}

static PyObject *lookup_rels(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer slots, starts, hashes, docnos, qdocnos, grades, qt, offsets, order, rel;
    Py_ssize_t width, qwidth, order_size, rel_size, first, last;
    PyObject *order_obj;
    if (!PyArg_ParseTuple(args, "y*y*y*y*ny*ny*y*y*Onw*nnn", &slots, &starts, &hashes, &docnos,
                          &width, &qdocnos, &qwidth, &grades, &qt, &offsets, &order_obj,
                          &order_size, &rel, &rel_size, &first, &last))
        return NULL;
    order.obj = NULL;
    order.buf = NULL;
    if (order_obj != Py_None && PyObject_GetBuffer(order_obj, &order, PyBUF_SIMPLE) < 0) {
        order.obj = NULL;
        goto done;
    }
    {
        const uint64_t *table = slots.buf, *h = hashes.buf;
        const int64_t *start = starts.buf, *grade = grades.buf, *off = offsets.buf;
        const int32_t *q_topic = qt.buf;
        const char *run_docnos = docnos.buf, *qrels_docnos = qdocnos.buf;
        char *out = rel.buf;
        const Py_ssize_t lo = off[first];
        for (Py_ssize_t s = first; s < last; s++) {
            const int64_t topic = q_topic[s];
            if (topic < 0) continue;
            const uint64_t *sub = table + 2 * start[topic];
            const uint64_t mask = (uint64_t)(start[topic + 1] - start[topic]) - 1;
            for (Py_ssize_t i = off[s]; i < off[s + 1]; i++) {
                Py_ssize_t row = i;
                if (order.buf)
                    row = lo + (order_size == 4 ? ((const int32_t *)order.buf)[i - lo]
                                                : (Py_ssize_t)((const int64_t *)order.buf)[i - lo]);
                uint64_t slot = h[row] & mask;
                int64_t found = -1;
                while (sub[2 * slot + 1]) {
                    if (sub[2 * slot] == h[row]) {
                        found = (int64_t)sub[2 * slot + 1] - 1;
                        break;
                    }
                    slot = (slot + 1) & mask;
                }
                if (found < 0 || !same_text(run_docnos + row * width, width,
                                            qrels_docnos + found * qwidth, qwidth))
                    continue;
                const int64_t value = grade[found] < 0 ? -2 : grade[found];
                if (rel_size == 1)
                    ((int8_t *)out)[i] = (int8_t)value;
                else if (rel_size == 4)
                    ((int32_t *)out)[i] = (int32_t)value;
                else
                    ((int64_t *)out)[i] = value;
            }
        }
    }
done:
    if (order.obj) PyBuffer_Release(&order);
    PyBuffer_Release(&slots);
    PyBuffer_Release(&starts);
    PyBuffer_Release(&hashes);
    PyBuffer_Release(&docnos);
    PyBuffer_Release(&qdocnos);
    PyBuffer_Release(&grades);
    PyBuffer_Release(&qt);
    PyBuffer_Release(&offsets);
    PyBuffer_Release(&rel);
    return PyErr_Occurred() ? NULL : Py_NewRef(Py_None);
}

static PyMethodDef methods[] = {
    {"scan_run", scan_run, METH_VARARGS, "Tokenise one chunk of a run file (see the module)."},
    {"repeated_hashes", repeated_hashes, METH_VARARGS,
     "One byte per CSR segment: 1 when a uint64 value repeats in it."},
    {"topic_tables", topic_tables, METH_VARARGS,
     "One open-addressing table of docno hashes per CSR segment of the qrels (see above)."},
    {"lookup_rels", lookup_rels, METH_VARARGS,
     "The qrels value of each ranked row of a block of topics (see the module)."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_fastscan", "The run reader's inner loop (see the C source).", -1,
    methods, NULL, NULL, NULL, NULL};

/* Raised with every change of the contract; workbench.trec.native ignores another version (a
   stale build) and reads with numpy. */
#define CONTRACT_VERSION 5

PyMODINIT_FUNC PyInit__fastscan(void) {
    PyObject *m = PyModule_Create(&module);
    if (m && PyModule_AddIntConstant(m, "VERSION", CONTRACT_VERSION) < 0) Py_CLEAR(m);
    return m;
}
