/* Macros for the models' C loops that the compiler should vectorise
   (lstm_steps.pyx, score_tables.pyx). */
#ifndef SPACY_NONMONO_VECTOR_LOOPS_H
#define SPACY_NONMONO_VECTOR_LOOPS_H

#include <stdlib.h>

/* The arrays a loop writes never overlap the ones it reads. */
#if defined(_MSC_VER)
#define NM_RESTRICT __restrict
#else
#define NM_RESTRICT __restrict__
#endif

/* GCC keeps a loop with float comparisons (clamps, relu) scalar while they
   may trap; they never do here (no signalling NaNs). */
#if defined(__GNUC__) && !defined(__clang__)
#define NM_VECTORISE __attribute__((optimize("no-trapping-math")))
#else
#define NM_VECTORISE
#endif

/* On x86-64 Linux with glibc, a loop is compiled twice, for AVX2 with FMA
   and for the baseline, and the loader picks the one the CPU runs (8 floats
   a vector instead of 4). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) \
    && defined(__linux__) && defined(__GLIBC__)
#define NM_CLONES __attribute__((target_clones("arch=haswell", "default")))
#else
#define NM_CLONES
#endif

#endif
