/* SPDX-License-Identifier: MIT */
/*
 * The connection manager of a device (IBTA chapter 12) on its QP1: the
 * public <rocemu/ibcm.h> calls, the state machines of the active side,
 * the passive side and SIDR, their timers on the scheduler, duplicates
 * and the timewait table (docs/cm.md).
 *
 * Layer rule: cm/ includes engine/, obj/, core/ and the public headers;
 * the world (which makes devices and fires timers) includes cm/.
 */
#ifndef ROCEMU_CM_CM_H
#define ROCEMU_CM_CM_H

#include "engine/engine.h"
#include "rocemu/ibcm.h"

/*
 * Gives device d its CM: d's QP1 hands MADs to it from now on, and its
 * first comm ID is random (from the world's seeded state and d's address
 * on a virtual clock, so a test repeats, without drawing from the world's
 * sequence; from getrandom otherwise). 0, or -ENOMEM
 * (d is then left without a CM: its MADs are dropped, counted).
 */
int cm_attach(struct rocemu_dev *d);

/* Frees d's CM and every id it holds, timers included, before d goes;
 * no handler is called. A device without a CM is left alone. */
void cm_detach(struct rocemu_dev *d);

/* A timer of kind TIMER_CM fired: owner is the CM id that armed it. Its
 * state machine retries, gives up or ends its timewait. */
void cm_timer(void *owner);

#endif
