/* Reading the flat JSON objects the plugin is sent: Parley's control commands and the
   broker-auth endpoint's answers, both written by Parley in a fixed shape. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin_internal.h"

void json_each_string(const char *json, const char *name, void (*each)(const char *, void *), void *context)
{
    char needle[64];
    snprintf(needle, sizeof needle, "\"%s\"", name);
    const char *p = strstr(json, needle);
    if (p == NULL || (p = strchr(p, '[')) == NULL) return;
    const char *end = strchr(p, ']');
    while (end != NULL && (p = strchr(p, '"')) != NULL && p < end) {
        const char *close = strchr(p + 1, '"');
        if (close == NULL || close > end) return;
        if (close - p - 1 < 320) { /* longer entries cannot be ours: skip them */
            char value[320];
            memcpy(value, p + 1, (size_t)(close - p - 1));
            value[close - p - 1] = '\0';
            each(value, context);
        }
        p = close + 1;
    }
}

/* The value after `"name":`, or NULL. */
static const char *value_of(const char *json, const char *name)
{
    char needle[64];
    snprintf(needle, sizeof needle, "\"%s\":", name);
    const char *p = strstr(json, needle);
    return p == NULL ? NULL : p + strlen(needle);
}

long json_number(const char *json, const char *name)
{
    const char *value = value_of(json, name);
    return value == NULL ? 0 : strtol(value, NULL, 10);
}

bool json_true(const char *json, const char *name)
{
    const char *value = value_of(json, name);
    return value != NULL && strncmp(value, "true", 4) == 0;
}
