// SPDX-License-Identifier: MIT

// Command gocgo is a signal-heavy Go program on rocemu's libibverbs.so.1,
// as pingmesh-style agents are written: a goroutine on a locked OS thread
// blocks in ibv_get_cq_event (a cgo call) while the main goroutine posts
// SENDs between two connected RC queue pairs, and signals rain on the
// process all the while: SIGUSR1, whose handler Go installs with
// SA_RESTART once signal.Notify asks for it, sent thousands of times a
// second to the process and to the waiting thread, and Go's own SIGURG
// preemption of a goroutine that never yields. Every completion must
// arrive, in order, with its data; no wait may end in EINTR. It prints
//
//	gocgo: N sends, N completions, E events, S signals sent, H handled, qpn Q
//
// and leaves by os.Exit(0), which runs no C destructors (the capture must
// be whole without them); on a failure it prints the reason and leaves by
// os.Exit(1).
//
// usage: gocgo [N]   (ROCEMU_ADDR names the device's address)
package main

/*
#cgo CFLAGS: -O2 -Wall -Wextra -Werror
#cgo LDFLAGS: -libverbs
#include <infiniband/verbs.h>
#include "gocgo.h"
*/
import "C"

import (
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
)

// Hang guard: generous enough for a sanitizer build on a loaded machine.
const guard = 240 * time.Second

func fail(format string, a ...interface{}) {
	fmt.Printf("gocgo: FAIL: "+format+"\n", a...)
	os.Exit(1)
}

func errno(rc C.int) error { return syscall.Errno(-rc) }

// receiver waits for b's completion events on a locked OS thread, checks
// each receive (in order: RC completes them so) and posts the next one in
// its slot. It sends its thread id on tid first, counts events and
// completions, and closes done after the n-th completion; it keeps its
// thread, which storm signals, until hold is closed.
func receiver(n int, tid chan<- int, events, completions *int64, done chan<- struct{}, hold <-chan struct{}) {
	runtime.LockOSThread()
	tid <- syscall.Gettid()
	var wc [C.GC_SLOTS]C.struct_gc_wc
	next := 0
	for next < n {
		got := C.gc_wait_recv(&wc[0], C.GC_SLOTS)
		if got < 0 {
			fail("ibv_get_cq_event after %d of %d completions: %v",
				next, n, errno(got))
		}
		atomic.AddInt64(events, 1)
		for i := 0; i < int(got); i++ {
			w := wc[i]
			slot := C.int(next % C.GC_SLOTS)
			switch {
			case w.status != C.IBV_WC_SUCCESS:
				fail("receive %d: status %d", next, w.status)
			case int(w.wr_id) != next:
				fail("receive %d: wr_id %d", next, w.wr_id)
			case w.opcode != C.IBV_WC_RECV || w.byte_len != C.GC_MSG:
				fail("receive %d: opcode %d, %d bytes", next,
					w.opcode, w.byte_len)
			case C.gc_check(slot, C.uint64_t(next)) != 1:
				fail("receive %d: data differs", next)
			}
			if more := next + C.GC_SLOTS; more < n {
				if rc := C.gc_post_recv(slot, C.uint64_t(more)); rc != 0 {
					fail("ibv_post_recv %d: %v", more, errno(rc))
				}
			}
			next++
			atomic.AddInt64(completions, 1)
		}
	}
	close(done)
	<-hold
}

// storm sends SIGUSR1 to the process and to thread tid in turn until stop
// is set, counting in sent; it closes stopped when it stops.
func storm(tid int, stop *int32, sent *int64, stopped chan<- struct{}) {
	defer close(stopped)
	pid := os.Getpid()
	for atomic.LoadInt32(stop) == 0 {
		if err := syscall.Kill(pid, syscall.SIGUSR1); err != nil {
			fail("kill: %v", err)
		}
		if err := syscall.Tgkill(pid, tid, syscall.SIGUSR1); err != nil {
			fail("tgkill: %v", err)
		}
		atomic.AddInt64(sent, 2)
		// a few hundred microseconds: thousands of signals a second,
		// leaving the device's threads room to run on a small machine
		time.Sleep(100 * time.Microsecond)
	}
}

// spin never yields: the scheduler preempts it with SIGURG.
func spin(stop *int32) {
	x := uint64(1)
	for atomic.LoadInt32(stop) == 0 {
		for i := 0; i < 1<<16; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	_ = x
}

// send posts n SENDs from a, at most GC_SLOTS in flight, a millisecond
// apart, and checks each send completion (in order).
func send(n int) {
	var wc [C.GC_SLOTS]C.struct_gc_wc
	posted, completed := 0, 0
	for completed < n {
		if posted < n && posted-completed < C.GC_SLOTS {
			slot := C.int(posted % C.GC_SLOTS)
			if rc := C.gc_post_send(slot, C.uint64_t(posted)); rc != 0 {
				fail("ibv_post_send %d: %v", posted, errno(rc))
			}
			posted++
			time.Sleep(time.Millisecond)
		}
		got := C.gc_poll_send(&wc[0], C.GC_SLOTS)
		if got < 0 {
			fail("ibv_poll_cq: %v", errno(got))
		}
		for i := 0; i < int(got); i++ {
			w := wc[i]
			if w.status != C.IBV_WC_SUCCESS || int(w.wr_id) != completed ||
				w.opcode != C.IBV_WC_SEND {
				fail("send %d: status %d, wr_id %d, opcode %d",
					completed, w.status, w.wr_id, w.opcode)
			}
			completed++
		}
		if got == 0 && posted-completed == C.GC_SLOTS {
			time.Sleep(100 * time.Microsecond)
		}
	}
}

func main() {
	n := 2000
	if len(os.Args) > 1 {
		v, err := strconv.Atoi(os.Args[1])
		if err != nil || v < 1 {
			fail("usage: gocgo [N]")
		}
		n = v
	}
	if runtime.GOMAXPROCS(0) < 2 {
		runtime.GOMAXPROCS(2)
	}
	go func() {
		time.Sleep(guard)
		fail("not done after %v", guard)
	}()

	// Go installs its SIGUSR1 handler, with SA_RESTART, here.
	usr1 := make(chan os.Signal, 64)
	signal.Notify(usr1, syscall.SIGUSR1)
	var handled int64
	go func() {
		for range usr1 {
			atomic.AddInt64(&handled, 1)
		}
	}()

	var what *C.char
	if rc := C.gc_open(&what); rc != 0 {
		fail("%s: %v", C.GoString(what), errno(rc))
	}
	for i := 0; i < C.GC_SLOTS && i < n; i++ {
		if rc := C.gc_post_recv(C.int(i), C.uint64_t(i)); rc != 0 {
			fail("ibv_post_recv %d: %v", i, errno(rc))
		}
	}

	var events, completions, sent int64
	var stop int32
	tid := make(chan int)
	done, stopped := make(chan struct{}), make(chan struct{})
	go receiver(n, tid, &events, &completions, done, stopped)
	waiter := <-tid
	go storm(waiter, &stop, &sent, stopped)
	go spin(&stop)

	send(n)
	<-done
	atomic.StoreInt32(&stop, 1)
	<-stopped
	s := atomic.LoadInt64(&sent)
	if s == 0 {
		fail("no signal was sent")
	}
	fmt.Printf("gocgo: %d sends, %d completions, %d events, %d signals sent, %d handled, qpn %d\n",
		n, atomic.LoadInt64(&completions), atomic.LoadInt64(&events), s, atomic.LoadInt64(&handled),
		uint32(C.gc_b_qpn()))
	os.Exit(0)
}
