/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <json-c/json.h>
#include <string.h>

#include "lib/json-util.h"
#include "tests/unit/tap.h"

static void test_text(void) {
        struct json_object *o = json_tokener_parse("{\"a\":\"abc\",\"n\":1,\"z\":null}");
        char buf[4] = "xyz";

        tap_is_int(json_get_text(o, "a", buf, sizeof(buf)), 0, "a string that fits with its NUL is read");
        tap_is_str(buf, "abc", "... whole");
        strcpy(buf, "xyz");
        tap_is_int(json_get_text(o, "a", buf, 3), -EBADMSG, "one that does not fit is refused");
        tap_is_int(json_get_text(o, "n", buf, sizeof(buf)), -EBADMSG, "a number is no string");
        tap_is_int(json_get_text(o, "z", buf, sizeof(buf)), -EBADMSG, "nor is null");
        tap_is_int(json_get_text(o, "absent", buf, sizeof(buf)), -EBADMSG, "an absent field is refused");
        tap_is_str(buf, "xyz", "... and nothing was written");
        tap_is_int(json_to_text(NULL, buf, sizeof(buf)), -EBADMSG, "no value at all is refused");
        json_object_put(o);
}

static void test_numbers(void) {
        struct json_object *o = json_tokener_parse(
                "{\"c\":7,\"neg\":-1,\"d\":2.5,\"s\":\"7\",\"t\":true,\"f\":false,\"nan\":NaN,\"inf\":Infinity,\"big\":9.3e18}");
        int64_t c = 99;
        double d = 99;
        bool b = false;

        tap_is_int(json_get_count(o, "c", &c), 0, "a count is read");
        tap_is_int((int) c, 7, "... its value");
        c = 99;
        tap_is_int(json_get_count(o, "neg", &c), -EBADMSG, "a negative count is refused");
        tap_is_int(json_get_count(o, "d", &c), -EBADMSG, "a fraction is no count");
        tap_is_int(json_get_count(o, "s", &c), -EBADMSG, "nor is a string of digits");
        tap_is_int((int) c, 99, "... and nothing was written");
        tap_is_int(json_get_number(o, "d", &d), 0, "a fraction is a number");
        tap_ok(d == 2.5, "... its value");
        tap_is_int(json_get_number(o, "c", &d), 0, "so is an integer");
        tap_ok(d == 7, "... its value");
        tap_is_int(json_get_number(o, "neg", &d), -EBADMSG, "a negative number is refused");
        tap_is_int(json_get_number(o, "nan", &d), -EBADMSG, "NaN is refused");
        tap_is_int(json_get_number(o, "inf", &d), -EBADMSG, "Infinity is refused");
        tap_is_int(json_get_number(o, "big", &d), -EBADMSG, "2^63 and more is refused");
        tap_ok(d == 7, "... and nothing was written");
        tap_is_int(json_get_bool(o, "t", &b), 0, "true is read");
        tap_ok(b, "... as true");
        tap_is_int(json_get_bool(o, "f", &b), 0, "false is read");
        tap_ok(!b, "... as false");
        tap_is_int(json_get_bool(o, "c", &b), -EBADMSG, "a number is no boolean");
        json_object_put(o);
}

static void test_add(void) {
        struct json_object *o = json_object_new_object();

        tap_is_int(json_add_text(o, "a", "x"), 0, "a string added");
        tap_is_int(json_add_int(o, "b", -3), 0, "an integer added");
        tap_is_int(json_add_double(o, "c", 0.5), 0, "a fraction added");
        tap_is_int(json_add_bool(o, "d", true), 0, "a boolean added");
        tap_is_str(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN), "{\"a\":\"x\",\"b\":-3,\"c\":0.5,\"d\":true}", "... all four");
        json_object_put(o);
}

int main(void) {
        test_text();
        test_numbers();
        test_add();
        return tap_done();
}
