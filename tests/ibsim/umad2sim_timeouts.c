/*
 * umad2sim_timeouts.so: the MAD send timeouts and retries of the kernel's ib_umad layer, for
 * processes running on the ibsim simulator under umad2sim. Simulation only.
 *
 * Why: on hardware, a MAD sent with umad_send(..., timeout_ms, retries) that gets no response
 * is resent `retries` times by the kernel and then handed back to the sender with
 * status ETIMEDOUT. umad2sim (ibsim 0.10, umad2sim/umad2sim.c umad2sim_write) ignores
 * timeout_ms and retries, and ibsim only answers with status 110 (ETIMEDOUT) when it drops a
 * packet itself (ibsim/sim_mad.c process_packet, "_dropped"). A request that ibsim forwards to
 * a client that never answers (an OpenSM that drops an SMInfo Get it cannot answer yet) and a
 * trap whose TrapRepress ibsim drops ("got trap repress - dropping") stay outstanding forever:
 * OpenSM's sweeper then waits for them forever (osm_state_mgr.c wait_for_pending_transactions)
 * and its VL15 sender stops once max_wire_smps (4) of them are on the wire.
 * See docs/opensm.md, "The stuck handback on ibsim".
 *
 * How: preload it before umad2sim, e.g.
 *   LD_PRELOAD="/path/umad2sim_timeouts.so /usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so"
 * It wraps write/read/poll on umad2sim's device descriptors (1024-2047, umad2sim's own
 * convention): a request written with timeout_ms > 0 is remembered; a response (or an
 * ibsim drop notice) with the same class and low 32 TID bits forgets it; when timeout_ms
 * passes without one, it is written again, up to `retries` times, and then handed to the
 * reader with status ETIMEDOUT, as the kernel does. Everything else passes through.
 *
 * Build: gcc -shared -fPIC -O2 -Wall -o umad2sim_timeouts.so umad2sim_timeouts.c -ldl -lpthread
 * Debug: UMAD2SIM_TIMEOUTS_DEBUG=1 logs every resend and timeout to stderr.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* struct ib_user_mad (libibumad umad.h): agent_id, status, timeout_ms, retries, length,
 * ib_mad_addr_t addr (44 bytes), then the MAD; umad_size() is 64. */
#define UMAD_HDR 64
#define UMAD_STATUS_OFF 4
#define UMAD_TIMEOUT_OFF 8
#define UMAD_RETRIES_OFF 12
#define UMAD_LENGTH_OFF 16
/* MAD header: mgmt_class at 1, method at 3 (0x80 = response), transaction id at 8..15. */
#define MAD_MIN 24
#define MAX_SAVED (UMAD_HDR + 256)
#define MAX_PENDING 512
#define POLL_SLICE_MS 50
#define SIM_FD_MIN 1024
#define SIM_FD_MAX 2048

enum { FREE = 0, WAITING, EXPIRED };

struct pending {
	int state;
	int fd;
	uint8_t mgmt_class;
	uint32_t tid_lo;
	uint32_t timeout_ms;
	uint32_t tries_left;
	struct timespec deadline;
	size_t len;
	uint8_t buf[MAX_SAVED];
};

static struct pending table[MAX_PENDING];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static ssize_t (*next_read)(int, void *, size_t);
static ssize_t (*next_write)(int, const void *, size_t);
static int (*next_poll)(struct pollfd *, nfds_t, int);
static int debug;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void init_once(void)
{
	next_read = dlsym(RTLD_NEXT, "read");
	next_write = dlsym(RTLD_NEXT, "write");
	next_poll = dlsym(RTLD_NEXT, "poll");
	debug = getenv("UMAD2SIM_TIMEOUTS_DEBUG") != NULL;
}

static void init(void)
{
	pthread_once(&once, init_once);
}

static int sim_fd(int fd)
{
	return fd >= SIM_FD_MIN && fd < SIM_FD_MAX;
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void now(struct timespec *ts)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
}

static void add_ms(struct timespec *ts, uint32_t ms)
{
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

static long ms_until(const struct timespec *t, const struct timespec *from)
{
	return (t->tv_sec - from->tv_sec) * 1000L + (t->tv_nsec - from->tv_nsec) / 1000000L;
}

static void note(const char *what, const struct pending *p)
{
	if (debug)
		fprintf(stderr, "umad2sim_timeouts[%d]: %s class 0x%x method 0x%x attr 0x%x tid 0x%x\n",
			(int)getpid(), what, p->mgmt_class, p->buf[UMAD_HDR + 3],
			p->buf[UMAD_HDR + 16] << 8 | p->buf[UMAD_HDR + 17], p->tid_lo);
}

/* Remember a request that expects a response (the kernel tracks those with timeout_ms > 0). */
static void track(int fd, const uint8_t *buf, size_t count)
{
	const uint8_t *mad = buf + UMAD_HDR;
	uint32_t timeout_ms;
	int i;

	if (count < UMAD_HDR + MAD_MIN || count > MAX_SAVED)
		return;
	timeout_ms = get32(buf + UMAD_TIMEOUT_OFF);
	if (!timeout_ms || (mad[3] & 0x80))
		return;
	pthread_mutex_lock(&lock);
	for (i = 0; i < MAX_PENDING; i++) {
		struct pending *p = &table[i];
		if (p->state != FREE)
			continue;
		p->state = WAITING;
		p->fd = fd;
		p->mgmt_class = mad[1];
		p->tid_lo = be32(mad + 12);
		p->timeout_ms = timeout_ms;
		p->tries_left = get32(buf + UMAD_RETRIES_OFF);
		now(&p->deadline);
		add_ms(&p->deadline, timeout_ms);
		p->len = count;
		memcpy(p->buf, buf, count);
		break;
	}
	pthread_mutex_unlock(&lock);
}

/* A response, or the request handed back by ibsim with a status: forget the request. */
static void untrack(const uint8_t *buf, size_t n)
{
	const uint8_t *mad = buf + UMAD_HDR;
	uint32_t tid_lo;
	int i;

	if (n < UMAD_HDR + MAD_MIN)
		return;
	if (!(mad[3] & 0x80) && !get32(buf + UMAD_STATUS_OFF))
		return;		/* an incoming request */
	tid_lo = be32(mad + 12);
	pthread_mutex_lock(&lock);
	for (i = 0; i < MAX_PENDING; i++) {
		struct pending *p = &table[i];
		if (p->state == WAITING && p->mgmt_class == mad[1] && p->tid_lo == tid_lo) {
			p->state = FREE;
			break;
		}
	}
	pthread_mutex_unlock(&lock);
}

/* Resend or expire what is due on the polled descriptors. Returns how many pollfds have an
 * expired request to hand over; *wait_ms gets the time to the next deadline (or -1). */
static int due(struct pollfd *pfds, nfds_t nfds, long *wait_ms)
{
	struct timespec t;
	nfds_t k;
	int ready = 0, i;

	*wait_ms = -1;
	now(&t);
	pthread_mutex_lock(&lock);
	for (k = 0; k < nfds; k++) {
		int has = 0;
		if (!sim_fd(pfds[k].fd))
			continue;
		for (i = 0; i < MAX_PENDING; i++) {
			struct pending *p = &table[i];
			long left;
			if (p->state == FREE || p->fd != pfds[k].fd)
				continue;
			if (p->state == WAITING && (left = ms_until(&p->deadline, &t)) <= 0) {
				if (p->tries_left) {
					p->tries_left--;
					note("resend", p);
					next_write(p->fd, p->buf, p->len);
					now(&p->deadline);
					add_ms(&p->deadline, p->timeout_ms);
				} else {
					note("timeout", p);
					p->state = EXPIRED;
				}
			}
			if (p->state == EXPIRED) {
				has = 1;
				continue;
			}
			left = ms_until(&p->deadline, &t);
			if (left < 1)
				left = 1;
			if (*wait_ms < 0 || left < *wait_ms)
				*wait_ms = left;
		}
		if (has) {
			ready++;
			pfds[k].revents = POLLIN;
		}
	}
	pthread_mutex_unlock(&lock);
	return ready;
}

ssize_t write(int fd, const void *buf, size_t count)
{
	init();
	if (sim_fd(fd))
		track(fd, buf, count);
	return next_write(fd, buf, count);
}

ssize_t read(int fd, void *buf, size_t count)
{
	ssize_t n;
	int i;

	init();
	if (!sim_fd(fd))
		return next_read(fd, buf, count);
	pthread_mutex_lock(&lock);
	for (i = 0; i < MAX_PENDING; i++) {
		struct pending *p = &table[i];
		if (p->state == EXPIRED && p->fd == fd && count >= UMAD_HDR) {
			size_t len = p->len < count ? p->len : count;
			memset(buf, 0, count);
			memcpy(buf, p->buf, len);
			put32((uint8_t *)buf + UMAD_STATUS_OFF, ETIMEDOUT);
			put32((uint8_t *)buf + UMAD_LENGTH_OFF, (uint32_t)count);
			p->state = FREE;
			pthread_mutex_unlock(&lock);
			return (ssize_t)count;
		}
	}
	pthread_mutex_unlock(&lock);
	n = next_read(fd, buf, count);
	if (n > 0)
		untrack(buf, (size_t)n);
	return n;
}

int poll(struct pollfd *pfds, nfds_t nfds, int timeout)
{
	struct timespec start, t;
	nfds_t k;
	int any = 0;

	init();
	for (k = 0; k < nfds; k++)
		any |= sim_fd(pfds[k].fd);
	if (!any)
		return next_poll(pfds, nfds, timeout);
	now(&start);
	for (;;) {
		long wait_ms, spent;
		int r, ready;

		for (k = 0; k < nfds; k++)
			pfds[k].revents = 0;
		ready = due(pfds, nfds, &wait_ms);
		if (ready)
			return ready;
		/* Wake up at least every POLL_SLICE_MS: another thread may send a request
		 * whose deadline is earlier than anything known now. */
		if (wait_ms < 0 || wait_ms > POLL_SLICE_MS)
			wait_ms = POLL_SLICE_MS;
		now(&t);
		spent = ms_until(&t, &start);
		if (timeout >= 0 && timeout - spent < wait_ms)
			wait_ms = timeout - spent > 0 ? timeout - spent : 0;
		r = next_poll(pfds, nfds, (int)wait_ms);
		if (r != 0)
			return r;
		now(&t);
		if (timeout >= 0 && ms_until(&t, &start) >= timeout)
			return 0;
	}
}
