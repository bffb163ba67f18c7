/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* Who hears the code's output as it is written, while the code runs: a streamed response, or an MCP
 * call's progress. The worker's streamed exchange with a runner (nspawn/pool/pool-socket.h) calls
 * chunk() with each piece of stdout (stream 1) or stderr (stream 2) up to the output cap, in order,
 * and idle() when nothing came for idle_usec (0: OUTPUT_IDLE_USEC), so that a stream can say it is
 * alive. Either returns < 0 when its listener is gone: the run is then ended as for a client that
 * went away. */
#define OUTPUT_IDLE_USEC (10ULL * 1000ULL * 1000ULL)
typedef struct OutputListener {
        int (*chunk)(void *userdata, int stream, const void *data, size_t len);
        int (*idle)(void *userdata);
        void *userdata;
        uint64_t idle_usec;
} OutputListener;
