/* SPDX-License-Identifier: MIT */
/* The agent's own header. */
#include <infiniband/verbs.h>
