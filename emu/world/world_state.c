/* SPDX-License-Identifier: MIT */
/* Queue state on demand for a whole world: every device's dump, as lines or as state events in the trace. */
#include <stdio.h>
#include <string.h>

#include "world.h"

void rocemu_world_dump_state(struct rocemu_world *w, rocemu_state_fn fn,
			     void *arg)
{
	struct rocemu_dev *d, *tmp;

	WORLD_GUARD(w);
	HASH_ITER(hh, w->devs, d, tmp)
		dev_dump_state(d, fn, arg);
}

/* A dump line as a state event of the device arg. */
static void state_event(void *arg, const char *line)
{
	struct rocemu_dev *d = arg;
	struct rocemu_event ev = { .kind = ROCEMU_EV_STATE };

	snprintf(ev.text, sizeof(ev.text), "%s", line);
	dev_event(d, &ev);
}

void rocemu_world_trace_state(struct rocemu_world *w)
{
	struct rocemu_dev *d, *tmp;

	WORLD_GUARD(w);
	if (!core_eventing(&w->core))
		return;
	HASH_ITER(hh, w->devs, d, tmp)
		dev_dump_state(d, state_event, d);
}
