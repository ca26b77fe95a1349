/* SPDX-License-Identifier: MIT */
/* Fixture: core uses proto's private header through -Iproto. */
#include "byteorder.h"
#include <stdlib.h>
