/* SPDX-License-Identifier: MIT */
/* Fixture: a source in a folder the table does not know. */
#include "util.h"
