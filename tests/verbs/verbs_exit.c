// SPDX-License-Identifier: MIT
/*
 * A program that leaves without running its ELF destructors, as Go's
 * os.Exit does: it moves SENDs on a connected pair with ROCEMU_PCAP and
 * ROCEMU_STATS=FILE set, reads the counters file while it still runs (it
 * must show the traffic), and ends with _exit. run.sh then reads the
 * capture back (rocemu dump: every packet decodes, ICRC ok) and
 * verbs_exit_check.sh counts the SENDs in it (the "sends N" line).
 *   usage: verbs_exit MESSAGES   (ROCEMU_STATS names the counters file)
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../examples/pair.h"
#include "verbs_check.h"

enum { MSG_LEN = 2048 }; /* two packets at the default MTU, 1024 */

/* The value of "counter NAME VALUE" in the file, or -1 if the file or
 * the line is not there (yet). */
static long long counter_in(const char *path, const char *name) {
  FILE *f = fopen(path, "r");
  char line[256], want[128];
  long long v = -1;

  if (!f)
    return -1;
  snprintf(want, sizeof(want), "counter %s ", name);
  while (fgets(line, sizeof(line), f))
    if (!strncmp(line, want, strlen(want)))
      v = strtoll(line + strlen(want), NULL, 10);
  fclose(f);
  return v;
}

/* Waits (for at most 30 s: a bound, not a timing test) until the
 * counters file shows at least min of name; its last value. */
static long long wait_counter(const char *path, const char *name,
                              long long min) {
  struct timespec nap = {0, 20 * 1000 * 1000};
  long long v = -1;

  for (int i = 0; i < 1500 && v < min; i++) {
    v = counter_in(path, name);
    if (v < min)
      nanosleep(&nap, NULL);
  }
  return v;
}

static int send_all(struct pair *p, int msgs) {
  struct ibv_wc wc;

  for (int i = 0; i < msgs; i++) {
    struct ibv_send_wr wr = {.wr_id = (uint64_t)i, .opcode = IBV_WR_SEND};

    if (pair_post_recv(&p->b, (uint64_t)i, p->b.buf, MSG_LEN) ||
        pair_post_send(&p->a, &wr, p->a.buf, MSG_LEN) ||
        pair_wait(p->a.cq, &wc) || wc.status != IBV_WC_SUCCESS ||
        pair_wait(p->b.cq, &wc) || wc.status != IBV_WC_SUCCESS)
      return -1;
  }
  return 0;
}

int main(int argc, char **argv) {
  const char *stats = getenv("ROCEMU_STATS");
  int msgs = argc > 1 ? atoi(argv[1]) : 32;
  struct pair p;

  CHECK(stats && *stats && strcmp(stats, "1"), "ROCEMU_STATS must name a file");
  CHECK(getenv("ROCEMU_PCAP"), "ROCEMU_PCAP must be set");
  if (failed)
    goto out;
  CHECK(!pair_open(&p, MSG_LEN, 0) && !pair_add_qps(&p, IBV_QPT_RC, NULL),
        "the pair opens");
  if (failed)
    goto out;
  memset(p.a.buf, 0x5a, MSG_LEN);
  CHECK(!send_all(&p, msgs), "%d SENDs of %d bytes complete", msgs, MSG_LEN);
  printf("sends %d\n", msgs);
  /* Each SEND is two packets, sent and received by this one device:
   * the counters file must say so while the program still runs. */
  long long tx = wait_counter(stats, "tx_packets", 2LL * msgs);
  long long rx = wait_counter(stats, "rx_packets", 2LL * msgs);
  CHECK(tx >= 2LL * msgs, "%s shows tx_packets %lld, want >= %d", stats, tx,
        2 * msgs);
  CHECK(rx >= 2LL * msgs, "%s shows rx_packets %lld, want >= %d", stats, rx,
        2 * msgs);
  /* No pair_close, no destructors: the process just ends. */
out:
  printf("verbs_exit: %d passed, %d failed\n", passed, failed);
  fflush(stdout);
  _exit(failed ? 1 : 0);
}
