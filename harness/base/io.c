#include "io.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/opensslv.h>
#include <openssl/sha.h>

#include "mem.h"

static enum err read_fd(int fd, const char *path, struct buf *out,
			struct diag *d)
{
	for (;;) {
		ssize_t n;
		enum err e = buf_reserve(out, 65536);

		if (e == ERR_LIMIT)
			e = buf_reserve(out, 1);
		if (e)
			return diag_fail(d, e, "cannot read '%s': %s", path,
					 e == ERR_LIMIT ? "file too large" : "out of memory");
		n = read(fd, out->data + out->len, buf_avail(out));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return diag_fail(d, ERR_IO, "cannot read '%s': %s", path,
					 strerror(errno));
		if (n == 0)
			return ERR_OK;
		buf_commit(out, (size_t)n);
	}
}

/* What a non-regular file is, for the message. */
static const char *file_kind(mode_t m)
{
	return S_ISDIR(m) ? "not a regular file (a directory)"
	       : S_ISFIFO(m) ? "not a regular file (a FIFO)"
	       : S_ISCHR(m) ? "not a regular file (a character device)"
	       : S_ISBLK(m) ? "not a regular file (a block device)"
	       : S_ISSOCK(m) ? "not a regular file (a socket)"
	       : S_ISLNK(m) ? "not a regular file (a symbolic link)"
	       : "not a regular file";
}

int io_open_regular(const char *path, unsigned flags, struct stat *st,
		    struct diag *d)
{
	return io_openat_regular(AT_FDCWD, path, path, flags, st, d);
}

int io_openat_regular(int dirfd, const char *name, const char *path, unsigned flags,
		      struct stat *st, struct diag *d)
{
	struct stat mine;
	const char *why = NULL, *verb = flags & IO_READWRITE ? "open" : "read";
	int fd, fl, no;

	if (!st)
		st = &mine;
	memset(st, 0, sizeof(*st));
	/* O_NONBLOCK: opening a FIFO for reading waits for a writer, a
	 * device may wait for a carrier; neither is a file to read */
	fd = openat(dirfd, name, O_CLOEXEC | O_NONBLOCK | O_NOCTTY |
			((flags & IO_NOFOLLOW) ? O_NOFOLLOW : 0) |
			((flags & IO_READWRITE) ? O_RDWR | O_CREAT : O_RDONLY) |
			((flags & IO_APPEND) ? O_APPEND : 0), 0666);
	if (fd < 0) {
		no = errno;
		diag_fail(d, ERR_IO, "cannot %s '%s': %s", verb, path,
			  no == ELOOP && (flags & IO_NOFOLLOW)
				  ? "a symbolic link (not followed here)" : strerror(no));
		errno = no;
		return -1;
	}
	if (fstat(fd, st) != 0)
		why = strerror(errno), st->st_mode = 0;
	else if (!S_ISREG(st->st_mode))
		why = file_kind(st->st_mode);
	else if ((fl = fcntl(fd, F_GETFL)) == -1 ||
		 fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) == -1)
		why = strerror(errno);
	if (why) {
		diag_fail(d, ERR_IO, "cannot %s '%s': %s", verb, path, why);
		close(fd);
		errno = EINVAL;
		return -1;
	}
	return fd;
}

const char *io_reason(const char *msg)
{
	const char *p = strrchr(msg, ':');

	return p && p[1] == ' ' ? p + 2 : msg;
}

enum err io_read_input(const char *path, unsigned flags, struct buf *out,
		       struct diag *d)
{
	struct stat st;
	enum err e;
	int fd;

	if (!strcmp(path, "-"))
		return read_fd(0, "<stdin>", out, d);
	if ((fd = io_open_regular(path, flags, &st, d)) < 0)
		return ERR_IO;
	if (st.st_size > 0 && buf_reserve(out, (size_t)st.st_size + 1) == ERR_NOMEM) {
		close(fd);
		return diag_fail(d, ERR_NOMEM, "cannot read '%s': out of memory", path);
	}
	e = read_fd(fd, path, out, d);
	close(fd);
	return e;
}

enum err io_read_file(const char *path, struct buf *out, struct diag *d)
{
	return io_read_input(path, 0, out, d);
}

int io_map_file(const char *path, unsigned flags, size_t max, const char **data,
		size_t *len)
{
	struct stat st;
	void *p = MAP_FAILED;
	int fd = strcmp(path, "-") ? io_open_regular(path, flags, &st, NULL) : -1;

	if (fd < 0)
		return 0;
	if (st.st_size > 0 && (unsigned long long)st.st_size <= max) {
		p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		*len = (size_t)st.st_size;
	}
	close(fd);
	if (p == MAP_FAILED)
		return 0;
	*data = p;
	return 1;
}

void io_unmap_file(const char *data, size_t len)
{
	munmap((void *)data, len);
}

static enum err write_all(int fd, const char *path, const char *p, size_t len,
			  struct diag *d)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return diag_fail(d, ERR_IO, "cannot write '%s': %s", path,
					 strerror(errno));
		p += n;
		len -= (size_t)n;
	}
	return ERR_OK;
}

enum err io_write_file(const char *path, const void *data, size_t len,
		       struct diag *d)
{
	return io_write_file_mode(path, data, len, 0666, d);
}

enum err io_write_file_mode(const char *path, const void *data, size_t len,
			    unsigned mode, struct diag *d)
{
	struct buf tmp;
	enum err e;
	int fd;

	buf_init(&tmp, 4096);
	e = buf_printf(&tmp, "%s.tmp.%ld", path, (long)getpid());
	if (e) {
		buf_release(&tmp);
		return diag_fail(d, e, "cannot write '%s': %s", path,
				 e == ERR_NOMEM ? "out of memory" : "path too long");
	}
	fd = open(tmp.data, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, (mode_t)mode);
	if (fd < 0) {
		e = diag_fail(d, ERR_IO, "cannot write '%s': %s", path, strerror(errno));
		goto out;
	}
	e = write_all(fd, path, data, len, d);
	if (!e && fsync(fd) != 0)
		e = diag_fail(d, ERR_IO, "cannot write '%s': %s", path, strerror(errno));
	if (close(fd) != 0 && !e)
		e = diag_fail(d, ERR_IO, "cannot write '%s': %s", path, strerror(errno));
	if (!e && rename(tmp.data, path) != 0)
		e = diag_fail(d, ERR_IO, "cannot write '%s': %s", path, strerror(errno));
	if (e)
		unlink(tmp.data);
out:
	buf_release(&tmp);
	return e;
}

enum err io_mkdirs(const char *path, struct diag *d)
{
	char *p = mem_strndup(path, strlen(path)), *s;
	enum err e = ERR_OK;

	if (!p)
		return diag_fail(d, ERR_NOMEM, "out of memory");
	for (s = p + 1;; s++) {
		char c = *s;

		if (c != '/' && c != '\0')
			continue;
		*s = '\0';
		if (mkdir(p, 0777) != 0 && errno != EEXIST) {
			e = diag_fail(d, ERR_IO, "cannot create directory '%s': %s", p,
				      strerror(errno));
			break;
		}
		*s = c;
		if (c == '\0')
			break;
	}
	mem_free(p);
	return e;
}

/* libcrypto, loaded by the first digest (see io.h): its SHA-256 functions
 * of one algorithm, else its one-shot digest. The EVP path's first digest
 * reads the OpenSSL configuration and fetches the algorithm from its
 * provider, which builds the table of every algorithm's names: 6M of the 9M
 * instructions a process spends on its first SHA-256 of a few bytes
 * (callgrind, OpenSSL 3.0), most of what `needle count --template` pays to
 * recognise the template's text. SHA256_Init, _Update and _Final hash with
 * the same code and none of that; OpenSSL 3 keeps them, deprecated, and a
 * library without them is served through EVP. */
#define IO_STR(x) #x
#define IO_SONAME(major) "libcrypto.so." IO_STR(major)
static int (*sha_init)(SHA256_CTX *);
static int (*sha_update)(SHA256_CTX *, const void *, size_t);
static int (*sha_final)(unsigned char *, SHA256_CTX *);
static int (*evp_digest)(const void *, size_t, unsigned char *, unsigned int *,
			 const EVP_MD *, ENGINE *);
static const EVP_MD *evp_sha256;
static void *crypto_lib; /* the loaded library, for io_crypto_sym */
static pthread_once_t crypto_once = PTHREAD_ONCE_INIT;
static char crypto_why[DIAG_MSG_MAX]; /* why it could not be loaded, or "" */

static void crypto_load(void)
{
	const char *name = IO_SONAME(OPENSSL_VERSION_MAJOR);
	void *lib = crypto_lib = dlopen(name, RTLD_NOW | RTLD_LOCAL); /* never closed */
	const EVP_MD *(*md)(void) = NULL;

	if (lib) {
		/* POSIX makes a function pointer and void * convertible for dlsym */
		*(void **)&sha_init = dlsym(lib, "SHA256_Init");
		*(void **)&sha_update = dlsym(lib, "SHA256_Update");
		*(void **)&sha_final = dlsym(lib, "SHA256_Final");
		if (sha_init && sha_update && sha_final)
			return;
		*(void **)&evp_digest = dlsym(lib, "EVP_Digest");
		*(void **)&md = dlsym(lib, "EVP_sha256");
	}
	if (!lib || !evp_digest || !md || !(evp_sha256 = md()))
		snprintf(crypto_why, sizeof(crypto_why),
			 "cannot load %s: %s (Debian's package is libssl3)", name,
			 lib ? "no EVP_Digest or EVP_sha256" : dlerror());
}

enum err io_sha256_hex(const void *data, size_t len, char hex[IO_SHA256_HEX],
		       struct diag *d)
{
	unsigned char md[32];
	unsigned int n = 0, i;
	SHA256_CTX c;

	pthread_once(&crypto_once, crypto_load);
	hex[0] = '\0';
	if (crypto_why[0])
		return diag_fail(d, ERR_LOADER, "%s", crypto_why);
	if (sha_init) {
		sha_init(&c);
		sha_update(&c, data, len);
		sha_final(md, &c);
	} else {
		evp_digest(data, len, md, &n, evp_sha256, NULL);
	}
	for (i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
	hex[64] = '\0';
	return ERR_OK;
}

void *io_crypto_sym(const char *name, struct diag *d)
{
	void *f;

	pthread_once(&crypto_once, crypto_load);
	if (crypto_why[0]) {
		diag_fail(d, ERR_LOADER, "%s", crypto_why);
		return NULL;
	}
	if (!(f = dlsym(crypto_lib, name)))
		diag_fail(d, ERR_LOADER, "cannot load %s: no %s (Debian's package is libssl3)",
			  IO_SONAME(OPENSSL_VERSION_MAJOR), name);
	return f;
}

enum err io_sha256_file(const char *path, char hex[IO_SHA256_HEX],
			struct diag *d)
{
	struct buf b;
	enum err e;

	buf_init(&b, BUF_MAX_DEFAULT);
	e = io_read_file(path, &b, d);
	if (!e)
		e = io_sha256_hex(b.data, b.len, hex, d);
	buf_release(&b);
	return e;
}

double io_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

void io_sleep_until_ms(double at_ms)
{
	struct timespec ts;
	double sec = floor(at_ms / 1000.0);

	if (!(at_ms > 0))
		return;
	ts.tv_sec = (time_t)sec;
	ts.tv_nsec = (long)((at_ms - sec * 1000.0) * 1e6);
	if (ts.tv_nsec >= 1000000000L)
		ts.tv_nsec = 999999999L;
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}
