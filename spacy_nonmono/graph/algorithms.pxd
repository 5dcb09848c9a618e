# Graph algorithms shared by transition systems, decoders and tools.
#
# Dependency graphs are stored as head arrays: heads[k] is the head of node k,
# or -1 when k has no head. Node 0 is the artificial root and never has a head.

cdef int uf_find(int* parent, int x) noexcept nogil
cdef void weak_components(const int* heads, int n_nodes, int* comp) noexcept nogil
cdef bint has_path(const int* heads, int n_nodes, int src, int dst) noexcept nogil
cdef int count_cycles_single_head(const int* heads, int n_nodes, int* mark) noexcept nogil
