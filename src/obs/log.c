/*
 * obs/log.c - logfmt records, one write(2) per line.
 */
#include "obs/log.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static atomic_int log_level = EO_LOG_INFO;
static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static eo_log_sink_fn log_sink;
static void *log_sink_ud;

static const char TRUNC_SUFFIX[] = " truncated=true\n";

/* ------------------------------------------------------------------------------------------ */
/* Levels                                                                                      */
/* ------------------------------------------------------------------------------------------ */

/* The level names read (zap's too); the first of a level is the one written. */
static const struct {
	const char *name;
	enum eo_log_level lvl;
} level_names[] = {
    {"debug", EO_LOG_DEBUG},  {"info", EO_LOG_INFO},   {"warn", EO_LOG_WARN},
    {"warning", EO_LOG_WARN}, {"error", EO_LOG_ERROR}, {"dpanic", EO_LOG_ERROR},
    {"panic", EO_LOG_ERROR},  {"fatal", EO_LOG_ERROR},
};

int eo_log_level_parse(const char *s, enum eo_log_level *out)
{
	size_t i;

	if (!s || !*s)
		return -1;
	for (i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++) {
		if (strcasecmp(s, level_names[i].name) == 0) {
			*out = level_names[i].lvl;
			return 0;
		}
	}
	/* zap verbosity numbers: 0 is info, anything above is a debug verbosity. */
	for (i = 0; s[i]; i++) {
		if (s[i] < '0' || s[i] > '9' || i >= 3)
			return -1;
	}
	*out = (s[0] == '0' && s[1] == '\0') ? EO_LOG_INFO : EO_LOG_DEBUG;
	return 0;
}

const char *eo_log_level_name(enum eo_log_level lvl)
{
	for (size_t i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++)
		if (level_names[i].lvl == lvl)
			return level_names[i].name;
	return "unknown";
}

void eo_log_set_level(enum eo_log_level lvl)
{
	atomic_store(&log_level, (int)lvl);
}

enum eo_log_level eo_log_get_level(void)
{
	return (enum eo_log_level)atomic_load(&log_level);
}

bool eo_log_enabled(enum eo_log_level lvl)
{
	return (int)lvl >= atomic_load(&log_level);
}

void eo_log_set_sink(eo_log_sink_fn fn, void *ud)
{
	pthread_mutex_lock(&log_mu);
	log_sink = fn;
	log_sink_ud = ud;
	pthread_mutex_unlock(&log_mu);
}

/* ------------------------------------------------------------------------------------------ */
/* Bounded writer                                                                              */
/* ------------------------------------------------------------------------------------------ */

/*
 * Appends into buf[0, limit). Every append is all-or-nothing at the granularity of one
 * character or escape sequence; the first one that does not fit sets `full`, after which all
 * appends are ignored. The caller keeps room beyond `limit` for closing quotes and suffixes.
 */
struct lw {
	char *buf;
	size_t len;
	size_t limit;
	bool full;
};

static bool lw_put(struct lw *w, const char *s, size_t n)
{
	if (w->full)
		return false;
	if (n > w->limit - w->len) {
		w->full = true;
		return false;
	}
	memcpy(w->buf + w->len, s, n);
	w->len += n;
	return true;
}

static bool lw_puts(struct lw *w, const char *s)
{
	return lw_put(w, s, strlen(s));
}

static bool key_char_ok(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.' || c == '-' || c == '/';
}

/* Length of a well-formed UTF-8 sequence at s (at most n bytes available), or 0 if invalid. */
static size_t utf8_seq_len(const unsigned char *s, size_t n)
{
	size_t len, i;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	/* Reject overlong forms, surrogates and values above U+10FFFF. */
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

static bool value_needs_quotes(const char *v)
{
	const unsigned char *p = (const unsigned char *)v;

	if (!*p)
		return true;
	for (; *p; p++) {
		if (*p <= ' ' || *p == '"' || *p == '=' || *p == '\\' || *p >= 0x7f)
			return true;
	}
	return false;
}

/*
 * Writes a quoted, escaped value. One byte stays held back while the content is written, so the
 * closing quote always fits and a value cut short still yields a well-formed line.
 */
static void lw_quoted(struct lw *w, const char *v)
{
	const unsigned char *p = (const unsigned char *)v;
	size_t n = strlen(v);
	char esc[8];

	if (w->full || w->limit - w->len < 2) {
		w->full = true;
		return;
	}
	w->limit--;
	lw_put(w, "\"", 1);
	while (n > 0 && !w->full) {
		size_t l = 1;

		switch (*p) {
		case '"':
			lw_put(w, "\\\"", 2);
			break;
		case '\\':
			lw_put(w, "\\\\", 2);
			break;
		case '\n':
			lw_put(w, "\\n", 2);
			break;
		case '\r':
			lw_put(w, "\\r", 2);
			break;
		case '\t':
			lw_put(w, "\\t", 2);
			break;
		default:
			if (*p < 0x20 || *p == 0x7f) {
				snprintf(esc, sizeof(esc), "\\u%04x", *p);
				lw_put(w, esc, 6);
			} else if (*p < 0x80) {
				lw_put(w, (const char *)p, 1);
			} else {
				l = utf8_seq_len(p, n);
				if (l == 0) {
					lw_put(w, "\\ufffd", 6);
					l = 1;
				} else {
					lw_put(w, (const char *)p, l);
				}
			}
		}
		p += l;
		n -= l;
	}
	w->limit++;
	w->buf[w->len++] = '"';
}

static void lw_value(struct lw *w, const char *v)
{
	if (!v)
		v = "";
	if (value_needs_quotes(v)) {
		lw_quoted(w, v);
		return;
	}
	for (; *v && !w->full; v++)
		lw_put(w, v, 1);
}

/* Appends " key=value". Returns false if nothing of the pair could be written. */
static bool lw_pair(struct lw *w, const char *key, const char *value)
{
	char k[64];
	size_t i = 0;

	if (key) {
		for (; key[i] && i < sizeof(k) - 1; i++)
			k[i] = key_char_ok((unsigned char)key[i]) ? key[i] : '_';
	}
	if (i == 0)
		k[i++] = '_';
	k[i] = '\0';
	/* The key, '=' and at least an empty quoted value must fit, or the pair is skipped. */
	if (w->full || i + 4 > w->limit - w->len) {
		w->full = true;
		return false;
	}
	lw_put(w, " ", 1);
	lw_put(w, k, i);
	lw_put(w, "=", 1);
	lw_value(w, value);
	return true;
}

/* ------------------------------------------------------------------------------------------ */
/* Context                                                                                     */
/* ------------------------------------------------------------------------------------------ */

void eo_log_ctx_init(struct eo_log_ctx *ctx)
{
	ctx->len = 0;
	ctx->npairs = 0;
	ctx->truncated = false;
	ctx->buf[0] = '\0';
}

void eo_log_ctx_add(struct eo_log_ctx *ctx, const char *key, const char *value)
{
	char tmp[EO_LOG_CTX_MAX];
	struct lw w = {.buf = tmp, .len = 0, .limit = sizeof(tmp) - 1, .full = false};

	if (ctx->npairs >= EO_LOG_CTX_PAIRS) {
		ctx->truncated = true;
		return;
	}
	if (!lw_pair(&w, key, value) || w.full || w.len > sizeof(ctx->buf) - 1 - ctx->len) {
		/* Context pairs are kept whole or not at all. */
		ctx->truncated = true;
		return;
	}
	memcpy(ctx->buf + ctx->len, tmp, w.len);
	ctx->len += w.len;
	ctx->buf[ctx->len] = '\0';
	ctx->ends[ctx->npairs++] = (unsigned short)ctx->len;
}

void eo_log_ctx_addf(struct eo_log_ctx *ctx, const char *key, const char *fmt, ...)
{
	char v[EO_LOG_CTX_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(v, sizeof(v), fmt, ap);
	va_end(ap);
	eo_log_ctx_add(ctx, key, v);
}

void eo_log_ctx_cluster(struct eo_log_ctx *ctx, const char *ns, const char *name)
{
	eo_log_ctx_addf(ctx, "cluster", "%s/%s", ns ? ns : "", name ? name : "");
}

/* ------------------------------------------------------------------------------------------ */
/* Records                                                                                     */
/* ------------------------------------------------------------------------------------------ */

size_t eo_log_format(char *buf, size_t cap, const struct timespec *ts, enum eo_log_level lvl,
		     const struct eo_log_ctx *ctx, const char *msg, const char *const *kv,
		     size_t nkv, bool truncated)
{
	struct lw w;
	struct tm tm;
	char tsbuf[96];
	size_t i, start;
	time_t secs = ts->tv_sec;

	if (cap < 64)
		return 0; /* too small for any record; documented minimum */
	if (cap > EO_LOG_LINE_MAX)
		cap = EO_LOG_LINE_MAX;
	/* Reserve room for the truncation suffix (which carries the newline) and a NUL. */
	w.buf = buf;
	w.len = 0;
	w.limit = cap - (sizeof(TRUNC_SUFFIX) - 1) - 1;
	w.full = false;

	if (!gmtime_r(&secs, &tm))
		memset(&tm, 0, sizeof(tm));
	snprintf(tsbuf, sizeof(tsbuf),
		 "ts=%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ level=", (tm.tm_year + 1900) % 10000,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		 (long)(ts->tv_nsec / 1000000) % 1000);
	lw_puts(&w, tsbuf);
	lw_puts(&w, eo_log_level_name(lvl));
	lw_puts(&w, " msg=");
	lw_quoted(&w, msg ? msg : "");

	if (ctx) {
		start = 0;
		for (i = 0; i < ctx->npairs && i < EO_LOG_CTX_PAIRS; i++) {
			if (!lw_put(&w, ctx->buf + start, ctx->ends[i] - start))
				break;
			start = ctx->ends[i];
		}
		if (ctx->truncated)
			truncated = true;
	}
	for (i = 0; i < nkv && !w.full; i++)
		lw_pair(&w, kv[2 * i], kv[2 * i + 1]);

	if (w.full || truncated) {
		memcpy(buf + w.len, TRUNC_SUFFIX, sizeof(TRUNC_SUFFIX) - 1);
		w.len += sizeof(TRUNC_SUFFIX) - 1;
	} else {
		buf[w.len++] = '\n';
	}
	if (w.len < cap)
		buf[w.len] = '\0';
	return w.len;
}

static void write_all(int fd, const char *s, size_t n)
{
	while (n > 0) {
		ssize_t r = write(fd, s, n);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return; /* Nowhere left to report a failing stderr. */
		}
		s += r;
		n -= (size_t)r;
	}
}

static void emit(enum eo_log_level lvl, const struct eo_log_ctx *ctx, const char *msg,
		 const char *const *kv, size_t nkv, bool truncated)
{
	char line[EO_LOG_LINE_MAX];
	struct timespec ts;
	size_t n;

	clock_gettime(CLOCK_REALTIME, &ts);
	n = eo_log_format(line, sizeof(line), &ts, lvl, ctx, msg, kv, nkv, truncated);

	pthread_mutex_lock(&log_mu);
	if (log_sink)
		log_sink(log_sink_ud, line, n);
	else
		write_all(STDERR_FILENO, line, n);
	pthread_mutex_unlock(&log_mu);
}

void eo_log_kv(enum eo_log_level lvl, const struct eo_log_ctx *ctx, const char *msg, ...)
{
	const char *kv[2 * EO_LOG_KV_MAX];
	size_t nkv = 0;
	bool truncated = false;
	const char *k;
	va_list ap;

	if (!eo_log_enabled(lvl))
		return;
	va_start(ap, msg);
	while ((k = va_arg(ap, const char *)) != NULL) {
		const char *v = va_arg(ap, const char *);

		if (nkv >= EO_LOG_KV_MAX) {
			truncated = true;
			if (!v)
				break; /* the list ends here: reading on would pass the sentinel */
			continue;
		}
		kv[2 * nkv] = k;
		kv[2 * nkv + 1] = v;
		nkv++;
		if (!v)
			break; /* An odd list: the key is logged with an empty value. */
	}
	va_end(ap);
	emit(lvl, ctx, msg, kv, nkv, truncated);
}

void eo_logf(enum eo_log_level lvl, const struct eo_log_ctx *ctx, const char *fmt, ...)
{
	char msg[EO_LOG_MSG_MAX];
	va_list ap;
	int n;

	if (!eo_log_enabled(lvl))
		return;
	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n < 0)
		msg[0] = '\0';
	emit(lvl, ctx, msg, NULL, 0, n >= (int)sizeof(msg));
}
