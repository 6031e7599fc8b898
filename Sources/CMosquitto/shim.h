#ifndef PARLEY_CMOSQUITTO_SHIM_H
#define PARLEY_CMOSQUITTO_SHIM_H
#include <mosquitto.h>
#include <mqtt_protocol.h>
#endif
