/* SPDX-License-Identifier: MIT */
/* Fixture: the drop-in includes proto's private header (-Iproto). */
#include "byteorder.h"
