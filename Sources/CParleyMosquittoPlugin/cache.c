/* Decisions of the broker-auth endpoint, cached so READ checks never touch the network. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "plugin_internal.h"

#define CACHE_SLOTS 65536

/* Each entry is in two chains: its key's, for look-ups, and its client's (every entry of one
   username and client id), so a CONNECT and a DISCONNECT clear one client's entries without
   walking the whole table (two walks of 65,536 slots per connection held a connect storm to
   half of plugin-less mosquitto's rate). Each chain link also knows what points at it, so an
   entry leaves both chains at once. */
typedef struct cache_entry {
    char *key; /* "<username>\x01<client id>\x01<access>\x01<topic>" */
    bool allowed;
    time_t expires;
    struct cache_entry *next, **link;
    struct cache_entry *client_next, **client_link;
} cache_entry;

static cache_entry *slots[CACHE_SLOTS];
static cache_entry *client_slots[CACHE_SLOTS];
static size_t count;

static time_t now_seconds(void) { return time(NULL); }

unsigned long text_hash(const char *text)
{
    unsigned long h = 5381;
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) h = h * 33 + *p;
    return h;
}

static unsigned long hash(const char *text) { return text_hash(text) % CACHE_SLOTS; }

/* The slot of a client's chain: the hash of "<username>\x01<client id>\x01". */
static unsigned long client_hash(const char *username, size_t user_len, const char *client_id, size_t client_len)
{
    unsigned long h = 5381;
    for (size_t i = 0; i < user_len; i++) h = h * 33 + (unsigned char)username[i];
    h = h * 33 + 1;
    for (size_t i = 0; i < client_len; i++) h = h * 33 + (unsigned char)client_id[i];
    return (h * 33 + 1) % CACHE_SLOTS;
}

/* The client slot of a key: its first two fields. */
static unsigned long key_client_hash(const char *key)
{
    const char *client = strchr(key, '\x01');
    if (client == NULL) return 0;
    client++;
    const char *end = strchr(client, '\x01');
    size_t client_len = end ? (size_t)(end - client) : strlen(client);
    return client_hash(key, (size_t)(client - key - 1), client, client_len);
}

static void push(cache_entry **head, cache_entry *e)
{
    e->next = *head;
    if (*head != NULL) (*head)->link = &e->next;
    *head = e;
    e->link = head;
}

static void push_client(cache_entry **head, cache_entry *e)
{
    e->client_next = *head;
    if (*head != NULL) (*head)->client_link = &e->client_next;
    *head = e;
    e->client_link = head;
}

/* Takes an entry out of both its chains and frees it. */
static void free_entry(cache_entry *e)
{
    *e->link = e->next;
    if (e->next != NULL) e->next->link = e->link;
    *e->client_link = e->client_next;
    if (e->client_next != NULL) e->client_next->client_link = e->client_link;
    free(e->key);
    free(e);
    count--;
}

/* Writes the key "<username>\x01<client id>\x01<access>\x01<topic>" into `out` when it fits
   in `size` bytes with its terminator, and returns its length either way. Without snprintf:
   every delivery looks a key up, and formatting it was most of what a look-up cost. */
static size_t write_key(char *out, size_t size, const char *username, const char *client_id, int access, const char *topic)
{
    char digits[12];
    size_t n = 0;
    unsigned int value = access < 0 ? 0u - (unsigned int)access : (unsigned int)access;
    do {
        digits[sizeof digits - 1 - n++] = (char)('0' + value % 10);
        value /= 10;
    } while (value != 0);
    if (access < 0) digits[sizeof digits - 1 - n++] = '-';
    const char *parts[] = {username, "\x01", client_id, "\x01", digits + sizeof digits - n, "\x01", topic};
    size_t lengths[] = {strlen(username), 1, strlen(client_id), 1, n, 1, strlen(topic)};
    size_t total = 0;
    for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++) total += lengths[i];
    if (total < size) {
        char *at = out;
        for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++) {
            memcpy(at, parts[i], lengths[i]);
            at += lengths[i];
        }
        *at = '\0';
    }
    return total;
}

static char *make_key(const char *username, const char *client_id, int access, const char *topic)
{
    size_t len = write_key(NULL, 0, username, client_id, access, topic) + 1;
    char *key = malloc(len);
    if (key != NULL) write_key(key, len, username, client_id, access, topic);
    return key;
}

int cache_lookup(const char *username, const char *client_id, int access, const char *topic, time_t now)
{
    /* On the stack when it fits (a topic is at most 256 bytes, a user id 19): no allocation
       per delivery. */
    char local[384];
    char *key = local;
    if (write_key(local, sizeof local, username, client_id, access, topic) >= sizeof local) {
        key = make_key(username, client_id, access, topic);
        if (key == NULL) return -1;
    }
    int result = -1;
    for (cache_entry *e = slots[hash(key)]; e != NULL; e = e->next) {
        if (strcmp(e->key, key) == 0) {
            if (e->expires > now) result = e->allowed ? 1 : 0;
            break;
        }
    }
    if (key != local) free(key);
    return result;
}

/* Keeps `key` (taken: freed here unless kept). */
static void store_key(char *key, bool allowed, time_t expires)
{
    if (key == NULL) return;
    if (count >= CACHE_SLOTS * 4) cache_evict(now_seconds());
    unsigned long h = hash(key);
    for (cache_entry *e = slots[h]; e != NULL; e = e->next) {
        if (strcmp(e->key, key) == 0) {
            e->allowed = allowed;
            e->expires = expires;
            free(key);
            return;
        }
    }
    cache_entry *e = malloc(sizeof *e);
    if (e == NULL) {
        free(key);
        return;
    }
    e->key = key;
    e->allowed = allowed;
    e->expires = expires;
    push(&slots[h], e);
    push_client(&client_slots[key_client_hash(key)], e);
    count++;
}

void cache_store(const char *username, const char *client_id, int access, const char *topic, bool allowed, time_t expires)
{
    store_key(make_key(username, client_id, access, topic), allowed, expires);
}

/* Whether `topic` matches `pattern`, whose `+` levels match any one level (MQTT's single-level
   wildcard; `#` is not a wildcard here). */
static bool topic_matches(const char *pattern, const char *topic)
{
    while (*pattern != '\0') {
        if (*pattern == '+' && (pattern[1] == '/' || pattern[1] == '\0')) {
            while (*topic != '\0' && *topic != '/') topic++;
            pattern++;
        } else if (*pattern++ != *topic++) {
            return false;
        }
    }
    return *topic == '\0';
}

/* Whether `key` ("<username>\x01<client id>\x01<access>\x01<topic>") matches; NULL matches
   anything, and the topic may hold `+` levels (topic_matches). */
static bool matches(const char *key, const char *username, const char *client_id, const char *topic)
{
    const char *fields[4];
    fields[0] = key;
    for (int i = 1; i < 4; i++) {
        const char *separator = strchr(fields[i - 1], '\x01');
        if (separator == NULL) return false;
        fields[i] = separator + 1;
    }
    size_t user_len = (size_t)(fields[1] - fields[0] - 1), client_len = (size_t)(fields[2] - fields[1] - 1);
    if (username && (strlen(username) != user_len || strncmp(fields[0], username, user_len) != 0)) return false;
    if (client_id && (strlen(client_id) != client_len || strncmp(fields[1], client_id, client_len) != 0)) return false;
    if (topic && (strchr(topic, '+') ? !topic_matches(topic, fields[3]) : strcmp(fields[3], topic) != 0)) return false;
    return true;
}

/* Whether a key is a READ decision (a delivery to an authorised subscription): four fields,
   the third MOSQ_ACL_READ. */
static bool is_read_key(const char *key)
{
    const char *access = strchr(key, '\x01');
    access = access ? strchr(access + 1, '\x01') : NULL;
    return access != NULL && access[1] == '1' && access[2] == '\x01';
}

static bool is_read(const cache_entry *e) { return is_read_key(e->key); }

/* The walk of the whole table: drops every entry `drop` says to. */
static void remove_where(bool (*drop)(const cache_entry *e, const void *context), const void *context)
{
    for (size_t i = 0; i < CACHE_SLOTS; i++) {
        cache_entry *e = slots[i];
        while (e != NULL) {
            cache_entry *next = e->next;
            if (drop(e, context)) free_entry(e);
            e = next;
        }
    }
}

/* The walk of one client's chain (others hashed to its slot are not theirs: `drop` checks). */
static void remove_client_where(
    const char *username, const char *client_id, bool (*drop)(const cache_entry *e, const void *context),
    const void *context)
{
    cache_entry *e = client_slots[client_hash(username, strlen(username), client_id, strlen(client_id))];
    while (e != NULL) {
        cache_entry *next = e->client_next;
        if (drop(e, context)) free_entry(e);
        e = next;
    }
}

typedef struct {
    const char *username, *client_id, *topic;
} match_fields;

static bool drop_matching(const cache_entry *e, const void *context)
{
    const match_fields *m = context;
    return matches(e->key, m->username, m->client_id, m->topic);
}

static bool drop_matching_decision(const cache_entry *e, const void *context)
{
    return !is_read(e) && drop_matching(e, context);
}

static bool drop_expired_or_decision(const cache_entry *e, const void *context)
{
    time_t now = *(const time_t *)context;
    return !(e->expires > now && is_read(e));
}

/* Drops the decisions that match; NULL arguments match anything (all NULL: everything). */
void cache_clear_matching(const char *username, const char *client_id, const char *topic)
{
    match_fields m = {username, client_id, topic};
    if (username != NULL && client_id != NULL) {
        remove_client_where(username, client_id, drop_matching, &m);
    } else {
        remove_where(drop_matching, &m);
    }
}

/* Makes room without cutting deliveries: drops expired entries and decisions, keeping the
   READ entries of authorised subscriptions. */
void cache_evict(time_t now) { remove_where(drop_expired_or_decision, &now); }

void cache_clear_decisions(const char *username, const char *client_id)
{
    match_fields m = {username, client_id, NULL};
    if (username != NULL && client_id != NULL) {
        remove_client_where(username, client_id, drop_matching_decision, &m);
    } else {
        remove_where(drop_matching_decision, &m);
    }
}

/* The READ entries in force, allowed and denied: "<expires> <0|1> <key>" lines in a new file
   (mode 0600: it names users and their rooms), synced, then renamed over `path`. */
int cache_save_reads(const char *path, time_t now)
{
    size_t len = strlen(path) + 8;
    char *temporary = malloc(len);
    if (temporary == NULL) return -1;
    snprintf(temporary, len, "%s.new", path);
    int fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    FILE *out = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (out == NULL) {
        if (fd >= 0) {
            close(fd);
            unlink(temporary);
        }
        free(temporary);
        return -1;
    }
    for (size_t i = 0; i < CACHE_SLOTS; i++) {
        for (cache_entry *e = slots[i]; e != NULL; e = e->next) {
            /* A client id may hold any character; a line break would end its line early. */
            if (!is_read(e) || e->expires <= now || strchr(e->key, '\n') != NULL) continue;
            fprintf(out, "%lld %d %s\n", (long long)e->expires, e->allowed ? 1 : 0, e->key);
        }
    }
    int rc = fflush(out) == 0 && fsync(fileno(out)) == 0 ? 0 : -1;
    if (fclose(out) != 0) rc = -1;
    if (rc == 0 && rename(temporary, path) != 0) rc = -1;
    if (rc != 0) unlink(temporary);
    free(temporary);
    return rc;
}

/* Reads what cache_save_reads wrote, then removes the file: a later crash must not bring back
   answers older than the invalidations that came since. Expiries past `latest` and lines that
   are not READ entries are skipped. Returns the entries kept: 0 without a file, -1 when it
   cannot be read. */
int cache_load_reads(const char *path, time_t now, time_t latest)
{
    FILE *in = fopen(path, "r");
    if (in == NULL) return errno == ENOENT ? 0 : -1;
    char *line = NULL;
    size_t size = 0;
    ssize_t length;
    int kept = 0;
    while ((length = getline(&line, &size, in)) > 0) {
        if (line[length - 1] == '\n') line[length - 1] = '\0';
        long long expires;
        int allowed, offset = 0;
        if (sscanf(line, "%lld %d %n", &expires, &allowed, &offset) != 2 || offset == 0) continue;
        const char *key = line + offset;
        if (expires <= now || expires > latest || (allowed != 0 && allowed != 1) || !is_read_key(key)) continue;
        store_key(strdup(key), allowed == 1, (time_t)expires);
        kept++;
    }
    free(line);
    fclose(in);
    unlink(path);
    return kept;
}
