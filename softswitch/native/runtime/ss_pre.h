/* softswitch native engine: the packet replication engine mirrored into C — each multicast
 * group's (kind 0) or clone session's (kind 1) copies, as engine/pre.py's native_sets answers,
 * and a session's clone length. One copy for both users: the walk's context (ss_walk.h) and the
 * native fabric core (ss_fabric.c). The includer declares
 *     typedef struct ss_set { uint64_t id; uint32_t trunc, n; uint32_t *port, *rid; } ss_set;
 * first (for the walk, cgen_ends.CTX_CDEF, which cffi sees too). */
#ifndef SS_PRE_H
#define SS_PRE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const ss_set *ss_set_find(const ss_set *list, int32_t n, uint64_t id) {
    for (int32_t k = 0; k < n; k++) if (list[k].id == id) return &list[k];
    return NULL;
}

/* frees `*list`'s n sets and the list itself */
static void ss_sets_free(ss_set **list, int32_t *n) {
    for (int32_t k = 0; k < *n; k++) { free((*list)[k].port); free((*list)[k].rid); }
    free(*list);
    *list = NULL;
    *n = 0;
}

/* appends a set of n copies (port[k], rid[k]) to `*list` (a PRE holds few: grown one at a
 * time); -1 when out of memory, the list unchanged */
static int ss_set_push(ss_set **list, int32_t *count, uint64_t id, uint32_t trunc, uint32_t n,
                       const uint32_t *port, const uint32_t *rid) {
    ss_set *l = realloc(*list, (size_t)(*count + 1) * sizeof *l);
    if (!l) return -1;
    *list = l;
    ss_set *e = &l[*count];
    e->id = id; e->trunc = trunc; e->n = n;
    e->port = malloc((n ? n : 1) * sizeof(uint32_t));
    e->rid = malloc((n ? n : 1) * sizeof(uint32_t));
    if (!e->port || !e->rid) { free(e->port); free(e->rid); return -1; }
    if (n) {
        memcpy(e->port, port, n * sizeof(uint32_t));
        memcpy(e->rid, rid, n * sizeof(uint32_t));
    }
    (*count)++;
    return 0;
}

#endif
