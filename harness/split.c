/* split.c - a float as a TF32 number plus a remainder. */
#include "split.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

void tf32_split(const float *x, size_t count, float *big, float *small)
{
    for (size_t i = 0; i < count; i++) {
        uint32_t bits;
        memcpy(&bits, &x[i], sizeof bits);
        if (!isfinite(x[i])) {
            big[i] = x[i];
            small[i] = 0.0f;
            continue;
        }
        /* add half of TF32's last place, cut the 13 bits below it: round to nearest, ties
         * away; the carry may run into the exponent, which is right, except into Inf */
        uint32_t b = (bits + 0x1000u) & 0xffffe000u;
        float bf;
        memcpy(&bf, &b, sizeof bf);
        if (isinf(bf)) {
            b = bits & 0xffffe000u;
            memcpy(&bf, &b, sizeof bf);
        }
        big[i] = bf;
        small[i] = x[i] - bf; /* exact: bf is x's nearest (or truncated) TF32 value */
    }
}
