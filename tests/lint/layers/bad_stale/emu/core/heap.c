/* SPDX-License-Identifier: MIT */
/* Fixture: includes of files that moved away, and one no path names. */
#include "heap.h"
#include "ring.h"
#include "../heap.h"
#include <stdlib.h>
#include HEAP_H
/* #include "gone.h" in a comment is no include */
