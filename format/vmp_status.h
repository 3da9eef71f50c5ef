/* SPDX-License-Identifier: MIT
 *
 * vmp_status.h - the status codes every vmp library function returns.
 *
 * Values are ABI and part of the CLI's exit-code mapping: never renumber,
 * never reuse.  Retired codes stay here as comments.
 */
#ifndef VMP_STATUS_H
#define VMP_STATUS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(VMP_STATIC_DEFINE)
#    define VMP_API
#elif defined(__GNUC__)
#    define VMP_API __attribute__((visibility("default")))
#else
#    define VMP_API
#endif

/** Result of a vmp call.  Errors are negative; VMP_END is positive like
 *  SQLite's SQLITE_DONE, so `if (st < 0)` is the error test. */
typedef enum vmp_status {
    VMP_OK = 0,
    VMP_END = 1,              /* iteration finished; not an error */
    VMP_ERR_INVALID_ARG = -1, /* a documented precondition was violated */
    VMP_ERR_NOMEM = -2,       /* an allocation failed */
    VMP_ERR_IO = -3,          /* read or write failed; errno kept in the message */
    VMP_ERR_NOT_VMP = -4,     /* bad magic: not a vmp profile */
    VMP_ERR_VERSION = -5,     /* format major version this reader does not know */
    VMP_ERR_TRUNCATED = -6,   /* input ends inside a chunk or record */
    VMP_ERR_CORRUPT = -7,     /* well-formed prefix, impossible contents */
    VMP_ERR_LIMIT = -8,       /* exceeds a configured reader limit */
    VMP_ERR_FULL = -9,        /* writer ring full; sample dropped and counted */
    VMP_ERR_BUSY = -10,       /* writer re-entered on the same thread */
    VMP_ERR_CLOSED = -11,     /* writer output stopped after an earlier write error */
} vmp_status;

/** Short static description of `st` ("truncated input").  Never NULL.
 *  Thread safety: any thread.  Async-signal-safe. */
VMP_API const char *vmp_status_str(vmp_status st);

/** Allocator hooks for one object (never a global setter).  `free` receives
 *  the size that was passed to `alloc`. */
typedef struct vmp_allocator {
    void *(*alloc)(void *ud, size_t size);
    void (*free)(void *ud, void *ptr, size_t size);
    void *ud;
} vmp_allocator;

#ifdef __cplusplus
}
#endif

#endif
