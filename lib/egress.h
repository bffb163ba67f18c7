/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Egress by name (README, "Network"): what a sandbox's code may reach through the egress proxy.
 * Three lists say it, each narrower than the last: the operator's (/etc/sandboxd/egress.allow),
 * a key's (sandboxctl key add --egress) and a request's ("network": {"allow": [...]}). Every entry
 * has one shape: a host name ("pypi.org") or every name below a suffix ("*.example.com", not
 * example.com itself), either with one port (":8443"); without one, ports 80 and 443. */

#define EGRESS_NAME_MAX 253
/* An entry as text at most: "*." + a name + ":65535". */
#define EGRESS_ENTRY_MAX (2 + EGRESS_NAME_MAX + 6)
/* The most entries a list may have: the operator's file, a key's, a request's. */
#define EGRESS_LIST_MAX 256
#define EGRESS_REQUEST_MAX 32
/* A key's list as sqlite keeps it, entries separated by commas. */
#define EGRESS_KEY_TEXT_MAX 4096

typedef struct EgressRule {
        char name[EGRESS_NAME_MAX + 1]; /* lower case; for a wildcard, the suffix after "*." */
        bool wildcard;
        uint16_t port; /* 0: 80 and 443 */
} EgressRule;

typedef struct EgressList {
        EgressRule *rules;
        size_t n;
} EgressList;

/* One entry, len bytes of s (no NUL needed): 0 and *ret, or -EINVAL for anything but a host name
 * (letters, digits and '-' in labels of 1 to 63, at least two labels, the last not all digits: an
 * address is no name) or a wildcard over one, with an optional port 1..65535. Upper case is taken
 * as lower case, as DNS does. Pure. */
int egress_rule_parse(const char *s, size_t len, EgressRule *ret);

/* The entry as text ("*.example.com:8443") into buf: 0, or -ENOBUFS. Pure. */
int egress_rule_format(const EgressRule *rule, char *buf, size_t size);

/* Whether every name and port that what stands for is one that rule lets through. Pure. */
bool egress_rule_covers(const EgressRule *rule, const EgressRule *what);

/* Whether one rule of l covers what: a request's entry is checked against each list alone. Pure. */
bool egress_list_covers(const EgressList *l, const EgressRule *what);

/* The operator's file: an entry a line, blank lines and '#' comments (whole lines or after an entry)
 * ignored. 0 and *ret (the caller's, egress_list_done()), or -EINVAL with the first bad line's
 * number in *ret_line, -E2BIG past EGRESS_LIST_MAX entries, -ENOMEM. Pure. */
int egress_list_parse_text(const char *text, size_t len, EgressList *ret, unsigned *ret_line);

/* A key's list: entries separated by commas, as sandboxctl takes it and sqlite keeps it. 0 and
 * *ret; -EINVAL with the first bad entry's index in *ret_index; -E2BIG; -ENOMEM. Pure. */
int egress_list_parse_csv(const char *s, EgressList *ret, size_t *ret_index);

void egress_list_done(EgressList *l);
