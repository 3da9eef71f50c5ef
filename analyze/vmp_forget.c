/* SPDX-License-Identifier: MIT
 *
 * vmp_forget.c - forgetting resolved stacks (spec.md "Resolution" R-RES-1,
 * "Generations" R-GEN-3).  (node, generation) pairs are resolved once and
 * cached (vmp_resolve.c); a record that changes what a resolved address or
 * function shows makes them forgotten: a sample resolves with the records
 * before it.  Every address resolved is noted first (vmp_forget__touch(),
 * vmp_analysis_int.h), so that a record about addresses none of them is in
 * leaves the stacks.  vmp_forget__all() forgets every stack at once (a new
 * epoch); vmp_forget__range() only those with a frame in the range: it
 * stamps the range's blocks, and a stack's memo is checked against its
 * frames' blocks when next used (memo_holds(), vmp_resolve.c).
 *
 * The triggers, each in the file that takes its record:
 *   - FUNCTION of a function already shown as function#ID (R-ID-2):
 *     vmp_forget__all(), vmp_functions__take() in vmp_functions.c;
 *   - CODE_OBJECT at a generation not newer than a resolved sample's (code
 *     added where an address was resolved): vmp_forget__range() over its
 *     placement, vmp_code_history__take_code() in vmp_code_history.c;
 *   - CODE_MAP of a code object a lookup found since the stacks were last
 *     forgotten (R-CODE-3): vmp_forget__all(),
 *     vmp_code_history__take_code_map() in vmp_code_history.c;
 *   - CODE_FREE, CODE_MOVE, CODE_COMPACTION, CODE_SNAPSHOT at a generation
 *     not newer than a resolved sample's (a code change at a resolved
 *     generation): vmp_forget__all(), note_change() in vmp_code_history.c;
 *   - MODULE: vmp_forget__range() over its mapping (pcs resolved as
 *     unknown), vmp_symbols__take_module() in vmp_symbols.c;
 *   - MODULE_SYMBOLS: vmp_forget__range() from the lowest symbol to the
 *     highest end (a size-0 symbol: its module's end, R-RES-6),
 *     vmp_symbols__take_symbols() in vmp_symbols.c.
 */
#include <string.h>

#include "vmp_analysis_int.h"

void vmp_forget__all(vmp_analysis *a)
{
    if (!a->any_sample)
        return;
    if (a->scache.n)
        vmp_hmap__clear(&a->scache);
    a->epoch++;
    memset(a->touched, 0, sizeof a->touched);
}

void vmp_forget__range(vmp_analysis *a, uint64_t start, uint64_t end)
{
    uint64_t p, first = start >> TOUCH_SHIFT, last = (end - 1) >> TOUCH_SHIFT;
    if (!a->any_sample || end <= start)
        return;
    if (last - first >= TOUCH_BITS - 1)
        last = first + TOUCH_BITS - 1; /* every bit */
    for (p = first; p <= last; p++) {
        uint64_t b = vmp_forget__touch_bit(p);
        if (a->touched[b / 64] & ((uint64_t)1 << (b % 64)))
            break;
    }
    if (p > last)
        return; /* no address resolved there */
    if (last - first >= TOUCH_BITS - 1 || a->forgets == UINT32_MAX) {
        vmp_forget__all(a);
        return;
    }
    /* the memos with a frame in these blocks, when next used (vmp_resolve.c);
     * the older generations' hash, all of it */
    a->forgets++;
    for (p = first; p <= last; p++)
        a->forgot[vmp_forget__touch_bit(p)] = a->forgets;
    if (a->scache.n)
        vmp_hmap__clear(&a->scache);
}
