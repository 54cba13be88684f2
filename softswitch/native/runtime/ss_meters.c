/* softswitch native runtime: BMv2's two-rate three-colour meter, bit-exact with
 * engine/meters.py (see ss_rt.h). Python computes int(now_us * rate) with a float product and
 * arbitrary-precision ints; here the product is the same IEEE double, truncated, and the token
 * arithmetic is done in 128 bits, which holds every value those ints take. */
#include "ss_rt.h"

typedef __int128 s128;

void ss_meter_set(ss_meter *m, double cir, uint64_t cburst, double pir, uint64_t pburst) {
    m->rate[0] = pir;
    m->burst[0] = pburst;
    m->tokens[0] = pburst;
    m->last[0] = 0.0;
    m->rate[1] = cir;
    m->burst[1] = cburst;
    m->tokens[1] = cburst;
    m->last[1] = 0.0;
    m->configured = 1;
}

int ss_meter_execute(ss_meter *m, uint64_t now_us, uint64_t need) {
    if (!m->configured) return SS_GREEN;
    for (int b = 0; b < 2; b++) {
        /* the product is below 2**127; its truncation is an integer-valued double again */
        s128 since = (s128)((double)now_us * m->rate[b]);
        s128 fresh = since - (s128)m->last[b];
        m->last[b] = (double)since;
        if (fresh > 0) {
            s128 tokens = (s128)m->tokens[b] + fresh;
            m->tokens[b] = tokens < (s128)m->burst[b] ? (uint64_t)tokens : m->burst[b];
        }
        if (m->tokens[b] < need) return b == 0 ? SS_RED : SS_YELLOW;
        m->tokens[b] -= need;
    }
    return SS_GREEN;
}
