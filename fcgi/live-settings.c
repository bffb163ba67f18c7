/* SPDX-License-Identifier: MIT */
#include <sys/mman.h>

#include "fcgi/live-settings.h"
#include "lib/config.h"

LiveSettings *live_settings_new(const Config *c) {
        LiveSettings *l = mmap(NULL, sizeof(LiveSettings), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

        if (l == MAP_FAILED)
                return NULL;
        live_settings_store(l, c);
        return l;
}

void live_settings_store(LiveSettings *l, const Config *c) {
        atomic_store(&l->api_keys, c->api_keys);
}

void live_settings_load(const LiveSettings *l, Config *c) {
        c->api_keys = atomic_load(&l->api_keys);
}
