/* SPDX-License-Identifier: MIT */
/* Fixture: a public header includes one private to proto. */
#include "byteorder.h"
