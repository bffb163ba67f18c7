/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* What POST /v1/call may call: a tool image's manifest, written by sandboxd-image build,
 * {"sandboxd-tool-image": 1, "image": NAME, "modules": {MODULE: {"path": ..., "functions": [...]}}}.
 * The worker reads the copy sandboxd-image publishes (SANDBOXD_TOOL_STATE_DIR/NAME.json); the
 * broker and the tool runner check the image's own. */

/* Whether manifest text (len bytes, then a NUL) lets module.function be called: 0 when it does; -ENOENT when it
 * is no tool image's manifest (no marker, not JSON, another image's); -ESRCH when it names no such
 * module; -ENOSYS when the module declares no such function. Pure. */
int tool_manifest_allows(const char *text, size_t len, const char *image, const char *module, const char *function);

/* The same for the manifest published for image in dir: -ENOENT also when there is none. */
int tool_manifest_check(const char *dir, const char *image, const char *module, const char *function);

/* Whether image is on a key's list of images ("a,b,c"; "" lets every tool image be called). Pure. */
bool tool_image_listed(const char *list, const char *image);
