/* ISO timestamp text of the common shape, one rule for the C loops (_speedups.c) and the
 * native engine core (_native_core.cpp): YYYY-MM-DD[T ]HH:MM:SS[.fff|.ffffff][Z|+00:00|-00:00].
 * Anything else is left to the Python engine's parser (data_types.parse_iso_timestamp). */
#ifndef LOADSTONE_ISO_TEXT_H
#define LOADSTONE_ISO_TEXT_H

#include <stddef.h>
#include <string.h>

/* the decimal value of text[start:start+count] into *out; 0 when a character is no digit */
static inline int
iso_digits(const char *text, size_t start, size_t count, int *out)
{
    int value = 0;
    for (size_t i = start; i < start + count; i++) {
        if (text[i] < '0' || text[i] > '9') {
            return 0;
        }
        value = value * 10 + (text[i] - '0');
    }
    *out = value;
    return 1;
}

/* days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil) */
static inline long long
iso_days_from_civil(long long y, unsigned m, unsigned d)
{
    y -= m <= 2;
    const long long era = (y >= 0 ? y : y - 399) / 400;
    const unsigned yoe = (unsigned)(y - era * 400);
    const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (long long)doe - 719468;
}

/* The fields of `s` (year, month, day, hour, minute, second, microsecond) when it has the
 * common shape and a valid time of day; 0 for anything else. The date itself is not checked
 * here: each caller says what an impossible date is. */
static inline int
iso_common_fields(const char *s, size_t size, int fields[7])
{
    fields[6] = 0;
    if (size < 19 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != ' ') ||
        s[13] != ':' || s[16] != ':' || !iso_digits(s, 0, 4, &fields[0]) ||
        !iso_digits(s, 5, 2, &fields[1]) || !iso_digits(s, 8, 2, &fields[2]) ||
        !iso_digits(s, 11, 2, &fields[3]) || !iso_digits(s, 14, 2, &fields[4]) ||
        !iso_digits(s, 17, 2, &fields[5])) {
        return 0;
    }
    size_t at = 19;
    if (at < size && s[at] == '.') {
        size_t count = 0;
        while (at + 1 + count < size && s[at + 1 + count] >= '0' && s[at + 1 + count] <= '9') {
            count++;
        }
        if (count != 3 && count != 6) {
            return 0;
        }
        iso_digits(s, at + 1, count, &fields[6]);
        if (count == 3) {
            fields[6] *= 1000;
        }
        at += 1 + count;
    }
    size_t rest = size - at;
    if (!(rest == 0 || (rest == 1 && s[at] == 'Z') ||
          (rest == 6 && (s[at] == '+' || s[at] == '-') && memcmp(s + at + 1, "00:00", 5) == 0))) {
        return 0;
    }
    return fields[3] <= 23 && fields[4] <= 59 && fields[5] <= 59;
}

#endif
