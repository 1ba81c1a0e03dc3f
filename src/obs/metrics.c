/*
 * obs/metrics.c - Prometheus registry and text exposition.
 */
#include "obs/metrics.h"

#include "core/strbuf.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct eo_metric {
	struct eo_metric_family *fam;
	char *values[EO_METRICS_MAX_LABELS];
	double value;	 /* counter or gauge */
	double sum;	 /* histogram */
	uint64_t count;	 /* histogram */
	uint64_t hist[]; /* histogram: non-cumulative counts, nbuckets + 1 (+Inf) entries */
};

struct eo_metric_family {
	pthread_mutex_t mu;
	enum eo_metric_type type;
	char name[EO_METRICS_NAME_MAX];
	char help[EO_METRICS_HELP_MAX];
	size_t nlabels;
	char labels[EO_METRICS_MAX_LABELS][EO_METRICS_NAME_MAX];
	size_t nbuckets;
	double buckets[EO_METRICS_MAX_BUCKETS];
	/* Sorted by label values, so lookups bisect and the page is stable. */
	struct eo_metric **series;
	size_t nseries;
	size_t cap;
};

struct eo_metrics {
	pthread_mutex_t mu; /* guards the family list and hooks */
	struct eo_metric_family *fams[EO_METRICS_MAX_FAMILIES];
	size_t nfams;
	struct {
		eo_metrics_collect_fn fn;
		void *ud;
	} hooks[EO_METRICS_MAX_HOOKS];
	size_t nhooks;
};

/* ------------------------------------------------------------------------------------------ */
/* Registry and families                                                                       */
/* ------------------------------------------------------------------------------------------ */

struct eo_metrics *eo_metrics_new(void)
{
	struct eo_metrics *reg = calloc(1, sizeof(*reg));

	if (!reg)
		return NULL;
	pthread_mutex_init(&reg->mu, NULL);
	return reg;
}

static void series_free(struct eo_metric *m)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; i < EO_METRICS_MAX_LABELS; i++)
		free(m->values[i]);
	free(m);
}

static void family_free(struct eo_metric_family *fam)
{
	size_t i;

	if (!fam)
		return;
	for (i = 0; i < fam->nseries; i++)
		series_free(fam->series[i]);
	free(fam->series);
	pthread_mutex_destroy(&fam->mu);
	free(fam);
}

void eo_metrics_free(struct eo_metrics *reg)
{
	size_t i;

	if (!reg)
		return;
	for (i = 0; i < reg->nfams; i++)
		family_free(reg->fams[i]);
	pthread_mutex_destroy(&reg->mu);
	free(reg);
}

static bool valid_name(const char *s, bool allow_colon)
{
	size_t i;

	if (!s || !*s || strlen(s) >= EO_METRICS_NAME_MAX)
		return false;
	for (i = 0; s[i]; i++) {
		char c = s[i];
		bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
			     (allow_colon && c == ':');

		if (!alpha && !(i > 0 && c >= '0' && c <= '9'))
			return false;
	}
	return true;
}

static struct eo_metric_family *family_register(struct eo_metrics *reg, enum eo_metric_type type,
						const char *name, const char *help,
						const char *const *labels, const double *buckets,
						size_t nbuckets)
{
	struct eo_metric_family *fam = NULL;
	size_t i, j;

	if (!reg || !valid_name(name, true) || nbuckets > EO_METRICS_MAX_BUCKETS)
		return NULL;
	if (help && strlen(help) >= EO_METRICS_HELP_MAX)
		return NULL;
	fam = calloc(1, sizeof(*fam));
	if (!fam)
		return NULL;
	fam->type = type;
	snprintf(fam->name, sizeof(fam->name), "%s", name);
	snprintf(fam->help, sizeof(fam->help), "%s", help ? help : "");
	for (i = 0; labels && labels[i]; i++) {
		if (i >= EO_METRICS_MAX_LABELS || !valid_name(labels[i], false) ||
		    strncmp(labels[i], "__", 2) == 0 ||
		    (type == EO_METRIC_HISTOGRAM && strcmp(labels[i], "le") == 0))
			goto fail;
		for (j = 0; j < i; j++) {
			if (strcmp(labels[i], labels[j]) == 0)
				goto fail;
		}
		snprintf(fam->labels[i], sizeof(fam->labels[i]), "%s", labels[i]);
	}
	fam->nlabels = i;
	for (i = 0; i < nbuckets; i++) {
		if (!isfinite(buckets[i]) || (i > 0 && buckets[i] <= buckets[i - 1]))
			goto fail;
		fam->buckets[i] = buckets[i];
	}
	fam->nbuckets = nbuckets;
	pthread_mutex_init(&fam->mu, NULL);

	pthread_mutex_lock(&reg->mu);
	for (i = 0; i < reg->nfams; i++) {
		if (strcmp(reg->fams[i]->name, name) == 0)
			break;
	}
	if (i < reg->nfams || reg->nfams >= EO_METRICS_MAX_FAMILIES) {
		pthread_mutex_unlock(&reg->mu);
		pthread_mutex_destroy(&fam->mu);
		goto fail;
	}
	reg->fams[reg->nfams++] = fam;
	pthread_mutex_unlock(&reg->mu);
	return fam;
fail:
	free(fam);
	return NULL;
}

struct eo_metric_family *eo_metrics_counter(struct eo_metrics *reg, const char *name,
					    const char *help, const char *const *labels)
{
	return family_register(reg, EO_METRIC_COUNTER, name, help, labels, NULL, 0);
}

struct eo_metric_family *eo_metrics_gauge(struct eo_metrics *reg, const char *name,
					  const char *help, const char *const *labels)
{
	return family_register(reg, EO_METRIC_GAUGE, name, help, labels, NULL, 0);
}

struct eo_metric_family *eo_metrics_histogram(struct eo_metrics *reg, const char *name,
					      const char *help, const char *const *labels,
					      const double *buckets, size_t nbuckets)
{
	if (nbuckets > 0 && !buckets)
		return NULL;
	return family_register(reg, EO_METRIC_HISTOGRAM, name, help, labels, buckets, nbuckets);
}

int eo_metrics_on_collect(struct eo_metrics *reg, eo_metrics_collect_fn fn, void *ud)
{
	int rc = -1;

	if (!reg || !fn)
		return -1;
	pthread_mutex_lock(&reg->mu);
	if (reg->nhooks < EO_METRICS_MAX_HOOKS) {
		reg->hooks[reg->nhooks].fn = fn;
		reg->hooks[reg->nhooks].ud = ud;
		reg->nhooks++;
		rc = 0;
	}
	pthread_mutex_unlock(&reg->mu);
	return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* Series                                                                                      */
/* ------------------------------------------------------------------------------------------ */

static bool values_ok(const struct eo_metric_family *fam, const char *const *values)
{
	size_t i;

	if (fam->nlabels > 0 && !values)
		return false;
	for (i = 0; i < fam->nlabels; i++) {
		if (!values[i] || strlen(values[i]) > EO_METRICS_LABEL_VALUE_MAX)
			return false;
	}
	return true;
}

static int cmp_values(const struct eo_metric_family *fam, char *const *a, const char *const *b)
{
	size_t i;
	int c;

	for (i = 0; i < fam->nlabels; i++) {
		c = strcmp(a[i], b[i]);
		if (c != 0)
			return c;
	}
	return 0;
}

/* Bisects fam->series; returns the index of the match or of the insertion point. Locked. */
static size_t series_find(const struct eo_metric_family *fam, const char *const *values,
			  bool *found)
{
	size_t lo = 0, hi = fam->nseries;

	*found = false;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = cmp_values(fam, fam->series[mid]->values, values);

		if (c == 0) {
			*found = true;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct eo_metric *series_new(struct eo_metric_family *fam, const char *const *values)
{
	size_t nhist = fam->type == EO_METRIC_HISTOGRAM ? fam->nbuckets + 1 : 0;
	struct eo_metric *m = calloc(1, sizeof(*m) + nhist * sizeof(uint64_t));
	size_t i;

	if (!m)
		return NULL;
	m->fam = fam;
	for (i = 0; i < fam->nlabels; i++) {
		m->values[i] = strdup(values[i]);
		if (!m->values[i]) {
			series_free(m);
			return NULL;
		}
	}
	return m;
}

/* Finds or creates the series for values. Values checked, fam->mu held. */
static struct eo_metric *series_get_locked(struct eo_metric_family *fam, const char *const *values)
{
	struct eo_metric *m;
	struct eo_metric **grown;
	size_t idx, ncap;
	bool found;

	idx = series_find(fam, values, &found);
	if (found)
		return fam->series[idx];
	if (fam->nseries >= EO_METRICS_MAX_SERIES)
		return NULL;
	if (fam->nseries == fam->cap) {
		ncap = fam->cap ? fam->cap * 2 : 8;
		grown = realloc(fam->series, ncap * sizeof(*grown));
		if (!grown)
			return NULL;
		fam->series = grown;
		fam->cap = ncap;
	}
	m = series_new(fam, values);
	if (!m)
		return NULL;
	memmove(&fam->series[idx + 1], &fam->series[idx],
		(fam->nseries - idx) * sizeof(fam->series[0]));
	fam->series[idx] = m;
	fam->nseries++;
	return m;
}

struct eo_metric *eo_metrics_series(struct eo_metric_family *fam, const char *const *values)
{
	struct eo_metric *m;

	if (!fam || !values_ok(fam, values))
		return NULL;
	pthread_mutex_lock(&fam->mu);
	m = series_get_locked(fam, values);
	pthread_mutex_unlock(&fam->mu);
	return m;
}

static void series_remove_at(struct eo_metric_family *fam, size_t idx)
{
	series_free(fam->series[idx]);
	memmove(&fam->series[idx], &fam->series[idx + 1],
		(fam->nseries - idx - 1) * sizeof(fam->series[0]));
	fam->nseries--;
}

int eo_metrics_remove(struct eo_metric_family *fam, const char *const *values)
{
	size_t idx;
	bool found;

	if (!fam || !values_ok(fam, values))
		return -1;
	pthread_mutex_lock(&fam->mu);
	idx = series_find(fam, values, &found);
	if (found)
		series_remove_at(fam, idx);
	pthread_mutex_unlock(&fam->mu);
	return found ? 0 : -1;
}

size_t eo_metrics_remove_matching(struct eo_metric_family *fam, const char *label,
				  const char *value)
{
	size_t li, i, removed = 0;

	if (!fam || !label || !value)
		return 0;
	for (li = 0; li < fam->nlabels; li++) {
		if (strcmp(fam->labels[li], label) == 0)
			break;
	}
	if (li == fam->nlabels)
		return 0;
	pthread_mutex_lock(&fam->mu);
	for (i = fam->nseries; i > 0; i--) {
		if (strcmp(fam->series[i - 1]->values[li], value) == 0) {
			series_remove_at(fam, i - 1);
			removed++;
		}
	}
	pthread_mutex_unlock(&fam->mu);
	return removed;
}

/* The index of label in fam, or fam->nlabels when it has none of that name. */
static size_t label_index(const struct eo_metric_family *fam, const char *label)
{
	size_t li;

	for (li = 0; li < fam->nlabels; li++) {
		if (strcmp(fam->labels[li], label) == 0)
			break;
	}
	return li;
}

size_t eo_metrics_remove_where(struct eo_metric_family *fam, const char *const *labels,
			       const char *const *values, size_t n)
{
	size_t li[EO_METRICS_MAX_LABELS], i, k, removed = 0;

	if (!fam || !labels || !values || n == 0 || n > EO_METRICS_MAX_LABELS)
		return 0;
	for (k = 0; k < n; k++) {
		if (!labels[k] || !values[k] ||
		    (li[k] = label_index(fam, labels[k])) == fam->nlabels)
			return 0;
	}
	pthread_mutex_lock(&fam->mu);
	for (i = fam->nseries; i > 0; i--) {
		for (k = 0; k < n; k++) {
			if (strcmp(fam->series[i - 1]->values[li[k]], values[k]) != 0)
				break;
		}
		if (k == n) {
			series_remove_at(fam, i - 1);
			removed++;
		}
	}
	pthread_mutex_unlock(&fam->mu);
	return removed;
}

/* The updates below run with m->fam->mu held; the checks are the callers'. */
static void add_locked(struct eo_metric *m, double delta)
{
	m->value += delta;
}

static void set_locked(struct eo_metric *m, double v)
{
	m->value = v;
}

static void observe_locked(struct eo_metric *m, double v)
{
	struct eo_metric_family *fam = m->fam;
	size_t i;

	/* Bucket i counts observations v <= buckets[i] not counted by an earlier bucket. */
	for (i = 0; i < fam->nbuckets; i++) {
		if (v <= fam->buckets[i])
			break;
	}
	m->hist[i]++;
	m->count++;
	m->sum += v;
}

static bool add_ok(const struct eo_metric_family *fam, double delta)
{
	if (fam->type == EO_METRIC_HISTOGRAM || isnan(delta))
		return false;
	return !(fam->type == EO_METRIC_COUNTER && delta < 0);
}

void eo_metric_add(struct eo_metric *m, double delta)
{
	if (!m || !add_ok(m->fam, delta))
		return;
	pthread_mutex_lock(&m->fam->mu);
	add_locked(m, delta);
	pthread_mutex_unlock(&m->fam->mu);
}

void eo_metric_inc(struct eo_metric *m)
{
	eo_metric_add(m, 1.0);
}

void eo_metric_set(struct eo_metric *m, double v)
{
	if (!m || m->fam->type != EO_METRIC_GAUGE)
		return;
	pthread_mutex_lock(&m->fam->mu);
	set_locked(m, v);
	pthread_mutex_unlock(&m->fam->mu);
}

void eo_metric_observe(struct eo_metric *m, double v)
{
	if (!m || m->fam->type != EO_METRIC_HISTOGRAM || isnan(v))
		return;
	pthread_mutex_lock(&m->fam->mu);
	observe_locked(m, v);
	pthread_mutex_unlock(&m->fam->mu);
}

/*
 * The family-level helpers look the series up and update it under one hold of the family
 * lock: a series pointer must not outlive the lock, or a concurrent eo_metrics_remove() of
 * the same labels (a deleted cluster) could free it in between.
 */
enum family_op { OP_ADD, OP_SET, OP_OBSERVE };

static void family_update(struct eo_metric_family *fam, const char *const *values,
			  enum family_op op, double v)
{
	struct eo_metric *m;

	if (!fam || !values_ok(fam, values))
		return;
	if (op == OP_ADD && !add_ok(fam, v))
		return;
	if (op == OP_SET && fam->type != EO_METRIC_GAUGE)
		return;
	if (op == OP_OBSERVE && (fam->type != EO_METRIC_HISTOGRAM || isnan(v)))
		return;
	pthread_mutex_lock(&fam->mu);
	m = series_get_locked(fam, values);
	if (m) {
		if (op == OP_ADD)
			add_locked(m, v);
		else if (op == OP_SET)
			set_locked(m, v);
		else
			observe_locked(m, v);
	}
	pthread_mutex_unlock(&fam->mu);
}

void eo_metrics_inc(struct eo_metric_family *fam, const char *const *values)
{
	family_update(fam, values, OP_ADD, 1.0);
}

void eo_metrics_add(struct eo_metric_family *fam, const char *const *values, double delta)
{
	family_update(fam, values, OP_ADD, delta);
}

void eo_metrics_set(struct eo_metric_family *fam, const char *const *values, double v)
{
	family_update(fam, values, OP_SET, v);
}

void eo_metrics_observe(struct eo_metric_family *fam, const char *const *values, double v)
{
	family_update(fam, values, OP_OBSERVE, v);
}

double eo_metric_value(struct eo_metric *m)
{
	double v;

	if (!m)
		return NAN;
	pthread_mutex_lock(&m->fam->mu);
	v = m->fam->type == EO_METRIC_HISTOGRAM ? (double)m->count : m->value;
	pthread_mutex_unlock(&m->fam->mu);
	return v;
}

size_t eo_metric_histogram(struct eo_metric *m, uint64_t *cumulative, size_t cap, double *sum,
			   uint64_t *count)
{
	uint64_t acc = 0;
	size_t i, n;

	if (!m || m->fam->type != EO_METRIC_HISTOGRAM)
		return 0;
	pthread_mutex_lock(&m->fam->mu);
	n = m->fam->nbuckets + 1;
	for (i = 0; i < n && i < cap; i++) {
		acc += m->hist[i];
		cumulative[i] = acc;
	}
	if (sum)
		*sum = m->sum;
	if (count)
		*count = m->count;
	pthread_mutex_unlock(&m->fam->mu);
	return i;
}

/* ------------------------------------------------------------------------------------------ */
/* Exposition                                                                                  */
/* ------------------------------------------------------------------------------------------ */

char *eo_metrics_format_double(char *buf, size_t cap, double v)
{
	int prec;

	if (isnan(v)) {
		snprintf(buf, cap, "NaN");
	} else if (isinf(v)) {
		snprintf(buf, cap, v > 0 ? "+Inf" : "-Inf");
	} else {
		/* The shortest %g form that parses back to the same double. */
		for (prec = 1; prec <= 17; prec++) {
			snprintf(buf, cap, "%.*g", prec, v);
			if (strtod(buf, NULL) == v)
				break;
		}
	}
	return buf;
}

static void sb_escaped(struct eo_strbuf *b, const char *s, bool quote)
{
	const char *run = s;

	for (; *s; s++) {
		const char *rep = NULL;

		if (*s == '\\')
			rep = "\\\\";
		else if (*s == '\n')
			rep = "\\n";
		else if (quote && *s == '"')
			rep = "\\\"";
		if (rep) {
			eo_strbuf_add_n(b, run, (size_t)(s - run));
			eo_strbuf_add(b, rep);
			run = s + 1;
		}
	}
	eo_strbuf_add_n(b, run, (size_t)(s - run));
}

static void sb_double(struct eo_strbuf *b, double v)
{
	char num[40];

	eo_strbuf_add(b, eo_metrics_format_double(num, sizeof(num), v));
}

static void sb_u64(struct eo_strbuf *b, uint64_t v)
{
	char num[24];

	snprintf(num, sizeof(num), "%llu", (unsigned long long)v);
	eo_strbuf_add(b, num);
}

/* name{l1="v1",...[,le="x"]}; le may be NULL. */
static void sb_series_name(struct eo_strbuf *b, const struct eo_metric_family *fam,
			   const struct eo_metric *m, const char *suffix, const char *le)
{
	size_t i;

	eo_strbuf_add(b, fam->name);
	eo_strbuf_add(b, suffix);
	if (fam->nlabels == 0 && !le)
		return;
	eo_strbuf_add(b, "{");
	for (i = 0; i < fam->nlabels; i++) {
		if (i > 0)
			eo_strbuf_add(b, ",");
		eo_strbuf_add(b, fam->labels[i]);
		eo_strbuf_add(b, "=\"");
		sb_escaped(b, m->values[i], true);
		eo_strbuf_add(b, "\"");
	}
	if (le) {
		if (fam->nlabels > 0)
			eo_strbuf_add(b, ",");
		eo_strbuf_add(b, "le=\"");
		eo_strbuf_add(b, le);
		eo_strbuf_add(b, "\"");
	}
	eo_strbuf_add(b, "}");
}

static void render_family(struct eo_strbuf *b, struct eo_metric_family *fam)
{
	static const char *const type_names[] = {"counter", "gauge", "histogram"};
	char le[40];
	uint64_t acc;
	size_t i, k;

	pthread_mutex_lock(&fam->mu);
	eo_strbuf_add(b, "# HELP ");
	eo_strbuf_add(b, fam->name);
	eo_strbuf_add(b, " ");
	sb_escaped(b, fam->help, false);
	eo_strbuf_add(b, "\n# TYPE ");
	eo_strbuf_add(b, fam->name);
	eo_strbuf_add(b, " ");
	eo_strbuf_add(b, type_names[fam->type]);
	eo_strbuf_add(b, "\n");
	for (i = 0; i < fam->nseries; i++) {
		struct eo_metric *m = fam->series[i];

		if (fam->type != EO_METRIC_HISTOGRAM) {
			sb_series_name(b, fam, m, "", NULL);
			eo_strbuf_add(b, " ");
			sb_double(b, m->value);
			eo_strbuf_add(b, "\n");
			continue;
		}
		acc = 0;
		for (k = 0; k <= fam->nbuckets; k++) {
			acc += m->hist[k];
			if (k < fam->nbuckets)
				eo_metrics_format_double(le, sizeof(le), fam->buckets[k]);
			else
				snprintf(le, sizeof(le), "+Inf");
			sb_series_name(b, fam, m, "_bucket", le);
			eo_strbuf_add(b, " ");
			sb_u64(b, acc);
			eo_strbuf_add(b, "\n");
		}
		sb_series_name(b, fam, m, "_sum", NULL);
		eo_strbuf_add(b, " ");
		sb_double(b, m->sum);
		eo_strbuf_add(b, "\n");
		sb_series_name(b, fam, m, "_count", NULL);
		eo_strbuf_add(b, " ");
		sb_u64(b, m->count);
		eo_strbuf_add(b, "\n");
	}
	pthread_mutex_unlock(&fam->mu);
}

int eo_metrics_render(struct eo_metrics *reg, char **out, size_t *len)
{
	struct eo_metric_family *fams[EO_METRICS_MAX_FAMILIES];
	struct {
		eo_metrics_collect_fn fn;
		void *ud;
	} hooks[EO_METRICS_MAX_HOOKS];
	struct eo_strbuf b = EO_STRBUF_INIT(EO_METRICS_RENDER_MAX);
	size_t nfams, nhooks, i;

	*out = NULL;
	*len = 0;
	if (!reg)
		return -1;
	/* Snapshot under the registry lock; families are never freed before the registry. */
	pthread_mutex_lock(&reg->mu);
	nfams = reg->nfams;
	memcpy(fams, reg->fams, nfams * sizeof(fams[0]));
	nhooks = reg->nhooks;
	memcpy(hooks, reg->hooks, nhooks * sizeof(hooks[0]));
	pthread_mutex_unlock(&reg->mu);

	for (i = 0; i < nhooks; i++)
		hooks[i].fn(hooks[i].ud);
	for (i = 0; i < nfams && !b.failed; i++)
		render_family(&b, fams[i]);
	*out = eo_strbuf_take(&b, len);
	return *out ? 0 : -1;
}

/* ------------------------------------------------------------------------------------------ */
/* The operator's metrics                                                                      */
/* ------------------------------------------------------------------------------------------ */

/* Reconciles are short (cache reads, a few etcd calls) but may wait on request timeouts. */
static const double reconcile_buckets[] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
					   1,	  2.5,	5,     10,   30,  60};

const char *eo_reconcile_result_name(enum eo_reconcile_result r)
{
	switch (r) {
	case EO_RECONCILE_SUCCESS:
		return "success";
	case EO_RECONCILE_ERROR:
		return "error";
	case EO_RECONCILE_REQUEUE:
		return "requeue";
	case EO_RECONCILE_REQUEUE_AFTER:
		return "requeue_after";
	}
	return "unknown";
}

long long eo_metrics_read_rss(const char *statm_path)
{
	char buf[256];
	unsigned long long size = 0, resident = 0;
	char *p, *end;
	long page;
	size_t n;
	FILE *f;

	f = fopen(statm_path, "re");
	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* statm: size resident shared text lib data dt, in pages. */
	size = strtoull(buf, &end, 10);
	if (end == buf)
		return -1;
	p = end;
	resident = strtoull(p, &end, 10);
	if (end == p)
		return -1;
	(void)size;
	page = sysconf(_SC_PAGESIZE);
	if (page <= 0)
		return -1;
	return (long long)(resident * (unsigned long long)page);
}

static void process_collect(void *ud)
{
	/* Serialises concurrent scrapes so the CPU counter's read-then-add stays exact. */
	static pthread_mutex_t collect_mu = PTHREAD_MUTEX_INITIALIZER;
	struct eo_operator_metrics *om = ud;
	struct timespec cpu;
	long long rss = eo_metrics_read_rss("/proc/self/statm");

	if (rss >= 0)
		eo_metrics_set(om->resident_memory, NULL, (double)rss);
	pthread_mutex_lock(&collect_mu);
	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu) == 0) {
		struct eo_metric *m = eo_metrics_series(om->cpu_seconds, NULL);
		double now = (double)cpu.tv_sec + (double)cpu.tv_nsec / 1e9;
		double prev = eo_metric_value(m);

		/* A counter only moves forward: add the difference since the last scrape. */
		if (now > prev)
			eo_metric_add(m, now - prev);
	}
	pthread_mutex_unlock(&collect_mu);
}

int eo_operator_metrics_init(struct eo_operator_metrics *om, struct eo_metrics *reg,
			     const char *version)
{
	static const char *const ctl[] = {"controller", NULL};
	static const char *const ctl_res[] = {"controller", "result", NULL};
	static const char *const name[] = {"name", NULL};
	static const char *const kind[] = {"kind", NULL};
	static const char *const ver[] = {"version", NULL};
	struct timespec now;
	const char *v[1];

	memset(om, 0, sizeof(*om));
	om->reg = reg;
	om->reconcile_total = eo_metrics_counter(
	    reg, "controller_runtime_reconcile_total",
	    "Total number of reconciliations per controller and result.", ctl_res);
	om->reconcile_errors =
	    eo_metrics_counter(reg, "controller_runtime_reconcile_errors_total",
			       "Total number of reconciliation errors per controller.", ctl);
	om->reconcile_time = eo_metrics_histogram(
	    reg, "controller_runtime_reconcile_time_seconds",
	    "Length of time per reconciliation per controller.", ctl, reconcile_buckets,
	    sizeof(reconcile_buckets) / sizeof(reconcile_buckets[0]));
	om->workqueue_depth =
	    eo_metrics_gauge(reg, "workqueue_depth", "Current depth of the work queue.", name);
	om->leader_status = eo_metrics_gauge(
	    reg, "leader_election_master_status",
	    "1 while this process holds the leader Lease of the given name, else 0.", name);
	om->watch_restarts = eo_metrics_counter(
	    reg, "etcd_operator_watch_restarts_total",
	    "Times a watch was restarted (expired, failed or relisted) per resource kind.", kind);
	om->build_info =
	    eo_metrics_gauge(reg, "etcd_operator_build_info",
			     "Always 1; the version label names the running build.", ver);
	om->resident_memory = eo_metrics_gauge(reg, "process_resident_memory_bytes",
					       "Resident memory size in bytes.", NULL);
	om->cpu_seconds =
	    eo_metrics_counter(reg, "process_cpu_seconds_total",
			       "Total user and system CPU time spent in seconds.", NULL);
	om->start_time =
	    eo_metrics_gauge(reg, "process_start_time_seconds",
			     "Start time of the process since the Unix epoch in seconds.", NULL);
	if (!om->reconcile_total || !om->reconcile_errors || !om->reconcile_time ||
	    !om->workqueue_depth || !om->leader_status || !om->watch_restarts || !om->build_info ||
	    !om->resident_memory || !om->cpu_seconds || !om->start_time ||
	    eo_cluster_metrics_init(&om->cluster, reg) != 0)
		return -1;

	v[0] = version ? version : "unknown";
	eo_metrics_set(om->build_info, v, 1);
	clock_gettime(CLOCK_REALTIME, &now);
	eo_metrics_set(om->start_time, NULL, (double)now.tv_sec);
	/* Create the process series now so the first scrape already lists them. */
	eo_metrics_series(om->cpu_seconds, NULL);
	eo_metrics_series(om->resident_memory, NULL);
	return eo_metrics_on_collect(reg, process_collect, om);
}

void eo_operator_metrics_reconcile(struct eo_operator_metrics *om, const char *controller,
				   enum eo_reconcile_result r, double seconds)
{
	const char *cr[2] = {controller, eo_reconcile_result_name(r)};
	const char *c[1] = {controller};

	if (!om || !controller)
		return;
	eo_metrics_inc(om->reconcile_total, cr);
	if (r == EO_RECONCILE_ERROR)
		eo_metrics_inc(om->reconcile_errors, c);
	else
		eo_metrics_series(om->reconcile_errors, c); /* shows 0 until the first error */
	eo_metrics_observe(om->reconcile_time, c, seconds);
}

void eo_operator_metrics_queue_depth(struct eo_operator_metrics *om, const char *controller,
				     size_t depth)
{
	const char *c[1] = {controller};

	if (om && controller)
		eo_metrics_set(om->workqueue_depth, c, (double)depth);
}

void eo_operator_metrics_leader(struct eo_operator_metrics *om, const char *lease, bool leading)
{
	const char *n[1] = {lease};

	if (om && lease)
		eo_metrics_set(om->leader_status, n, leading ? 1 : 0);
}

void eo_operator_metrics_watch_restart(struct eo_operator_metrics *om, const char *kind)
{
	const char *k[1] = {kind};

	if (om && kind)
		eo_metrics_inc(om->watch_restarts, k);
}

/* ------------------------------------------------------------------------------------------ */
/* Per-cluster metrics (docs/monitoring.md)                                                    */
/* ------------------------------------------------------------------------------------------ */

static const struct {
	const char *name;
	const char *help;
} cluster_metric_info[EO_CLUSTER_METRIC_COUNT] = {
    [EO_CM_DESIRED_MEMBERS] = {"etcd_operator_cluster_desired_members",
			       "Members the EtcdCluster asks for (spec.replicas)."},
    [EO_CM_READY_MEMBERS] = {"etcd_operator_cluster_ready_members",
			     "Members that are healthy and serving (status.readyMembers)."},
    [EO_CM_VOTERS] = {"etcd_operator_cluster_voters",
		      "Members marked voters (status.isVoter), not being deleted or dormant."},
    [EO_CM_LEARNERS] = {"etcd_operator_cluster_learners",
			"Learners in etcd's member list, as last read."},
    [EO_CM_HEALTHY_VOTERS] = {"etcd_operator_cluster_healthy_voters", "Voters whose Pod is Ready."},
    [EO_CM_NOSPACE_ALARM] = {"etcd_operator_cluster_nospace_alarm",
			     "1 while the cluster's NoSpace condition is True (etcd's NOSPACE "
			     "alarm is raised: writes are refused)."},
    [EO_CM_CERT_EXPIRY] = {"etcd_operator_cluster_certificate_expiry_timestamp_seconds",
			   "Earliest notAfter of the cluster's server, operator client and peer "
			   "certificates, in Unix seconds."},
    [EO_CM_LAST_SNAPSHOT_TIME] = {"etcd_operator_cluster_last_snapshot_timestamp_seconds",
				  "When the newest Complete EtcdSnapshot of the cluster finished, "
				  "in Unix seconds."},
    [EO_CM_LAST_SNAPSHOT_SIZE] = {"etcd_operator_cluster_last_snapshot_size_bytes",
				  "Size of the newest Complete EtcdSnapshot of the cluster."},
    [EO_CM_LAST_SNAPSHOT_FAILED] =
	{"etcd_operator_cluster_last_snapshot_failed",
	 "1 when the newest finished EtcdSnapshot of the cluster Failed."},
};

void eo_cluster_sample_set(struct eo_cluster_sample *s, enum eo_cluster_metric k, double v)
{
	if (s == NULL || k >= EO_CLUSTER_METRIC_COUNT)
		return;
	s->op[k] = EO_CS_SET;
	s->v[k] = v;
}

const char *eo_cluster_metric_name(enum eo_cluster_metric k)
{
	return k < EO_CLUSTER_METRIC_COUNT ? cluster_metric_info[k].name : NULL;
}

int eo_cluster_metrics_init(struct eo_cluster_metrics *cm, struct eo_metrics *reg)
{
	static const char *const labels[] = {"namespace", "cluster", NULL};

	static const char *const sched_labels[] = {"namespace", "cluster", "schedule", NULL};

	memset(cm, 0, sizeof(*cm));
	for (size_t k = 0; k < EO_CLUSTER_METRIC_COUNT; k++) {
		cm->fam[k] = eo_metrics_gauge(reg, cluster_metric_info[k].name,
					      cluster_metric_info[k].help, labels);
		if (cm->fam[k] == NULL)
			return -1;
	}
	cm->schedule_slot = eo_metrics_gauge(
	    reg, "etcd_operator_snapshot_schedule_last_slot_timestamp_seconds",
	    "Latest run time of the EtcdSnapshotSchedule at or before now (not before it was "
	    "created), in Unix seconds; no series while it is suspended.",
	    sched_labels);
	return cm->schedule_slot != NULL ? 0 : -1;
}

void eo_cluster_metrics_record(struct eo_cluster_metrics *cm, const char *ns, const char *name,
			       const struct eo_cluster_sample *s)
{
	const char *v[2] = {ns, name};

	if (cm == NULL || ns == NULL || name == NULL || s == NULL)
		return;
	for (size_t k = 0; k < EO_CLUSTER_METRIC_COUNT; k++) {
		if (s->op[k] == EO_CS_SET)
			eo_metrics_set(cm->fam[k], v, s->v[k]);
		else if (s->op[k] == EO_CS_REMOVE)
			eo_metrics_remove(cm->fam[k], v);
	}
}

void eo_cluster_metrics_forget(struct eo_cluster_metrics *cm, const char *ns, const char *name)
{
	const char *v[2] = {ns, name};

	static const char *const by[] = {"namespace", "cluster"};

	if (cm == NULL || ns == NULL || name == NULL)
		return;
	for (size_t k = 0; k < EO_CLUSTER_METRIC_COUNT; k++)
		eo_metrics_remove(cm->fam[k], v);
	eo_metrics_remove_where(cm->schedule_slot, by, v, 2);
}

void eo_cluster_metrics_schedule(struct eo_cluster_metrics *cm, const char *ns, const char *name,
				 const char *cluster, double slot)
{
	static const char *const by[] = {"namespace", "schedule"};
	const char *v[3] = {ns, cluster, name};
	const char *w[2] = {ns, name};

	if (cm == NULL || ns == NULL || name == NULL || cluster == NULL)
		return;
	/* Only this cluster's series: a schedule moved to another cluster leaves none behind. */
	if (slot > 0) {
		eo_metrics_remove_where(cm->schedule_slot, by, w, 2);
		eo_metrics_set(cm->schedule_slot, v, slot);
	} else {
		eo_metrics_remove_where(cm->schedule_slot, by, w, 2);
	}
}

void eo_cluster_metrics_schedule_forget(struct eo_cluster_metrics *cm, const char *ns,
					const char *name)
{
	static const char *const by[] = {"namespace", "schedule"};
	const char *w[2] = {ns, name};

	if (cm != NULL && ns != NULL && name != NULL)
		eo_metrics_remove_where(cm->schedule_slot, by, w, 2);
}
