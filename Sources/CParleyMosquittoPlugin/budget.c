/* How many ACL questions one client may send Parley per second. A cache miss blocks the
   broker's one thread for the look-up (up to plugin_opt_timeout_ms): a client subscribing to
   thousands of topics at once would stall every other client. Beyond its budget a question
   is denied without asking; the client may try again a second later. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "plugin_internal.h"

#define BUDGET_SLOTS 4096

typedef struct budget {
    char *client; /* "<username>\x01<client id>" */
    time_t second;
    long used;
    struct budget *next;
} budget;

static budget *slots[BUDGET_SLOTS];

static unsigned long hash(const char *text) { return text_hash(text) % BUDGET_SLOTS; }

/* Drops the entries of seconds gone by in one chain: chains stay as long as the clients
   asking this second. */
static void prune(budget **link, time_t now)
{
    while (*link != NULL) {
        budget *b = *link;
        if (b->second < now) {
            *link = b->next;
            free(b->client);
            free(b);
        } else {
            link = &b->next;
        }
    }
}

bool budget_take(const char *username, const char *client_id, time_t now, long per_second)
{
    size_t len = strlen(username) + strlen(client_id) + 2;
    char *client = malloc(len);
    if (client == NULL) return false;
    snprintf(client, len, "%s\x01%s", username, client_id);
    unsigned long h = hash(client);
    prune(&slots[h], now);
    for (budget *b = slots[h]; b != NULL; b = b->next) {
        if (strcmp(b->client, client) == 0) {
            free(client);
            if (b->used >= per_second) return false;
            b->used++;
            return true;
        }
    }
    budget *b = malloc(sizeof *b);
    if (b == NULL) {
        free(client);
        return false;
    }
    *b = (budget){client, now, 1, slots[h]};
    slots[h] = b;
    return per_second > 0;
}

void budget_clear(void)
{
    for (size_t i = 0; i < BUDGET_SLOTS; i++) {
        prune(&slots[i], (time_t)LONG_MAX);
    }
}
