/*
 * desired/netpol.h - the optional NetworkPolicy of a cluster (pure).
 *
 * One networking.k8s.io/v1 NetworkPolicy named <cluster>, owned by the EtcdCluster and
 * labelled like its other objects, selecting the cluster's member Pods, Ingress only:
 *   - peer port 2380: from the cluster's own member Pods only;
 *   - client port 2379: from the operator's Pods (its namespace and Pod labels), the
 *     cluster's snapshot agent Pods (EO_LABEL_SNAPSHOT_OF=<cluster>), and every peer in
 *     spec.networkPolicy.clientFrom;
 *   - metrics port 2381: from anywhere when spec.networkPolicy.metricsFrom is absent, from
 *     its peers when it lists some, from nowhere (no rule) when it is an empty list.
 * Node-local traffic (kubelet probes) is not subject to pod selectors.
 *
 * spec.networkPolicy (optional, additive):
 *   enabled      bool; absent: the operator's default (--network-policy)
 *   clientFrom   []NetworkPolicyPeer (podSelector / namespaceSelector / ipBlock)
 *   metricsFrom  []NetworkPolicyPeer
 */
#ifndef EO_DESIRED_NETPOL_H
#define EO_DESIRED_NETPOL_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

struct eo_netpol_opts {
	bool default_enabled;		/* --network-policy */
	const char *operator_namespace; /* where the operator's Pods run */
	const json_t *operator_labels;	/* matchLabels of the operator's Pods (object) */
};

/* Whether the cluster gets a NetworkPolicy: spec.networkPolicy.enabled, else the default. */
bool eo_desired_network_policy_enabled(const json_t *cluster, const struct eo_netpol_opts *o);

/*
 * The NetworkPolicy (a new reference), or NULL when the cluster lacks name, namespace or
 * UID, or o lacks the operator's namespace or labels. Built whether or not it is enabled.
 */
json_t *eo_desired_network_policy(const json_t *cluster, const struct eo_netpol_opts *o);

/*
 * The peer-only NetworkPolicy every cluster gets, whether or not it asked for the one above:
 * "<cluster>.peer" (a dot cannot appear in a cluster name, so no other cluster's object can
 * hold it), owned by the EtcdCluster and labelled like its other objects, selecting the
 * cluster's member Pods, Ingress only:
 *   - peer port 2380: from the cluster's own member Pods only;
 *   - open: the client port 2379 and the metrics port 2381 from anywhere.
 * NetworkPolicies add up: once one selects a Pod for Ingress, what no policy allows is
 * denied. So the policy is open (keeps the client and metrics ports reachable) unless the
 * cluster's own policy <cluster> is in place: then that one says who reaches them, and an
 * open rule here would undo its narrowing.
 * NULL when the cluster lacks name, namespace or UID.
 */
#define EO_PEER_NETPOL_SUFFIX ".peer"
json_t *eo_desired_peer_network_policy(const json_t *cluster, bool open);

/* "<cluster>.peer" into buf. 0, or -1 when cluster is empty or it does not fit. */
int eo_name_peer_network_policy(char *buf, size_t n, const char *cluster);

/* A merge patch that puts desired's spec and labels on actual; NULL when they already match. */
json_t *eo_desired_network_policy_patch(const json_t *desired, const json_t *actual);

/*
 * Parses "k=v,k=v" (the --operator-pod-labels flag) into a matchLabels object; NULL on an
 * empty or malformed list.
 */
json_t *eo_desired_parse_labels(const char *s);

#endif
