/* SPDX-License-Identifier: MIT */
/* Making and freeing worlds, and what they are set up with: faults, recording, tracing, injected frames. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "world.h"

/* A world on base (wrapped in the tap); NULL, with base freed, if any
 * part cannot be had. */
static struct rocemu_world *world_on(struct rocemu_world *w, struct wire *base)
{
	w->base = base;
	w->wire = base ? tap_wire_new(base) : NULL;
	if (!w->wire) {
		core_fini(&w->core);
		free(w);
		return NULL;
	}
	return w;
}

static struct rocemu_world *world_alloc(uint64_t seed, bool real_time)
{
	struct rocemu_world *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	if (core_init(&w->core, seed, real_time)) {
		free(w);
		return NULL;
	}
	return w;
}

struct rocemu_world *rocemu_world_new(uint64_t seed)
{
	struct rocemu_world *w = world_alloc(seed, false);
	struct rocemu_faults none = { 0 };

	return w ? world_on(w, loop_wire_new(&w->core, &none)) : NULL;
}

struct rocemu_world *rocemu_world_new_udp(void)
{
	struct rocemu_world *w = world_alloc(clock_ns(), true);

	return w ? world_on(w, udp_wire_new(&w->core)) : NULL;
}

void rocemu_world_set_offload(struct rocemu_world *w, bool on)
{
	WORLD_GUARD(w);
	w->base->offload = on;
}

void rocemu_world_wire_stats(struct rocemu_world *w,
			     struct rocemu_wire_stats *s)
{
	WORLD_GUARD(w);
	*s = (struct rocemu_wire_stats){ .dropped = w->base->dropped,
					 .gso_sends = w->base->gso_sends,
					 .gro_batches = w->base->gro_batches,
					 .fwd_out = w->base->fwd_out,
					 .fwd_in = w->base->fwd_in,
					 .fwd_no_owner = w->base->fwd_no_owner,
					 .flow_labels_refused =
						 w->base->flow_labels_refused };
}

void rocemu_world_print_wire_stats(struct rocemu_world *w, FILE *f,
				   const char *prefix)
{
	struct rocemu_wire_stats s;

	rocemu_world_wire_stats(w, &s); /* no stdio under the world lock */
	fprintf(f, "%scounter wire_dropped %llu\n%scounter wire_gso_sends %llu\n"
		   "%scounter wire_gro_batches %llu\n",
		prefix, (unsigned long long)s.dropped, prefix,
		(unsigned long long)s.gso_sends, prefix,
		(unsigned long long)s.gro_batches);
	fprintf(f, "%scounter wire_fwd_out %llu\n%scounter wire_fwd_in %llu\n"
		   "%scounter wire_fwd_no_owner %llu\n",
		prefix, (unsigned long long)s.fwd_out, prefix,
		(unsigned long long)s.fwd_in, prefix,
		(unsigned long long)s.fwd_no_owner);
	fprintf(f, "%scounter wire_flow_labels_refused %llu\n", prefix,
		(unsigned long long)s.flow_labels_refused);
}

void rocemu_world_free(struct rocemu_world *w)
{
	if (!w)
		return;
	w->wire->ops->free(w->wire);
	if (w->wake_open) {
		close(w->wake[0]);
		close(w->wake[1]);
	}
	core_fini(&w->core);
	free(w);
}

uint64_t rocemu_world_now(const struct rocemu_world *w)
{
	/* The progress thread moves the clock under the lock. */
	WORLD_GUARD((struct rocemu_world *)(uintptr_t)w);
	return w->core.now;
}

uint64_t rocemu_world_clock(const struct rocemu_world *w)
{
	return w->core.real_time ? clock_ns() : rocemu_world_now(w);
}

uint64_t rocemu_world_wallclock(const struct rocemu_world *w, uint64_t t)
{
	struct timespec real;

	if (!w->core.real_time)
		return t;
	/* Both clocks read back to back: the offset is good to the
	 * microsecond, and a step of the wall clock shows at once. */
	uint64_t mono = clock_ns();
	clock_gettime(CLOCK_REALTIME, &real);
	return t + ((uint64_t)real.tv_sec * 1000000000u +
		    (uint64_t)real.tv_nsec - mono);
}

void rocemu_world_set_faults(struct rocemu_world *w,
			     const struct rocemu_faults *f)
{
	WORLD_GUARD(w);
	if (!w->core.real_time)
		loop_wire_set_faults(w->base, f);
}

int rocemu_world_record(struct rocemu_world *w, const char *path)
{
	WORLD_GUARD(w);
	return tap_wire_record(w->wire, path);
}

void rocemu_world_trace(struct rocemu_world *w, rocemu_trace_fn fn, void *arg)
{
	WORLD_GUARD(w);
	w->core.trace = fn;
	w->core.trace_arg = arg;
}

void rocemu_world_events(struct rocemu_world *w, rocemu_event_fn fn,
			 void *arg)
{
	WORLD_GUARD(w);
	w->core.event = fn;
	w->core.event_arg = arg;
}

void rocemu_world_explain(struct rocemu_world *w, rocemu_event_fn fn,
			  void *arg)
{
	WORLD_GUARD(w);
	w->core.explain = fn;
	w->core.explain_arg = arg;
}

void rocemu_world_explain_keep(struct rocemu_world *w, bool on)
{
	WORLD_GUARD(w);
	w->core.why_keep = on;
}

void rocemu_world_watch(struct rocemu_world *w, rocemu_frame_fn fn,
			void *arg)
{
	WORLD_GUARD(w);
	tap_wire_watch(w->wire, fn, arg);
}

void rocemu_world_inject(struct rocemu_world *w, const uint8_t *frame,
			 size_t len)
{
	WORLD_GUARD(w);
	uint8_t *copy = frame_alloc(&w->core.frames, len);
	struct roce_frame_udp u;
	struct wire_port *from = NULL;

	if (!copy)
		return;
	memcpy(copy, frame, len);
	/* Sent as if from the device it names as its source, if any: the UDP
	 * wire needs a port to send from; the loopback wire routes by the
	 * frame's own header, and takes any bytes. */
	if (roce_frame_find_udp(frame, len, &u) == 0)
		from = wire_port_find(w->base, u.src_gid);
	w->wire->ops->send(w->wire, from, copy, len);
}
