/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "nspawn/pool/pool-retire.h"
#include "tests/unit/tap.h"

/* Every reason has a label, a valid and distinct Prometheus label value of its own, and words. */
int main(void) {
        tap_ok(pool_retire_label(POOL_RETIRE_NONE) == NULL && pool_retire_text(POOL_RETIRE_NONE) == NULL, "none: no label, no text");
        tap_ok(pool_retire_label(_POOL_RETIRE_MAX) == NULL && pool_retire_label((PoolRetire) -1) == NULL, "out of range: no label");
        for (PoolRetire r = POOL_RETIRE_NONE + 1; r < _POOL_RETIRE_MAX; r++) {
                const char *l = pool_retire_label(r), *t = pool_retire_text(r);

                tap_ok(l && *l && strspn(l, "abcdefghijklmnopqrstuvwxyz_") == strlen(l), "reason %d: label '%s'", (int) r, l ? l : "(null)");
                tap_ok(t && *t, "reason %d: text '%s'", (int) r, t ? t : "(null)");
                for (PoolRetire u = POOL_RETIRE_NONE + 1; l && u < r; u++)
                        if (strcmp(l, pool_retire_label(u)) == 0)
                                tap_ok(0, "reason %d: label '%s' is also reason %d's", (int) r, l, (int) u);
        }
        return tap_done();
}
