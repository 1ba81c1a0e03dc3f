/*
 * kube/exec_launch.c - starts an exec credential plugin and collects its stdout
 * (eo__kube_exec_launch in kube/exec.h). Kept alone in its file so that the kubeconfig fuzz
 * target can replace it (--wrap) and never start a process.
 */
#include "kube/exec.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/sleep.h"

/* Grows *buf to hold at least need bytes plus a NUL, without realloc (a token must not stay
 * behind in freed memory). */
static bool grow(char **buf, size_t *cap, size_t used, size_t need, size_t max)
{
	size_t ncap = *cap ? *cap : 4096;
	char *nb;

	while (ncap < need)
		ncap *= 2;
	if (ncap > max)
		ncap = max;
	nb = malloc(ncap + 1);
	if (!nb)
		return false;
	if (*buf) {
		memcpy(nb, *buf, used);
		OPENSSL_cleanse(*buf, *cap + 1);
		free(*buf);
	}
	*buf = nb;
	*cap = ncap;
	return true;
}

/* Reads fd until EOF, the deadline or max bytes. */
static eo_kube_err collect(int fd, size_t max, int64_t deadline, char **buf, size_t *n,
			   struct eo_kube_error *err)
{
	size_t cap = 0;

	*buf = NULL;
	*n = 0;
	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int64_t left = deadline - eo_mono_ms();
		ssize_t got;
		int pr;

		if (left <= 0)
			return eo_kube_fail(err, EO_KUBE_ETIMEOUT, "did not finish in time");
		pr = poll(&p, 1, left > INT32_MAX ? INT32_MAX : (int)left);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr < 0)
			return eo_kube_fail(err, EO_KUBE_EIO, "poll: %s", strerror(errno));
		if (pr == 0)
			continue;
		if (*n == cap) {
			if (cap >= max)
				return eo_kube_fail(err, EO_KUBE_ETOOLARGE,
						    "printed more than %zu bytes", max);
			if (!grow(buf, &cap, *n, *n + 1, max))
				return eo_kube_fail(err, EO_KUBE_ENOMEM, "exec output");
		}
		got = read(fd, *buf + *n, cap - *n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return eo_kube_fail(err, EO_KUBE_EIO, "read: %s", strerror(errno));
		if (got == 0)
			break;
		*n += (size_t)got;
	}
	if (!*buf && !grow(buf, &cap, 0, 1, max ? max : 1))
		return eo_kube_fail(err, EO_KUBE_ENOMEM, "exec output");
	(*buf)[*n] = '\0';
	return EO_KUBE_OK;
}

static int reap(pid_t pid, bool kill_it)
{
	int st = 0;

	if (kill_it)
		kill(pid, SIGKILL);
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return -1;
}

eo_kube_err eo__kube_exec_launch(char *const argv[], char *const envp[], bool interactive,
				 size_t max, long timeout_ms, char **out, size_t *len,
				 int *exit_code, struct eo_kube_error *err)
{
	posix_spawn_file_actions_t fa;
	int pfd[2] = {-1, -1};
	pid_t pid = -1;
	char *buf = NULL;
	size_t n = 0;
	eo_kube_err rc;
	int e;

	*out = NULL;
	*len = 0;
	*exit_code = -1;
	if (pipe2(pfd, O_CLOEXEC) != 0)
		return eo_kube_fail(err, EO_KUBE_EIO, "pipe: %s", strerror(errno));
	if (posix_spawn_file_actions_init(&fa) != 0) {
		close(pfd[0]);
		close(pfd[1]);
		return eo_kube_fail(err, EO_KUBE_ENOMEM, "spawn actions");
	}
	e = posix_spawn_file_actions_adddup2(&fa, pfd[1], STDOUT_FILENO);
	if (e == 0 && !interactive)
		e = posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	if (e == 0)
		e = posix_spawnp(&pid, argv[0], &fa, NULL, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	close(pfd[1]);
	if (e != 0) {
		close(pfd[0]);
		return eo_kube_fail(err, EO_KUBE_ECONFIG, "cannot be started: %s", strerror(e));
	}
	rc = collect(pfd[0], max, eo_mono_ms() + timeout_ms, &buf, &n, err);
	close(pfd[0]);
	*exit_code = reap(pid, rc != EO_KUBE_OK);
	if (rc != EO_KUBE_OK) {
		if (buf) {
			OPENSSL_cleanse(buf, n);
			free(buf);
		}
		return rc;
	}
	*out = buf;
	*len = n;
	return EO_KUBE_OK;
}
