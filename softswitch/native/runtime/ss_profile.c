/* softswitch native runtime: action profiles and selectors (see ss_rt.h). The members are an
 * exact ss_table on the member id (an entry per member, handle = id); the groups a sorted array
 * of (group id, member ids), the ids in handle order as the Python record (engine/tables.py)
 * keeps them and sends each whole list. */
#include <stdlib.h>

#include "ss_rt.h"

typedef struct ss_group {
    int64_t id;
    int32_t n;
    int64_t *ids;
} ss_group;

struct ss_profile {
    ss_table *members;
    ss_group *groups;  /* sorted by id */
    size_t ngroups, cap;
};

ss_profile *ss_profile_new(void) {
    ss_profile *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    uint16_t w = 64;
    uint8_t k = SS_KIND_EXACT;
    p->members = ss_table_new(SS_MODE_EXACT, 1, &w, &k);
    if (!p->members) {
        free(p);
        return NULL;
    }
    return p;
}

void ss_profile_free(ss_profile *p) {
    if (!p) return;
    for (size_t i = 0; i < p->ngroups; i++) free(p->groups[i].ids);
    free(p->groups);
    ss_table_free(p->members);
    free(p);
}

ss_entry *ss_profile_member_set(ss_profile *p, int64_t member, int32_t action, int32_t nargs,
                                const uint64_t *arg_words) {
    ss_entry *e = ss_table_entry(p->members, member);
    if (e) {
        ss_entry_set_action(e, action, nargs, arg_words);
        return e;
    }
    uint64_t key[2] = {(uint64_t)member, 0};
    return ss_table_insert(p->members, member, 0, -1, key, action, nargs, arg_words);
}

void ss_profile_member_del(ss_profile *p, int64_t member) { ss_table_remove(p->members, member); }

/* the position of `group` in the sorted array, or where it would go */
static size_t group_pos(const ss_profile *p, int64_t group) {
    size_t lo = 0, hi = p->ngroups;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (p->groups[mid].id < group) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static ss_group *group_find(const ss_profile *p, int64_t group) {
    size_t i = group_pos(p, group);
    return i < p->ngroups && p->groups[i].id == group ? &p->groups[i] : NULL;
}

int ss_profile_group_set(ss_profile *p, int64_t group, int32_t n, const int64_t *members) {
    if (n < 0) return -1;
    int64_t *ids = malloc((size_t)(n ? n : 1) * sizeof *ids);
    if (!ids) return -1;
    memcpy(ids, members, (size_t)n * sizeof *ids);
    ss_group *g = group_find(p, group);
    if (!g) {
        if (p->ngroups == p->cap) {
            size_t ncap = p->cap ? p->cap * 2 : 8;
            ss_group *ng = realloc(p->groups, ncap * sizeof *ng);
            if (!ng) {
                free(ids);
                return -1;
            }
            p->groups = ng;
            p->cap = ncap;
        }
        size_t i = group_pos(p, group);
        memmove(&p->groups[i + 1], &p->groups[i], (p->ngroups - i) * sizeof *p->groups);
        p->ngroups++;
        g = &p->groups[i];
        g->id = group;
        g->ids = NULL;
    }
    free(g->ids);
    g->ids = ids;
    g->n = n;
    return 0;
}

void ss_profile_group_del(ss_profile *p, int64_t group) {
    ss_group *g = group_find(p, group);
    if (!g) return;
    free(g->ids);
    size_t i = (size_t)(g - p->groups);
    memmove(&p->groups[i], &p->groups[i + 1], (p->ngroups - i - 1) * sizeof *p->groups);
    p->ngroups--;
}

ss_entry *ss_profile_member(ss_profile *p, int64_t member) {
    u128 key = (u128)(uint64_t)member;
    return ss_table_lookup(p->members, &key);
}

ss_entry *ss_profile_choose(ss_profile *p, int64_t group, uint64_t hash) {
    const ss_group *g = group_find(p, group);
    if (!g || g->n <= 0) return NULL;
    return ss_profile_member(p, g->ids[hash % (uint64_t)g->n]);
}
