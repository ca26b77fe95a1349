/* SPDX-License-Identifier: MIT */
/* Fixture: the world sees every layer below it. */
#include "../engine/engine.h"
#include "obj/qp.h"
#include "wire/wire.h"
#include "core/heap.h"
#include "rocemu/device.h"
