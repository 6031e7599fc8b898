/* Revoked sessions, whose MQTT tokens the broker refuses until they would have expired anyway.
   Kept in a file when plugin_opt_revocations_file names one, so a broker restart does not
   forget them: one "<session> <expiry unix seconds>" line per revocation, appended and synced
   as it arrives (revocations are rare: a logout, a deleted account), compacted at start. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plugin_internal.h"

#define MAX_REVOKED 4096

typedef struct {
    long long session;
    time_t expires;
} revocation;

static revocation revoked[MAX_REVOKED];
static size_t revoked_count;
static char *file_path;
static long keep_seconds = 86400;

/* Keeps `session` until `expires` (once: a session listed again keeps the later expiry); when
   full, the revocation expiring first makes room. */
static void remember(long long session, time_t expires)
{
    for (size_t i = 0; i < revoked_count; i++) {
        if (revoked[i].session == session) {
            if (expires > revoked[i].expires) revoked[i].expires = expires;
            return;
        }
    }
    if (revoked_count == MAX_REVOKED) {
        size_t first = 0;
        for (size_t i = 1; i < revoked_count; i++) {
            if (revoked[i].expires < revoked[first].expires) first = i;
        }
        revoked[first] = revoked[--revoked_count];
    }
    revoked[revoked_count++] = (revocation){session, expires};
}

/* The file as it should be: the revocations still in force, nothing else. */
static void rewrite(void)
{
    size_t len = strlen(file_path) + 8;
    char *temporary = malloc(len);
    if (temporary == NULL) return;
    snprintf(temporary, len, "%s.new", file_path);
    FILE *out = fopen(temporary, "w");
    if (out != NULL) {
        for (size_t i = 0; i < revoked_count; i++) fprintf(out, "%lld %lld\n", revoked[i].session, (long long)revoked[i].expires);
        if (fflush(out) == 0 && fsync(fileno(out)) == 0 && fclose(out) == 0) {
            rename(temporary, file_path);
        } else {
            fclose(out);
        }
    }
    free(temporary);
}

int revocations_open(const char *path, long seconds, time_t now)
{
    keep_seconds = seconds;
    revoked_count = 0;
    free(file_path);
    file_path = NULL;
    if (path == NULL) return 0;
    file_path = strdup(path);
    if (file_path == NULL) return -1;
    FILE *in = fopen(path, "r");
    if (in != NULL) {
        long long session, expires;
        while (fscanf(in, "%lld %lld", &session, &expires) == 2) {
            if (expires > now) remember(session, (time_t)expires);
        }
        fclose(in);
    }
    rewrite();
    /* Writable now, or every later revocation would be lost without a word. */
    FILE *probe = fopen(path, "a");
    if (probe == NULL) return -1;
    fclose(probe);
    return 0;
}

void revocations_add(long long session, time_t now)
{
    /* Parley tells the broker at once and again through its outbox: the second is no news. */
    if (revocations_contains(session, now)) return;
    time_t expires = now + keep_seconds;
    remember(session, expires);
    if (file_path == NULL) return;
    FILE *out = fopen(file_path, "a");
    if (out == NULL) return;
    fprintf(out, "%lld %lld\n", session, (long long)expires);
    fflush(out);
    fsync(fileno(out));
    fclose(out);
}

bool revocations_contains(long long session, time_t now)
{
    for (size_t i = 0; i < revoked_count; i++) {
        if (revoked[i].session == session && revoked[i].expires > now) return true;
    }
    return false;
}

void revocations_close(void)
{
    free(file_path);
    file_path = NULL;
    revoked_count = 0;
}
