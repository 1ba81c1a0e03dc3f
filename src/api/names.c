#include "api/names.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/util.h"

__attribute__((format(printf, 3, 4))) static int format_name(char *buf, size_t n, const char *fmt,
							     ...)
{
	va_list ap;
	int len = 0;

	if (buf == NULL || n == 0)
		return -1;
	va_start(ap, fmt);
	len = vsnprintf(buf, n, fmt, ap);
	va_end(ap);
	if (len < 0 || (size_t)len >= n) {
		buf[0] = '\0';
		return -1;
	}
	return 0;
}

/* A name that cannot be made: "" in buf (when there is room), -1. */
static int no_name(char *buf, size_t n)
{
	if (buf != NULL && n > 0)
		buf[0] = '\0';
	return -1;
}

static int cluster_suffixed(char *buf, size_t n, const char *cluster, const char *suffix)
{
	if (!eo_present(cluster))
		return no_name(buf, n);
	return format_name(buf, n, "%s%s", cluster, suffix);
}

int eo_name_headless_service(char *buf, size_t n, const char *cluster)
{
	return cluster_suffixed(buf, n, cluster, "");
}

int eo_name_client_service(char *buf, size_t n, const char *cluster)
{
	return cluster_suffixed(buf, n, cluster, "-client");
}

int eo_name_pdb(char *buf, size_t n, const char *cluster)
{
	return cluster_suffixed(buf, n, cluster, "");
}

int eo_name_member_prefix(char *buf, size_t n, const char *cluster)
{
	return cluster_suffixed(buf, n, cluster, "-");
}

int eo_name_member_pvc(char *buf, size_t n, const char *member)
{
	if (!eo_present(member))
		return no_name(buf, n);
	return format_name(buf, n, "data-%s", member);
}

int eo_name_snapshot_job(char *buf, size_t n, const char *snapshot)
{
	return cluster_suffixed(buf, n, snapshot, "-snapshot");
}

int eo_name_archiver(char *buf, size_t n, const char *archive)
{
	return cluster_suffixed(buf, n, archive, "-archiver");
}

int eo_name_prune_job(char *buf, size_t n, const char *snapshot)
{
	return cluster_suffixed(buf, n, snapshot, "-prune");
}

int eo_name_server_tls_secret(char *buf, size_t n, const char *cluster)
{
	return cluster_suffixed(buf, n, cluster, "-server-tls");
}

int eo_name_operator_client_tls_secret(char *buf, size_t n, const char *cluster)
{
	return cluster_suffixed(buf, n, cluster, "-operator-client-tls");
}

int eo_name_peer_tls_secret(char *buf, size_t n, const char *cluster)
{
	return cluster_suffixed(buf, n, cluster, "-peer-tls");
}

int eo_name_server_certificate(char *buf, size_t n, const char *cluster)
{
	return cluster_suffixed(buf, n, cluster, "-server");
}

int eo_name_operator_client_certificate(char *buf, size_t n, const char *cluster)
{
	return cluster_suffixed(buf, n, cluster, "-operator-client");
}

int eo_name_peer_certificate(char *buf, size_t n, const char *cluster)
{
	return cluster_suffixed(buf, n, cluster, "-peer");
}

int eo_name_cluster_token(char *buf, size_t n, const char *ns, const char *cluster, const char *uid)
{
	if (!eo_present(ns) || !eo_present(cluster) || !eo_present(uid))
		return no_name(buf, n);
	return format_name(buf, n, "%s-%s-%s", ns, cluster, uid);
}

int eo_name_cluster_selector(char *buf, size_t n, const char *cluster)
{
	if (!eo_present(cluster))
		return no_name(buf, n);
	return format_name(buf, n, "%s=%s", EO_LABEL_CLUSTER, cluster);
}

int eo_name_member_host(char *buf, size_t n, const char *member, const char *service,
			const char *ns)
{
	if (!eo_present(member) || !eo_present(service) || !eo_present(ns))
		return no_name(buf, n);
	return format_name(buf, n, "%s.%s.%s.svc", member, service, ns);
}

int eo_name_etcd_image(char *buf, size_t n, const char *repository, const char *version)
{
	if (!eo_present(version))
		return no_name(buf, n);
	if (!eo_present(repository))
		repository = EO_DEFAULT_ETCD_IMAGE_REPOSITORY;
	return format_name(buf, n, "%s:v%s", repository, version);
}

bool eo_name_key_reserved(const char *key)
{
	return key != NULL && strncmp(key, EO_KEY_PREFIX, strlen(EO_KEY_PREFIX)) == 0;
}

bool eo_name_is_dns1035_label(const char *s, size_t max)
{
	size_t len = 0;

	if (s == NULL)
		return false;
	len = strlen(s);
	if (len == 0 || len > max || len > EO_DNS_LABEL_MAX)
		return false;
	if (s[0] < 'a' || s[0] > 'z')
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';

		if (!ok)
			return false;
	}
	return s[len - 1] != '-';
}

static bool alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* The name part of a qualified name (label value syntax, but never empty). */
static bool qualified_name_part(const char *s, size_t len)
{
	if (len == 0 || len > EO_DNS_LABEL_MAX || !alnum(s[0]) || !alnum(s[len - 1]))
		return false;
	for (size_t i = 0; i < len; i++)
		if (!alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
			return false;
	return true;
}

/* A DNS-1123 subdomain: dot-separated lowercase labels, at most 253 characters. */
static bool dns1123_subdomain(const char *s, size_t len)
{
	size_t start = 0;

	if (len == 0 || len > 253)
		return false;
	for (size_t i = 0; i <= len; i++) {
		if (i < len && s[i] != '.') {
			char c = s[i];

			if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
				return false;
			continue;
		}
		/* s[start, i) is one label: non-empty, no '-' at either end. */
		if (i == start || s[start] == '-' || s[i - 1] == '-')
			return false;
		start = i + 1;
	}
	return true;
}

bool eo_name_is_label_key(const char *s)
{
	const char *slash = NULL;

	if (s == NULL)
		return false;
	slash = strchr(s, '/');
	if (slash == NULL)
		return qualified_name_part(s, strlen(s));
	return dns1123_subdomain(s, (size_t)(slash - s)) &&
	       qualified_name_part(slash + 1, strlen(slash + 1));
}

bool eo_name_is_label_value(const char *s)
{
	return s != NULL && (s[0] == '\0' || qualified_name_part(s, strlen(s)));
}
