/* SPDX-License-Identifier: MIT */
/* The agent reaches into the codec: it is plain verbs only. */
#include <stdio.h>
#include "agent.h"
#include "rocemu/frame.h"
