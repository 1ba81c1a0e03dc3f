/*
 * obs/log.h - single-line structured logs (logfmt) for the operator.
 *
 * Every record is one line on stderr (or on a sink installed for tests):
 *
 *   ts=2025-01-02T03:04:05.678Z level=info msg="member added" cluster=ns/name member=m-abc
 * action=add
 *
 * Rules for callers:
 *  - The message is a short, constant description of what happened; variable facts go into
 *    key=value pairs, either per call or through a struct eo_log_ctx that carries the context
 *    of one reconcile pass (cluster, member, action, request ID ...).
 *  - NEVER pass secrets (passwords, tokens, private keys, Secret data, bearer headers, S3
 *    credentials) to any eo_log_* function, not even at debug level. Library code logs object
 *    names and reasons, never object contents that may carry credentials. There is no redaction
 *    layer: this rule is the protection.
 *  - Keys are short lower-case identifiers ([a-z0-9_.-/]); other characters are replaced by '_'.
 *    Values are quoted when needed and escaped (\" \\ \n \r \t, other control bytes as \u00XX).
 *  - A record never exceeds EO_LOG_LINE_MAX bytes including its newline. A longer record is cut
 *    at a character boundary, the open quote is closed, and `truncated=true` ends the line.
 *
 * Thread safety: all functions may be called from any thread. A record is formatted on the
 * caller's stack and written with a single write(2) under a mutex, so lines never interleave.
 */
#ifndef EO_OBS_LOG_H
#define EO_OBS_LOG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#define EO_LOG_LINE_MAX	 4096 /* one record, including the trailing newline */
#define EO_LOG_CTX_MAX	 512  /* pre-rendered context pairs of one struct eo_log_ctx */
#define EO_LOG_CTX_PAIRS 24   /* pairs in one struct eo_log_ctx */
#define EO_LOG_KV_MAX	 16   /* key/value pairs per eo_log_kv() call */
#define EO_LOG_MSG_MAX	 1024 /* message formatted by eo_logf() */

enum eo_log_level {
	EO_LOG_DEBUG = 0,
	EO_LOG_INFO = 1,
	EO_LOG_WARN = 2,
	EO_LOG_ERROR = 3,
};

/*
 * Context carried across calls: key=value pairs rendered once (already escaped) into a fixed
 * buffer. Caller-allocated, usually on the stack, no cleanup needed; copy it by value to derive
 * a narrower context. A pair that does not fit is dropped whole and marks the context
 * truncated (records then end with truncated=true).
 */
struct eo_log_ctx {
	char buf[EO_LOG_CTX_MAX];
	size_t len;
	unsigned short ends[EO_LOG_CTX_PAIRS]; /* end offset of each rendered " key=value" */
	unsigned npairs;
	bool truncated;
};

/* Parses "debug", "info", "warn"/"warning", "error" (case-insensitive). Also accepts the zap
 * style numbers used by controller-runtime's --zap-log-level: "0"=info, "1" or more=debug.
 * Returns 0 on success, -1 if unknown (then *out is untouched). */
int eo_log_level_parse(const char *s, enum eo_log_level *out);
const char *eo_log_level_name(enum eo_log_level lvl);

void eo_log_set_level(enum eo_log_level lvl);
enum eo_log_level eo_log_get_level(void);
bool eo_log_enabled(enum eo_log_level lvl);

/*
 * Sink for finished lines (without NUL; `line` ends with '\n'). NULL restores the default,
 * which writes to file descriptor 2. The sink is called under the log mutex, so it must not
 * log itself. `ud` is borrowed and must outlive the installation.
 */
typedef void (*eo_log_sink_fn)(void *ud, const char *line, size_t len);
void eo_log_set_sink(eo_log_sink_fn fn, void *ud);

void eo_log_ctx_init(struct eo_log_ctx *ctx);
/* Appends key=value. A NULL value is rendered as an empty quoted string (""). */
void eo_log_ctx_add(struct eo_log_ctx *ctx, const char *key, const char *value);
void eo_log_ctx_addf(struct eo_log_ctx *ctx, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Shorthand for cluster=<namespace>/<name>. */
void eo_log_ctx_cluster(struct eo_log_ctx *ctx, const char *ns, const char *name);

/*
 * One record with a constant message and extra string pairs: key1, value1, key2, value2, ...,
 * NULL. A NULL value also ends the list (that key is logged as ""). ctx may be NULL. At most
 * EO_LOG_KV_MAX pairs; further pairs are dropped and the record
 * is marked truncated.
 */
void eo_log_kv(enum eo_log_level lvl, const struct eo_log_ctx *ctx, const char *msg, ...)
    __attribute__((sentinel));

/* One record whose message is printf-formatted (capped at EO_LOG_MSG_MAX). ctx may be NULL. */
void eo_logf(enum eo_log_level lvl, const struct eo_log_ctx *ctx, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#define eo_log_debug(ctx, ...) eo_logf(EO_LOG_DEBUG, (ctx), __VA_ARGS__)
#define eo_log_info(ctx, ...)  eo_logf(EO_LOG_INFO, (ctx), __VA_ARGS__)
#define eo_log_warn(ctx, ...)  eo_logf(EO_LOG_WARN, (ctx), __VA_ARGS__)
#define eo_log_error(ctx, ...) eo_logf(EO_LOG_ERROR, (ctx), __VA_ARGS__)

/*
 * Pure formatter behind every record, exposed for tests and for tools that want the same line
 * format. Writes at most `cap` bytes into buf (values above EO_LOG_LINE_MAX are clamped to it),
 * always ending the line with '\n', and NUL-terminates when room remains. `kv` holds nkv pairs
 * as 2*nkv strings; `truncated` forces the truncated=true marker. Returns the line length
 * including the newline, or 0 (nothing written) if cap < 64.
 */
size_t eo_log_format(char *buf, size_t cap, const struct timespec *ts, enum eo_log_level lvl,
		     const struct eo_log_ctx *ctx, const char *msg, const char *const *kv,
		     size_t nkv, bool truncated);

#endif /* EO_OBS_LOG_H */
