/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdatomic.h>

typedef struct Config Config;

/* The settings a reload changes while the workers run (lib/settings.h, settings_is_live()), in one
 * shared page that the master maps before it forks and writes on reload. A request copies them into
 * its own settings when it starts: one request sees one value throughout. */
typedef struct LiveSettings {
        atomic_bool api_keys;
} LiveSettings;

/* The page, holding c's: NULL on failure (errno set). */
LiveSettings *live_settings_new(const Config *c);

/* c's into the page (the master's, after a reload). */
void live_settings_store(LiveSettings *l, const Config *c);

/* The page's into c (a request's copy of the worker's settings). */
void live_settings_load(const LiveSettings *l, Config *c);
