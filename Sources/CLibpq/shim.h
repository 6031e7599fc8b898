// libpq, PostgreSQL's C client (Debian's libpq-dev): `parley migrate` runs each migration file
// whole through it, as psql does.
#include <libpq-fe.h>
