/* The broker-auth endpoint over libcurl: one handle, kept alive, with a short timeout. */
#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>

#include "plugin_internal.h"

static CURL *handle;

struct reply {
    char *text;
    size_t size;
    size_t used;
};

/* Keeps what fits of the answer's body; the rest is read and dropped. */
static size_t keep(char *data, size_t size, size_t count, void *user)
{
    struct reply *reply = user;
    size_t bytes = size * count;
    size_t room = reply->size - 1 - reply->used;
    size_t kept = bytes < room ? bytes : room;
    memcpy(reply->text + reply->used, data, kept);
    reply->used += kept;
    reply->text[reply->used] = '\0';
    return bytes;
}

/* Appends `text` as a JSON string. */
static void json_string(char *out, size_t cap, const char *text)
{
    size_t o = strlen(out);
    if (o + 2 >= cap) return;
    out[o++] = '"';
    for (const unsigned char *p = (const unsigned char *)text; *p && o + 7 < cap; p++) {
        if (*p == '"' || *p == '\\') {
            out[o++] = '\\';
            out[o++] = (char)*p;
        } else if (*p < 0x20) {
            o += (size_t)snprintf(out + o, cap - o, "\\u%04x", *p);
        } else {
            out[o++] = (char)*p;
        }
    }
    out[o++] = '"';
    out[o] = '\0';
}

int endpoint_acl(const char *url, long timeout_ms, const char *username, const char *client_id, const char *topic, int access,
                 char *reply_text, size_t reply_size)
{
    if (reply_size == 0) return -1;
    reply_text[0] = '\0';
    struct reply reply = {reply_text, reply_size, 0};
    if (handle == NULL) {
        handle = curl_easy_init();
        if (handle == NULL) return -1;
    }
    char body[2048] = "{\"username\":";
    json_string(body, sizeof body, username);
    strncat(body, ",\"clientid\":", sizeof body - strlen(body) - 1);
    json_string(body, sizeof body, client_id);
    strncat(body, ",\"topic\":", sizeof body - strlen(body) - 1);
    json_string(body, sizeof body, topic);
    char tail[32];
    snprintf(tail, sizeof tail, ",\"acc\":%d}", access);
    strncat(body, tail, sizeof body - strlen(body) - 1);

    struct curl_slist *headers = curl_slist_append(NULL, "Content-Type: application/json");
    curl_easy_reset(handle);
    curl_easy_setopt(handle, CURLOPT_URL, url);
    curl_easy_setopt(handle, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(handle, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(handle, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(handle, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
    curl_easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, keep);
    curl_easy_setopt(handle, CURLOPT_WRITEDATA, &reply);
    CURLcode rc = curl_easy_perform(handle);
    long status = 0;
    if (rc == CURLE_OK) curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &status);
    curl_slist_free_all(headers);
    if (rc != CURLE_OK) return -1;
    if (status == 200) return 1;
    if (status == 403) return 0;
    return -1;
}

void endpoint_cleanup(void)
{
    if (handle != NULL) curl_easy_cleanup(handle);
    handle = NULL;
}
