/*
 * Checks over the CRD files (run from the repository root, as `make unit`
 * does; EO_REPO_ROOT overrides):
 *  - the chart's crd-bases/ (the source of truth) and config/crd/bases/ are
 *    byte-identical (hack/sync-crds.sh keeps them so);
 *  - each file is well-formed YAML holding one document;
 *  - the x-kubernetes-validations messages of each CRD and the validation
 *    messages of src/api are the same set, both ways, so the C re-check of
 *    every CEL rule cannot drift from the CRD;
 *  - every property of every schema (under properties, items and
 *    additionalProperties) has a description, so `kubectl explain` is useful
 *    everywhere, except the object's own metadata, where the apiserver refuses
 *    one;
 *  - the kubectl-facing names: categories etcd-operator and etcd, short names,
 *    EtcdCluster's default health columns, and status.observedGeneration.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "support/tu_main.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "api/archive.h"
#include "api/cluster.h"
#include "api/member.h"
#include "api/names.h"
#include "api/defrag.h"
#include "api/schedule.h"
#include "api/snapshot.h"

#define CHART_DIR  "charts/etcd-operator/crd-bases/"
#define CONFIG_DIR "config/crd/bases/"
#define FILE_MAX   (1024 * 1024)

struct crd {
	const char *file;
	const char *name;
	const char *const *messages; /* NULL-terminated */
};

static const char *const cluster_messages[] = {
    EO_MSG_CLUSTER_NAME,
    EO_MSG_REPLICAS_MAX,
    EO_MSG_LABEL_KEY,
    EO_MSG_LABEL_VALUE,
    EO_MSG_ANNOTATION_KEY,
    EO_MSG_VERSION,
    EO_MSG_MEMORY_PAUSE,
    EO_MSG_MEMORY_SIZE,
    EO_MSG_PVC_SIZE,
    EO_MSG_SIZE_SHRINK,
    EO_MSG_MEDIUM_IMMUTABLE,
    EO_MSG_TLS_ADD_REMOVE,
    EO_MSG_TLS_IMMUTABLE,
    EO_MSG_AUTH_ADD_REMOVE,
    EO_MSG_AUTH_IMMUTABLE,
    EO_MSG_AUTH_NEEDS_TLS,
    EO_MSG_AUTH_NEEDS_SECRET,
    EO_MSG_BOOTSTRAP_ADD_REMOVE,
    EO_MSG_BOOTSTRAP_IMMUTABLE,
    EO_MSG_RESTORE_MEMORY,
    EO_MSG_CLIENT_TLS_ONE_OF,
    EO_MSG_CLIENT_TLS_CM_OPCLIENT,
    EO_MSG_PEER_TLS_ONE_OF,
    EO_MSG_RESTORE_S3_KEY,
    EO_MSG_RESTORE_PVC_SUBPATH,
    EO_MSG_RESTORE_SOURCE_ONE_OF,
    EO_MSG_ARCHIVE_TARGET_ONE_OF,
    EO_MSG_S3_INSECURE,
    EO_MSG_VERSION_MIN,
    EO_MSG_PATH_DOT_DOT,
    NULL,
};

static const char *const member_messages[] = {
    EO_MSG_VERSION,
    EO_MSG_LABEL_KEY,
    EO_MSG_LABEL_VALUE,
    EO_MSG_ANNOTATION_KEY,
    EO_MSG_MEMBER_CLUSTER_NAME_IMMUTABLE,
    EO_MSG_MEMBER_MEDIUM_IMMUTABLE,
    EO_MSG_MEMBER_INITIAL_CLUSTER,
    EO_MSG_RESTORE_SOURCE_ONE_OF,
    EO_MSG_ARCHIVE_TARGET_ONE_OF,
    EO_MSG_PATH_DOT_DOT,
    NULL,
};

static const char *const snapshot_messages[] = {
    EO_MSG_SNAPSHOT_NAME, EO_MSG_SNAPSHOT_IMMUTABLE, EO_MSG_LOCATION_ONE_OF,
    EO_MSG_S3_INSECURE,	  EO_MSG_PATH_DOT_DOT,	     NULL,
};

static const char *const schedule_messages[] = {
    EO_MSG_SCHEDULE_NAME, EO_MSG_SCHEDULE_SYNTAX, EO_MSG_LOCATION_ONE_OF,
    EO_MSG_S3_INSECURE,	  EO_MSG_PATH_DOT_DOT,	  NULL,
};

static const char *const defrag_messages[] = {
    EO_MSG_DEFRAG_IMMUTABLE,
    EO_MSG_DEFRAG_ALL_EXCLUSIVE,
    EO_MSG_DEFRAG_MIN_RECLAIM,
    NULL,
};

static const char *const defrag_schedule_messages[] = {
    EO_MSG_DEFRAG_SCHEDULE_NAME,
    EO_MSG_DEFRAG_ALL_EXCLUSIVE,
    EO_MSG_DEFRAG_MIN_RECLAIM,
    NULL,
};

static const char *const archive_messages[] = {
    EO_MSG_ARCHIVE_NAME,    EO_MSG_ARCHIVE_DESTINATION_IMMUTABLE,
    EO_MSG_LOCATION_ONE_OF, EO_MSG_S3_INSECURE,
    EO_MSG_PATH_DOT_DOT,    NULL,
};

static const struct crd crds[] = {
    {"etcd-operator.cozystack.io_etcdclusters.yaml", "etcdclusters." EO_API_GROUP,
     cluster_messages},
    {"etcd-operator.cozystack.io_etcdmembers.yaml", "etcdmembers." EO_API_GROUP, member_messages},
    {"etcd-operator.cozystack.io_etcdsnapshots.yaml", "etcdsnapshots." EO_API_GROUP,
     snapshot_messages},
    {"etcd-operator.cozystack.io_etcdsnapshotschedules.yaml", "etcdsnapshotschedules." EO_API_GROUP,
     schedule_messages},
    {"etcd-operator.cozystack.io_etcddefrags.yaml", "etcddefrags." EO_API_GROUP, defrag_messages},
    {"etcd-operator.cozystack.io_etcddefragschedules.yaml", "etcddefragschedules." EO_API_GROUP,
     defrag_schedule_messages},
    {"etcd-operator.cozystack.io_etcdarchives.yaml", "etcdarchives." EO_API_GROUP,
     archive_messages},
};

/* Read root/dir/file into a NUL-terminated heap buffer (caller frees), or fail. */
static char *slurp(const char *dir, const char *file, size_t *len)
{
	const char *root = getenv("EO_REPO_ROOT");
	char path[1024];
	FILE *f = NULL;
	char *buf = NULL;
	size_t n = 0;

	snprintf(path, sizeof(path), "%s/%s%s", root ? root : ".", dir, file);
	f = fopen(path, "rb");
	if (f == NULL)
		fail_msg("cannot open %s (run from the repository root or set EO_REPO_ROOT)", path);
	buf = malloc(FILE_MAX + 1);
	assert_non_null(buf);
	n = fread(buf, 1, FILE_MAX, f);
	assert_false(ferror(f));
	assert_true(feof(f)); /* smaller than FILE_MAX */
	fclose(f);
	buf[n] = '\0';
	if (len != NULL)
		*len = n;
	return buf;
}

static void test_chart_and_config_identical(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(crds) / sizeof(crds[0]); i++) {
		size_t la = 0, lb = 0;
		char *a = slurp(CHART_DIR, crds[i].file, &la);
		char *b = slurp(CONFIG_DIR, crds[i].file, &lb);

		if (la != lb || memcmp(a, b, la) != 0)
			fail_msg("%s differs between %s and %s: run hack/sync-crds.sh",
				 crds[i].file, CHART_DIR, CONFIG_DIR);
		free(a);
		free(b);
	}
}

static void test_yaml_well_formed(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(crds) / sizeof(crds[0]); i++) {
		size_t len = 0;
		char *text = slurp(CHART_DIR, crds[i].file, &len);
		yaml_parser_t parser;
		yaml_event_t ev;
		int docs = 0;
		bool done = false;
		bool saw_name = false;

		assert_true(yaml_parser_initialize(&parser));
		yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
		while (!done) {
			if (!yaml_parser_parse(&parser, &ev))
				fail_msg("%s: YAML error at line %zu: %s", crds[i].file,
					 parser.problem_mark.line + 1,
					 parser.problem ? parser.problem : "?");
			if (ev.type == YAML_DOCUMENT_START_EVENT)
				docs++;
			if (ev.type == YAML_SCALAR_EVENT &&
			    strcmp((const char *)ev.data.scalar.value, crds[i].name) == 0)
				saw_name = true;
			done = ev.type == YAML_STREAM_END_EVENT;
			yaml_event_delete(&ev);
		}
		yaml_parser_delete(&parser);
		assert_int_equal(docs, 1);
		if (!saw_name)
			fail_msg("%s: metadata.name %s not found", crds[i].file, crds[i].name);
		free(text);
	}
}

static bool in_list(const char *const *list, const char *s, size_t len)
{
	for (; *list != NULL; list++)
		if (strlen(*list) == len && strncmp(*list, s, len) == 0)
			return true;
	return false;
}

static void test_messages_match(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(crds) / sizeof(crds[0]); i++) {
		char *text = slurp(CHART_DIR, crds[i].file, NULL);
		int count = 0;

		/* Every C message is a rule message in the CRD ... */
		for (const char *const *m = crds[i].messages; *m != NULL; m++) {
			char quoted[1024];

			snprintf(quoted, sizeof(quoted), "message: \"%s\"", *m);
			if (strstr(text, quoted) == NULL)
				fail_msg("%s: no rule with message \"%s\"", crds[i].file, *m);
		}
		/* ... and every rule message in the CRD is one of the C messages. */
		for (const char *p = strstr(text, "message: \""); p != NULL;
		     p = strstr(p, "message: \"")) {
			const char *start = p + strlen("message: \"");
			const char *end = strchr(start, '"');

			assert_non_null(end);
			if (!in_list(crds[i].messages, start, (size_t)(end - start)))
				fail_msg("%s: rule message \"%.*s\" has no C counterpart",
					 crds[i].file, (int)(end - start), start);
			count++;
			p = end;
		}
		assert_true(count > 0);
		free(text);
	}
}

/* The value of key in mapping node m, or NULL. */
static yaml_node_t *map_get(yaml_document_t *doc, yaml_node_t *m, const char *key)
{
	if (m == NULL || m->type != YAML_MAPPING_NODE)
		return NULL;
	for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top;
	     p++) {
		yaml_node_t *k = yaml_document_get_node(doc, p->key);

		if (k != NULL && k->type == YAML_SCALAR_NODE &&
		    strcmp((const char *)k->data.scalar.value, key) == 0)
			return yaml_document_get_node(doc, p->value);
	}
	return NULL;
}

/* Count (and print) the properties below schema node s that lack a description. */
static int undescribed(yaml_document_t *doc, yaml_node_t *s, const char *file, const char *path)
{
	yaml_node_t *props = map_get(doc, s, "properties");
	yaml_node_t *sub = NULL;
	char child[512];
	int n = 0;

	if (props != NULL && props->type == YAML_MAPPING_NODE) {
		for (yaml_node_pair_t *p = props->data.mapping.pairs.start;
		     p < props->data.mapping.pairs.top; p++) {
			yaml_node_t *k = yaml_document_get_node(doc, p->key);
			yaml_node_t *v = yaml_document_get_node(doc, p->value);

			snprintf(child, sizeof(child), "%s.%s", path,
				 (const char *)k->data.scalar.value);
			/* The object's own metadata: the apiserver refuses anything but its type.
			 */
			if (strcmp(child, ".metadata") == 0) {
				if (map_get(doc, v, "description") != NULL) {
					print_message("%s: .metadata must not have a description\n",
						      file);
					n++;
				}
				continue;
			}
			if (map_get(doc, v, "description") == NULL) {
				print_message("%s: %s has no description\n", file, child);
				n++;
			}
			n += undescribed(doc, v, file, child);
		}
	}
	if ((sub = map_get(doc, s, "items")) != NULL) {
		snprintf(child, sizeof(child), "%s[]", path);
		n += undescribed(doc, sub, file, child);
	}
	if ((sub = map_get(doc, s, "additionalProperties")) != NULL) {
		snprintf(child, sizeof(child), "%s{}", path);
		n += undescribed(doc, sub, file, child);
	}
	return n;
}

/* Load the chart's copy of crds[i] as a YAML document (caller deletes it). */
static void load_crd(size_t i, yaml_document_t *doc)
{
	size_t len = 0;
	char *text = slurp(CHART_DIR, crds[i].file, &len);
	yaml_parser_t parser;

	assert_true(yaml_parser_initialize(&parser));
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, doc))
		fail_msg("%s: YAML error: %s", crds[i].file, parser.problem ? parser.problem : "?");
	yaml_parser_delete(&parser);
	free(text);
}

/* The openAPIV3Schema of the first version of a loaded CRD. */
static yaml_node_t *crd_schema(yaml_document_t *doc)
{
	yaml_node_t *spec = map_get(doc, yaml_document_get_root_node(doc), "spec");
	yaml_node_t *versions = map_get(doc, spec, "versions");

	assert_non_null(versions);
	assert_int_equal(versions->type, YAML_SEQUENCE_NODE);
	assert_true(versions->data.sequence.items.top > versions->data.sequence.items.start);
	return map_get(doc,
		       map_get(doc,
			       yaml_document_get_node(doc, *versions->data.sequence.items.start),
			       "schema"),
		       "openAPIV3Schema");
}

static void test_every_property_described(void **state)
{
	int total = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(crds) / sizeof(crds[0]); i++) {
		yaml_document_t doc;
		yaml_node_t *schema = NULL;

		load_crd(i, &doc);
		schema = crd_schema(&doc);
		assert_non_null(schema);
		total += undescribed(&doc, schema, crds[i].file, "");
		yaml_document_delete(&doc);
	}
	if (total > 0)
		fail_msg("%d CRD properties have no description (listed above)", total);
}

/* Every kind is in both categories, has a short name, and (where the spec is
 * generation-driven) a top-level status.observedGeneration for GitOps tools. */
static void test_kubectl_names(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(crds) / sizeof(crds[0]); i++) {
		yaml_document_t doc;
		yaml_node_t *names = NULL;
		yaml_node_t *status = NULL;

		load_crd(i, &doc);
		names = map_get(&doc, map_get(&doc, yaml_document_get_root_node(&doc), "spec"),
				"names");
		assert_non_null(map_get(&doc, names, "shortNames"));
		status = map_get(&doc, map_get(&doc, crd_schema(&doc), "properties"), "status");
		if (i == 0 && map_get(&doc, map_get(&doc, status, "properties"),
				      "observedGeneration") == NULL)
			fail_msg("%s: no status.observedGeneration", crds[i].file);
		yaml_document_delete(&doc);
	}
}

static void test_cluster_health_columns(void **state)
{
	char *text = slurp(CHART_DIR, crds[0].file, NULL);
	const char *needles[] = {
	    "    - name: Available\n      type: string\n      description: ",
	    "      jsonPath: .status.conditions[?(@.type==\"Available\")].status\n",
	    "    - name: Reason\n      type: string\n      description: ",
	    "      jsonPath: .status.conditions[?(@.type==\"Available\")].reason\n",
	    "      jsonPath: .status.conditions[?(@.type==\"Degraded\")].reason\n",
	};

	(void)state;
	for (size_t j = 0; j < sizeof(needles) / sizeof(needles[0]); j++)
		if (strstr(text, needles[j]) == NULL)
			fail_msg("%s: missing \"%s\"", crds[0].file, needles[j]);
	free(text);
}

static void test_api_facts(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(crds) / sizeof(crds[0]); i++) {
		char *text = slurp(CHART_DIR, crds[i].file, NULL);
		const char *needles[] = {
		    "group: " EO_API_GROUP "\n",
		    "  - name: " EO_API_VERSION "\n    served: true\n    storage: true\n",
		    "    - " EO_CATEGORY "\n",
		    "    - etcd\n",
		    "scope: Namespaced\n",
		};

		for (size_t j = 0; j < sizeof(needles) / sizeof(needles[0]); j++)
			if (strstr(text, needles[j]) == NULL)
				fail_msg("%s: missing \"%s\"", crds[i].file, needles[j]);
		free(text);
	}
}

TU_MAIN(test_chart_and_config_identical, test_yaml_well_formed, test_messages_match, test_api_facts,
	test_every_property_described, test_kubectl_names, test_cluster_health_columns)
