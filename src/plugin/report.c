/* kubectl etcd report: the pure parts and the archive writer (plugin/report.h). */
#include "plugin/report.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "api/meta.h"

void eo_plugin_report_name(const char *ns, const char *cluster, time_t now, char *out, size_t cap)
{
	struct tm tm;
	char ts[32] = "";

	if (gmtime_r(&now, &tm))
		strftime(ts, sizeof(ts), "%Y%m%dT%H%M%SZ", &tm);
	snprintf(out, cap, "etcd-report-%s-%s-%s.tar.gz", ns, cluster, ts);
}

bool eo_plugin_log_line_matches(const char *line, size_t len, const char *ns, const char *cluster)
{
	char want[600];
	size_t wl;
	const char *p = line, *end = line + len;

	wl = (size_t)snprintf(want, sizeof(want), "cluster=%s/%s", ns, cluster);
	if (wl >= sizeof(want))
		return false;
	while ((p = memmem(p, (size_t)(end - p), want, wl)) != NULL) {
		bool starts = p == line || p[-1] == ' ';
		bool ends = p + wl == end || p[wl] == ' ' || p[wl] == '\n' || p[wl] == '\r';

		if (starts && ends)
			return true;
		p += wl;
	}
	return false;
}

bool eo_plugin_event_matches(const json_t *ev, const char *cluster)
{
	const char *name =
	    json_string_value(json_object_get(json_object_get(ev, "involvedObject"), "name"));
	size_t n = strlen(cluster);

	return name && strncmp(name, cluster, n) == 0 && (name[n] == '\0' || name[n] == '-');
}

static void scrub_containers(json_t *containers)
{
	size_t i, j;
	json_t *c, *e;

	json_array_foreach(containers, i, c)
	{
		json_array_foreach(json_object_get(c, "env"), j, e)
		{
			if (json_object_get(e, "value"))
				json_object_set_new(e, "value", json_string("(left out)"));
		}
	}
}

void eo_plugin_report_scrub(json_t *list)
{
	size_t i;
	json_t *o, *spec;

	json_array_foreach(json_object_get(list, "items"), i, o)
	{
		json_object_del(json_object_get(o, "metadata"), "managedFields");
		spec = json_object_get(o, "spec");
		scrub_containers(json_object_get(spec, "containers"));
		scrub_containers(json_object_get(spec, "initContainers"));
	}
}

static const char *or_dash(const char *s)
{
	return s ? s : "-";
}

static const char *str(const json_t *o, const char *k)
{
	return or_dash(json_string_value(json_object_get(o, k)));
}

void eo_plugin_report_summary(const json_t *cluster, const json_t *members, const char *notes,
			      struct eo_strbuf *out)
{
	const json_t *st = json_object_get(cluster, "status");
	const json_t *c, *m;
	char line[2048];
	size_t i;

	snprintf(line, sizeof(line), "EtcdCluster %s/%s (generation %lld, observed %lld)\n",
		 or_dash(eo_meta_namespace(cluster)), or_dash(eo_meta_name(cluster)),
		 (long long)eo_meta_generation(cluster, 0),
		 (long long)json_integer_value(json_object_get(st, "observedGeneration")));
	eo_strbuf_add(out, line);
	snprintf(line, sizeof(line), "ready members: %lld of %lld\n\nconditions:\n",
		 (long long)json_integer_value(json_object_get(st, "readyMembers")),
		 (long long)json_integer_value(
		     json_object_get(json_object_get(cluster, "spec"), "replicas")));
	eo_strbuf_add(out, line);
	json_array_foreach(json_object_get(st, "conditions"), i, c)
	{
		snprintf(line, sizeof(line), "  %s=%s reason=%s since %s: %s\n", str(c, "type"),
			 str(c, "status"), str(c, "reason"), str(c, "lastTransitionTime"),
			 str(c, "message"));
		eo_strbuf_add(out, line);
	}
	eo_strbuf_add(out, "\nEtcdMembers:\n");
	json_array_foreach(json_object_get(members, "items"), i, m)
	{
		const json_t *ms = json_object_get(m, "status");
		const json_t *mc;
		size_t j;

		snprintf(line, sizeof(line), "  %s memberID=%s\n", or_dash(eo_meta_name(m)),
			 str(ms, "memberID"));
		eo_strbuf_add(out, line);
		json_array_foreach(json_object_get(ms, "conditions"), j, mc)
		{
			snprintf(line, sizeof(line), "    %s=%s reason=%s: %s\n", str(mc, "type"),
				 str(mc, "status"), str(mc, "reason"), str(mc, "message"));
			eo_strbuf_add(out, line);
		}
	}
	if (notes && notes[0]) {
		eo_strbuf_add(out, "\nnot collected:\n");
		eo_strbuf_add(out, notes);
	}
}

/* ---- the archive ---------------------------------------------------------------------- */

struct eo_plugin_tar {
	gzFile gz;
	char *path;
};

struct eo_plugin_tar *eo_plugin_tar_open(const char *path, char *err, size_t errcap)
{
	struct eo_plugin_tar *t = calloc(1, sizeof(*t));
	int fd;

	if (!t || !(t->path = strdup(path))) {
		free(t);
		snprintf(err, errcap, "out of memory");
		return NULL;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		snprintf(err, errcap, "cannot create %s: %s", path, strerror(errno));
		goto fail;
	}
	t->gz = gzdopen(fd, "wb");
	if (!t->gz) {
		close(fd);
		unlink(path);
		snprintf(err, errcap, "cannot write %s", path);
		goto fail;
	}
	return t;
fail:
	free(t->path);
	free(t);
	return NULL;
}

/* An octal field of width bytes: width - 1 digits and a NUL (the value must fit). */
static void octal(unsigned char *field, size_t width, unsigned long long v)
{
	char tmp[32];

	snprintf(tmp, sizeof(tmp), "%0*llo", (int)(width - 1), v);
	memcpy(field, tmp, width - 1);
	field[width - 1] = '\0';
}

/* A ustar header: name (< 100 bytes), mode, uid/gid 0, size, mtime, checksum, type '0'. */
static int tar_header(unsigned char h[512], const char *name, size_t len, time_t mtime)
{
	unsigned sum = 0;

	if (strlen(name) >= 100)
		return -1;
	memset(h, 0, 512);
	memcpy(h, name, strlen(name));
	if (len >= (1ull << 33))
		return -1; /* 11 octal digits */
	octal(h + 100, 8, 0644);
	octal(h + 108, 8, 0);
	octal(h + 116, 8, 0);
	octal(h + 124, 12, len);
	octal(h + 136, 12, (unsigned long long)(mtime > 0 ? mtime : 0));
	memset(h + 148, ' ', 8);
	h[156] = '0';
	memcpy(h + 257, "ustar", 6); /* "ustar\0" */
	memcpy(h + 263, "00", 2);
	memcpy(h + 265, "root", 4);
	memcpy(h + 297, "root", 4);
	for (size_t i = 0; i < 512; i++)
		sum += h[i];
	octal(h + 148, 7, sum);
	h[155] = ' ';
	return 0;
}

static int gz_all(gzFile gz, const void *p, size_t n)
{
	const char *c = p;

	while (n > 0) {
		unsigned chunk = n > (1u << 30) ? (1u << 30) : (unsigned)n;
		int w = gzwrite(gz, c, chunk);

		if (w <= 0)
			return -1;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

int eo_plugin_tar_add(struct eo_plugin_tar *t, const char *name, const void *data, size_t len,
		      time_t mtime, char *err, size_t errcap)
{
	static const unsigned char zero[512];
	unsigned char h[512];
	size_t pad = (512 - len % 512) % 512;

	if (tar_header(h, name, len, mtime) != 0) {
		snprintf(err, errcap, "archive entry name too long: %.60s", name);
		return -1;
	}
	if (gz_all(t->gz, h, sizeof(h)) != 0 || gz_all(t->gz, data, len) != 0 ||
	    gz_all(t->gz, zero, pad) != 0) {
		snprintf(err, errcap, "writing %s failed", t->path);
		return -1;
	}
	return 0;
}

int eo_plugin_tar_close(struct eo_plugin_tar *t, bool abandon, char *err, size_t errcap)
{
	static const unsigned char zero[1024];
	int rc = 0;

	if (!abandon && gz_all(t->gz, zero, sizeof(zero)) != 0)
		rc = -1;
	if (gzclose(t->gz) != Z_OK)
		rc = -1;
	if (rc != 0 && !abandon)
		snprintf(err, errcap, "writing %s failed", t->path);
	if (rc != 0 || abandon)
		unlink(t->path);
	free(t->path);
	free(t);
	return abandon ? -1 : rc;
}
