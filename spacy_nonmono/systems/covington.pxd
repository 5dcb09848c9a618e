from .base cimport TransitionSystem


cdef class Covington(TransitionSystem):
    pass
