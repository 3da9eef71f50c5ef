/* SPDX-License-Identifier: MIT
 *
 * vmp_writer_int.h - the writer object shared by the writer's translation
 * units (spec.md §3 to §6).  Internal: not installed.
 *
 * Locking: `meta_mu` guards the record queue, the id counters and generation
 * increments; `out_mu` guards everything that produces output (interning,
 * the chunk, compression, the file).  out_mu may be held while meta_mu is
 * taken briefly, never the reverse.  The sample path takes neither.
 */
#ifndef VMP_WRITER_INT_H
#define VMP_WRITER_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <zstd.h>

#include "vmp_block.h"
#include "vmp_encode.h"
#include "vmp_fnstore.h"
#include "vmp_intern.h"
#include "vmp_mapstore.h"
#include "vmp_ring.h"
#include "vmp_symtab.h"
#include "vmp_writer.h"

#define VMP_WRITER_PRODUCER "vmp-writer 0.1.0"

struct vmp_writer {
    /* ---- read by the sample path -------------------------------------- */
    vmp_ring ring;
    uint64_t (*clock)(void *clock_ud);
    void *clock_ud;
    uint64_t origin;                  /* raw clock value at open */
    _Atomic uint64_t generation;      /* spec §5 Generations */
    _Atomic int stopped;              /* output stopped after a write error */
    _Atomic uint64_t dropped_full;    /* counted by the sample path */
    _Atomic uint64_t dropped_stopped; /* samples refused after a write error */

    /* ---- totals, written under out_mu, read by vmp_writer_stats() ------ */
    _Atomic uint64_t samples_written;
    _Atomic uint64_t failed_written;
    _Atomic uint64_t kind_written;  /* KIND_SAMPLE records */
    _Atomic uint64_t dropped_write; /* drained after the error, or lost in a failed chunk */
    _Atomic uint64_t truncated_stacks;
    _Atomic uint64_t chunks;
    _Atomic uint64_t bytes;
    _Atomic int write_errno;

    /* ---- options --------------------------------------------------------- */
    size_t chunk_bytes;
    uint32_t chunk_age_ms;
    int zstd_level;
    int no_seek_table;
    int lazy_functions;
    int lazy_symbols;
    int lazy_code_maps;
    int sample_blocks;       /* samples in SAMPLE_BLOCK records (format 2.0) */
    uint32_t n_sample_kinds; /* kinds of vmp_writer_kind_sample(), format 2.1 */
    uint64_t time_unit;      /* their time unit, ns (>= 1) */
    int fd;
    int own_fd;
    uint64_t base_offset; /* file offset of the header frame */

    /* ---- record queue (meta_mu) ------------------------------------------ */
    pthread_mutex_t meta_mu;
    vmp_buf queue; /* entries: u64 stamp, u32 len, record */
    uint64_t next_zone_id;
    uint64_t next_module_id;
    vmp_fnstore fns;     /* lazy_functions: the records kept back */
    vmp_symtab *symtabs; /* lazy_symbols: the modules' tables, newest first */
    vmp_mapstore maps;   /* lazy_code_maps: the code maps kept back */
    vmp_buf map_rec;     /* a CODE_MAP record being kept */
    vmp_buf map_fns;     /* the function ids it names */

    /* ---- loaded objects already recorded (loaded_mu) ---------------------
     * vmp_writer_add_loaded_modules(): (load bias, start, end) of each object
     * it recorded, so that a later call adds only objects loaded since. */
    pthread_mutex_t loaded_mu;
    uint64_t *loaded_keys; /* 3 per object */
    size_t n_loaded, cap_loaded;

    /* ---- output (out_mu) ------------------------------------------------ */
    pthread_mutex_t out_mu;
    vmp_buf work;              /* the queue taken by a drain */
    vmp_buf scratch;           /* one record being encoded */
    vmp_buf fn_copy;           /* a kept-back FUNCTION record on its way to the chunk */
    vmp_symtab *drain_symtabs; /* the tables as of the last queue taken */
    int symtabs_pending;       /* one of them not yet seen by a sample (emit_sample()) */
    vmp_buf sym_items;         /* the symbols a record needs, encoded */
    vmp_buf chunk;             /* content of the open chunk */
    vmp_buf zbuf;              /* compressed chunk */
    vmp_buf seek;              /* vmp_seek_entry array */
    ZSTD_CCtx *cctx;
    vmp_intern intern;
    uint64_t chunk_prev_time; /* time of the previous sample in the chunk */
    uint64_t chunk_first_time, chunk_last_time;
    uint64_t chunk_samples, chunk_failed, chunk_truncated;
    uint64_t chunk_kind_samples; /* KIND_SAMPLE records (not in chunk_samples) */
    uint64_t chunk_opened_ns;    /* CLOCK_MONOTONIC when its first record came */
    vmp_block block;             /* sample_blocks: the open chunk's samples not yet encoded */
    vmp_buf block_buf;           /* the block's record on its way to the chunk */
    int io_reported;             /* VMP_ERR_IO already returned by a flush */

    /* ---- background thread --------------------------------------------- */
    pthread_t thread;
    int thread_started;
    pthread_mutex_t wake_mu;
    pthread_cond_t wake_cv;
    int stop; /* wake_mu */
};

/* vmp_chunk.c: everything under out_mu. */

/* Append one encoded record to the open chunk, first closing the chunk when
 * the record would not fit, and closing it after when it reached the size
 * limit.  Sample bookkeeping is the caller's. */
void vmp_chunk__add(vmp_writer *w, const uint8_t *rec, size_t len);
/* Whether a record of `len` bytes would start a new chunk. */
int vmp_chunk__needs_new(const vmp_writer *w, size_t len);
/* Compress and write the open chunk (no-op when empty), its pending
 * SAMPLE_BLOCK included. */
vmp_status vmp_chunk__close(vmp_writer *w);
/* sample_blocks: encode the pending block into the open chunk (its samples
 * were counted in the chunk when added); no-op when it is empty.
 * vmp_chunk__add() calls it before every record that could change how the
 * block's samples resolve (R-BLK-1: with the records before the block),
 * so stack nodes, threads, events and code changes do not end a block. */
void vmp_chunk__flush_block(vmp_writer *w);
/* Whether the open chunk holds anything, a pending block included. */
int vmp_chunk__open(const vmp_writer *w);
/* Write bytes to the file, retrying EINTR and short writes.  After the first
 * failure output stops for good. */
vmp_status vmp_chunk__write(vmp_writer *w, const void *data, size_t size);
/* Write the seek-table frame (spec.md §6). */
vmp_status vmp_chunk__seek_table(vmp_writer *w);
uint64_t vmp_chunk__mono_ns(void);

/* vmp_writer.c: the writer's clock, ns since the time origin; a time of
 * the VM's clock (raw ns) on it. */
uint64_t vmp_writer__now(const vmp_writer *w);
uint64_t vmp_writer__from_clock(const vmp_writer *w, uint64_t raw);

/* vmp_drain.c: merge the record queue and the published samples into
 * chunks; `wait`: wait for claimed slots to be published (flush, close).
 * Takes out_mu. */
void vmp_writer__drain(vmp_writer *w, int wait);
/* The background thread's body (pthread_create), `arg` the writer. */
void *vmp_writer__background(void *arg);

/* vmp_writer.c: the record queue.  meta_lock() takes meta_mu and reads the
 * ring head as the stamp of the records queued until meta_unlock(); it
 * returns VMP_ERR_CLOSED (and holds nothing) when output has stopped.
 * entry_begin()/entry_end() bracket one record encoded into w->queue.
 * meta_unlock() rolls the queue back to `mark` and returns VMP_ERR_NOMEM if an
 * allocation failed, else `st`. */
vmp_status vmp_writer__meta_lock(vmp_writer *w, uint64_t *stamp_out, size_t *mark_out);
size_t vmp_writer__entry_begin(vmp_writer *w, uint64_t stamp);
void vmp_writer__entry_end(vmp_writer *w, size_t at);
/* Queue `rec` as one entry at `stamp`, encoded by the registry's generic
 * encoder (vmp_encode.h); under meta_mu. */
void vmp_writer__queue_record(vmp_writer *w, uint64_t stamp, const vmp_record *rec);
/* `s` (NULL: "") as a record string. */
vmp_str vmp_writer__str(const char *s);
vmp_status vmp_writer__meta_unlock(vmp_writer *w, size_t mark, vmp_status st);

#endif
