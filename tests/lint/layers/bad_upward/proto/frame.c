/* SPDX-License-Identifier: MIT */
/* Fixture: the codec reaches up into the device. */
#include <stdint.h>
#  include "engine/req.h"
