# cython: boundscheck=False, wraparound=False, cdivision=True, infer_types=True
"""Floret vectors of word forms in C: what spaCy's `Vectors.get_batch`
gives in floret mode, without its Python loop over each form's character
n-grams.

A form's vector is the mean of the table rows of its hashed n-grams: the
form between `bow` and `eow`, and each of its n-grams of minn to maxn
characters; each string is hashed with MurmurHash3_x64_128 (its UTF-8
bytes, seed `hash_seed`) into up to four 32-bit values, of which the first
`hash_count` pick rows (modulo the table's rows). The empty form reads
zeros, as spaCy's. Checked against spaCy's in tests/test_vectors.py.
"""
import numpy
from libc.stdint cimport uint32_t, uint64_t
from murmurhash.mrmr cimport hash128_x64


cdef void add_rows(const float* data, long n_rows, int width, const unsigned char* text,
                   long n_bytes, uint32_t seed, int n_hashes, float* out,
                   long* count) noexcept nogil:
    """Add the rows of the hashes of text[:n_bytes] to out."""
    cdef uint64_t hashes[2]
    cdef uint32_t h
    cdef int k, j
    cdef const float* row
    hash128_x64(text, <int>n_bytes, seed, hashes)
    for k in range(n_hashes):
        h = <uint32_t>(hashes[k // 2] & 0xffffffffu) if k % 2 == 0 \
            else <uint32_t>(hashes[k // 2] >> 32)
        row = &data[(h % n_rows) * width]
        for j in range(width):
            out[j] += row[j]
        count[0] += 1


cdef void form_vector(const float* data, long n_rows, int width, const unsigned char* text,
                      long n_bytes, const long* char_starts, int n_chars, int minn, int maxn,
                      uint32_t seed, int n_hashes, float* out) noexcept nogil:
    """out = the mean of the rows of the marked form (text: its UTF-8 bytes,
    char_starts: the byte offset of each of its n_chars characters and of
    the end) and of its n-grams."""
    cdef long count = 0
    cdef int n, start, j
    add_rows(data, n_rows, width, text, n_bytes, seed, n_hashes, out, &count)
    for n in range(minn, maxn + 1):
        for start in range(0, n_chars - n + 1):
            add_rows(data, n_rows, width, &text[char_starts[start]],
                     char_starts[start + n] - char_starts[start], seed, n_hashes, out, &count)
    if count:
        for j in range(width):
            out[j] /= count


def floret_vectors(table, keys) -> numpy.ndarray:
    """The floret vectors (len(keys), width) float32 of the string keys
    `keys` (uint64) in `table` (a spaCy `Vectors` in floret mode whose data
    is a numpy array); each distinct key is computed once."""
    cdef const float[:, ::1] data = numpy.ascontiguousarray(table.data, dtype="f")
    cdef long n_rows = data.shape[0]
    cdef int width = data.shape[1]
    cdef int minn = table.minn, maxn = table.maxn
    cdef uint32_t seed = table.hash_seed
    cdef int n_hashes = min(table.hash_count, 4)
    distinct, inverse = numpy.unique(numpy.asarray(keys, dtype="uint64"), return_inverse=True)
    out = numpy.zeros((len(distinct), width), dtype="f")
    if n_rows == 0 or width == 0:
        return out[inverse.reshape(-1)]
    cdef float[:, ::1] out_c = out
    cdef bytes text
    cdef const unsigned char* chars
    cdef long[::1] starts = numpy.empty(64, dtype=numpy.int_)
    cdef long i, b, n_bytes
    cdef int n_chars
    strings, bow, eow = table.strings, table.bow, table.eow
    for i in range(len(distinct)):
        form = strings[int(distinct[i])]
        if not form:
            continue
        text = (bow + form + eow).encode("utf8")
        chars = text
        n_bytes = len(text)
        # The byte offset of each character (UTF-8: a byte that is not
        # 10xxxxxx starts one), and of the end.
        if starts.shape[0] < n_bytes + 1:
            starts = numpy.empty(2 * n_bytes + 1, dtype=numpy.int_)
        n_chars = 0
        for b in range(n_bytes):
            if chars[b] & 0xC0 != 0x80:
                starts[n_chars] = b
                n_chars += 1
        starts[n_chars] = n_bytes
        with nogil:
            form_vector(&data[0, 0], n_rows, width, chars, n_bytes, &starts[0], n_chars,
                        minn, maxn, seed, n_hashes, &out_c[i, 0])
    return out[inverse.reshape(-1)]
