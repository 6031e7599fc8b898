/* Runs the plugin's token verifier on one token: `verify_token <key base64> <now> <token>`.
 * Prints `<result> <user> <client> <session> <expiry>` (result 0 = valid). Built and run by
 * PluginTokenVectorTests against Tests/Vectors/mqtt-token.json. */
#include <stdio.h>
#include <stdlib.h>

#include "parley_plugin.h"

int main(int argc, char **argv)
{
    if (argc != 4) return 2;
    unsigned char key[128];
    long key_len = parley_base64_decode(argv[1], key, sizeof key);
    if (key_len < 32) return 2;
    parley_token token = {0};
    int result = parley_token_verify(argv[3], key, (size_t)key_len, (time_t)strtoll(argv[2], NULL, 10), &token);
    printf("%d %lld %s %lld %lld\n", result, token.user_id, token.client_id, token.session_id, token.expires_at);
    return 0;
}
