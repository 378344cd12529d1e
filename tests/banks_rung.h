/*
 * banks_rung.h - bring one rung's shared-memory layout into tests/test_banks.c.
 *
 * Each rung from 06 on keeps its shared-memory index functions in a marked section near
 * its top, written in plain C.  test_banks.c includes this header once per rung:
 *
 *     #define RUNG_FILE "../steps/07_xor_swizzle.cu"
 *     #define RUNG_ID r07
 *     #include "banks_rung.h"          -> static const struct rung_layout r07_layout
 *
 * With SGEMM_LAYOUT_ONLY defined the rung stops after that section, so no CUDA header is
 * needed.  Its functions are renamed with the RUNG_ID prefix (several rungs use the same
 * names in one translation unit) and its tile macros are #undef'd afterwards.  A layout
 * function a rung adds must be added to both lists below, or the build fails loudly.
 */
#define BANKS_CAT2(a, b) a##b
#define BANKS_CAT(a, b)  BANKS_CAT2(a, b)
#define BANKS_NAME(name) BANKS_CAT(RUNG_ID, BANKS_CAT(_, name))

#define SGEMM_LAYOUT_ONLY
#define a_tile_offset BANKS_NAME(a_tile_offset)
#define b_tile_offset BANKS_NAME(b_tile_offset)
#define a_load_row    BANKS_NAME(a_load_row)
#define a_load_col    BANKS_NAME(a_load_col)
#define b_load_row    BANKS_NAME(b_load_row)
#define b_load_col    BANKS_NAME(b_load_col)
#define frag_a_row    BANKS_NAME(frag_a_row)
#define frag_b_col    BANKS_NAME(frag_b_col)

#include RUNG_FILE

#undef a_tile_offset
#undef b_tile_offset
#undef a_load_row
#undef a_load_col
#undef b_load_row
#undef b_load_col
#undef frag_a_row
#undef frag_b_col
#undef SGEMM_LAYOUT_ONLY

static const struct rung_layout BANKS_NAME(layout) = {
    RUNG_FILE,
    BM,
    BN,
    BK,
    THREADS,
    BANKS_NAME(a_tile_offset),
    BANKS_NAME(b_tile_offset),
    BANKS_NAME(a_load_row),
    BANKS_NAME(a_load_col),
    BANKS_NAME(b_load_row),
    BANKS_NAME(b_load_col),
    BANKS_NAME(frag_a_row),
    BANKS_NAME(frag_b_col),
};

/* The rungs' tile macros: gone before the next rung defines its own. */
#undef BM
#undef BN
#undef BK
#undef TM
#undef TN
#undef THREADS
#undef WARPS_M
#undef WARPS_N
#undef WARP_M
#undef WARP_N
#undef LANES_M
#undef LANES_N
#undef RUNG_FILE
#undef RUNG_ID
