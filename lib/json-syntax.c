/* SPDX-License-Identifier: MIT */
#include "lib/json-syntax.h"

/* json-c decides what a body is strictly only in part, and differently from one version to the
 * next: 0.16's strict mode takes NaN and ill-formed UTF-8, 0.18's refuses every byte above 0x7f in a
 * string and every integer beyond 64 bits. The grammar is checked here instead, once, the same on
 * every release; json-c then only builds the objects. */

static const char *skip_ws(const char *p, const char *end) {
        while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
                p++;
        return p;
}

static bool is_digit(char c) {
        return c >= '0' && c <= '9';
}

static bool is_hex(char c) {
        return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* At '"': past the closing quote. */
static bool scan_string(const char **pp, const char *end) {
        const char *p = *pp + 1;

        while (p < end) {
                unsigned char c = (unsigned char) *p;

                if (c == '"') {
                        *pp = p + 1;
                        return true;
                }
                if (c < 0x20)
                        return false;
                if (c != '\\') {
                        p++;
                        continue;
                }
                if (++p == end)
                        return false;
                switch (*p) {
                case '"':
                case '\\':
                case '/':
                case 'b':
                case 'f':
                case 'n':
                case 'r':
                case 't':
                        p++;
                        break;
                case 'u':
                        if (end - p < 5 || !is_hex(p[1]) || !is_hex(p[2]) || !is_hex(p[3]) || !is_hex(p[4]))
                                return false;
                        p += 5;
                        break;
                default:
                        return false;
                }
        }
        return false;
}

static const char *scan_digits(const char *p, const char *end) {
        while (p < end && is_digit(*p))
                p++;
        return p;
}

/* -? (0 | [1-9][0-9]*) (.[0-9]+)? ([eE][+-]?[0-9]+)? */
static bool scan_number(const char **pp, const char *end) {
        const char *p = *pp, *q;

        if (p < end && *p == '-')
                p++;
        if (p == end || !is_digit(*p))
                return false;
        p = *p == '0' ? p + 1 : scan_digits(p, end);
        if (p < end && *p == '.') {
                q = scan_digits(p + 1, end);
                if (q == p + 1)
                        return false;
                p = q;
        }
        if (p < end && (*p == 'e' || *p == 'E')) {
                p++;
                if (p < end && (*p == '+' || *p == '-'))
                        p++;
                q = scan_digits(p, end);
                if (q == p)
                        return false;
                p = q;
        }
        *pp = p;
        return true;
}

static bool scan_word(const char **pp, const char *end, const char *word) {
        const char *p = *pp;

        for (; *word; word++, p++)
                if (p == end || *p != *word)
                        return false;
        *pp = p;
        return true;
}

static bool scan_scalar(const char **pp, const char *end) {
        switch (**pp) {
        case '"':
                return scan_string(pp, end);
        case 't':
                return scan_word(pp, end, "true");
        case 'f':
                return scan_word(pp, end, "false");
        case 'n':
                return scan_word(pp, end, "null");
        default:
                return scan_number(pp, end);
        }
}

/* An object's member name and its colon, white space around them. */
static bool scan_key(const char **pp, const char *end) {
        const char *p = skip_ws(*pp, end);

        if (p == end || *p != '"' || !scan_string(&p, end))
                return false;
        p = skip_ws(p, end);
        if (p == end || *p != ':')
                return false;
        *pp = p + 1;
        return true;
}

bool json_syntax_valid(const char *s, size_t len, unsigned max_depth) {
        JsonSyntaxCounts c;

        return json_syntax_scan(s, len, max_depth, &c);
}

bool json_syntax_scan(const char *s, size_t len, unsigned max_depth, JsonSyntaxCounts *ret) {
        const char *p = s, *end = s + len;
        /* What closes each array or object open, innermost last: no recursion, whatever the input. */
        char closers[JSON_SYNTAX_DEPTH_MAX];
        unsigned depth = 0;

        *ret = (JsonSyntaxCounts){};
        if (!s || max_depth > JSON_SYNTAX_DEPTH_MAX)
                return false;
        for (;;) {
                /* A value. */
                p = skip_ws(p, end);
                if (p == end)
                        return false;
                ret->values++;
                ret->top += depth == 1;
                if (*p == '{' || *p == '[') {
                        char close = *p == '{' ? '}' : ']';

                        if (depth == max_depth)
                                return false;
                        ret->containers++;
                        closers[depth++] = close;
                        p = skip_ws(p + 1, end);
                        if (p == end)
                                return false;
                        if (*p != close) {
                                if (close == '}' && !scan_key(&p, end))
                                        return false;
                                continue;
                        }
                        p++;
                        depth--;
                } else if (!scan_scalar(&p, end))
                        return false;

                /* After a value: the end, or a comma and the next member, or closers. */
                for (;;) {
                        p = skip_ws(p, end);
                        if (depth == 0)
                                return p == end;
                        if (p == end)
                                return false;
                        if (*p == ',') {
                                p++;
                                if (closers[depth - 1] == '}' && !scan_key(&p, end))
                                        return false;
                                break;
                        }
                        if (*p != closers[depth - 1])
                                return false;
                        p++;
                        depth--;
                }
        }
}
