#ifndef PARLEY_CHIREDIS_SHIM_H
#define PARLEY_CHIREDIS_SHIM_H
#include <hiredis/hiredis.h>
#endif
