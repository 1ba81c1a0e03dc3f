/*
 * `etcd-operator wait-peers`: an init container of a member Pod that joins an existing
 * cluster (--initial-cluster-state=existing, no etcd member ID yet; desired/desired.h). It
 * waits, bounded, until one peer of the member's initial cluster accepts a TCP connection on
 * its peer URL, so that etcd's one-shot join does not run before the network lets it through.
 *
 * Why: a NetworkPolicy that admits member Pods by label (the cluster's `<cluster>.peer`) is
 * programmed by the network plugin some time after the Pod starts (kube-router: at its next
 * sync). etcd's join fetches the cluster from the peers once and exits on `connection
 * refused`; the kubelet's back-off (10 s, then 20 s) then holds the member down. The init
 * container runs in the Pod's network namespace, so it sees what etcd would see.
 *
 *   peers of --initial-cluster       connection                decision
 *   none but the member itself       -                         start (exit 0), nothing to wait for
 *   some                             one accepts               start (exit 0)
 *   some                             none accepts, deadline    start (exit 0): etcd then fails as
 *                                    not reached               before if the peers are gone
 *   some                             none yet                  retry after the interval
 *   --initial-cluster unparseable    -                         start (exit 0), logged
 *
 * It never blocks etcd for longer than --timeout seconds and never fails the Pod: a peer that
 * is really gone is etcd's error to report, as it was without this step.
 */
#ifndef EO_AGENT_WAITPEERS_H
#define EO_AGENT_WAITPEERS_H

#include <stdbool.h>
#include <stddef.h>

#define EO_WAIT_PEERS_MAX	      16  /* peers tried (an etcd cluster has at most 9 voters) */
#define EO_WAIT_PEERS_HOST_MAX	      256 /* a DNS name is at most 253 characters */
#define EO_WAIT_PEERS_DEFAULT_TIMEOUT 30  /* seconds */
#define EO_WAIT_PEERS_MAX_TIMEOUT     600 /* seconds: the flag's upper bound */
#define EO_WAIT_PEERS_INTERVAL_MS     250 /* between two rounds of connection attempts */

struct eo_wait_peer {
	char name[EO_WAIT_PEERS_HOST_MAX]; /* the member's name in --initial-cluster */
	char host[EO_WAIT_PEERS_HOST_MAX]; /* host of its peer URL, without brackets */
	char port[8];			   /* port of its peer URL (2380 when absent) */
};

struct eo_wait_peers {
	struct eo_wait_peer v[EO_WAIT_PEERS_MAX];
	size_t n;
};

/*
 * The peers to try (pure): every `name=scheme://host[:port]` entry of initial_cluster whose
 * name is not self, in order, at most EO_WAIT_PEERS_MAX (the rest are dropped). Returns 0, or
 * -1 when the string cannot be parsed (err, when given, says where); out then holds the
 * entries parsed before the bad one.
 */
int eo_wait_peers_targets(const char *initial_cluster, const char *self, struct eo_wait_peers *out,
			  char *err, size_t errcap);

enum eo_wait_peers_step {
	EO_WAIT_PEERS_START_PEER,     /* a peer accepted: start etcd */
	EO_WAIT_PEERS_START_NO_PEERS, /* nothing to wait for: start etcd */
	EO_WAIT_PEERS_START_TIMEOUT,  /* the deadline passed: start etcd anyway */
	EO_WAIT_PEERS_RETRY,	      /* try again after EO_WAIT_PEERS_INTERVAL_MS */
};

/* The next step (pure), given how many peers there are, whether one accepted, and the time. */
enum eo_wait_peers_step eo_wait_peers_next(size_t n_peers, bool accepted, long elapsed_ms,
					   long timeout_ms);

/* argv[0] is "wait-peers". Returns the process exit code: 0, or 2 for usage errors. */
int eo_agent_wait_peers_main(int argc, char **argv);

#endif
