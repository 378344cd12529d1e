/* check.h - running a rung against cuBLAS on the check matrix or on given shapes. */
#ifndef HARNESS_CHECK_H
#define HARNESS_CHECK_H

#include <stdint.h>
#include <cublas_v2.h>

#include "../common/step.h"
#include "args.h"

/* Runs every case of the check matrix; prints failures and a summary. Returns failures. */
int run_check_matrix(const struct step *st, cublasHandle_t h, cudaStream_t stream, uint64_t seed);

/* Checks the given shapes (exact and random inputs, three scalar pairs). Returns failures. */
int run_shape_checks(const struct step *st, const struct shape *shapes, int nshapes,
                     cublasHandle_t h, cudaStream_t stream, uint64_t seed, int quiet);

#endif
