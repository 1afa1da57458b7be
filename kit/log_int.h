/*
 * log_int.h: what the two halves of kit/log share, and nothing else
 * includes: log.c (partition files: open, append, scan, read) and
 * log_group.c (committed offsets, consumer groups, poll).
 *
 * Interface: the handle's layout and the helpers below; every helper
 * reports failure through the handle as log.h describes.
 */
#ifndef HOTROW_KIT_LOG_INT_H
#define HOTROW_KIT_LOG_INT_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "kit/log.h"

#define HDR 8                     /* len + sum */
#define CHUNK (256 * 1024)        /* bytes read at a time while scanning */
#define NAME_MAX_LEN 63

struct part {
	int fd;
	int64_t *pos;     /* pos[i]: byte position of record i */
	int64_t n;        /* records indexed */
	int64_t cap;      /* entries allocated in pos */
	int64_t end;      /* byte position just past record n - 1 */
};

struct kit_log {
	char dir[PATH_MAX - 512];     /* room left for the names inside */
	int nparts;
	struct part parts[KIT_LOG_MAX_PARTITIONS];
	unsigned char *buf;           /* scratch for scans and kit_log_read */
	size_t bufcap;
	char err[PATH_MAX + 256];
};

/* Set the handle's message ("log DIR: ...") and return code. */
int kit_log__fail(struct kit_log *log, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The same with errno's text: "WHAT PATH: reason". */
int kit_log__syserr(struct kit_log *log, const char *what, const char *path);
uint32_t kit_log__get32(const unsigned char *p);
/* 1 when s is a valid group or member name, 0 when not. */
int kit_log__valid_name(const char *s);
/* Write all of buf at off; 0, or -1 with errno. */
int kit_log__pwrite(int fd, const void *buf, size_t len, int64_t off);
/* flock(2), retried on EINTR. */
int kit_log__lock(int fd, int how);
/* A temporary file name next to base that no other process or thread uses now. */
void kit_log__tmp_name(char *buf, size_t size, const char *base);
/* Extend partition p's index over the whole, checksummed records in its file. */
int kit_log__scan(struct kit_log *log, int p);
/* Read records [from, from + count) of p (indexed already) into *buf. */
int kit_log__read_span(struct kit_log *log, int p, int64_t from, int64_t count,
                       unsigned char **buf, size_t *cap, size_t *len);
/* KIT_LOG_INVAL with a message when part is not a partition of log. */
int kit_log__check_part(struct kit_log *log, int part);

#endif
