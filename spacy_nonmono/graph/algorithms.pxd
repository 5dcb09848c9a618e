# Graph algorithms shared by transition systems, decoders and tools.
#
# Dependency graphs are stored as head arrays: heads[k] is the head of node k,
# or -1 when k has no head. Node 0 is the artificial root and never has a head.

cdef int uf_find(int* parent, int x) noexcept nogil
cdef void weak_components(const int* heads, int n_nodes, int* comp) noexcept nogil
cdef bint has_path(const int* heads, int n_nodes, int src, int dst) noexcept nogil
cdef int count_cycles_single_head(const int* heads, int n_nodes, int* mark) noexcept nogil
cdef int single_root(int* heads, int* labels, int n_nodes) noexcept nogil
cdef bint one_endpoint_crossing(const int* heads, int n_nodes) noexcept nogil


# A visitor for elementary cycles: called with the cycle's nodes in order
# (cycle[0] -> cycle[1] -> ... -> cycle[length-1] -> cycle[0]); returns
# whether the cycle counts.
ctypedef bint (*cycle_visitor)(const int* cycle, int length, void* ctx) noexcept nogil


cdef struct Digraph:
    # Successor lists in compressed form: the successors of v are
    # succ[start[v]] .. succ[start[v+1]-1].
    int n_nodes
    int* start          # n_nodes + 1
    int* succ           # one entry per edge


cdef void digraph_from_heads(Digraph* g, const int* heads_a, const int* heads_b,
                             int n_nodes, int* start, int* succ) noexcept nogil
cdef int elementary_cycles_work_size(int n_nodes) noexcept nogil
cdef int count_elementary_cycles(const Digraph* g, cycle_visitor visit, void* ctx,
                                 int limit, int* work) noexcept nogil
