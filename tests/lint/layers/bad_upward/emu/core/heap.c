/* SPDX-License-Identifier: MIT */
/* Fixture: core reaches up into obj, in the -Iemu form. */
#include "obj/qp.h"
