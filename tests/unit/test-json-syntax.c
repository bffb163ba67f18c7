/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>

#include "lib/json-syntax.h"
#include "lib/macro.h"
#include "tests/unit/tap.h"

typedef struct Case {
        const char *text;
        bool valid;
} Case;

static const Case cases[] = {
        /* Values, top level and nested. */
        {"{}", true},
        {"[]", true},
        {" \t\r\n{ } \n", true},
        {"{\"a\":1}", true},
        {"{\"a\" : [1, 2.5, -0, -0.0, 1e3, 1E+3, 1e-3, 0.5e10], \"b\":{\"c\":null}}", true},
        {"[true,false,null,\"s\",{},[]]", true},
        {"\"bare string\"", true},
        {"0", true},
        {"-12", true},
        /* Strings: escapes, and bytes above 0x7f as they are (their UTF-8 is checked elsewhere). */
        {"{\"c\":\"caf\xc3\xa9 \xf0\x9f\x98\x80\"}", true},
        {"{\"c\":\"\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u00e9 \\uD83D\\uDE00 \\u0000\"}", true},
        {"{\"c\":\"\\x41\"}", false},
        {"{\"c\":\"\\u12\"}", false},
        {"{\"c\":\"\\u12g4\"}", false},
        {"{\"c\":\"\\", false},
        {"{\"c\":\"a\x01\"}", false},
        {"{\"c\":\"tab\tinside\"}", false},
        {"{\"c\":\"unterminated}", false},
        {"{'c':'single'}", false},
        /* Numbers of any size pass; their forms are RFC 8259's only. */
        {"{\"t\":18446744073709551621}", true},
        {"{\"t\":-99999999999999999999}", true},
        {"{\"t\":1e999}", true},
        {"{\"t\":05}", false},
        {"{\"t\":-}", false},
        {"{\"t\":+1}", false},
        {"{\"t\":1.}", false},
        {"{\"t\":.5}", false},
        {"{\"t\":1e}", false},
        {"{\"t\":1e+}", false},
        {"{\"t\":0x10}", false},
        {"{\"t\":NaN}", false},
        {"{\"t\":-Infinity}", false},
        {"{\"t\":Infinity}", false},
        /* Literals, whole. */
        {"[tru]", false},
        {"[truex]", false},
        {"[nul]", false},
        {"[None]", false},
        /* Structure. */
        {"", false},
        {"   ", false},
        {"{", false},
        {"}", false},
        {"{\"a\":1,}", false},
        {"[1,]", false},
        {"[,1]", false},
        {"{,}", false},
        {"{\"a\"}", false},
        {"{\"a\":}", false},
        {"{\"a\" 1}", false},
        {"{1:2}", false},
        {"[1 2]", false},
        {"[1}", false},
        {"{\"a\":1]", false},
        {"{}{}", false},
        {"{} x", false},
        {"/* c */{}", false},
        {"{} // c", false},
        {"\xef\xbb\xbf{}", false},
        {"{\"a\":1}\xc3\xa9", false},
};

static char *nested(size_t depth) {
        char *b = malloc(2 * depth + 2);

        if (!b)
                abort();
        memset(b, '[', depth);
        b[depth] = '1';
        memset(b + depth + 1, ']', depth);
        b[2 * depth + 1] = 0;
        return b;
}

/* A case's text for its TAP line: a control character would break the line. */
static const char *shown(const char *text) {
        static char buf[256];
        size_t i;

        for (i = 0; text[i] && i < sizeof(buf) - 1; i++)
                buf[i] = (unsigned char) text[i] < 0x20 ? '.' : text[i];
        buf[i] = 0;
        return buf;
}

static void test_cases(void) {
        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                tap_ok(json_syntax_valid(cases[i].text, strlen(cases[i].text), 64) == cases[i].valid, "%s: %s", cases[i].valid ? "valid" : "invalid",
                       shown(cases[i].text));
}

static void test_length(void) {
        /* The length rules, not a NUL: a text cut short is not whole, and one that goes on is not one. */
        tap_ok(!json_syntax_valid("{\"a\":1}", 6, 64), "cut short: invalid");
        tap_ok(json_syntax_valid("{\"a\":\"\0\"}", 9, 64) == false, "a raw NUL inside a string: invalid");
        tap_ok(!json_syntax_valid("{}\0", 3, 64), "a NUL after the text: invalid");
        tap_ok(!json_syntax_valid(NULL, 0, 64), "no text: invalid");
}

static void test_depth(void) {
        char *b;

        b = nested(64);
        tap_ok(json_syntax_valid(b, strlen(b), 64), "64 arrays open at once, 64 allowed: valid");
        free(b);
        b = nested(65);
        tap_ok(!json_syntax_valid(b, strlen(b), 64), "65 arrays open at once, 64 allowed: invalid");
        free(b);
        b = nested(100000);
        tap_ok(!json_syntax_valid(b, strlen(b), JSON_SYNTAX_DEPTH_MAX), "100000 arrays open: invalid, with no recursion");
        free(b);
        tap_ok(json_syntax_valid("[[],[],[[]],{\"a\":[{}]}]", 23, 4), "siblings do not add up: depth 4 allowed, valid");
        tap_ok(!json_syntax_valid("[[],[],[[]],{\"a\":[{}]}]", 23, 3), "and depth 3 allowed: invalid");
        tap_ok(!json_syntax_valid("[]", 2, JSON_SYNTAX_DEPTH_MAX + 1), "a bound above JSON_SYNTAX_DEPTH_MAX is refused");
}

static void test_counts(void) {
        static const struct {
                const char *text;
                size_t values, containers, top;
        } counted[] = {
                {"1", 1, 0, 0},
                {"[]", 1, 1, 0},
                {"{}", 1, 1, 0},
                {"[1,2,3]", 4, 1, 3},
                {" [ [] , {} , \"x\" ] ", 4, 3, 3},
                {"{\"a\":1,\"b\":[1,{\"c\":null}]}", 6, 3, 2},
                {"[{\"jsonrpc\":\"2.0\",\"id\":1},{\"jsonrpc\":\"2.0\",\"id\":2}]", 7, 3, 2},
        };

        for (size_t i = 0; i < ELEMENTSOF(counted); i++) {
                JsonSyntaxCounts c;

                tap_ok(json_syntax_scan(counted[i].text, strlen(counted[i].text), 64, &c), "%s is valid", counted[i].text);
                tap_is_int((long long) c.values, (long long) counted[i].values, "%s: values", counted[i].text);
                tap_is_int((long long) c.containers, (long long) counted[i].containers, "%s: containers", counted[i].text);
                tap_is_int((long long) c.top, (long long) counted[i].top, "%s: top", counted[i].text);
        }
}

int main(void) {
        test_cases();
        test_length();
        test_depth();
        test_counts();
        return tap_done();
}
