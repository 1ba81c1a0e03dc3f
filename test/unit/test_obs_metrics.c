/*
 * Unit tests for obs/metrics: exact exposition text, histogram bucket math, escaping, number
 * formatting, registration rules, limits, removal, concurrency and the operator's families.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "support/tu_main.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "obs/metrics.h"

static char *render(struct eo_metrics *reg)
{
	char *page = NULL;
	size_t len = 0;

	assert_int_equal(eo_metrics_render(reg, &page, &len), 0);
	assert_non_null(page);
	assert_int_equal(strlen(page), len);
	return page;
}

static void test_exposition_exact(void **state)
{
	static const char *const ctl_res[] = {"controller", "result", NULL};
	static const char *const ctl[] = {"controller", NULL};
	static const double buckets[] = {0.25, 0.5, 1};
	struct eo_metrics *reg = eo_metrics_new();
	struct eo_metric_family *total, *up, *dur;
	char *page;

	(void)state;
	assert_non_null(reg);
	total = eo_metrics_counter(reg, "demo_reconcile_total", "Reconciles by result.", ctl_res);
	up = eo_metrics_gauge(reg, "demo_up", "Whether it runs.", NULL);
	dur = eo_metrics_histogram(reg, "demo_seconds", "Time taken.", ctl, buckets, 3);
	assert_non_null(total);
	assert_non_null(up);
	assert_non_null(dur);

	/* Inserted out of order: series render sorted by label values. */
	eo_metrics_inc(total, (const char *[]){"member", "success"});
	eo_metrics_add(total, (const char *[]){"cluster", "success"}, 2);
	eo_metrics_inc(total, (const char *[]){"cluster", "error"});
	eo_metrics_set(up, NULL, 1);
	eo_metrics_observe(dur, (const char *[]){"cluster"}, 0.125);
	eo_metrics_observe(dur, (const char *[]){"cluster"}, 0.25); /* le is inclusive */
	eo_metrics_observe(dur, (const char *[]){"cluster"}, 0.375);
	eo_metrics_observe(dur, (const char *[]){"cluster"}, 2);

	page = render(reg);
	assert_string_equal(page,
			    "# HELP demo_reconcile_total Reconciles by result.\n"
			    "# TYPE demo_reconcile_total counter\n"
			    "demo_reconcile_total{controller=\"cluster\",result=\"error\"} 1\n"
			    "demo_reconcile_total{controller=\"cluster\",result=\"success\"} 2\n"
			    "demo_reconcile_total{controller=\"member\",result=\"success\"} 1\n"
			    "# HELP demo_up Whether it runs.\n"
			    "# TYPE demo_up gauge\n"
			    "demo_up 1\n"
			    "# HELP demo_seconds Time taken.\n"
			    "# TYPE demo_seconds histogram\n"
			    "demo_seconds_bucket{controller=\"cluster\",le=\"0.25\"} 2\n"
			    "demo_seconds_bucket{controller=\"cluster\",le=\"0.5\"} 3\n"
			    "demo_seconds_bucket{controller=\"cluster\",le=\"1\"} 3\n"
			    "demo_seconds_bucket{controller=\"cluster\",le=\"+Inf\"} 4\n"
			    "demo_seconds_sum{controller=\"cluster\"} 2.75\n"
			    "demo_seconds_count{controller=\"cluster\"} 4\n");
	free(page);
	eo_metrics_free(reg);
}

static void test_histogram_bucket_math(void **state)
{
	static const double buckets[] = {0.005, 0.01, 0.1, 1, 10};
	static const double obs[] = {0, 0.005, 0.0050001, 0.01, 0.05, 0.1,  0.5,
				     1, 9.99,  10,	  11,	1e9,  -1.0, INFINITY};
	struct eo_metrics *reg = eo_metrics_new();
	struct eo_metric_family *h;
	struct eo_metric *m;
	uint64_t cum[8], count = 0;
	double sum = 0;
	size_t i, n;

	(void)state;
	h = eo_metrics_histogram(reg, "h_seconds", "h", NULL, buckets, 5);
	assert_non_null(h);
	m = eo_metrics_series(h, NULL);
	assert_non_null(m);
	for (i = 0; i < sizeof(obs) / sizeof(obs[0]); i++)
		eo_metric_observe(m, obs[i]);
	eo_metric_observe(m, NAN); /* ignored */

	n = eo_metric_histogram(m, cum, 8, &sum, &count);
	assert_int_equal(n, 6);
	/* <=0.005: 0, 0.005, -1 | <=0.01: +0.0050001, 0.01 | <=0.1: +0.05, 0.1 | <=1: +0.5, 1 |
	 * <=10: +9.99, 10 | +Inf: +11, 1e9, inf */
	assert_int_equal(cum[0], 3);
	assert_int_equal(cum[1], 5);
	assert_int_equal(cum[2], 7);
	assert_int_equal(cum[3], 9);
	assert_int_equal(cum[4], 11);
	assert_int_equal(cum[5], 14);
	assert_int_equal(count, 14);
	assert_true(isinf(sum));
	assert_true(eo_metric_value(m) == 14.0);
	/* A short output array is filled as far as it goes. */
	assert_int_equal(eo_metric_histogram(m, cum, 2, NULL, NULL), 2);
	/* Not a histogram. */
	assert_int_equal(eo_metric_histogram(NULL, cum, 8, NULL, NULL), 0);
	eo_metrics_free(reg);
}

static void test_escaping(void **state)
{
	static const char *const lab[] = {"cluster", NULL};
	struct eo_metrics *reg = eo_metrics_new();
	struct eo_metric_family *g;
	char *page;

	(void)state;
	g = eo_metrics_gauge(reg, "esc", "Help with \\ backslash\nand newline \"quotes\" kept.",
			     lab);
	assert_non_null(g);
	eo_metrics_set(g, (const char *[]){"a\"b\\c\nd"}, -2.5);
	eo_metrics_set(g, (const char *[]){""}, 0.1);
	page = render(reg);
	assert_string_equal(page,
			    "# HELP esc Help with \\\\ backslash\\nand newline \"quotes\" kept.\n"
			    "# TYPE esc gauge\n"
			    "esc{cluster=\"\"} 0.1\n"
			    "esc{cluster=\"a\\\"b\\\\c\\nd\"} -2.5\n");
	free(page);
	eo_metrics_free(reg);
}

static void test_format_double(void **state)
{
	static const struct {
		double v;
		const char *s;
	} cases[] = {
	    {0, "0"},
	    {1, "1"},
	    {3, "3"},
	    {-2.5, "-2.5"},
	    {0.1, "0.1"},
	    {0.005, "0.005"},
	    {1e6, "1e+06"},
	    {123456789, "123456789"},
	    {1.5e-7, "1.5e-07"},
	    {2.0 / 3.0, "0.6666666666666666"},
	    {1e300, "1e+300"},
	};
	char buf[40];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		eo_metrics_format_double(buf, sizeof(buf), cases[i].v);
		assert_string_equal(buf, cases[i].s);
		assert_true(strtod(buf, NULL) == cases[i].v);
	}
	assert_string_equal(eo_metrics_format_double(buf, sizeof(buf), INFINITY), "+Inf");
	assert_string_equal(eo_metrics_format_double(buf, sizeof(buf), -INFINITY), "-Inf");
	assert_string_equal(eo_metrics_format_double(buf, sizeof(buf), NAN), "NaN");
}

static void test_registration_rules(void **state)
{
	static const double ok_b[] = {1, 2};
	static const double dup_b[] = {1, 1};
	static const double nan_b[] = {1, NAN};
	struct eo_metrics *reg = eo_metrics_new();

	(void)state;
	assert_non_null(eo_metrics_counter(reg, "ok_total", "x", NULL));
	assert_non_null(eo_metrics_counter(reg, "ns:sub_total", "colons allowed", NULL));
	assert_null(eo_metrics_counter(reg, "ok_total", "duplicate", NULL));
	assert_null(eo_metrics_gauge(reg, "ok_total", "duplicate of another type", NULL));
	assert_null(eo_metrics_counter(reg, "1starts_with_digit", "x", NULL));
	assert_null(eo_metrics_counter(reg, "has-dash", "x", NULL));
	assert_null(eo_metrics_counter(reg, "", "x", NULL));
	assert_null(eo_metrics_counter(reg, NULL, "x", NULL));
	assert_null(eo_metrics_counter(reg, "l1", "x", (const char *[]){"a:b", NULL}));
	assert_null(eo_metrics_counter(reg, "l2", "x", (const char *[]){"__reserved", NULL}));
	assert_null(eo_metrics_counter(reg, "l3", "x", (const char *[]){"a", "a", NULL}));
	assert_null(eo_metrics_counter(reg, "l4", "x", (const char *[]){"a", "b", "c", "d", NULL}));
	assert_non_null(eo_metrics_counter(reg, "l5", "x", (const char *[]){"a", "b", "c", NULL}));
	assert_null(eo_metrics_histogram(reg, "h1", "x", (const char *[]){"le", NULL}, ok_b, 2));
	assert_non_null(eo_metrics_gauge(reg, "g_le", "le is fine off histograms",
					 (const char *[]){"le", NULL}));
	assert_null(eo_metrics_histogram(reg, "h2", "x", NULL, dup_b, 2));
	assert_null(eo_metrics_histogram(reg, "h3", "x", NULL, nan_b, 2));
	assert_null(eo_metrics_histogram(reg, "h4", "x", NULL, NULL, 2));
	assert_non_null(eo_metrics_histogram(reg, "h5", "x", NULL, ok_b, 2));
	assert_non_null(eo_metrics_histogram(reg, "h6", "no finite buckets", NULL, NULL, 0));
	eo_metrics_free(reg);
}

static void test_series_rules(void **state)
{
	static const char *const lab[] = {"controller", "result", NULL};
	struct eo_metrics *reg = eo_metrics_new();
	struct eo_metric_family *c, *g;
	struct eo_metric *m, *m2;
	char longv[EO_METRICS_LABEL_VALUE_MAX + 2];

	(void)state;
	c = eo_metrics_counter(reg, "c_total", "c", lab);
	g = eo_metrics_gauge(reg, "g", "g", NULL);

	m = eo_metrics_series(c, (const char *[]){"a", "ok"});
	assert_non_null(m);
	m2 = eo_metrics_series(c, (const char *[]){"a", "ok"});
	assert_ptr_equal(m, m2);
	assert_null(eo_metrics_series(c, NULL));
	assert_null(eo_metrics_series(c, (const char *[]){"a", NULL}));
	memset(longv, 'v', sizeof(longv) - 1);
	longv[sizeof(longv) - 1] = '\0';
	assert_null(eo_metrics_series(c, (const char *[]){"a", longv}));

	/* Counters never go down; gauges do; set is gauge-only. */
	eo_metric_add(m, 2.5);
	eo_metric_add(m, -1);
	eo_metric_add(m, NAN);
	eo_metric_set(m, 100);
	eo_metric_observe(m, 1);
	assert_true(eo_metric_value(m) == 2.5);
	eo_metrics_set(g, NULL, 7);
	eo_metrics_add(g, NULL, -10);
	assert_true(eo_metric_value(eo_metrics_series(g, NULL)) == -3);

	/* NULL handles are no-ops. */
	eo_metric_inc(NULL);
	eo_metrics_inc(NULL, NULL);
	assert_true(isnan(eo_metric_value(NULL)));
	eo_metrics_free(reg);
}

static void test_remove(void **state)
{
	static const char *const lab[] = {"cluster", "state", NULL};
	struct eo_metrics *reg = eo_metrics_new();
	struct eo_metric_family *g;
	char *page;

	(void)state;
	g = eo_metrics_gauge(reg, "members", "m", lab);
	eo_metrics_set(g, (const char *[]){"ns/a", "voter"}, 3);
	eo_metrics_set(g, (const char *[]){"ns/a", "learner"}, 1);
	eo_metrics_set(g, (const char *[]){"ns/b", "voter"}, 5);
	assert_int_equal(eo_metrics_remove(g, (const char *[]){"ns/b", "voter"}), 0);
	assert_int_equal(eo_metrics_remove(g, (const char *[]){"ns/b", "voter"}), -1);
	eo_metrics_set(g, (const char *[]){"ns/b", "voter"}, 4);
	assert_int_equal(eo_metrics_remove_matching(g, "cluster", "ns/a"), 2);
	assert_int_equal(eo_metrics_remove_matching(g, "nosuchlabel", "ns/b"), 0);
	page = render(reg);
	assert_string_equal(page, "# HELP members m\n"
				  "# TYPE members gauge\n"
				  "members{cluster=\"ns/b\",state=\"voter\"} 4\n");
	free(page);
	eo_metrics_free(reg);
}

static void test_series_cap(void **state)
{
	static const char *const lab[] = {"cluster", NULL};
	struct eo_metrics *reg = eo_metrics_new();
	struct eo_metric_family *c;
	char v[32];
	int i;

	(void)state;
	c = eo_metrics_counter(reg, "capped_total", "c", lab);
	for (i = 0; i < EO_METRICS_MAX_SERIES; i++) {
		snprintf(v, sizeof(v), "c%05d", EO_METRICS_MAX_SERIES - i);
		assert_non_null(eo_metrics_series(c, (const char *[]){v}));
	}
	assert_null(eo_metrics_series(c, (const char *[]){"one-too-many"}));
	/* Existing series are still found. */
	assert_non_null(eo_metrics_series(c, (const char *[]){"c00001"}));
	eo_metrics_free(reg);
}

#define THREADS 4
#define ITERS	20000

struct race {
	int render_failures; /* cmocka asserts belong on the main thread */
	pthread_mutex_t mu;
	struct eo_metric_family *c;
	struct eo_metric_family *h;
	struct eo_metrics *reg;
};

static void *hammer(void *arg)
{
	struct race *r = arg;
	char *page;
	size_t len;
	int i;

	for (i = 0; i < ITERS; i++) {
		eo_metrics_inc(r->c, (const char *[]){i % 2 ? "odd" : "even"});
		eo_metrics_observe(r->h, NULL, 0.5);
		if (i % 5000 == 0) {
			if (eo_metrics_render(r->reg, &page, &len) != 0) {
				pthread_mutex_lock(&r->mu);
				r->render_failures++;
				pthread_mutex_unlock(&r->mu);
			}
			free(page);
		}
	}
	return NULL;
}

static void test_concurrent_updates(void **state)
{
	static const double b[] = {1};
	struct race r;
	pthread_t th[THREADS];
	int i;

	(void)state;
	r.render_failures = 0;
	pthread_mutex_init(&r.mu, NULL);
	r.reg = eo_metrics_new();
	r.c = eo_metrics_counter(r.reg, "race_total", "r", (const char *[]){"parity", NULL});
	r.h = eo_metrics_histogram(r.reg, "race_seconds", "r", NULL, b, 1);
	for (i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, hammer, &r), 0);
	for (i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	assert_true(eo_metric_value(eo_metrics_series(r.c, (const char *[]){"odd"})) ==
		    THREADS * ITERS / 2);
	assert_true(eo_metric_value(eo_metrics_series(r.c, (const char *[]){"even"})) ==
		    THREADS * ITERS / 2);
	assert_true(eo_metric_value(eo_metrics_series(r.h, NULL)) == THREADS * ITERS);
	assert_int_equal(r.render_failures, 0);
	pthread_mutex_destroy(&r.mu);
	eo_metrics_free(r.reg);
}

static int hook_calls;

static void hook(void *ud)
{
	struct eo_metric_family *g = ud;

	hook_calls++;
	eo_metrics_set(g, NULL, hook_calls);
}

static void test_collect_hook(void **state)
{
	struct eo_metrics *reg = eo_metrics_new();
	struct eo_metric_family *g;
	char *page;
	int i;

	(void)state;
	hook_calls = 0;
	g = eo_metrics_gauge(reg, "sampled", "s", NULL);
	assert_int_equal(eo_metrics_on_collect(reg, hook, g), 0);
	page = render(reg);
	assert_non_null(strstr(page, "\nsampled 1\n"));
	free(page);
	page = render(reg);
	assert_non_null(strstr(page, "\nsampled 2\n"));
	free(page);
	for (i = 1; i < EO_METRICS_MAX_HOOKS; i++)
		assert_int_equal(eo_metrics_on_collect(reg, hook, g), 0);
	assert_int_equal(eo_metrics_on_collect(reg, hook, g), -1);
	eo_metrics_free(reg);
}

static void test_read_rss(void **state)
{
	char path[] = "/tmp/eo-statm-XXXXXX";
	int fd;
	FILE *f;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fputs("2510 25 12 100 0 300 0\n", f);
	fclose(f);
	assert_int_equal(eo_metrics_read_rss(path), 25LL * sysconf(_SC_PAGESIZE));
	f = fopen(path, "w");
	fputs("garbage\n", f);
	fclose(f);
	assert_int_equal(eo_metrics_read_rss(path), -1);
	f = fopen(path, "w");
	fputs("2510\n", f);
	fclose(f);
	assert_int_equal(eo_metrics_read_rss(path), -1);
	unlink(path);
	assert_int_equal(eo_metrics_read_rss("/nonexistent/statm"), -1);
	assert_true(eo_metrics_read_rss("/proc/self/statm") > 0);
}

static void test_operator_metrics(void **state)
{
	struct eo_metrics *reg = eo_metrics_new();
	struct eo_operator_metrics om;
	struct eo_operator_metrics again;
	char *page, *p;
	double rss;

	(void)state;
	assert_int_equal(eo_operator_metrics_init(&om, reg, "v1.2.3"), 0);
	assert_int_equal(eo_operator_metrics_init(&again, reg, "v1.2.3"), -1);

	eo_operator_metrics_reconcile(&om, "etcdcluster", EO_RECONCILE_SUCCESS, 0.02);
	eo_operator_metrics_reconcile(&om, "etcdcluster", EO_RECONCILE_ERROR, 3);
	eo_operator_metrics_reconcile(&om, "etcdmember", EO_RECONCILE_REQUEUE_AFTER, 0.001);
	eo_operator_metrics_queue_depth(&om, "etcdcluster", 7);
	eo_operator_metrics_leader(&om, "etcd-operator-leader", true);
	eo_operator_metrics_watch_restart(&om, "Pod");
	eo_operator_metrics_watch_restart(&om, "Pod");

	page = render(reg);
	assert_non_null(strstr(page,
			       "# TYPE controller_runtime_reconcile_total counter\n"
			       "controller_runtime_reconcile_total{controller=\"etcdcluster\","
			       "result=\"error\"} 1\n"
			       "controller_runtime_reconcile_total{controller=\"etcdcluster\","
			       "result=\"success\"} 1\n"
			       "controller_runtime_reconcile_total{controller=\"etcdmember\","
			       "result=\"requeue_after\"} 1\n"));
	assert_non_null(strstr(page, "controller_runtime_reconcile_errors_total{controller="
				     "\"etcdcluster\"} 1\n"
				     "controller_runtime_reconcile_errors_total{controller="
				     "\"etcdmember\"} 0\n"));
	assert_non_null(strstr(page, "controller_runtime_reconcile_time_seconds_bucket{controller="
				     "\"etcdcluster\",le=\"0.025\"} 1\n"));
	assert_non_null(strstr(page, "controller_runtime_reconcile_time_seconds_bucket{controller="
				     "\"etcdcluster\",le=\"2.5\"} 1\n"
				     "controller_runtime_reconcile_time_seconds_bucket{controller="
				     "\"etcdcluster\",le=\"5\"} 2\n"));
	assert_non_null(strstr(page, "controller_runtime_reconcile_time_seconds_sum{controller="
				     "\"etcdcluster\"} 3.02\n"));
	assert_non_null(strstr(page, "\nworkqueue_depth{name=\"etcdcluster\"} 7\n"));
	assert_non_null(
	    strstr(page, "\nleader_election_master_status{name=\"etcd-operator-leader\"} 1\n"));
	assert_non_null(strstr(page, "\netcd_operator_watch_restarts_total{kind=\"Pod\"} 2\n"));
	assert_non_null(strstr(page, "\netcd_operator_build_info{version=\"v1.2.3\"} 1\n"));
	assert_non_null(strstr(page, "# TYPE process_cpu_seconds_total counter\n"));
	assert_non_null(strstr(page, "# TYPE process_start_time_seconds gauge\n"));
	p = strstr(page, "\nprocess_resident_memory_bytes ");
	assert_non_null(p);
	rss = strtod(p + strlen("\nprocess_resident_memory_bytes "), NULL);
	assert_true(rss > 1024 * 1024);
	free(page);

	eo_operator_metrics_leader(&om, "etcd-operator-leader", false);
	page = render(reg);
	assert_non_null(
	    strstr(page, "\nleader_election_master_status{name=\"etcd-operator-leader\"} 0\n"));
	free(page);
	assert_string_equal(eo_reconcile_result_name(EO_RECONCILE_REQUEUE), "requeue");
	eo_metrics_free(reg);
}

/* The family-level helpers must stay safe while another thread removes the same series (a
 * deleted cluster's series go away while workers still record for it). */
struct remove_race {
	struct eo_metric_family *counter;
	struct eo_metric_family *gauge;
	struct eo_metric_family *hist;
	int rounds;
};

static void *remove_race_writer(void *arg)
{
	struct remove_race *rr = arg;
	const char *v[1] = {"ns/c"};

	for (int i = 0; i < rr->rounds; i++) {
		eo_metrics_inc(rr->counter, v);
		eo_metrics_add(rr->counter, v, 2);
		eo_metrics_set(rr->gauge, v, i);
		eo_metrics_observe(rr->hist, v, 0.5);
	}
	return NULL;
}

static void *remove_race_remover(void *arg)
{
	struct remove_race *rr = arg;
	const char *v[1] = {"ns/c"};

	for (int i = 0; i < rr->rounds; i++) {
		eo_metrics_remove(rr->counter, v);
		eo_metrics_remove_matching(rr->gauge, "cluster", "ns/c");
		eo_metrics_remove(rr->hist, v);
	}
	return NULL;
}

static void test_family_helpers_vs_remove(void **state)
{
	static const char *const labels[] = {"cluster", NULL};
	static const double b[] = {1};
	struct eo_metrics *reg = eo_metrics_new();
	struct remove_race rr;
	pthread_t w[2], r;

	(void)state;
	rr.counter = eo_metrics_counter(reg, "race_total", "h", labels);
	rr.gauge = eo_metrics_gauge(reg, "race_gauge", "h", labels);
	rr.hist = eo_metrics_histogram(reg, "race_seconds", "h", labels, b, 1);
	rr.rounds = 20000;
	assert_non_null(rr.counter);
	assert_non_null(rr.gauge);
	assert_non_null(rr.hist);
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&w[i], NULL, remove_race_writer, &rr), 0);
	assert_int_equal(pthread_create(&r, NULL, remove_race_remover, &rr), 0);
	for (int i = 0; i < 2; i++)
		pthread_join(w[i], NULL);
	pthread_join(r, NULL);
	eo_metrics_free(reg);
}

TU_MAIN(test_exposition_exact, test_histogram_bucket_math, test_escaping, test_format_double,
	test_registration_rules, test_series_rules, test_remove, test_series_cap,
	test_concurrent_updates, test_collect_hook, test_read_rss, test_operator_metrics,
	test_family_helpers_vs_remove)
